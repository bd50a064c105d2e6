import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { manualClock } from '../mcp/fixtures/manual-clock';
import { liveProcessGroupMembers } from './process-group';
import { runProcess, type RunProcessOptions } from './process-runner';
import { probeBubblewrap } from './sandbox/probe-bubblewrap';
import { isRunning, killAllWith, processesWith, SANDBOX_KINDS, uniqueToken } from './test-support';

const tempDir = () => mkdtemp(join(tmpdir(), 'airlock-runner-'));
const firstLinePid = (output: string) => Number.parseInt(output, 10);

/** Three scans in a row find nothing: a process that hops from pid to pid is always somewhere in each. */
const goneFor = (token: string) => [processesWith(token), processesWith(token), processesWith(token)].flat();

async function sandboxFor(kind: (typeof SANDBOX_KINDS)[number], workspace: string): Promise<Partial<RunProcessOptions>> {
  if (kind === 'none') return {};
  const probe = await probeBubblewrap(true);
  if (!probe.available) throw new Error(probe.reason);
  // A bounded /tmp, as every call has one (see sandboxRunScript): the shell then runs the command as its child.
  return { sandbox: { bwrap: probe.bwrap, policy: { workspace, network: true, tmpfsBytes: 64 * 1024 * 1024 } } };
}

