import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { liveProcessGroupMembers } from './process-group';
import { runProcess, type RunProcessOptions } from './process-runner';
import { isRunning } from './test-support';

function sh(command: string, overrides: Partial<RunProcessOptions> = {}) {
  return runProcess({
    file: '/bin/sh',
    args: ['-c', command],
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    timeoutMs: 20_000,
    maxOutputBytes: 64 * 1024,
    killGraceMs: 1_000,
    ...overrides,
  });
}

const firstLinePid = (output: string) => Number.parseInt(output, 10);
const tempDir = () => mkdtemp(join(tmpdir(), 'airlock-runner-'));

describe('runProcess', () => {
  test('a timeout stops the whole process group, background children included', async () => {
    const result = await sh('sleep 300 & echo $!; sleep 300; wait', { timeoutMs: 300 });
    expect(result.stoppedBy).toStrictEqual({ kind: 'timeout', timeoutMs: 300 });
    expect(result.signal).toBe('SIGTERM');
    expect(result.pid).toBeTypeOf('number');
    expect(await liveProcessGroupMembers(result.pid!)).toStrictEqual([]);
    expect(await isRunning(firstLinePid(result.output))).toBe(false);
  });

  test('an abort stops the whole process group', async () => {
    const controller = new AbortController();
    let pgid = 0;
    const running = sh('sleep 300 & sleep 300 & wait', { signal: controller.signal, onSpawn: (pid) => (pgid = pid) });
    await vi.waitFor(async () => expect((await liveProcessGroupMembers(pgid)).length).toBe(3));
    controller.abort(new Error('the person pressed stop'));
    const result = await running;
    expect(result.stoppedBy).toStrictEqual({ kind: 'aborted', reason: 'the person pressed stop' });
    expect(await liveProcessGroupMembers(pgid)).toStrictEqual([]);
  });

  test('a process that ignores SIGTERM is killed after the grace period', async () => {
    const result = await sh(`trap '' TERM; echo ready; while :; do sleep 1; done`, { timeoutMs: 300, killGraceMs: 200 });
    expect(result.signal).toBe('SIGKILL');
    expect(await liveProcessGroupMembers(result.pid!)).toStrictEqual([]);
  });

  test('background processes still running when the command exits are stopped, and the call returns', async () => {
    const result = await sh('sleep 300 & echo $!');
    expect(result.exitCode).toBe(0);
    expect(result.strayProcessesStopped).toBe(true);
    expect(await isRunning(firstLinePid(result.output))).toBe(false);
  });

  test('a process that left the group with setsid is stopped when the command exits', async () => {
    // The command waits for the escaped process to have started before it exits.
    const result = await sh(`setsid sh -c 'echo $$ > started; exec sleep 300' & while [ ! -s started ]; do :; done; cat started`, {
      cwd: await tempDir(),
    });
    const escaped = firstLinePid(result.output);
    try {
      expect(result.exitCode).toBe(0);
      expect(escaped).toBeGreaterThan(0);
      expect(result.strayProcessesStopped).toBe(true);
      expect(await isRunning(escaped)).toBe(false);
    } finally {
      if (escaped > 0 && (await isRunning(escaped))) process.kill(escaped, 'SIGKILL');
    }
  });

  test('a daemon that double-forked out of the group is stopped when the call is stopped', async () => {
    const cwd = await tempDir();
    const controller = new AbortController();
    const running = sh(`(setsid sh -c 'echo $$ > started; exec sleep 300' &); sleep 300`, { cwd, signal: controller.signal });
    const escaped = await vi.waitFor(async () => {
      const pid = firstLinePid(await readFile(join(cwd, 'started'), 'utf8'));
      expect(pid).toBeGreaterThan(0);
      return pid;
    });
    try {
      controller.abort(new Error('stop'));
      const result = await running;
      expect(result.stoppedBy).toStrictEqual({ kind: 'aborted', reason: 'stop' });
      expect(await isRunning(escaped)).toBe(false);
    } finally {
      if (await isRunning(escaped)) process.kill(escaped, 'SIGKILL');
    }
  });

  test('a process that clears its environment and leaves the group cannot hold the call open through the pipes', async () => {
    const result = await sh(`env -i setsid sh -c 'echo $$; exec sleep 300' & sleep 0.2`, { drainMs: 100 });
    const escaped = firstLinePid(result.output);
    try {
      expect(result.exitCode).toBe(0);
      expect(escaped).toBeGreaterThan(0);
    } finally {
      if (escaped > 0) process.kill(escaped, 'SIGKILL');
    }
  });

  test('each call marks its processes with a value of its own', async () => {
    const [first, second] = await Promise.all([sh('echo $AIRLOCK_TOOL_CALL'), sh('echo $AIRLOCK_TOOL_CALL')]);
    expect(first.output).toMatch(/^call_[0-9a-f]{24}\n$/);
    expect(second.output).toMatch(/^call_[0-9a-f]{24}\n$/);
    expect(first.output).not.toBe(second.output);
  });

  test('50 MB of output comes back capped, with head, tail and the omitted-bytes marker', async () => {
    const result = await sh(`echo START; head -c 50000000 /dev/zero | tr '\\0' a; echo; echo END`);
    const total = 'START\n'.length + 50_000_000 + '\nEND\n'.length;
    expect(result.exitCode).toBe(0);
    expect(result.omittedBytes).toBe(total - 64 * 1024);
    expect(result.output.startsWith('START\naaaa')).toBe(true);
    expect(result.output.endsWith('aaaa\nEND\n')).toBe(true);
    expect(result.output).toContain(`\n[… ${total - 64 * 1024} bytes omitted …]\n`);
    expect(result.output.length).toBeLessThan(64 * 1024 + 100);
  });

  test('stdout and stderr are interleaved, and the exit code is reported', async () => {
    const result = await sh('echo one; echo two >&2; echo three; exit 3');
    expect(result).toMatchObject({ exitCode: 3, signal: null, output: 'one\ntwo\nthree\n', strayProcessesStopped: false });
  });

  test('a signal that ends the process is reported', async () => {
    const result = await sh('kill -KILL $$');
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL', stoppedBy: undefined });
  });

  test('stdin is closed: cat returns at once', async () => {
    const result = await sh('cat; echo "cat exited $?"');
    expect(result.output).toBe('cat exited 0\n');
  });

  test('a missing executable is reported, not thrown', async () => {
    const result = await runProcess({ file: '/nonexistent/tool', args: [], cwd: '/', env: {}, timeoutMs: 1_000, maxOutputBytes: 1_000 });
    expect(result.exitCode).toBe(127);
    expect(result.output).toContain('/nonexistent/tool');
  });

  test('a missing working directory is reported, not thrown', async () => {
    const result = await sh('true', { cwd: '/nonexistent/folder' });
    expect(result.pid).toBeUndefined();
    expect(result.spawnError).toContain('ENOENT');
  });

  test('an already aborted signal starts nothing', async () => {
    const result = await sh('echo should-not-run', { signal: AbortSignal.abort(new Error('cancelled before start')) });
    expect(result).toMatchObject({ pid: undefined, output: '', stoppedBy: { kind: 'aborted', reason: 'cancelled before start' } });
  });
});
