import { spawn } from 'node:child_process';
import { describe, expect, test, vi } from 'vitest';
import { processStartTime, signalProcessGroup, terminateProcessGroup } from './process-group';
import { isRunning } from './test-support';

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
