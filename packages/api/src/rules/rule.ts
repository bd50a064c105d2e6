import { z } from 'zod';
import { commandBaseName, isExactOnlyProgram } from './exact-only-commands';
import { checkPathGlob } from './path-glob';
import { checkHostPattern } from './host-match';

/** The tool whose `command` argument command rules read. */
export const COMMAND_TOOL = 'terminal';
/** The tools whose `path` argument path rules read (`list_directory` defaults to the workspace itself). */
export const PATH_TOOLS = ['read_file', 'write_file', 'list_directory'] as const;
/** The tool whose `url` argument host rules read. */
export const URL_TOOL = 'web_fetch';
/** What `tool` holds on rules about MCP tools: the server and tool are in `match`, never read from a model-facing name. */
export const MCP_TOOL = 'mcp';

const MAX_TOKENS = 64;
const MAX_TOKEN_CHARS = 1024;
/**
 * The most an exact-arguments rule may hold, as JSON, and its deepest nesting: a rule is read, described and compared
 * on every call, and listed whole. A rule nested 3,000 deep was saved and then overflowed the stack in every list and
 * every terminal call, after a restart too; 150 rules of 900 KB made one list answer of 270 MB.
 */
export const MAX_RULE_ARGUMENTS_CHARS = 65_536;
export const MAX_RULE_ARGUMENTS_DEPTH = 32;
/** The longest workspace path, chat id, MCP server or tool name a rule may name. */
const MAX_NAME_CHARS = 4096;

export const ruleScopeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('chat'), sessionId: z.string().min(1).max(MAX_NAME_CHARS) }),
  z.object({ kind: z.literal('workspace'), path: z.string().min(1).max(MAX_NAME_CHARS).refine((path) => path.startsWith('/'), 'must be an absolute path') }),
  z.object({ kind: z.literal('global') }),
]);
export type RuleScope = z.infer<typeof ruleScopeSchema>;

/**
 * Half of a UTF-16 surrogate pair without its other half is no character: no command line the terminal runs (UTF-8)
 * holds one, and stored as UTF-8 it would come back as U+FFFD, another rule than the one the person saw. JSON can
 * spell one (`"\ud800"`), from the rules API or a workspace's rules file.
 */
function refuseLoneSurrogate(text: string, context: z.RefinementCtx): void {
  const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.exec(text);
  if (lone === null) return;
  const code = lone[0].charCodeAt(0).toString(16).toUpperCase();
  context.addIssue({ code: 'custom', message: `holds a lone UTF-16 surrogate (U+${code} at character ${lone.index + 1}), which is not text: write the character whole` });
}

export const commandPrefixSchema = z.object({
  kind: z.literal('command-prefix'),
  /** The command's words after quote removal: `['npm', 'test']` is `npm test`, `'npm' test` and `"npm" "test"`. */
  tokens: z
    .array(z.string().max(MAX_TOKEN_CHARS).superRefine(refuseLoneSurrogate))
    .min(1)
    .max(MAX_TOKENS)
    .refine((tokens) => tokens[0] !== '', 'the command name is empty'),
  /** The command is these words and nothing more (no further arguments). */
  exact: z.boolean(),
});
export type CommandPrefix = z.infer<typeof commandPrefixSchema>;

export const pathGlobSchema = z.object({
  kind: z.literal('path-glob'),
  /** Relative to the workspace: `**` any folders, `*` and `?` within one name, `\` escapes the next character. */
  glob: z.string().superRefine((glob, context) => {
    const problem = checkPathGlob(glob);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  }),
});
export type PathGlob = z.infer<typeof pathGlobSchema>;

export const hostSchema = z.object({
  kind: z.literal('host'),
  /** A host name (`example.com`), or `*.example.com` for its subdomains (not the name itself). */
  host: z.string().superRefine((host, context) => {
    const problem = checkHostPattern(host);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  }),
});
export type Host = z.infer<typeof hostSchema>;

export const mcpToolMatchSchema = z.object({
  kind: z.literal('mcp-tool'),
  /** The configured server name. */
  server: z.string().min(1).max(MAX_NAME_CHARS),
  /** The tool's name as the server lists it. */
  tool: z.string().min(1).max(MAX_NAME_CHARS),
  /**
   * The tool as it was when "Always allow" made the rule (a SHA-256 of its `toolVersion`: description, schema and
   * hints): an allow rule with one covers that tool only, and a tool its server rewrote since is asked about again.
   * Without one (a rule a person wrote), the rule covers the tool whatever its server makes of it.
   */
  toolVersion: z.string().regex(/^[0-9a-f]{64}$/).optional(),
});
export type McpToolMatch = z.infer<typeof mcpToolMatchSchema>;