describe.each(SANDBOX_KINDS)('runProcess (sandbox: %s)', (kind) => {
  async function sh(command: string, overrides: Partial<RunProcessOptions> = {}) {
    const cwd = overrides.cwd ?? (await tempDir());
    return runProcess({
      file: '/bin/sh',
      args: ['-c', command],
      cwd,
      env: { PATH: '/usr/bin:/bin' },
      timeoutMs: 20_000,
      maxOutputBytes: 64 * 1024,
      killGraceMs: 1_000,
      ...(await sandboxFor(kind, cwd)),
      ...overrides,
    });
  }

  test('ends when the command leaves a FIFO where the sandbox checks its space once it ended (found in review)', async () => {
    const result = await sh('mkfifo /tmp/.airlock-space-left /dev/shm/.airlock-space-left 2>/dev/null; echo done', { timeoutMs: 15_000 });
    expect([result.stoppedBy, result.exitCode, result.output]).toStrictEqual([undefined, 0, 'done\n']);
  });

  test('a timeout stops the command and everything it started', async () => {
    const token = uniqueToken();
    const cwd = await tempDir();
    const clock = manualClock();
    try {
      const running = sh(`sh -c 'touch started; sleep 300' ${token} & sleep 300; wait`, { cwd, timeoutMs: 300, clock });
      // Its time runs out on a clock the test moves, once what it started is running.
      await vi.waitFor(() => readFile(join(cwd, 'started')), { timeout: 20_000 });
      expect(processesWith(token)).not.toStrictEqual([]);
      clock.advance(299);
      expect(clock.pending()).toStrictEqual([300]);
      clock.advance(1);
      const result = await running;
      expect(result.stoppedBy).toStrictEqual({ kind: 'timeout', timeoutMs: 300 });
      expect(result.signal).toBe('SIGTERM');
      expect(result.pid).toBeTypeOf('number');
      expect(await liveProcessGroupMembers(result.pid!)).toStrictEqual([]);
      expect(processesWith(token)).toStrictEqual([]);
    } finally {
      killAllWith(token);
    }
  });

  test('an abort stops the command and everything it started', async () => {
    const token = uniqueToken();
    const cwd = await tempDir();
    const controller = new AbortController();
    try {
      const running = sh(`sh -c 'touch started; sleep 300' ${token} & sleep 300; wait`, { cwd, signal: controller.signal });
      await vi.waitFor(() => readFile(join(cwd, 'started')), { timeout: 20_000 });
      controller.abort(new Error('the person pressed stop'));
      const result = await running;
      expect(result.stoppedBy).toStrictEqual({ kind: 'aborted', reason: 'the person pressed stop' });
      expect(processesWith(token)).toStrictEqual([]);
    } finally {
      killAllWith(token);
    }
  });

  test('a process that ignores SIGTERM is killed after the grace period', async () => {
    const cwd = await tempDir();
    const controller = new AbortController();
    const running = sh(`trap '' TERM; echo ready > ready; while :; do sleep 1; done`, { cwd, signal: controller.signal, killGraceMs: 200 });
    // Stopped once its trap is set, however long the shell took to set it (a SIGTERM before ends it).
    await vi.waitFor(() => readFile(join(cwd, 'ready')), { timeout: 20_000 });
    controller.abort(new Error('stopped'));
    const result = await running;
    expect(result.signal).toBe('SIGKILL');
    expect(await liveProcessGroupMembers(result.pid!)).toStrictEqual([]);
  });

  test('a command that catches SIGTERM to clean up has the grace period to do so, and its exit is the call’s', async () => {
    const cwd = await tempDir();
    // The clean-up takes a while, as git removing its index.lock or a test runner stopping its workers may.
    const command = `trap 'sleep 0.5; echo cleaned > cleaned; exit 3' TERM; echo ready > ready; while :; do sleep 0.05; done`;
    const controller = new AbortController();
    const running = sh(command, { cwd, signal: controller.signal, killGraceMs: 10_000 });
    await vi.waitFor(() => readFile(join(cwd, 'ready')), { timeout: 20_000 });
    controller.abort(new Error('stopped'));
    const result = await running;
    expect(await readFile(join(cwd, 'cleaned'), 'utf8')).toBe('cleaned\n');
    expect({ exitCode: result.exitCode, signal: result.signal }).toStrictEqual({ exitCode: 3, signal: null });
  });

  test('background processes still running when the command exits are stopped, and the call returns', async () => {
    const token = uniqueToken();
    try {
      const result = await sh(`sh -c 'sleep 300' ${token} & echo started`);
      expect(result.exitCode).toBe(0);
      expect(processesWith(token)).toStrictEqual([]);
    } finally {
      killAllWith(token);
    }
  });

  test('a process that left the group with setsid is stopped when the command exits', async () => {
    const token = uniqueToken();
    try {
      // The command waits for the escaped process to have started before it exits.
      const result = await sh(`setsid sh -c 'echo $$ > started; exec sleep 300' ${token} & while [ ! -s started ]; do :; done; cat started`);
      expect(result.exitCode).toBe(0);
      expect(firstLinePid(result.output)).toBeGreaterThan(0);
      expect(processesWith(token)).toStrictEqual([]);
    } finally {
      killAllWith(token);
    }
  });

  test('a daemon that double-forked out of the group is stopped when the call is stopped', async () => {
    const token = uniqueToken();
    const cwd = await tempDir();
    const controller = new AbortController();
    try {
      const running = sh(`(setsid sh -c 'echo $$ > started; exec sleep 300' ${token} &); sleep 300`, { cwd, signal: controller.signal });
      await vi.waitFor(async () => expect(firstLinePid(await readFile(join(cwd, 'started'), 'utf8'))).toBeGreaterThan(0), { timeout: 20_000 });
      controller.abort(new Error('stop'));
      const result = await running;
      expect(result.stoppedBy).toStrictEqual({ kind: 'aborted', reason: 'stop' });
      expect(processesWith(token)).toStrictEqual([]);
    } finally {
      killAllWith(token);
    }
  });

  test('a process that calls setsid, then forks and exits every 2 ms, does not outlive the call', async () => {
    const token = uniqueToken();
    const cwd = await tempDir();
    // After setsid, each generation forks the next and exits at once, and the child waits 2 ms: its pid changes every
    // 2 ms. It ignores SIGTERM, as a daemon may.
    const hop = 'import os, signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nos.setsid()\nopen("started", "w").write("go")\nwhile True:\n    if os.fork():\n        os._exit(0)\n    time.sleep(0.002)\n';
    await writeFile(join(cwd, 'hop.py'), hop);
    try {
      const result = await sh(`python3 hop.py ${token} & while [ ! -s started ]; do :; done; echo escaped`, { cwd });
      expect(result.output).toBe('escaped\n');
      expect(goneFor(token)).toStrictEqual([]);
    } finally {
      killAllWith(token);
    }
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

  test('input is written to stdin, which is then closed; a command that reads none of it still ends', async () => {
    const text = `line one\n${'x'.repeat(200_000)}\nüñ last`;
    const read = await sh('wc -c; echo "wc exited $?"', { input: text });
    expect(read.output).toBe(`${Buffer.byteLength(text)}\nwc exited 0\n`);
    const ignored = await sh('exit 4', { input: 'y'.repeat(1_000_000) });
    expect(ignored).toMatchObject({ exitCode: 4, signal: null, output: '' });
  });

  test('a missing executable is reported, not thrown', async () => {
    const cwd = await tempDir();
    const result = await runProcess({ file: '/nonexistent/tool', args: [], cwd, env: {}, timeoutMs: 5_000, maxOutputBytes: 1_000, ...(await sandboxFor(kind, cwd)) });
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

describe('runProcess without a sandbox', () => {
  const sh = (command: string, overrides: Partial<RunProcessOptions> = {}) =>
    runProcess({ file: '/bin/sh', args: ['-c', command], cwd: '/', env: { PATH: '/usr/bin:/bin' }, timeoutMs: 20_000, maxOutputBytes: 64 * 1024, killGraceMs: 1_000, ...overrides });

  test('says when it stopped background processes left running', async () => {
    const result = await sh('sleep 300 & echo $!');
    expect(result.strayProcessesStopped).toBe(true);
    expect(await isRunning(firstLinePid(result.output))).toBe(false);
  });

  test('a process that clears its environment and leaves the group cannot hold the call open through the pipes', async () => {
    const cwd = await tempDir();
    // The command ends once the process has written its pid to the pipe it holds, however long it took to start.
    const result = await sh(`env -i setsid sh -c 'echo $$; touch started; exec sleep 300' & while [ ! -e started ]; do :; done`, { cwd, drainMs: 100 });
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
});

describe('runProcess in a bubblewrap sandbox', () => {
  test('the command sees only its own processes, and a process that cleared its environment and left the group ends with the call', async () => {
    const cwd = await tempDir();
    const token = uniqueToken();
    try {
      const result = await runProcess({
        file: '/bin/sh',
        args: ['-c', `env -i setsid sh -c ': > started; exec sleep 300' ${token} & while [ ! -e started ]; do :; done; ls /proc | grep -c '^[0-9]'`],
        cwd,
        env: { PATH: '/usr/bin:/bin' },
        timeoutMs: 20_000,
        maxOutputBytes: 64 * 1024,
        ...(await sandboxFor('bubblewrap', cwd)),
      });
      // bubblewrap's pid 1, the shell that runs the command, the command's shell, the escaped sleep, ls and grep.
      expect(Number.parseInt(result.output, 10)).toBeLessThanOrEqual(6);
      expect(processesWith(token)).toStrictEqual([]);
    } finally {
      killAllWith(token);
    }
  });
});
