/**
 * A call's row found by its approval id, as PostgreSQL has it (its 001): a decision repeated after a restart is
 * looked up there, and without the index each lookup read the session's whole ledger.
 */
export const sql = `
CREATE INDEX tool_calls_by_approval ON tool_calls (approval_id) WHERE approval_id <> '';
`;
