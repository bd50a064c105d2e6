/**
 * Whether the rule of a rule's deny claimed on a call's row came from the workspace's rules file, not the person's
 * own rules: an instance that reads the deny back (a takeover, a resync) tells the model so, as the one that judged it.
 */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN decided_by_rule_from_workspace_file boolean NOT NULL DEFAULT false;
`;
