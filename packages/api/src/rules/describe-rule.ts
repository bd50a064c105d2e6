import { canonicalJson, code, quote, reason, reasonText, type Reason } from '@airlock/core';
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
 * One sentence a person reads before saving a rule, and the model reads when a rule denies its call, in parts. Each
 * word of the rule is a code part and its `reason` a quote part: a rules file a model may have written cannot end
 * either with a backtick or a line break and go on in the server's voice on the card.
 */
export function describeRule(rule: Pick<RuleDraft, 'effect' | 'tool' | 'match' | 'scope' | 'source' | 'reason'>): Reason {
  const verb = rule.effect === 'allow' ? 'Allow' : 'Deny';
  const origin = rule.source === 'workspace-file' ? " (from the workspace's .airlock/rules.json)" : '';
  const why = rule.reason === undefined || rule.reason === '' ? [] : [': ', quote(rule.reason)];
  return reason(`${verb} `, what(rule), ` ${SCOPE_TEXT[rule.scope.kind]}${origin}`, ...why);
}

/** What the model is told when a rule denies its call. */
export function denialMessage(rule: Pick<RuleDraft, 'effect' | 'tool' | 'match' | 'scope' | 'source' | 'reason'>): string {
  return `Denied by a rule. ${reasonText(describeRule(rule))}.`;
}

function what({ tool, match }: Pick<RuleDraft, 'tool' | 'match'>): Reason {
  switch (match.kind) {
    case 'command-prefix': {
      const command = code(match.tokens.map(quoteToken).join(' '));
      return match.exact ? reason('the command ', command, ' exactly') : reason('commands starting with ', command);
    }
    case 'path-glob': {
      const verb = PATH_VERBS.get(tool);
      return reason(...(verb === undefined ? [code(tool), ' on paths'] : [verb]), ' matching ', code(match.glob));
    }
    case 'host':
      return match.host.startsWith('*.') ? reason('fetching from any subdomain of ', code(match.host.slice(2))) : reason('fetching from ', code(match.host));
    case 'mcp-tool':
      return reason('the MCP tool ', code(match.tool), ' of the server ', code(match.server), match.toolVersion === undefined ? '' : ' as it is now');
    case 'mcp-server':
      return reason('every tool of the MCP server ', code(match.server));
    case 'exact-arguments':
      // Never cut: a person trusts or saves what this sentence shows, and a cut tail would run unseen. Code, on one
      // line: a string in the arguments holds what the model wrote.
      return reason(code(tool), ' with exactly the arguments ', code(canonicalJson(match.arguments)));
  }
}

/** A word as a person would type it: bare when safe, else single-quoted. */
export function quoteToken(token: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(token) ? token : `'${token.replaceAll("'", "'\\''")}'`;
}
