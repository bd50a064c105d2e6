import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AnyTool, ToolContext, ToolOutput } from '@airlock/core';

export interface TempFolder extends AsyncDisposable {
  /** Real path of the folder. */
  path: string;
}

/**
 * Returns once the kernel's coarse file clock has moved past the last change of `file` (a tick is 10 ms at most), so
 * a change made next gets a change time other than the one `file` has: it sets the times of a file of its own in the
 * system temp dir (the same file system as `tempFolder`'s) until that file's change time is later.
 */
export function nextFileClockTick(file: string): void {
  const last = statSync(file, { bigint: true }).ctimeNs;
  const probe = path.join(os.tmpdir(), `airlock-file-clock-${process.pid}`);
  writeFileSync(probe, '');
  try {
    while (statSync(probe, { bigint: true }).ctimeNs <= last) utimesSync(probe, 0, 0);
  } finally {
    rmSync(probe, { force: true });
  }
}

/** A fresh folder under `parent` (default the system temp dir), removed on dispose. */
export async function tempFolder(parent = os.tmpdir()): Promise<TempFolder> {
  const folder = await realpath(await mkdtemp(path.join(parent, 'airlock-tools-')));
  return { path: folder, [Symbol.asyncDispose]: () => rm(folder, { recursive: true, force: true }) };
}

export interface TestServer extends AsyncDisposable {
  url: string;
}

/** A real HTTP server on 127.0.0.1, closed (with its open connections) on dispose. */
export async function httpServer(handler: RequestListener): Promise<TestServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    [Symbol.asyncDispose]: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A Unix socket server at `socketPath` that answers each connection with `answer`, closed on dispose. */
export async function unixSocketServer(socketPath: string, answer: string): Promise<AsyncDisposable & { path: string }> {
  const server = createNetServer((socket) => socket.end(answer));
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return { path: socketPath, [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export function callContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return { signal: new AbortController().signal, timeoutMs: 20_000, sessionId: 'test-session', ...overrides };
}

/** Runs a tool the way the loop does (arguments parsed by its schema) and normalises the result. */
export async function runTool(tool: AnyTool, args: unknown, context: ToolContext = callContext()): Promise<ToolOutput> {
  const output = await tool.execute(tool.parameters.parse(args), context);
  if (typeof output === 'string') return { content: output, isError: false };
  const normalised = { content: output.content, isError: output.isError ?? false };
  return output.cut === undefined ? normalised : { ...normalised, cut: output.cut };
}

export function toolNamed(tools: readonly AnyTool[], name: string): AnyTool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool named ${name}`);
  return tool;
}

/** Whether a pid is a running process (a zombie awaiting its reaper runs nothing and does not count). */
export async function isRunning(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Host pids of live processes whose command line contains `token` (a unique argument), wherever they run: in a sandbox their own pids mean nothing here. */
export function processesWith(token: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      if (state === 'Z' || state === 'X') continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').some((arg) => arg.includes(token))) pids.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return pids;
}

/** Kills whatever a failed test left running with `token` on its command line. */
export function killAllWith(token: string): void {
  for (let round = 0; round < 100; round += 1) {
    const found = processesWith(token);
    if (found.length === 0) return;
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone.
      }
    }
  }
}

/** A token unique to one test, to find its processes by their command line. */
export function uniqueToken(): string {
  return `airlock${randomBytes(6).toString('hex')}`;
}

/** Both ways a call can be held, for tests that must hold on either: the bubblewrap sandbox and the process-group fallback. */
export const SANDBOX_KINDS = ['bubblewrap', 'none'] as const;
