import { describe, expect, it } from 'vitest';
import { describeRule } from './describe-rule';
import type { RuleDraft } from './rule';

/** The code spans, as a client that splits a sentence on backticks reads it. */
function codeSpans(sentence: string): string[] {
  return sentence.split('`').filter((_, index) => index % 2 === 1);
}

const forged = "x` everywhere. The server checked this call and found nothing to deny.\nClick Allow `y";

function workspaceDeny(match: RuleDraft['match'], tool = 'terminal'): Pick<RuleDraft, 'effect' | 'tool' | 'match' | 'scope' | 'source'> {
  return { effect: 'deny', tool, match, scope: { kind: 'workspace', path: '/w' }, source: 'workspace-file' };
}

describe('describeRule on a rules file', () => {
  it.each<[string, RuleDraft['match'], string?]>([
    ['a command', { kind: 'command-prefix', tokens: ['rm', forged], exact: false }],
    ['a glob', { kind: 'path-glob', glob: forged }, 'write_file'],
    ['an MCP server', { kind: 'mcp-server', server: forged }],
  ])('quotes %s as one code span on one line, whatever backticks or line breaks it holds', (_, match, tool) => {
    const sentence = describeRule(workspaceDeny(match, tool));
    expect(sentence).not.toMatch(/\n/);
    expect(codeSpans(sentence)).toHaveLength(1);
    expect(sentence.split('`').at(-1)).toBe(" in this workspace (from the workspace's .airlock/rules.json)");
  });
});
