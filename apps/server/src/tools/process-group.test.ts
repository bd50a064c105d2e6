import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, test, vi } from 'vitest';
import { liveMarkedProcesses, processStartTime, signalProcessGroup, terminateMarkedProcesses, terminateProcessGroup, type MarkedScope } from './process-group';
import { isRunning, uniqueToken } from './test-support';

/** A process group of its own, its leader a shell waiting on a sleep; killed at the end of the test whatever happened. */
function group(onFinished: (cleanup: () => void) => void): number {
  const leader = spawn('/bin/sh', ['-c', 'sleep 300 & wait'], { detached: true, stdio: 'ignore', env: { PATH: '/usr/bin:/bin' } });
  onFinished(() => {
    try {
      process.kill(-leader.pid!, 'SIGKILL');
    } catch {
      // Gone already.
    }
  });
  return leader.pid!;
}

describe('a process group told by its leader’s start time', () => {
  // Pids wrap (32,768 of them here, every few minutes under load): once a call's group ended, its id may be given to a
  // new process, anyone's, which may lead a group of its own. Its start time tells it from the group's leader.
  test('is not signalled once its id names a process that started at another time: that group ended, and this one is another’s', async ({ onTestFinished }) => {
    const pgid = group(onTestFinished);
    const start = processStartTime(pgid)!;
    expect(signalProcessGroup(pgid, 'SIGKILL', start - 1)).toBe(false);
    expect(await terminateProcessGroup(pgid, 1_000, start + 1)).toBe(false);
    expect(await isRunning(pgid)).toBe(true);
  });

  test('is signalled while its id names its leader, or no process (the leader gone, members left)', async ({ onTestFinished }) => {
    const pgid = group(onTestFinished);
    expect(signalProcessGroup(pgid, 'SIGKILL', processStartTime(pgid))).toBe(true);
    await vi.waitFor(async () => expect(await isRunning(pgid)).toBe(false), { timeout: 10_000 });

    const orphaned = spawn('/bin/sh', ['-c', 'sleep 300 & echo $!'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'], env: { PATH: '/usr/bin:/bin' } });
    const leaderStart = processStartTime(orphaned.pid!)!;
    const member = Number((await new Promise<string>((resolve) => orphaned.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString())))).trim());
    onTestFinished(() => {
      try {
        process.kill(member, 'SIGKILL');
      } catch {
        // Gone already.
      }
    });
    await new Promise<void>((resolve) => orphaned.once('exit', () => resolve()));
    expect(await isRunning(member)).toBe(true);
    expect(await terminateProcessGroup(orphaned.pid!, 1_000, leaderStart)).toBe(true);
    await vi.waitFor(async () => expect(await isRunning(member)).toBe(false), { timeout: 10_000 });
  });
});

/** A sleep in a process group of its own, with `env`; killed at the end of the test whatever happened. */
function sleeper(env: Record<string, string>, onFinished: (cleanup: () => void) => void): ChildProcess & { pid: number } {
  const child = spawn('/bin/sh', ['-c', 'exec sleep 300'], { detached: true, stdio: 'ignore', env: { PATH: '/usr/bin:/bin', ...env } });
  onFinished(() => child.kill('SIGKILL'));
  return child as ChildProcess & { pid: number };
}

/** Clock ticks since boot now, as /proc/<pid>/stat counts a start time (USER_HZ, 100 a second). */
function ticksSinceBoot(): number {
  return Math.floor(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 100);
}

describe('a marked process a /proc scan found', () => {
  // The processes that left a call's group are found by a scan of /proc and signalled after it: by then the one found
  // may have ended and its pid gone to a new process, anyone's (pids wrap). The pid is signalled only while it still
  // names the process that started when the scan read.
  test('is not signalled once its pid names a process that started at another time: the one found ended between the scan and the signal', async ({ onTestFinished }) => {
    const bystander = sleeper({}, onTestFinished);
    const bystanderStart = processStartTime(bystander.pid)!;
    // The marked process starts a clock tick later than the bystander, so their start times tell them apart.
    await vi.waitFor(() => expect(ticksSinceBoot()).toBeGreaterThan(bystanderStart + 1), { timeout: 10_000 });
    const [name, value] = ['AIRLOCK_TEST_MARK', uniqueToken()];
    const marked = sleeper({ [name]: value }, onTestFinished);
    const scope: MarkedScope = { marker: `${name}=${value}`, group: 0, startedSince: processStartTime(marked.pid)! };
    await vi.waitFor(async () => expect((await liveMarkedProcesses(scope)).map((found) => found.pid)).toStrictEqual([marked.pid]), { timeout: 10_000 });

    let scans = 0;
    const scan = async (scanned: MarkedScope) => {
      const found = await liveMarkedProcesses(scanned);
      scans += 1;
      if (scans > 1) return found;
      // Between this scan and its signal the process found ends, and its pid goes to another process: the bystander
      // stands for that one, its pid told with the start time the scan read.
      expect(found).toStrictEqual([{ pid: marked.pid, startTime: scope.startedSince }]);
      marked.kill('SIGKILL');
      await once(marked, 'exit');
      return [{ pid: bystander.pid, startTime: found[0]!.startTime }];
    };
    expect(await terminateMarkedProcesses(scope, 1_000, { scan })).toBe(true);
    expect(await isRunning(bystander.pid)).toBe(true);
    expect(processStartTime(bystander.pid)).toBe(bystanderStart);
  });
});
