import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { MAX_FOLLOWED_COMMANDS, MAX_FOLLOWED_WORDS, parseCommandLine, type CommandLine } from './parse-command-line';
import { context, prefix, rule, terminal } from './rule-fixtures';

const denyRm = prefix('rm -rf', { effect: 'deny' });

async function decide(command: string, rules = [denyRm]): Promise<string> {
  return (await evaluateRules(terminal(command), rules, context)).decision;
}

function words(line: CommandLine): number {
  return line.reachable.reduce((sum, command) => sum + command.length, 0);
}

/**
 * `eval` with `tokens` strings of distinct commands (`c0;c1;…`), and an exact allow rule for it: the one kind of
 * command rule that could allow it. Past `MAX_FOLLOWED_COMMANDS` commands, the eval'd line is followed no further.
 */
function evalOf(tokens: number, last = 'true') {
  const values = Array.from({ length: tokens }, (_, token) => Array.from({ length: 100 }, (_, index) => `c${token}x${index}`).join(';'));
  values.push(last);
  const command = `eval ${values.map((value) => `'${value}'`).join(' ')}`;
  return { command, allow: rule({ match: { kind: 'command-prefix', tokens: ['eval', ...values], exact: true } }) };
}

describe('commands behind wrappers, examined each once', () => {
  it('examines each command of a chain of 16 wrappers once', async () => {
    const line = await parseCommandLine(`${'nohup '.repeat(16)}true`);
    expect(line.kind).toBe('seen');
    expect(line.reachable).toHaveLength(17);
  });

  it('follows a chain of 100 wrappers to the command at its end', async () => {
    const command = `${'nohup '.repeat(100)}rm -rf x`;
    const line = await parseCommandLine(command);
    expect(line.kind).toBe('seen');
    expect(line.reachable).toHaveLength(101);
    expect(line.reachable.at(-1)).toStrictEqual(['rm', '-rf', 'x']);
    expect(await decide(command)).toBe('deny');
  });

  it('examines each command of a chain of 12 find -exec once', async () => {
    const line = await parseCommandLine(`${'find . -exec '.repeat(12)}true`);
    expect(line.kind).toBe('seen');
    expect(line.reachable).toHaveLength(13);
  });

  it('follows a chain of 100 find -exec to the command at its end', async () => {
    const command = `${'find . -exec '.repeat(100)}rm -rf x`;
    const line = await parseCommandLine(command);
    expect(line.reachable).toHaveLength(101);
    expect(await decide(command)).toBe('deny');
  });

  it('stops at the cap in a chain of 1000 find -exec, and the line is asked about, never allowed', async () => {
    const command = `${'find . -exec '.repeat(1000)}rm -rf x`;
    const line = await parseCommandLine(command);
    expect(line).toMatchObject({ kind: 'refused', incomplete: true });
    expect(line.reachable.length).toBeLessThanOrEqual(MAX_FOLLOWED_COMMANDS + 1);
    expect(words(line)).toBeLessThanOrEqual(MAX_FOLLOWED_WORDS + 4002);
    expect(await decide(command)).toBe('ask');
  });

  it('stops at the cap in a chain of 4615 find -exec, without running out of stack', async () => {
    const command = `${'find . -exec '.repeat(4615)}rm -rf x`;
    const line = await parseCommandLine(command);
    expect(line).toMatchObject({ kind: 'refused', incomplete: true });
    expect(await decide(command)).toBe('ask');
  });

  it('stops at the cap in a line-long chain of wrappers, and the line is asked about', async () => {
    const command = `${'nohup '.repeat(10_000)}true`;
    const line = await parseCommandLine(command);
    expect(line).toMatchObject({ kind: 'refused', incomplete: true });
    expect(words(line)).toBeLessThanOrEqual(MAX_FOLLOWED_WORDS + 10_002);
  });

  it('asks about a line past the cap, even with an exact allow rule for it', async () => {
    const under = evalOf(2);
    expect((await parseCommandLine(under.command)).kind).toBe('seen');
    // A rule for eval's words asks anyway (the line eval hands its shell is not judged by the files it reads); one for
    // the call's exact text allows it while every command on the line is seen.
    expect(await decide(under.command, [denyRm, under.allow])).toBe('ask');
    const underText = rule({ tool: 'terminal', match: { kind: 'exact-arguments', arguments: { command: under.command } } });
    expect(await decide(under.command, [denyRm, underText])).toBe('allow');
    const over = evalOf(Math.ceil(MAX_FOLLOWED_COMMANDS / 100) + 1, 'rm -rf x');
    const line = await parseCommandLine(over.command);
    expect(line).toMatchObject({ kind: 'refused', incomplete: true });
    expect(line.reachable.length).toBeLessThanOrEqual(MAX_FOLLOWED_COMMANDS + 1);
    expect(await decide(over.command, [denyRm, over.allow])).toBe('ask');
    // Not even a rule for its exact text allows it while a deny rule could be hiding past the cap.
    const exactText = rule({ tool: 'terminal', match: { kind: 'exact-arguments', arguments: { command: over.command } } });
    expect(await decide(over.command, [denyRm, exactText])).toBe('ask');
    expect(await decide(over.command, [exactText])).toBe('allow');
  });

  it('stops at the cap with many find -exec in one find', async () => {
    const command = `find .${Array.from({ length: MAX_FOLLOWED_COMMANDS + 1 }, (_, index) => ` -exec x${index} \\;`).join('')}`;
    const line = await parseCommandLine(command);
    expect(line).toMatchObject({ kind: 'refused', incomplete: true });
    expect(line.reachable.length).toBeLessThanOrEqual(MAX_FOLLOWED_COMMANDS + 1);
  });

  it('still checks every command the line itself shows when the cap is reached', async () => {
    const command = `${'nohup '.repeat(10_000)}true; rm -rf x`;
    expect((await parseCommandLine(command)).kind).toBe('refused');
    expect(await decide(command)).toBe('deny');
  });

  it('does not count the commands the line itself shows against the cap', async () => {
    const command = Array.from({ length: MAX_FOLLOWED_COMMANDS + 100 }, (_, index) => `true ${index}`).join('; ');
    const line = await parseCommandLine(command);
    expect(line.kind).toBe('seen');
    expect(await decide(command, [denyRm, prefix('true')])).toBe('allow');
  });

  it('parses each nested command line once', async () => {
    const line = await parseCommandLine(`${"sudo bash -c 'rm -rf x' ; ".repeat(50)}`);
    expect(line.reachable).toStrictEqual([
      ['sudo', 'bash', '-c', 'rm -rf x'],
      ['bash', '-c', 'rm -rf x'],
      ['rm', '-rf', 'x'],
    ]);
  });
});

