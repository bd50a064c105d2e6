/** The same column as the SQLite store's migration 006: how the deciding rule read when it decided. */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN decided_by_rule_text text;
`;
