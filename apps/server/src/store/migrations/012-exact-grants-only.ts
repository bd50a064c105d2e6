/**
 * Whether only a grant for a waiting call's exact arguments may release it (a deny rule could not tell it from a
 * call it denies): a call restored after a restart, or taken over by another instance, must keep it. 0 in rows
 * written before, which were restored without it as they were before.
 */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN exact_grants_only INTEGER NOT NULL DEFAULT 0;
`;
