// Starts the server the way `npm start` does: the build in dist/ (made here first, as start.sh does), run by the
// launcher bin/airlock.mjs with the shipped settings. Only where it listens (a free port), the folders (temporary)
// and the model server (a fake one on 127.0.0.1) are given, and the token in a file; no capacity flag, no AIRLOCK_*
// variable.
import { randomBytes } from 'node:crypto';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CAPACITY, type Capacity } from '../../src/config';
import { Inspector } from './inspector';

const SERVER_DIR = fileURLToPath(new URL('../..', import.meta.url));

export interface ShippedServer {
  wsUrl: string;
  url: string;
  token: string;
  /** The server process (the launcher's child), which every figure is about. */
  pid: number;
  /** The server's capacity settings: the shipped defaults, since none is given. */
  capacity: Capacity;
  /** Resident set of the server process, from /proc (bytes). */
  rss(): number;
  /** Opens the server's inspector (once) to collect garbage, read the heap, profile. */
  inspector(): Promise<Inspector>;
  close(): Promise<void>;
}

/** Builds dist/main.js as `npm start` does (esbuild, about a second). */
export function buildServer(): void {
  const built = spawnSync(process.execPath, ['--import', 'tsx', join(SERVER_DIR, 'build.ts')], { cwd: SERVER_DIR, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('the server build failed');
}

/**
 * `args` are appended to the launcher's arguments (default none); when they name a --database-url, no --data-dir
 * is given, since the store is then that database. `dataDir`: a data folder of the caller's, kept when the server
 * closes (a restart on the same chats); default a temporary one. `root`: the folder holding the launcher (bin/) and
 * the build (dist/), such as a build kept aside by paired-builds.ts; default this checkout's apps/server.
 */
export async function startShippedServer(options: { modelUrl: string; nodeOptions?: string; args?: readonly string[]; dataDir?: string; root?: string }): Promise<ShippedServer> {
  const launcherFile = join(options.root ?? SERVER_DIR, 'bin', 'airlock.mjs');
  const builtFile = join(options.root ?? SERVER_DIR, 'dist', 'main.js');
  const dir = mkdtempSync(join(tmpdir(), 'airlock-bench-'));
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const token = randomBytes(24).toString('hex');
  // In a file, as the README advises, rather than in the environment (where the server would warn about it).
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, token, { mode: 0o600 });
  const env: NodeJS.ProcessEnv = { ...withoutAirlockVariables(process.env), NODE_OPTIONS: options.nodeOptions ?? '--inspect-port=0' };
  const launcher: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [
      launcherFile,
      '--port',
      '0',
      '--workspace',
      workspace,
      ...(options.args?.includes('--database-url') ? [] : ['--data-dir', options.dataDir ?? join(dir, 'data')]),
      '--token-file',
      tokenFile,
      '--model-url',
      options.modelUrl,
      '--model',
      'bench',
      ...(options.args ?? []),
    ],
    { env, stdio: 'pipe' },
  );
  const exited = new Promise<void>((resolve) => launcher.once('exit', () => resolve()));
  // A bench that fails half-way must not leave a server behind: the launcher stops it when it goes.
  const stopOnExit = () => launcher.kill('SIGTERM');
  process.once('exit', stopOnExit);
  let stderr = '';
  launcher.stderr.on('data', (data: Buffer) => {
    stderr += data.toString();
    const lines = data.toString().split('\n').filter((line) => line !== '' && !/^(Debugger (listening|attached|ending)|For help, see)/.test(line));
    for (const line of lines) console.error(`[server] ${line}`);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (data: Buffer) => {
      out += data.toString();
      // The token came from a file, so the server leaves it out of the link.
      const found = /Airlock is running at http:\/\/[^/\s]+:(\d+)\//.exec(out);
      if (found) {
        launcher.stdout.off('data', onData);
        // The link names the run's *.localhost origin, which browsers resolve and Node does not.
        resolve(`http://127.0.0.1:${found[1]!}`);
      }
    };
    launcher.stdout.on('data', onData);
    void exited.then(() => reject(new Error(`the server exited before it listened:\n${out}\n${stderr}`)));
  });
  launcher.stdout.resume();
  const pid = childOf(launcher.pid!);
  const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  // The launcher falls back to tsx when dist/ is missing or older than a source: the figures would not be the build's.
  if (!command.includes(builtFile)) {
    process.off('exit', stopOnExit);
    launcher.kill('SIGTERM');
    await exited;
    throw new Error(`the server does not run ${builtFile} but: ${command.join(' ')}`);
  }
  let inspector: Promise<Inspector> | undefined;
  return {
    url,
    wsUrl: `${url.replace(/^http/, 'ws')}/trpc`,
    token,
    pid,
    capacity: { ...DEFAULT_CAPACITY },
    rss: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024,
    inspector: () => (inspector ??= Inspector.open(pid, launcher.stderr)),
    close: async () => {
      if (inspector) (await inspector).close();
      process.off('exit', stopOnExit);
      launcher.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The server process the launcher started. */
function childOf(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  if (children.length !== 1) throw new Error(`expected one server process under the launcher, found ${children.length}`);
  return children[0]!;
}

function withoutAirlockVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('AIRLOCK_')));
}