export const mcpServerMatchSchema = z.object({ kind: z.literal('mcp-server'), server: z.string().min(1).max(MAX_NAME_CHARS) });
export type McpServerMatch = z.infer<typeof mcpServerMatchSchema>;

export const exactArgumentsSchema = z.object({
  kind: z.literal('exact-arguments'),
  arguments: z.record(z.string(), z.unknown()).superRefine((value, context) => {
    const problem = argumentsProblem(value);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  }),
});

/** Why arguments cannot be kept in a rule (too deep, too large), if they cannot. The depth is walked without recursion. */
function argumentsProblem(value: Record<string, unknown>): string | undefined {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [next, depth] = stack.pop()!;
    if (next === null || typeof next !== 'object') continue;
    if (depth > MAX_RULE_ARGUMENTS_DEPTH) return `nested more than ${MAX_RULE_ARGUMENTS_DEPTH} levels deep: too deep to keep as a rule`;
    for (const item of Object.values(next)) stack.push([item, depth + 1]);
  }
  const chars = JSON.stringify(value).length;
  if (chars > MAX_RULE_ARGUMENTS_CHARS) return `${chars} characters as JSON, over the ${MAX_RULE_ARGUMENTS_CHARS} a rule may hold: too large to keep as a rule (an "Always allow" for this chat can still cover it)`;
  return undefined;
}
export type ExactArguments = z.infer<typeof exactArgumentsSchema>;

export const ruleMatchSchema = z.discriminatedUnion('kind', [
  commandPrefixSchema,
  pathGlobSchema,
  hostSchema,
  mcpToolMatchSchema,
  mcpServerMatchSchema,
  exactArgumentsSchema,
]);
export type RuleMatch = z.infer<typeof ruleMatchSchema>;

export const ruleEffectSchema = z.enum(['allow', 'deny']);
export type RuleEffect = z.infer<typeof ruleEffectSchema>;

/** What a rule says, without where it is kept: what a person confirms, and what a workspace file holds. */
const ruleBodyShape = {
  effect: ruleEffectSchema,
  /** The tool name as the model sees it; `mcp` for rules about MCP tools. */
  tool: z.string().min(1).max(256),
  match: ruleMatchSchema,
  /** Told to the model (and shown to the person) when the rule denies a call. */
  reason: z.string().max(1000).optional(),
};

export const ruleDraftSchema = z
  .object({ ...ruleBodyShape, scope: ruleScopeSchema, source: z.enum(['user', 'workspace-file']) })
  .superRefine(checkToolAndMatch);
export type RuleDraft = z.infer<typeof ruleDraftSchema>;

export const ruleSchema = z
  .object({
    id: z.string().min(1),
    ...ruleBodyShape,
    scope: ruleScopeSchema,
    source: z.enum(['user', 'workspace-file']),
    /** ISO 8601. */
    createdAt: z.iso.datetime(),
  })
  .superRefine(checkToolAndMatch);
export type Rule = z.infer<typeof ruleSchema>;

/** One entry of `.airlock/rules.json`: scope, source, id and date come from the file itself. */
export const workspaceFileRuleSchema = z.object(ruleBodyShape).strict().superRefine(checkToolAndMatch);

function checkToolAndMatch(rule: { effect: RuleEffect; tool: string; match: RuleMatch }, context: z.RefinementCtx): void {
  const problem = toolAndMatchProblem(rule);
  if (problem !== undefined) context.addIssue({ code: 'custom', message: problem, path: ['match'] });
}

function toolAndMatchProblem({ effect, tool, match }: { effect: RuleEffect; tool: string; match: RuleMatch }): string | undefined {
  switch (match.kind) {
    case 'command-prefix': {
      if (tool !== COMMAND_TOOL) return `a command rule is for the "${COMMAND_TOOL}" tool, not "${tool}"`;
      const name = commandBaseName(match.tokens[0] ?? '');
      if (effect === 'allow' && !match.exact && isExactOnlyProgram(match.tokens[0] ?? '')) {
        return `"${name}" runs whatever it is given: an allow rule for it must be exact`;
      }
      return undefined;
    }
    case 'path-glob':
      return (PATH_TOOLS as readonly string[]).includes(tool) ? undefined : `a path rule is for ${PATH_TOOLS.join(', ')}, not "${tool}"`;
    case 'host':
      return tool === URL_TOOL ? undefined : `a host rule is for the "${URL_TOOL}" tool, not "${tool}"`;
    case 'mcp-tool':
    case 'mcp-server':
      return tool === MCP_TOOL ? undefined : `an MCP rule has tool "${MCP_TOOL}", not "${tool}"`;
    case 'exact-arguments':
      return undefined;
  }
}
