export {
  COMMAND_TOOL,
  MCP_TOOL,
  PATH_TOOLS,
  URL_TOOL,
  ruleDraftSchema,
  ruleEffectSchema,
  ruleMatchSchema,
  ruleSchema,
  ruleScopeSchema,
  workspaceFileRuleSchema,
  type CommandPrefix,
  type ExactArguments,
  type Host,
  type McpServerMatch,
  type McpToolMatch,
  type PathGlob,
  type Rule,
  type RuleDraft,
  type RuleEffect,
  type RuleMatch,
  type RuleScope,
} from '@airlock/api';
export { evaluateRules, type RuleCall, type RuleContext, type RuleDecision } from './evaluate-rules';
export { proposeRule, type ProposeRuleOptions } from './propose-rule';
export { denialMessage, describeRule } from '@airlock/api';
export { parseCommandLine, MAX_COMMAND_LINE_CHARS, type CommandLine, type SimpleCommand } from './parse-command-line';
export {
  WORKSPACE_RULES_FILE,
  WorkspaceRulesError,
  loadWorkspaceRules,
  parseWorkspaceRules,
  type WorkspaceRules,
} from './workspace-rules-file';
export { RuleBook, type RuleBookOptions } from './rule-book';
export { staleToolNames } from './stale-tool-names';
