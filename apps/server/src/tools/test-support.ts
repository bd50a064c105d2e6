import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AnyTool, ToolContext, ToolOutput } from '@airlock/core';

export interface TempFolder extends AsyncDisposable {
  /** Real path of the folder. */
  path: string;
}

/** A fresh folder under the system temp dir, removed on dispose. */
export async function tempFolder(): Promise<TempFolder> {
  const folder = await realpath(await mkdtemp(path.join(os.tmpdir(), 'airlock-tools-')));
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

export function callContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return { signal: new AbortController().signal, timeoutMs: 20_000, sessionId: 'test-session', ...overrides };
}

/** Runs a tool the way the loop does (arguments parsed by its schema) and normalises the result. */
export async function runTool(tool: AnyTool, args: unknown, context: ToolContext = callContext()): Promise<ToolOutput> {
  const output = await tool.execute(tool.parameters.parse(args), context);
  return typeof output === 'string' ? { content: output, isError: false } : { content: output.content, isError: output.isError ?? false };
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
