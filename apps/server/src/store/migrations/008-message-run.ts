/**
 * The run that wrote each message, so a page of a chat finds its calls' ledger rows by (run, call id) without reading
 * the messages before it (a call id is unique only within a run). Messages written before are given the run that had
 * started last in their chat when they were written (a run's first message is written at its start, with its
 * time); only those that made calls are rewritten, and a chat imported from the former JSON files has no runs.
 */
export const sql = `
ALTER TABLE messages ADD COLUMN run_id TEXT;
CREATE INDEX runs_by_session_start ON runs (session_id, started_at);
UPDATE messages SET run_id = (
  SELECT r.run_id FROM runs AS r WHERE r.session_id = messages.session_id AND r.started_at <= messages.at ORDER BY r.started_at DESC, r.rowid DESC LIMIT 1
) WHERE json LIKE '{"role":"assistant"%' AND instr(json, '"toolCalls":[') > 0;
DROP INDEX runs_by_session_start;
`;
