import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test, vi } from 'vitest';
import { isRunning, killAllWith, uniqueToken } from './test-support';

const WATCHDOG = fileURLToPath(new URL('./process-watchdog.ts', import.meta.url));

/** Stands for the server: runs `code` (with the watchdog's exports in scope), says so, and then runs until it is killed. */
function standInServer(code: string) {
  const server = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', `import { startProcessWatchdog, startSandboxWatchdog } from ${JSON.stringify(WATCHDOG)}; ${code}; console.log('watching'); setInterval(() => undefined, 1000);`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const watching = new Promise<void>((resolve, reject) => {
    server.stdout.on('data', (chunk: Buffer) => (chunk.toString().includes('watching') ? resolve() : undefined));
    server.once('exit', (code) => reject(new Error(`the stand-in server exited with ${code}`)));
  });
  return { server, watching };
}

describe('the watchdog of a call without a sandbox', () => {
  test('kills the call’s process group, even a member without the call’s marker, when the server dies', async () => {
    const tag = uniqueToken();
    // A process group of its own whose processes do not carry the marker (as after `env -i`): only the group finds them.
    const victim = spawn('/bin/sh', ['-c', `sleep 300 & wait # ${tag}`], { detached: true, stdio: 'ignore', env: { PATH: '/usr/bin:/bin' } });
    const { server, watching } = standInServer(
      `startProcessWatchdog({ group: ${victim.pid!}, marker: ${JSON.stringify(`AIRLOCK_TOOL_CALL=${tag}`)}, startedSince: 0 })`,
    );
    try {
      await watching;
      expect(await isRunning(victim.pid!)).toBe(true);
      server.kill('SIGKILL');
      await vi.waitFor(async () => expect(await isRunning(victim.pid!)).toBe(false), { timeout: 20_000 });
    } finally {
      server.kill('SIGKILL');
      killGroup(victim.pid!);
      killAllWith(tag);
    }
  });
});

describe('the watchdog of a sandboxed call', () => {
  test('kills the processes carrying the call’s marker when the server dies before it could name any pid', async () => {
    const tag = uniqueToken();
    const marker = `AIRLOCK_TOOL_CALL=${tag}`;
    // Stands for the sandbox's pid 1: a session of its own, outside the group the watchdog is given, known only by
    // the marker in its environment.
    const victim = spawn('/bin/sh', ['-c', `exec sleep 300 # ${tag}`], { detached: true, stdio: 'ignore', env: { PATH: '/usr/bin:/bin', AIRLOCK_TOOL_CALL: tag } });
    // The server starts the watchdog and is then killed before it writes any pid.
    const { server, watching } = standInServer(`startSandboxWatchdog(2147483646, ${JSON.stringify(marker)})`);
    try {
      await watching;
      expect(await isRunning(victim.pid!)).toBe(true);
      server.kill('SIGKILL');
      await vi.waitFor(async () => expect(await isRunning(victim.pid!)).toBe(false), { timeout: 20_000 });
    } finally {
      server.kill('SIGKILL');
      victim.kill('SIGKILL');
      killAllWith(tag);
    }
  });
});

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
