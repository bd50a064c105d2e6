export const sql = `
CREATE TABLE rules (
  rule_id TEXT PRIMARY KEY,
  scope_kind TEXT NOT NULL,
  scope_value TEXT NOT NULL,
  json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  hits INTEGER NOT NULL DEFAULT 0,
  last_used_at INTEGER
);
CREATE INDEX rules_by_scope ON rules (scope_kind, scope_value);
`;
