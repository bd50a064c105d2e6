/** The same column as the SQLite store's migration 013: the deny rule that asked about a waiting call, and why, as JSON. */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN asked_because text;
`;
