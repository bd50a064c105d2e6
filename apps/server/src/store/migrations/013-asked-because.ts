/**
 * With exact_grants_only: the deny rule that asked about the waiting call, and why, as JSON (`{ ruleId, reason }`, the
 * reason as its card shows it), so the waiting list, on any instance and after a restart, says why it is asked. Null
 * in rows written before.
 */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN asked_because TEXT;
`;
