import { execFileSync, spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { shellQuoted } from '../src/shell-quoted';
import { startServerProcess } from './support/server-process';

const LAUNCHER = fileURLToPath(new URL('../bin/airlock.mjs', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const TSX_LOADER = new URL('../node_modules/tsx/dist/esm/index.mjs', import.meta.url).href;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function folders(): Promise<{ root: string; args: string[] }> {
  const root = await mkdtemp(join(tmpdir(), 'airlock-signals-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  await mkdir(join(root, 'ws'));
  return { root, args: ['--port', '0', '--workspace', join(root, 'ws'), '--data-dir', join(root, 'data'), '--tool-sandbox', 'none'] };
}

/** Spawns a Node program with piped output, killed at the end of the test if it is still running. */
function spawnProgram(args: readonly string[]): { child: ChildProcessByStdio<null, Readable, Readable>; output: () => string; exited: Promise<number | NodeJS.Signals> } {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, HOME: process.env.HOME, AIRLOCK_TOKEN: randomBytes(24).toString('hex') }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal!)));
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await exited;
  });
  return { child, output: () => text, exited };
}

/**
 * Lets the MCP server waiting on the FIFO `gate` go on (it reads an end of file). Not blocking: a server killed by the
 * signal took its MCP server with it, and no one is left to read.
 */
function openGate(gate: string): void {
  try {
    closeSync(openSync(gate, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error;
  }
}

async function waitForLine(output: () => string, line: string): Promise<void> {
  await vi.waitFor(
    () => {
      if (!output().includes(line)) throw new Error(`no "${line}" yet:\n${output()}`);
    },
    { timeout: 60_000, interval: 50 },
  );
}

describe('SIGHUP (the terminal closed)', () => {
  // Found in review: the launcher forwards SIGHUP, which the server did not handle: it died at once, its runs not
  // suspended, and the launcher exited 1.
  it('forwarded by the launcher, shuts the server down as SIGTERM does', async () => {
    const { args } = await folders();
    const launcher = spawnProgram([LAUNCHER, ...args]);
    await waitForLine(launcher.output, 'running at');

    launcher.child.kill('SIGHUP');

    expect(await launcher.exited).toBe(0);
    expect(launcher.output()).toContain('Shutting down…');
  }, 90_000);

  it('sent to the server itself, shuts it down as SIGTERM does', async () => {
    const { args } = await folders();
    const server = await startServerProcess(args, { AIRLOCK_TOKEN: randomBytes(24).toString('hex') }, cleanups);

    await server.stop('SIGHUP');

    expect({ exitCode: server.child.exitCode, signal: server.child.signalCode }).toStrictEqual({ exitCode: 0, signal: null });
    expect(server.output()).toContain('Shutting down…');
  }, 90_000);
});

/** The processes `pid` started, from /proc; none once it has exited. */
async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.split(' ').filter((entry) => entry !== '').map(Number);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** util-linux's script, which runs a command in a terminal of its own: closing it is closing that terminal. */
const hasScript = spawnSync('script', ['--version']).status === 0;

describe('the terminal closed under the launcher', () => {
  // Found with a real terminal: the server wrote "Shutting down…" to a terminal that was gone, and the write's EIO
  // killed it then and there. Its data folder's write-ahead log, removed by a clean close, was left behind.
  it.runIf(hasScript)('the server shuts down though nothing can be written any more', async () => {
    const { root, args } = await folders();
    const transcript = join(root, 'transcript');
    const command = [process.execPath, LAUNCHER, ...args].map((arg) => shellQuoted(arg)).join(' ');
    const script = spawn('script', ['-qfc', `exec ${command}`, transcript], { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME }, stdio: ['pipe', 'ignore', 'ignore'] });
    cleanups.push(async () => {
      if (script.exitCode === null && script.signalCode === null) script.kill('SIGKILL');
    });
    await vi.waitFor(async () => expect(await readFile(transcript, 'utf8')).toContain('running at'), { timeout: 60_000, interval: 50 });
    const [launcher] = await childrenOf(script.pid!);
    const [server] = await childrenOf(launcher!);
    expect(server).toBeDefined();
    cleanups.push(async () => {
      for (const pid of [server!, launcher!]) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    });
    expect(await readdir(join(root, 'data'))).toContain('airlock.db-wal');

    // As closing the terminal's window does: the launcher, leading the terminal's session, gets SIGHUP and forwards it.
    script.kill('SIGKILL');

    await vi.waitFor(() => expect(isRunning(server!)).toBe(false), { timeout: 60_000, interval: 50 });
    expect(await readdir(join(root, 'data'))).toStrictEqual(['airlock.db']);
  }, 90_000);
});

describe('a stop asked for while the server starts', () => {
  // Before, SIGINT and SIGTERM were handled only once the server listened: one sent while it started (an MCP server
  // starting, the database asked) killed it at once, with what it had started left to fend for itself.
  it.each([['SIGTERM'], ['SIGINT'], ['SIGHUP']] as const)('%s: the step under way ends, what was started is stopped, and the server exits 0 without listening', async (signal) => {
    const { root, args } = await folders();
    const config = join(root, 'config');
    await mkdir(config, { mode: 0o700 });
    const started = join(config, 'started');
    const gate = join(config, 'gate');
    execFileSync('mkfifo', [gate]);
    // An MCP server that holds the start until the test opens the gate, then exits (its start is reported as failed).
    await writeFile(join(config, 'mcp.json'), JSON.stringify({ mcpServers: { slow: { command: '/bin/sh', args: ['-c', `: > ${started}; read line < ${gate}`] } } }), { mode: 0o600 });
    const server = spawnProgram(['--import', TSX_LOADER, MAIN, ...args, '--mcp-config', join(config, 'mcp.json')]);
    await vi.waitFor(() => stat(started), { timeout: 60_000, interval: 50 });

    server.child.kill(signal);
    // Once said, the signal was taken; a server killed by it has exited instead.
    await Promise.race([waitForLine(server.output, 'Shutting down…'), server.exited]);
    openGate(gate);

    expect(await server.exited).toBe(0);
    expect(server.output()).not.toContain('running at');
  }, 90_000);
});
