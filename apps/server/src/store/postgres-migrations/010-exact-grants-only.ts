/** The same column as the SQLite store's migration 012: only a grant for the call's exact arguments may release it. */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN exact_grants_only boolean NOT NULL DEFAULT false;
`;
