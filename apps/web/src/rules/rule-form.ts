import type { RuleDraftInput, RuleEffect, RuleMatchKind, RuleScopeKind } from './rule-types';

/** The rule editor's fields, all plain text: turned into a draft for the server, which validates it. */
export interface RuleForm {
  effect: RuleEffect;
  tool: string;
  matchKind: RuleMatchKind;
  /** command-prefix: the command's first words, as typed in a shell (quotes group words). */
  command: string;
  exact: boolean;
  glob: string;
  host: string;
  server: string;
  mcpTool: string;
  /** mcp-tool: the version of the tool the rule was made for, kept while the rule names the same tool. */
  mcpToolVersion?: { server: string; tool: string; toolVersion: string };
  /** exact-arguments: a JSON object. */
  argumentsJson: string;
  scopeKind: RuleScopeKind;
  /** With the chat scope: which chat. */
  sessionId: string;
  reason: string;
}

export const PATH_TOOLS = ['read_file', 'write_file', 'list_directory'] as const;

/** The tool a kind of match is about: the editor sets it when the kind changes. */
export const TOOL_OF_MATCH: Record<RuleMatchKind, string | null> = {
  'command-prefix': 'terminal',
  'path-glob': 'read_file',
  host: 'web_fetch',
  'mcp-tool': 'mcp',
  'mcp-server': 'mcp',
  'exact-arguments': null,
};

export const MATCH_LABELS: Record<RuleMatchKind, string> = {
  'command-prefix': 'Commands (terminal)',
  'path-glob': 'File paths',
  host: 'Web hosts (web_fetch)',
  'mcp-tool': 'One MCP tool',
  'mcp-server': 'Every tool of an MCP server',
  'exact-arguments': 'One tool with exact arguments',
};

export const EMPTY_RULE_FORM: RuleForm = {
  effect: 'allow',
  tool: 'terminal',
  matchKind: 'command-prefix',
  command: '',
  exact: false,
  glob: '',
  host: '',
  server: '',
  mcpTool: '',
  argumentsJson: '{}',
  scopeKind: 'workspace',
  sessionId: '',
  reason: '',
};

export type FormResult = { ok: true; draft: RuleDraftInput } | { ok: false; problem: string };

/**
 * The draft the form describes, or what keeps it from being one. Only what the server cannot see is checked
 * here (unbalanced quotes, JSON that does not parse, an unknown workspace); the rest is the server's to say.
 */
export function draftOfForm(form: RuleForm, workspace: string | undefined): FormResult {
  const match = matchOfForm(form);
  if (!match.ok) return match;
  let scope: RuleDraftInput['scope'];
  switch (form.scopeKind) {
    case 'global':
      scope = { kind: 'global' };
      break;
    case 'workspace':
      if (workspace === undefined) return { ok: false, problem: 'The server has not said which workspace it works in.' };
      scope = { kind: 'workspace', path: workspace };
      break;
    case 'chat':
      if (form.sessionId === '') return { ok: false, problem: 'Pick the chat this rule holds in.' };
      scope = { kind: 'chat', sessionId: form.sessionId };
      break;
  }
  const reason = form.reason.trim();
  return { ok: true, draft: { effect: form.effect, tool: form.tool.trim(), match: match.match, scope, source: 'user', ...(reason === '' ? {} : { reason }) } };
}

function matchOfForm(form: RuleForm): { ok: true; match: RuleDraftInput['match'] } | { ok: false; problem: string } {
  switch (form.matchKind) {
    case 'command-prefix': {
      const tokens = splitCommandWords(form.command);
      if (tokens === undefined) return { ok: false, problem: 'The command has a quote that is not closed.' };
      if (tokens.length === 0) return { ok: false, problem: 'Type the command the rule is about.' };
      return { ok: true, match: { kind: 'command-prefix', tokens, exact: form.exact } };
    }
    case 'path-glob':
      return { ok: true, match: { kind: 'path-glob', glob: form.glob.trim() } };
    case 'host':
      return { ok: true, match: { kind: 'host', host: form.host.trim() } };
    case 'mcp-tool': {
      const [server, tool, kept] = [form.server.trim(), form.mcpTool.trim(), form.mcpToolVersion];
      const toolVersion = kept !== undefined && kept.server === server && kept.tool === tool ? { toolVersion: kept.toolVersion } : {};
      return { ok: true, match: { kind: 'mcp-tool', server, tool, ...toolVersion } };
    }
    case 'mcp-server':
      return { ok: true, match: { kind: 'mcp-server', server: form.server.trim() } };
    case 'exact-arguments': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(form.argumentsJson);
      } catch {
        return { ok: false, problem: 'The arguments are not valid JSON.' };
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { ok: false, problem: 'The arguments must be a JSON object.' };
      return { ok: true, match: { kind: 'exact-arguments', arguments: parsed as Record<string, unknown> } };
    }
  }
}

/** The form that edits an existing rule. */
export function formOfDraft(draft: RuleDraftInput): RuleForm {
  const form: RuleForm = {
    ...EMPTY_RULE_FORM,
    effect: draft.effect,
    tool: draft.tool,
    matchKind: draft.match.kind,
    scopeKind: draft.scope.kind,
    sessionId: draft.scope.kind === 'chat' ? draft.scope.sessionId : '',
    reason: draft.reason ?? '',
  };
  const match = draft.match;
  switch (match.kind) {
    case 'command-prefix':
      return { ...form, command: match.tokens.map(quoteWord).join(' '), exact: match.exact };
    case 'path-glob':
      return { ...form, glob: match.glob };
    case 'host':
      return { ...form, host: match.host };
    case 'mcp-tool':
      return {
        ...form,
        server: match.server,
        mcpTool: match.tool,
        ...(match.toolVersion === undefined ? {} : { mcpToolVersion: { server: match.server, tool: match.tool, toolVersion: match.toolVersion } }),
      };
    case 'mcp-server':
      return { ...form, server: match.server };
    case 'exact-arguments':
      return { ...form, argumentsJson: JSON.stringify(match.arguments, null, 2) };
  }
}

/**
 * Words as a shell splits them, without expansions: spaces separate, '…' keeps everything, "…" and a bare
 * backslash escape the next character. Undefined when a quote is left open.
 */
export function splitCommandWords(text: string): string[] | undefined {
  const words: string[] = [];
  let word: string | null = null;
  let quote: "'" | '"' | null = null;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charAt(index);
    if (quote === "'") {
      if (char === "'") quote = null;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = null;
      else if (char === '\\' && (text.charAt(index + 1) === '"' || text.charAt(index + 1) === '\\')) word += text.charAt(++index);
      else word += char;
    } else if (/\s/.test(char)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (char === "'" || char === '"') {
      quote = char;
      word ??= '';
    } else if (char === '\\' && index + 1 < text.length) {
      word = (word ?? '') + text.charAt(++index);
    } else {
      word = (word ?? '') + char;
    }
  }
  if (quote !== null) return undefined;
  if (word !== null) words.push(word);
  return words;
}

/** A word as a person would type it: bare when safe, else single-quoted. */
export function quoteWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
