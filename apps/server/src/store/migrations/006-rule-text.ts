/**
 * How the deciding rule read when it decided a call: a rule can be edited (keeping its id) or removed, and a
 * workspace file's rules are named by their place in the file, so the id alone can later name another rule. Null in
 * rows written before.
 */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN decided_by_rule_text TEXT;
`;
