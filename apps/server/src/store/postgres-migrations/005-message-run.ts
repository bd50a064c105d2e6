/**
 * The run that wrote each message, as SQLite's migration 008 adds it: a page of a chat finds its calls' ledger rows
 * by (run, call id) without reading the messages before it. Messages written before are given the run that had
 * started last in their chat when they were written; only those that made calls are rewritten.
 */
export const sql = `
ALTER TABLE messages ADD COLUMN run_id text;
CREATE INDEX runs_by_session_start ON runs (session_id, started_at, created_order);
UPDATE messages AS m SET run_id = (
  SELECT r.run_id FROM runs AS r WHERE r.session_id = m.session_id AND r.started_at <= m.at ORDER BY r.started_at DESC, r.created_order DESC LIMIT 1
) WHERE m.json LIKE '{"role":"assistant"%' AND strpos(m.json, '"toolCalls":[') > 0;
DROP INDEX runs_by_session_start;
`;
