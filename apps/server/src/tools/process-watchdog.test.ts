import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, test, vi } from 'vitest';
import { processStartTime } from './process-group';
import { isRunning, killAllWith, processesWith, uniqueToken } from './test-support';

const WATCHDOG = fileURLToPath(new URL('./process-watchdog.ts', import.meta.url));

/**
 * Starts a stand-in server that runs `code` (with the watchdog's exports in scope), kills it with SIGKILL once it
 * did, and waits for `victim` to be gone. Whatever is left is killed at the end.
 */
async function expectGoneWhenServerDies(victim: ChildProcess, tag: string, code: string): Promise<void> {
  const server = startStandIn(code);
  try {
    await watching(server);
    expect(await isRunning(victim.pid!)).toBe(true);
    server.kill('SIGKILL');
    await vi.waitFor(async () => expect(await isRunning(victim.pid!)).toBe(false), { timeout: 20_000 });
  } finally {
    server.kill('SIGKILL');
    try {
      process.kill(-victim.pid!, 'SIGKILL');
    } catch {
      // Gone already.
    }
    killAllWith(tag);
  }
}

/** A stand-in server running `code`, with the watchdog's exports in scope. */
function startStandIn(code: string): ChildProcessByStdio<null, Readable, null> {
  return spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', `import { startCallWatchdog } from ${JSON.stringify(WATCHDOG)}; ${code}; console.log('watching'); setInterval(() => undefined, 1000);`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
}

/** Resolves once the stand-in ran its code. */
function watching(server: ChildProcessByStdio<null, Readable, null>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.stdout.on('data', (chunk: Buffer) => (chunk.toString().includes('watching') ? resolve() : undefined));
    server.once('exit', (exitCode) => reject(new Error(`the stand-in server exited with ${exitCode}`)));
  });
}

/** A process group of its own, found by `tag` on its command line, whose processes carry `env` and nothing else. */
function startVictim(tag: string, env: Record<string, string> = {}): ChildProcess {
  return spawn('/bin/sh', ['-c', `sleep 300 & wait # ${tag}`], { detached: true, stdio: 'ignore', env: { PATH: '/usr/bin:/bin', ...env } });
}

describe('the watchdog of a call, when the server dies', () => {
  test('kills the call’s process group, even a member without the call’s marker', async () => {
    const tag = uniqueToken();
    // Its processes do not carry the marker (as after `env -i`): only the group finds them.
    const victim = startVictim(tag);
    await expectGoneWhenServerDies(victim, tag, `startCallWatchdog(${JSON.stringify(`AIRLOCK_TOOL_CALL=${tag}`)}).watchGroup(${victim.pid!})`);
  });

  test('kills the processes carrying the call’s marker, even when the server dies before it could name any group or pid', async () => {
    const tag = uniqueToken();
    // Stands for a process of the call (or a sandbox's pid 1) in a session of its own, known only by its marker.
    const victim = startVictim(tag, { AIRLOCK_TOOL_CALL: tag });
    await expectGoneWhenServerDies(victim, tag, `startCallWatchdog(${JSON.stringify(`AIRLOCK_TOOL_CALL=${tag}`)})`);
  });

  test('kills a process it was told of, which has no marker and is in no group it knows', async () => {
    const tag = uniqueToken();
    // Stands for a sandbox's pid 1, seen from the host: named to the watchdog by its pid only.
    const victim = startVictim(tag);
    await expectGoneWhenServerDies(victim, tag, `startCallWatchdog(${JSON.stringify(`AIRLOCK_TOOL_CALL=${tag}`)}).watchProcess(${victim.pid!})`);
  });
});

describe('the watchdog of a call, told a start time', () => {
  /** Starts a stand-in server that runs `code`, kills it once it did, and waits until the watchdog (found by `marker`) is done. */
  async function serverDiesAndWatchdogEnds(marker: string, code: string): Promise<void> {
    const server = startStandIn(code);
    try {
      await watching(server);
      // The watchdog and this stand-in carry the marker on their command lines; once the stand-in is gone, the watchdog is what is left.
      server.kill('SIGKILL');
      await vi.waitFor(() => expect(processesWith(marker)).toStrictEqual([]), { timeout: 20_000 });
    } finally {
      server.kill('SIGKILL');
      killAllWith(marker);
    }
  }

  test.each(['pid', 'group'] as const)(
    'does not kill the %s it was told of once that pid names another process: its start time differs',
    async (kind) => {
      const tag = uniqueToken();
      const marker = uniqueToken();
      // Stands for a process whose pid went, after the call's own ended, to a new process: anyone's.
      const bystander = startVictim(tag);
      try {
        const stale = processStartTime(bystander.pid!)! - 1;
        const told = kind === 'pid' ? `watchProcess(${bystander.pid!}, ${stale})` : `watchGroup(${bystander.pid!}, ${stale})`;
        await serverDiesAndWatchdogEnds(marker, `startCallWatchdog(${JSON.stringify(`AIRLOCK_TOOL_CALL=${marker}`)}).${told}`);
        expect(await isRunning(bystander.pid!)).toBe(true);
      } finally {
        try {
          process.kill(-bystander.pid!, 'SIGKILL');
        } catch {
          // Gone already.
        }
        killAllWith(tag);
      }
    },
    60_000,
  );

  test.each(['pid', 'group'] as const)('kills the %s it was told of while that pid is still its process: its start time is the same', async (kind) => {
    const tag = uniqueToken();
    const victim = startVictim(tag);
    const start = processStartTime(victim.pid!)!;
    const told = kind === 'pid' ? `watchProcess(${victim.pid!}, ${start})` : `watchGroup(${victim.pid!}, ${start})`;
    await expectGoneWhenServerDies(victim, tag, `startCallWatchdog(${JSON.stringify(`AIRLOCK_TOOL_CALL=${tag}`)}).${told}`);
  });
});
