import { describe, expect, it } from 'vitest';
import { EMPTY_RULE_FORM, draftOfForm, formOfDraft, splitCommandWords } from './rule-form';
import type { RuleDraftInput } from './rule-types';

describe('splitCommandWords', () => {
  it('splits like a shell without expanding anything', () => {
    expect(splitCommandWords('  npm   test ')).toStrictEqual(['npm', 'test']);
    expect(splitCommandWords(`'npm' "run build" a\\ b ''`)).toStrictEqual(['npm', 'run build', 'a b', '']);
    expect(splitCommandWords(`echo "say \\"hi\\""`)).toStrictEqual(['echo', 'say "hi"']);
  });

  it('refuses a quote left open', () => {
    expect(splitCommandWords(`rm 'x`)).toBeUndefined();
  });
});

describe('the rule form', () => {
  it('makes a workspace command rule, with the reason only when given', () => {
    expect(draftOfForm({ ...EMPTY_RULE_FORM, effect: 'deny', command: 'npm publish', reason: ' releases go through CI ' }, '/work/app')).toStrictEqual({
      ok: true,
      draft: {
        effect: 'deny',
        tool: 'terminal',
        match: { kind: 'command-prefix', tokens: ['npm', 'publish'], exact: false },
        scope: { kind: 'workspace', path: '/work/app' },
        source: 'user',
        reason: 'releases go through CI',
      },
    });
    const plain = draftOfForm({ ...EMPTY_RULE_FORM, command: 'ls', reason: '  ' }, '/w');
    expect(plain.ok).toBe(true);
    expect(plain.ok && Object.hasOwn(plain.draft, 'reason')).toBe(false);
  });

  it('says what it cannot turn into a draft', () => {
    expect(draftOfForm({ ...EMPTY_RULE_FORM, command: '' }, '/w')).toStrictEqual({ ok: false, problem: 'Type the command the rule is about.' });
    expect(draftOfForm({ ...EMPTY_RULE_FORM, command: 'ls' }, undefined)).toStrictEqual({ ok: false, problem: 'The server has not said which workspace it works in.' });
    expect(draftOfForm({ ...EMPTY_RULE_FORM, matchKind: 'exact-arguments', argumentsJson: '[1]' }, '/w')).toStrictEqual({ ok: false, problem: 'The arguments must be a JSON object.' });
    expect(draftOfForm({ ...EMPTY_RULE_FORM, scopeKind: 'chat', command: 'ls' }, '/w')).toStrictEqual({ ok: false, problem: 'Pick the chat this rule holds in.' });
  });

  it('edits a rule as it was saved', () => {
    const drafts: RuleDraftInput[] = [
      { effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['git', "it's"], exact: true }, scope: { kind: 'global' }, source: 'user' },
      { effect: 'deny', tool: 'write_file', match: { kind: 'path-glob', glob: 'src/**' }, scope: { kind: 'chat', sessionId: 'chat_1' }, source: 'user', reason: 'no' },
      { effect: 'allow', tool: 'web_fetch', match: { kind: 'host', host: '*.example.com' }, scope: { kind: 'workspace', path: '/w' }, source: 'user' },
      { effect: 'allow', tool: 'mcp', match: { kind: 'mcp-tool', server: 'files', tool: 'read' }, scope: { kind: 'global' }, source: 'user' },
      { effect: 'allow', tool: 'python', match: { kind: 'exact-arguments', arguments: { code: 'print(1)' } }, scope: { kind: 'global' }, source: 'user' },
    ];
    for (const draft of drafts) expect(draftOfForm(formOfDraft(draft), '/w')).toStrictEqual({ ok: true, draft });
  });

  it('keeps the tool version an MCP tool rule was made for while it names the same tool, and drops it for another', () => {
    const toolVersion = 'a'.repeat(64);
    const draft: RuleDraftInput = { effect: 'allow', tool: 'mcp', match: { kind: 'mcp-tool', server: 'files', tool: 'read', toolVersion }, scope: { kind: 'global' }, source: 'user' };
    expect(draftOfForm(formOfDraft(draft), '/w')).toStrictEqual({ ok: true, draft });
    const renamed = draftOfForm({ ...formOfDraft(draft), mcpTool: 'write' }, '/w');
    expect(renamed).toMatchObject({ ok: true, draft: { match: { kind: 'mcp-tool', server: 'files', tool: 'write' } } });
    expect(renamed.ok && 'toolVersion' in renamed.draft.match).toBe(false);
  });
});
