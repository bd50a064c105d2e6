import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { vi } from 'vitest';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
// The server in one process (tsx as a loader, not its CLI, which would run the server as a child): a signal reaches it.
const TSX_LOADER = new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url).href;

export interface ServerProcess {
  child: ChildProcess;
  wsUrl: string;
  output: () => string;
  /** Sends `signal` and waits for the process to exit. */
  stop(signal: NodeJS.Signals): Promise<void>;
}

/**
 * Starts the real server (demo model) as its own process with `args` and waits for its start-up line. `cleanups`
 * receives what kills it at the end of the test. `cwd`: the folder it is started from, default this process's.
 */
/**
 * Starts the real server as startServerProcess does and answers once it has either exited (its exit code and output)
 * or started (exit code null; `cleanups` kills it): for a start that should be refused.
 */
export async function startOrExit(
  args: readonly string[],
  env: Record<string, string>,
  cleanups: (() => Promise<void>)[],
  options: { cwd?: string } = {},
): Promise<{ exitCode: number | null; output: string }> {
  return startServerProcess(args, env, cleanups, options).then(
    (server) => ({ exitCode: null, output: server.output() }),
    (error: unknown) => {
      const exited = /^server exited with (\d+): ([\s\S]*)$/.exec(error instanceof Error ? error.message : '');
      if (!exited) throw error;
      return { exitCode: Number(exited[1]), output: exited[2]! };
    },
  );
}

export async function startServerProcess(
  args: readonly string[],
  env: Record<string, string>,
  cleanups: (() => Promise<void>)[],
  { cwd }: { cwd?: string } = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, MAIN, ...(args.includes('--port') ? [] : ['--port', '0']), ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    ...(cwd === undefined ? {} : { cwd }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const stop = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  };
  cleanups.push(() => stop('SIGKILL'));
  // A process that exits before its start-up line fails the start at once, with all it wrote.
  const closed = new Promise<never>((_, reject) => child.once('close', (code) => reject(new Error(`server exited with ${code}: ${text}`))));
  closed.catch(() => undefined);
  const port = await Promise.race([
    closed,
    vi.waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${text}`);
        const match = /running at http:\/\/airlock-[a-z2-7]+\.localhost:(\d+)\//.exec(text);
        if (!match) throw new Error('not started yet');
        return match[1]!;
      },
      { timeout: 60_000, interval: 50 },
    ),
  ]);
  return { child, wsUrl: `ws://127.0.0.1:${port}/trpc`, output: () => text, stop };
}
