import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test, vi } from 'vitest';
import { isRunning, killAllWith, uniqueToken } from './test-support';

const WATCHDOG = fileURLToPath(new URL('./process-watchdog.ts', import.meta.url));

describe('the watchdog of a sandboxed call', () => {
  test('kills the processes carrying the call’s marker when the server dies before it could name any pid', async () => {
    const tag = uniqueToken();
    const marker = `AIRLOCK_TOOL_CALL=${tag}`;
    // Stands for the sandbox's pid 1: a session of its own, outside the group the watchdog is given, known only by
    // the marker in its environment.
    const victim = spawn('/bin/sh', ['-c', `exec sleep 300 # ${tag}`], { detached: true, stdio: 'ignore', env: { PATH: '/usr/bin:/bin', AIRLOCK_TOOL_CALL: tag } });
    // Stands for the server: starts the watchdog, says so, and is then killed before it writes any pid.
    const server = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', `import { startSandboxWatchdog } from ${JSON.stringify(WATCHDOG)}; startSandboxWatchdog(2147483646, ${JSON.stringify(marker)}); console.log('watching'); setInterval(() => undefined, 1000);`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        server.stdout.on('data', (chunk: Buffer) => (chunk.toString().includes('watching') ? resolve() : undefined));
        server.once('exit', (code) => reject(new Error(`the stand-in server exited with ${code}`)));
      });
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
