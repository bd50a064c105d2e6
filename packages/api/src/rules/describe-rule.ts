import { canonicalJson, codeSpan } from '@airlock/core';
import type { RuleDraft, RuleScope } from './rule';

const SCOPE_TEXT: Record<RuleScope['kind'], string> = {
  chat: 'in this chat',
  workspace: 'in this workspace',
  global: 'everywhere',
};

const PATH_VERBS = new Map([
  ['read_file', 'reading files'],
  ['write_file', 'writing files'],
  ['list_directory', 'listing folders'],
]);

/**
 * One sentence a person reads before saving a rule, and the model reads when a rule denies its call. Each word of the
 * rule is a `codeSpan`: a rules file a model may have written cannot end a span with a backtick or a line break in a
 * token and go on in the server's voice on the card.
 */
export function describeRule(rule: Pick<RuleDraft, 'effect' | 'tool' | 'match' | 'scope' | 'source' | 'reason'>): string {
  const verb = rule.effect === 'allow' ? 'Allow' : 'Deny';
  const origin = rule.source === 'workspace-file' ? " (from the workspace's .airlock/rules.json)" : '';
  const reason = rule.reason === undefined || rule.reason === '' ? '' : `: ${rule.reason}`;
  return `${verb} ${what(rule)} ${SCOPE_TEXT[rule.scope.kind]}${origin}${reason}`;
}

/** What the model is told when a rule denies its call. */
export function denialMessage(rule: Pick<RuleDraft, 'effect' | 'tool' | 'match' | 'scope' | 'source' | 'reason'>): string {
  return `Denied by a rule. ${describeRule(rule)}.`;
}

function what({ tool, match }: Pick<RuleDraft, 'tool' | 'match'>): string {
  switch (match.kind) {
    case 'command-prefix': {
      const command = codeSpan(match.tokens.map(quoteToken).join(' '));
      return match.exact ? `the command ${command} exactly` : `commands starting with ${command}`;
    }
    case 'path-glob':
      return `${PATH_VERBS.get(tool) ?? `${codeSpan(tool)} on paths`} matching ${codeSpan(match.glob)}`;
    case 'host':
      return match.host.startsWith('*.')
        ? `fetching from any subdomain of ${codeSpan(match.host.slice(2))}`
        : `fetching from ${codeSpan(match.host)}`;
    case 'mcp-tool':
      return `the MCP tool ${codeSpan(match.tool)} of the server ${codeSpan(match.server)}${match.toolVersion === undefined ? '' : ' as it is now'}`;
    case 'mcp-server':
      return `every tool of the MCP server ${codeSpan(match.server)}`;
    case 'exact-arguments': {
      // Never cut: a person trusts or saves what this sentence shows, and a cut tail would run unseen.
      return `${codeSpan(tool)} with exactly the arguments ${canonicalJson(match.arguments)}`;
    }
  }
}

/** A word as a person would type it: bare when safe, else single-quoted. */
export function quoteToken(token: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(token) ? token : `'${token.replaceAll("'", "'\\''")}'`;
}