describe('lines the parser is slow on', () => {
  // The grammar's error recovery is quadratic on these: unbounded, each held the server's thread for seconds to minutes.
  const slow: [string, string][] = [
    ['nested array assignments', `${'a=('.repeat(15_000)}${')'.repeat(15_000)}`],
    ['nested subscripts', `${'x['.repeat(20_000)}${']'.repeat(20_000)}`],
    ['nested [[', `${'[[ '.repeat(10_000)}x${' ]]'.repeat(10_000)}`],
    ['closing before opening', `${')'.repeat(30_000)}${'('.repeat(30_000)}`],
  ];

  // Read with a smaller limit than the server's (1 s): each shape takes seconds unbounded, so the outcome is the same.
  it.each(slow)('gives up on %s: the line is refused as unread', async (_shape, command) => {
    const line = await parseCommandLine(command, { budgetMs: 50 });
    expect(line).toMatchObject({ kind: 'refused', reason: 'a command line the parser could not read within 50 ms', incomplete: true });
  });

  it('asks about a line it gave up on, even with allow rules for its words', async () => {
    const command = `echo a; ${')'.repeat(30_000)}${'('.repeat(30_000)}`;
    expect(await decide(command, [denyRm, prefix('a'), prefix('echo')])).toBe('ask');
  });

  it('still finds a command a deny rule names in a line it gave up on', async () => {
    const command = `rm -rf x; ${')'.repeat(30_000)}${'('.repeat(30_000)}`;
    expect(await decide(command, [denyRm, prefix('rm')])).toBe('deny');
  });

  it('reads the next line in full after giving up on one', async () => {
    await parseCommandLine(`${'a=('.repeat(15_000)}${')'.repeat(15_000)}`, { budgetMs: 50 });
    const line = await parseCommandLine('npm test && echo done');
    expect(line.kind).toBe('seen');
    expect(line.kind === 'seen' && line.commands.map((command) => command.words.map((word) => (word.kind === 'literal' ? word.value : '?')))).toStrictEqual([['npm', 'test'], ['echo', 'done']]);
  });
});

describe('which commands of a line may run at once', () => {
  it('marks the commands of a pipeline and those the shell runs in the background', async () => {
    const line = await parseCommandLine('a | b && c & d; e | f; g');
    expect(line.kind === 'seen' && line.commands.map((command) => [command.words.map((word) => (word.kind === 'literal' ? word.value : '?')).join(' '), command.alongsideUntil])).toStrictEqual([
      ['a', Infinity],
      ['b', Infinity],
      ['c', Infinity],
      ['d', undefined],
      ['e', 6],
      ['f', 6],
      ['g', undefined],
    ]);
  });
});
