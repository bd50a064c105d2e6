import type { RuleCall, RuleContext } from './evaluate-rules';
import { ruleSchema, type Rule, type RuleEffect, type RuleMatch, type RuleScope } from '@airlock/api';

/** For tests: the workspace, chat and context rules are evaluated in. */
export const WORKSPACE = '/work/project';
export const SESSION = 'chat-1';
export const context: RuleContext = { sessionId: SESSION, workspace: WORKSPACE };

let counter = 0;

interface FixtureRule {
  effect?: RuleEffect;
  tool?: string;
  match: RuleMatch;
  scope?: RuleScope;
  source?: Rule['source'];
  reason?: string;
}

/** A valid rule (checked by the schema), global and from the person unless said otherwise. */
export function rule(fields: FixtureRule): Rule {
  counter += 1;
  return ruleSchema.parse({
    id: `rule-${counter}`,
    effect: fields.effect ?? 'allow',
    tool: fields.tool ?? toolFor(fields.match),
    match: fields.match,
    scope: fields.scope ?? { kind: 'global' },
    source: fields.source ?? 'user',
    createdAt: '2025-01-01T00:00:00.000Z',
    ...(fields.reason === undefined ? {} : { reason: fields.reason }),
  });
}

function toolFor(match: RuleMatch): string {
  switch (match.kind) {
    case 'command-prefix':
      return 'terminal';
    case 'path-glob':
      return 'write_file';
    case 'host':
      return 'web_fetch';
    case 'mcp-tool':
    case 'mcp-server':
      return 'mcp';
    case 'exact-arguments':
      return 'python';
  }
}

/** A command rule from a command line split on spaces: `prefix('npm test')`. */
export function prefix(command: string, fields: Omit<FixtureRule, 'match'> & { exact?: boolean } = {}): Rule {
  const { exact = false, ...rest } = fields;
  return rule({ ...rest, match: { kind: 'command-prefix', tokens: command.split(' '), exact } });
}

export function terminal(command: string): RuleCall {
  return { tool: 'terminal', arguments: { command } };
}
