/** The same columns as the SQLite store's migration 005: what was left out of a call's result before the model saw it. */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN cut_bytes bigint;
ALTER TABLE tool_calls ADD COLUMN cut_characters bigint;
`;
