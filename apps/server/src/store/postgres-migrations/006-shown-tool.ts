/** The same column as the SQLite store's migration 009: the tool as the call was put up, as JSON. */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN shown_tool text;
`;
