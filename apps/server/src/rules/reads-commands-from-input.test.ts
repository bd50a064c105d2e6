import { reasonText } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { parseCommandLine } from './parse-command-line';
import { context, prefix, terminal } from './rule-fixtures';

async function decide(command: string, rules: Parameters<typeof evaluateRules>[1]): Promise<Record<string, unknown>> {
  const decision = await evaluateRules(terminal(command), rules, context);
  return 'unread' in decision ? { ...decision, unread: reasonText(decision.unread) } : decision;
}

describe('a program fed commands through a pipe', () => {
  const sftp = prefix('sftp host');
  const echo = prefix('echo');
  const printf = prefix('printf');
  const tail = prefix('tail');

  it('is covered by no prefix rule for it: sftp runs the `!` lines of its input here', async () => {
    for (const line of ["echo '!touch PWNED' | sftp host", "printf '!id\\n' | sftp host", 'echo x |& sftp host', 'echo x | sftp host | tail', 'echo x | sftp host -P 22']) {
      expect(await decide(line, [sftp, echo, printf, tail]), line).toMatchObject({ decision: 'ask' });
      expect((await decide(line, [sftp, echo, printf, tail])).decision, line).not.toBe('allow');
    }
  });

  it('nor when a redirection copies another descriptor to its input', async () => {
    expect((await decide('sftp host <&3', [sftp])).decision).toBe('ask');
    expect((await decide('sftp host 0<&3', [sftp])).decision).toBe('ask');
  });

  it('is covered as before with the terminal input, an empty one, or its input closed or copied from itself', async () => {
    for (const line of ['sftp host', 'sftp host </dev/null', 'sftp host <&-', 'sftp host 0<&0', 'sftp host 2>&1 | tail', 'sftp host; echo done']) {
      expect(await decide(line, [sftp, echo, tail]), line).toMatchObject({ decision: 'allow' });
    }
  });

  // Found in review: only a path (./manage.py) counted as the workspace's program; through a runner, the same program
  // fed a pipe was covered by an exact rule for the line.
  it('is covered by no rule when a runner runs what the project defines: a script, a target, the project itself', async () => {
    for (const exact of ['uv run manage.py shell', 'poetry run manage.py shell', 'npm run repl', 'pnpm repl', 'make shell', 'just repl', 'cargo run', 'go run .', 'nice make shell']) {
      const line = `echo 'import os' | ${exact}`;
      expect((await decide(line, [prefix(exact, { exact: true }), echo])).decision, line).toBe('ask');
      // With nothing fed to it, the exact rule covers the call as before.
      expect((await decide(exact, [prefix(exact, { exact: true })])).decision, exact).toBe('allow');
    }
  });

  it('behind a wrapper or a runner, and for an exact rule for a shell, an interpreter or xargs', async () => {
    const cases: [string, string][] = [
      ['echo x | nice sftp host', 'nice sftp host'],
      ["echo 'rm -rf ~' | bash", 'bash'],
      ["echo 'import os' | python3", 'python3'],
      ["printf %s '-rf ~' | xargs rm", 'xargs rm'],
      ['echo x | timeout 5 bash', 'timeout 5 bash'],
    ];
    for (const [line, exact] of cases) {
      expect((await decide(line, [prefix(exact, { exact: true }), echo, printf])).decision, line).toBe('ask');
      // Alone, with nothing fed to it, the exact rule covers the call.
      expect((await decide(exact, [prefix(exact, { exact: true })])).decision, exact).toBe('allow');
    }
  });

  it('nor a program of the workspace, which reads its input as it likes', async () => {
    const cases: [string, string][] = [
      ["echo 'import os' | ./manage.py shell", './manage.py shell'],
      ["echo 'import os' | /work/project/manage.py shell", '/work/project/manage.py shell'],
      ['echo x | nice ./run.sh', 'nice ./run.sh'],
    ];
    for (const [line, exact] of cases) {
      expect((await decide(line, [prefix(exact, { exact: true }), echo])).decision, line).toBe('ask');
      expect((await decide(exact, [prefix(exact, { exact: true })])).decision, exact).toBe('allow');
    }
  });

  it('a program that reads its input as data stays covered', async () => {
    // grep after `git log`, which may change the file system as far as the rules know, judges its words as paths that
    // may lead anywhere (`file-readers.test.ts`): `ls`, which only reads, feeds it here.
    for (const line of ['echo x | tail -n 3', 'echo x | timeout 5 tail', 'ls | grep fix']) {
      expect((await decide(line, [echo, tail, prefix('timeout 5 tail', { exact: true }), prefix('ls'), prefix('grep')])).decision, line).toBe('allow');
    }
  });

  it('is not plain for a deny rule: its input may hold what the rule names', async () => {
    const noDelete = prefix('rm -rf', { effect: 'deny' });
    expect(await decide("echo '!rm -rf ~' | sftp host", [noDelete, sftp, echo])).toStrictEqual({
      decision: 'ask',
      because: noDelete,
      unread: '`sftp` runs the commands its input holds, which the line pipes into it',
    });
    expect(await decide('sftp host', [noDelete])).toStrictEqual({ decision: 'ask' });
  });

  it('the parser says which commands read another input than the terminal', async () => {
    const line = await parseCommandLine('echo a | sftp h; sftp h <&3; sftp h 2>&1 | tail; sftp h');
    expect(line.kind === 'seen' ? line.commands.map((command) => command.inputPiped === true) : line).toStrictEqual([false, true, true, false, true, false]);
  });
});
