export const sql = `
CREATE TABLE sessions (
  session_id TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  confirm_tool_calls INTEGER NOT NULL,
  last_run_id TEXT
);
CREATE INDEX sessions_by_update ON sessions (updated_at, created_at);

CREATE TABLE messages (
  session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  json TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (session_id, seq)
);

CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  options TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  end_reason TEXT
);
CREATE INDEX runs_by_session ON runs (session_id);
CREATE INDEX runs_unfinished ON runs (started_at) WHERE ended_at IS NULL;

-- Ids of the runs of deleted sessions: a run id is never used twice.
CREATE TABLE retired_runs (run_id TEXT PRIMARY KEY) WITHOUT ROWID;

CREATE TABLE events (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  json TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
);

-- The ledger. No foreign key: its rows outlive their session and run, for audit.
CREATE TABLE tool_calls (
  ledger_id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  arguments TEXT NOT NULL,
  approval_id TEXT NOT NULL,
  executes_code INTEGER NOT NULL,
  tool_version TEXT NOT NULL,
  requested_at INTEGER NOT NULL,
  expires_at INTEGER,
  decision TEXT,
  source TEXT,
  reason TEXT,
  decided_by_grant TEXT,
  decided_by_rule TEXT,
  decided_at INTEGER,
  connection_id TEXT,
  client_label TEXT,
  started_at INTEGER,
  outcome TEXT,
  result TEXT,
  ended_at INTEGER,
  UNIQUE (run_id, tool_call_id)
);
CREATE INDEX tool_calls_by_time ON tool_calls (requested_at);
CREATE INDEX tool_calls_by_session ON tool_calls (session_id, requested_at);
CREATE INDEX tool_calls_by_tool ON tool_calls (tool_name, requested_at);
CREATE INDEX tool_calls_by_decision ON tool_calls (decision, requested_at);

-- scope_kind 'session' (scope_value the session id) today; 'workspace' and 'global' fit the same columns.
CREATE TABLE grants (
  grant_id TEXT PRIMARY KEY,
  scope_kind TEXT NOT NULL,
  scope_value TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  arguments TEXT,
  tool_version TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX grants_by_scope ON grants (scope_kind, scope_value);

-- Session files of the former one-JSON-file-per-chat store, each looked at once.
CREATE TABLE json_imports (
  file TEXT PRIMARY KEY,
  session_id TEXT,
  outcome TEXT NOT NULL,
  at INTEGER NOT NULL
);
`;
