// The SQLite schema (its migrations 001 to 003) in PostgreSQL types, plus what several instances sharing the
// database need: run ownership with a lease and a fencing token, one unfinished run per session, and indexes for the
// conditional write of a decision. Times are epoch ms (bigint); JSON is kept as text, exactly as written.
export const sql = `
CREATE TABLE sessions (
  session_id text PRIMARY KEY,
  title text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  confirm_tool_calls boolean NOT NULL,
  last_run_id text
);
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, created_at DESC, session_id);

-- Ordered by an identity rather than a per-session max(seq) + 1, so that two instances appending at once never pick
-- the same number.
CREATE TABLE messages (
  message_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id text NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  json text NOT NULL,
  at bigint NOT NULL
);
CREATE INDEX messages_by_session ON messages (session_id, message_id);

-- owner, fence and lease_until: the instance that runs it, the fencing token its writes carry (raised at each
-- claim), and until when (database clock, epoch ms) its lease holds without renewal.
CREATE TABLE runs (
  run_id text PRIMARY KEY,
  session_id text NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  options text NOT NULL,
  started_at bigint NOT NULL,
  ended_at bigint,
  end_reason text,
  owner text,
  fence bigint NOT NULL DEFAULT 0,
  lease_until bigint,
  created_order bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX runs_by_session ON runs (session_id);
CREATE INDEX runs_unfinished ON runs (started_at, created_order) WHERE ended_at IS NULL;
CREATE INDEX runs_by_owner ON runs (owner) WHERE ended_at IS NULL;
CREATE UNIQUE INDEX runs_one_unfinished_per_session ON runs (session_id) WHERE ended_at IS NULL;

-- Ids of the runs of deleted sessions: a run id is never used twice.
CREATE TABLE retired_runs (run_id text PRIMARY KEY);

CREATE TABLE events (
  run_id text NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq integer NOT NULL,
  json text NOT NULL,
  at bigint NOT NULL,
  PRIMARY KEY (run_id, seq)
);

-- The ledger. No foreign key: its rows outlive their session and run, for audit.
CREATE TABLE tool_calls (
  ledger_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id text NOT NULL,
  session_id text NOT NULL,
  tool_call_id text NOT NULL,
  tool_name text NOT NULL,
  arguments text NOT NULL,
  -- What the person edited the arguments to before allowing (arguments keep what the model proposed).
  edited_arguments text,
  approval_id text NOT NULL,
  executes_code boolean NOT NULL,
  tool_version text NOT NULL,
  requested_at bigint NOT NULL,
  expires_at bigint,
  decision text,
  source text,
  reason text,
  decided_by_grant text,
  decided_by_rule text,
  decided_at bigint,
  connection_id text,
  client_label text,
  started_at bigint,
  outcome text,
  result text,
  ended_at bigint,
  UNIQUE (run_id, tool_call_id)
);
CREATE INDEX tool_calls_by_time ON tool_calls (requested_at, ledger_id);
CREATE INDEX tool_calls_by_session ON tool_calls (session_id, requested_at, ledger_id);
CREATE INDEX tool_calls_by_tool ON tool_calls (tool_name, requested_at, ledger_id);
CREATE INDEX tool_calls_by_decision ON tool_calls (decision, requested_at, ledger_id);
CREATE INDEX tool_calls_by_approval ON tool_calls (approval_id) WHERE approval_id <> '';
CREATE INDEX tool_calls_waiting ON tool_calls (session_id, ledger_id) WHERE approval_id <> '' AND decision IS NULL;

-- scope_kind 'session' (scope_value the session id) today; 'workspace' and 'global' fit the same columns.
CREATE TABLE grants (
  grant_id text PRIMARY KEY,
  scope_kind text NOT NULL,
  scope_value text NOT NULL,
  tool_name text NOT NULL,
  arguments text,
  tool_version text NOT NULL,
  created_at bigint NOT NULL,
  created_order bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX grants_by_scope ON grants (scope_kind, scope_value);

CREATE TABLE rules (
  rule_id text PRIMARY KEY,
  scope_kind text NOT NULL,
  scope_value text NOT NULL,
  json text NOT NULL,
  created_at bigint NOT NULL,
  hits bigint NOT NULL DEFAULT 0,
  last_used_at bigint,
  created_order bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX rules_by_scope ON rules (scope_kind, scope_value);

CREATE TABLE settings (
  key text PRIMARY KEY,
  value text NOT NULL
);
`;
