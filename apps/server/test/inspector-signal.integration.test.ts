import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startServerProcess } from './support/server-process';

// A tool outside the sandbox's PID namespace (`--tool-sandbox none`) runs as the server's user and may send it any
// signal. SIGUSR1 would open Node's inspector to it: attached, it reads the token from the heap or runs code in the
// server. Each Airlock process holding a secret (the server, its launcher, the terminal client) takes the signal.

const LAUNCHER = fileURLToPath(new URL('../bin/airlock.mjs', import.meta.url));
const CLIENT = fileURLToPath(new URL('../../cli/bin/airlock.mjs', import.meta.url));
const INSPECTOR_OPENED = 'Debugger listening';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function folders(): Promise<{ dataDir: string; workspace: string; root: string }> {
  const root = await mkdtemp(join(tmpdir(), 'airlock-sigusr1-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  return { root, dataDir: join(root, 'data'), workspace: await mkdtemp(join(root, 'workspace-')) };
}

/** Spawns a Node program with piped output, killed at the end of the test. */
function spawnProgram(file: string, args: readonly string[], env: Record<string, string>): { child: ChildProcessByStdio<Writable, Readable, Readable>; output: () => string } {
  const child = spawn(process.execPath, [file, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  });
  return { child, output: () => text };
}

/** Waits until `output` holds `line`: the process has handled the signal, either way. */
async function waitForLine(output: () => string, line: string): Promise<void> {
  await vi.waitFor(
    () => {
      if (!output().includes(line)) throw new Error(`no "${line}" yet:\n${output()}`);
    },
    { timeout: 30_000, interval: 50 },
  );
}

describe('SIGUSR1 from another process of the same user', () => {
  it('leaves the server running with its inspector closed', async () => {
    const { dataDir, workspace } = await folders();
    const server = await startServerProcess(['--data-dir', dataDir, '--workspace', workspace], { AIRLOCK_TOKEN: randomBytes(24).toString('hex') }, cleanups);
    process.kill(server.child.pid!, 'SIGUSR1');
    await waitForLine(server.output, 'Received SIGUSR1: ignored');
    expect(server.output()).not.toContain(INSPECTOR_OPENED);
    expect(server.child.exitCode).toBeNull();
  });

  it('opens the inspector when an inspector port was asked for (a debugging session, the benchmarks)', async () => {
    const { dataDir, workspace } = await folders();
    const server = await startServerProcess(['--data-dir', dataDir, '--workspace', workspace], { AIRLOCK_TOKEN: randomBytes(24).toString('hex'), NODE_OPTIONS: '--inspect-port=127.0.0.1:0' }, cleanups);
    process.kill(server.child.pid!, 'SIGUSR1');
    await waitForLine(server.output, INSPECTOR_OPENED);
  });

  it('is ignored by the launcher, which may hold the secrets given in its environment', async () => {
    const { dataDir, workspace } = await folders();
    const launcher = spawnProgram(LAUNCHER, ['--port', '0', '--data-dir', dataDir, '--workspace', workspace], { AIRLOCK_TOKEN: randomBytes(24).toString('hex') });
    await waitForLine(launcher.output, 'running at');
    launcher.child.kill('SIGUSR1');
    await waitForLine(launcher.output, 'airlock: received SIGUSR1: ignored');
    expect(launcher.output()).not.toContain(INSPECTOR_OPENED);
    expect(launcher.child.exitCode).toBeNull();
  });

  it('is ignored by the terminal client, which holds the token', async () => {
    const { root, dataDir, workspace } = await folders();
    const token = randomBytes(24).toString('hex');
    const server = await startServerProcess(['--data-dir', dataDir, '--workspace', workspace], { AIRLOCK_TOKEN: token }, cleanups);
    const tokenFile = join(root, 'token');
    await writeFile(tokenFile, token, { mode: 0o600 });
    const client = spawnProgram(CLIENT, ['chat', '--url', server.wsUrl, '--token-file', tokenFile], {});
    // Once it has said where it is connected, the client has long been past its first lines.
    await vi.waitFor(
      () => {
        if (!/\S/.test(client.output())) throw new Error('the client has said nothing yet');
      },
      { timeout: 30_000, interval: 50 },
    );
    client.child.kill('SIGUSR1');
    await waitForLine(client.output, 'airlock: received SIGUSR1: ignored');
    expect(client.output()).not.toContain(INSPECTOR_OPENED);
  });
});
