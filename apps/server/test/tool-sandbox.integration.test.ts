import { resolveStartupLink } from '@airlock/client';
import { spawn, spawnSync, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, onTestFinished, test, vi } from 'vitest';
import { createBuiltinTools } from '../src/tools';
import { inotifyLimits } from '../src/tools/sandbox/namespace-limits';
import { probeBubblewrap } from '../src/tools/sandbox/probe-bubblewrap';
import { bubblewrapArgs } from '../src/tools/sandbox/sandbox-policy';
import { callContext, isRunning, killAllWith, processesWith, runTool, SANDBOX_KINDS, tempFolder, toolNamed, uniqueToken } from '../src/tools/test-support';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeTurn } from './support/fake-openai-server';
import { connectClient, watchRun } from './support/test-airlock';

const LAUNCHER = fileURLToPath(new URL('../bin/airlock.mjs', import.meta.url));

interface LaunchedServer extends AsyncDisposable {
  launcher: ChildProcess;
  serverPid: number;
  wsUrl: string;
  token: string;
  /** Everything the launcher and the server printed so far. */
  output(): string;
  /** Resolves when the server's output ends (it and the launcher are gone). */
  ended: Promise<void>;
}

interface User {
  uid: number;
  gid: number;
}

/**
 * Starts Airlock as `npm start` does, through its launcher, and waits until it listens. The token is had for the
 * start-up link's code, or is `token` when it came from a file (the server then leaves it out of the link). With `user`,
 * the launcher runs as that user (this process being root), its supplementary groups dropped. `serverPid` is the
 * launcher's child.
 */
async function launch(options: { env: Record<string, string>; args: string[]; token?: string; descriptors?: ReadonlyMap<number, number>; user?: User; openFiles?: number }): Promise<LaunchedServer> {
  // Descriptors of this process the launcher inherits, by the number it gets, as a shell's `200</folder` would leave them.
  const extra = options.descriptors ?? new Map<number, number>();
  const stdio = Array.from({ length: Math.max(3, ...[...extra.keys()].map((fd) => fd + 1)) }, (_, fd) => extra.get(fd) ?? (fd === 0 ? 'ignore' : fd <= 2 ? 'pipe' : 'ignore'));
  // With `openFiles`, under that limit on open files, soft and hard, as `ulimit -n` sets it where it starts.
  const command = [process.execPath, LAUNCHER, '--port', '0', ...options.args];
  const [file, ...args] = options.openFiles === undefined ? command : ['/bin/sh', '-c', `ulimit -n ${options.openFiles} && exec "$0" "$@"`, ...command];
  const launcher = spawn(file!, args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...options.env },
    stdio,
    ...options.user,
  }) as ChildProcessByStdio<null, Readable, Readable>;
  let text = '';
  launcher.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  launcher.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  // The server writes to the same pipes: they end when both are gone.
  const ended = new Promise<void>((resolve) => launcher.stdout.once('close', () => resolve()));
  let match: RegExpExecArray;
  try {
    match = await vi.waitFor(
      () => {
        const found = /running at (http:\/\/[^/\s]+:(\d+)\/(?:#code=\S+)?)[^\n]*\n/.exec(text);
        if (found === null) throw new Error(`not listening yet:\n${text}`);
        return found;
      },
      { timeout: 30_000, interval: 50 },
    );
  } catch (error) {
    // A server that never said it listens is not left running: the launcher's end takes it down with it.
    launcher.kill('SIGKILL');
    throw error;
  }
  const serverPid = childOf(launcher.pid!);
  const close = async () => {
    if (launcher.exitCode === null && launcher.signalCode === null) launcher.kill('SIGTERM');
    try {
      process.kill(serverPid, 'SIGKILL');
    } catch {
      // Gone already.
    }
    await ended;
  };
  // The printed link's one-time code is exchanged for the token, as a browser opening it does.
  const link = match[1]!;
  let token = options.token;
  try {
    if (link.includes('#code=')) token = (await resolveStartupLink(link)).token;
    if (token === undefined) throw new Error(`no code in the start-up link and no token given:\n${text}`);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    launcher,
    serverPid,
    // The link names the run's *.localhost origin, which browsers resolve and Node does not.
    wsUrl: `ws://127.0.0.1:${match[2]!}/trpc`,
    token,
    output: () => text,
    ended,
    [Symbol.asyncDispose]: close,
  };
}

function childOf(parent: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) return Number(entry);
    } catch {
      // Gone.
    }
  }
  throw new Error(`no child of ${parent}`);
}

/**
 * Has the fake model propose one terminal call, allows it, and resolves with the run once the call started. `after`:
 * what the model answers once the call ended; none when the test enqueues it later, for another run to go first.
 */
async function runTerminal(server: LaunchedServer, fake: FakeOpenAIServer, command: string, after: FakeTurn[] = [{ text: 'done' }]) {
  fake.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command } }] }, ...after);
  const client = connectClient(server.wsUrl, server.token);
  const sessionId = `s-${randomBytes(4).toString('hex')}`;
  const run = watchRun(client, { sessionId, runId: `run-${sessionId}`, message: 'run it' });
  const start = await run.next('tool-start');
  await client.trpc.chat.confirmTool.mutate({ sessionId, approvalId: start.approvalId, decision: 'allow' });
  return { run, client };
}

/** Has the fake model propose one terminal call, allows it, and resolves with how the call ended. */
async function allowedCall(server: LaunchedServer, fake: FakeOpenAIServer, command: string) {
  const { run, client } = await runTerminal(server, fake, command);
  try {
    return await run.next('tool-end');
  } finally {
    await client.close();
  }
}

const secret = (prefix: string) => `${prefix}-${randomBytes(24).toString('hex')}`;

describe('secrets are out of a sandboxed call’s reach', () => {
  // Every environment of every process it can see, the files secrets came from and the data folder.
  const dump = (files: string[], dataDir: string) =>
    `for f in /proc/[0-9]*/environ; do cat "$f"; echo; done; cat /proc/$PPID/environ; ${files.map((file) => `cat ${file};`).join(' ')} ls -A ${dataDir}; cat ${dataDir}/* ; echo dump-done`;

  test.each(['environment', 'files'] as const)('given through the %s: no terminal call can print the token or the API key', async (through) => {
    await using folder = await tempFolder();
    await using fake = await startFakeOpenAIServer();
    const [workspace, dataDir, secretsDir] = ['ws', 'data', 'secrets'].map((name) => path.join(folder.path, name)) as [string, string, string];
    await Promise.all([mkdir(workspace), mkdir(dataDir), mkdir(secretsDir)]);
    const token = secret('tok');
    const apiKey = secret('key');
    const tokenFile = path.join(secretsDir, 'token');
    const keyFile = path.join(secretsDir, 'key');
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    await writeFile(keyFile, apiKey, { mode: 0o600 });
    const env: Record<string, string> = through === 'environment' ? { AIRLOCK_TOKEN: token, AIRLOCK_API_KEY: apiKey } : { AIRLOCK_TOKEN_FILE: tokenFile, AIRLOCK_API_KEY_FILE: keyFile };
    await using server = await launch({ env, args: ['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'bubblewrap'], token });
    // A token from a file is never printed; the one from the environment is, in the start-up link.
    if (through === 'files') expect(server.output()).not.toContain(token);
    else expect(server.token).toBe(token);
    expect(fake.authorizations.at(-1) ?? `Bearer ${apiKey}`).toBe(`Bearer ${apiKey}`);
    const { run, client } = await runTerminal(server, fake, dump([tokenFile, keyFile], dataDir));
    try {
      const end = await run.next('tool-end');
      expect(end.result).toContain('dump-done');
      expect(end.result).toContain('PATH=');
      expect(end.result).not.toContain(token);
      expect(end.result).not.toContain(apiKey);
    } finally {
      await client.close();
    }
  }, 60_000);

  test('no terminal call can list or read the browser profile of the server’s home folder, which remembers the token', async () => {
    await using folder = await tempFolder();
    await using fake = await startFakeOpenAIServer();
    const [home, workspace] = ['home', 'ws'].map((name) => path.join(folder.path, name)) as [string, string];
    const profile = path.join(home, '.config', 'chromium', 'Default');
    await Promise.all([mkdir(profile, { recursive: true }), mkdir(workspace)]);
    await using server = await launch({ env: { HOME: home }, args: ['--workspace', workspace, '--model-url', fake.url, '--tool-sandbox', 'bubblewrap'] });
    await writeFile(path.join(profile, 'History'), `http://airlock.localhost/#token=${server.token}`);
    const end = await allowedCall(server, fake, `ls -A ~/.config/chromium; cat ~/.config/chromium/Default/History 2>&1; echo dump-done`);
    expect(end.result).toBe(`cat: ${profile}/History: No such file or directory\ndump-done\nexit code: 0`);
  }, 60_000);

  test('without a sandbox, the server’s own environment holds no secret given through the environment', async () => {
    await using folder = await tempFolder();
    const token = secret('tok');
    const apiKey = secret('key');
    await using server = await launch({
      env: { AIRLOCK_TOKEN: token, AIRLOCK_API_KEY: apiKey },
      args: ['--workspace', folder.path, '--data-dir', path.join(folder.path, 'data'), '--model-url', 'http://127.0.0.1:9/v1', '--tool-sandbox', 'none'],
    });
    const environ = readFileSync(`/proc/${server.serverPid}/environ`, 'latin1');
    expect(environ).toContain('AIRLOCK_LAUNCHER_FD=3');
    expect(environ).not.toContain(token);
    expect(environ).not.toContain(apiKey);
    expect(server.output()).toContain('Warning: AIRLOCK_TOKEN came from the environment');
    expect(server.output()).toContain('Tools run without a sandbox: the sandbox is turned off (--tool-sandbox none)');
  }, 60_000);
});

describe('a grant for `git status` runs the real git', () => {
  test.each(SANDBOX_KINDS)('not one planted in the workspace on a relative PATH entry of the server (sandbox: %s)', async (sandbox) => {
    await using folder = await tempFolder();
    await using fake = await startFakeOpenAIServer();
    const [workspace, dataDir] = ['ws', 'data'].map((name) => path.join(folder.path, name)) as [string, string];
    await mkdir(path.join(workspace, 'node_modules/.bin'), { recursive: true });
    await mkdir(dataDir);
    expect(spawnSync('git', ['init', '-q'], { cwd: workspace }).status).toBe(0);
    await writeFile(path.join(workspace, 'node_modules/.bin/git'), '#!/bin/sh\necho PLANTED CODE RAN\n', { mode: 0o755 });
    const env = { PATH: `node_modules/.bin:${process.env.PATH ?? '/usr/bin:/bin'}` };
    await using server = await launch({ env, args: ['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', sandbox] });
    const client = connectClient(server.wsUrl, server.token);
    try {
      const sessionId = `s-${randomBytes(4).toString('hex')}`;
      const call = { toolCalls: [{ name: 'terminal', arguments: { command: 'git status --short' } }] };
      fake.enqueue(call, { text: 'done' });
      const first = watchRun(client, { sessionId, runId: `run-1-${sessionId}`, message: 'status' });
      const start = await first.next('tool-start');
      await client.trpc.chat.confirmTool.mutate({ sessionId, approvalId: start.approvalId, decision: 'allow', always: true });
      await first.ended;
      // The next one runs unasked, on the grant.
      fake.enqueue(call, { text: 'done' });
      const second = watchRun(client, { sessionId, runId: `run-2-${sessionId}`, message: 'status again' });
      const end = await second.next('tool-end');
      expect(end.result).not.toContain('PLANTED');
      expect(end.result).toContain('?? node_modules/');
      await second.ended;
    } finally {
      await client.close();
    }
  }, 90_000);
});

describe('what started the server does not reach a call', () => {
  test.each(SANDBOX_KINDS)('descriptors the launcher was started with reach no terminal call (sandbox: %s)', async (sandbox) => {
    await using folder = await tempFolder();
    await using fake = await startFakeOpenAIServer();
    const outside = path.join(folder.path, 'outside');
    await Promise.all([mkdir(outside), mkdir(path.join(folder.path, 'ws'))]);
    await writeFile(path.join(outside, 'secret'), 'outside-the-workspace');
    await writeFile(path.join(folder.path, 'log'), '');
    const [folderFd, logFd] = [openSync(outside, 'r'), openSync(path.join(folder.path, 'log'), 'a')];
    let server: LaunchedServer;
    try {
      server = await launch({
        env: {},
        args: ['--workspace', path.join(folder.path, 'ws'), '--data-dir', path.join(folder.path, 'data'), '--model-url', fake.url, '--tool-sandbox', sandbox],
        descriptors: new Map([
          [200, folderFd],
          [201, logFd],
        ]),
      });
    } finally {
      closeSync(folderFd);
      closeSync(logFd);
    }
    await using _server = server;
    const command = `ls /proc/self/fd | tr '\\n' ' '; echo; cat /proc/self/fd/200/secret; echo written > /proc/self/fd/201; echo end`;
    const { run, client } = await runTerminal(server, fake, command);
    try {
      const end = await run.next('tool-end');
      // ls's own: stdin, stdout, stderr, and the folder it lists.
      expect(end.result).toMatch(/^0 1 2 3 \n[^]*end\n/);
      expect(end.result).not.toContain('outside-the-workspace');
      expect(readFileSync(path.join(folder.path, 'log'), 'utf8')).toBe('');
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('a stopped call', () => {
  test.each(SANDBOX_KINDS)('is reported cancelled only once its processes are gone, even one that ignores SIGTERM (sandbox: %s)', async (sandbox) => {
    await using folder = await tempFolder();
    await using fake = await startFakeOpenAIServer();
    const tag = uniqueToken();
    await using server = await launch({ env: {}, args: ['--workspace', folder.path, '--data-dir', path.join(folder.path, '.data'), '--model-url', fake.url, '--tool-sandbox', sandbox] });
    fake.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: `sh -c "trap '' TERM; while :; do sleep 0.1; done" ${tag}` } }] });
    const client = connectClient(server.wsUrl, server.token);
    const sessionId = `s-${randomBytes(4).toString('hex')}`;
    try {
      const run = watchRun(client, { sessionId, runId: `run-${sessionId}`, message: 'run it' });
      const start = await run.next('tool-start');
      await client.trpc.chat.confirmTool.mutate({ sessionId, approvalId: start.approvalId, decision: 'allow' });
      await vi.waitFor(() => expect(processesWith(tag).length).toBeGreaterThanOrEqual(1), { timeout: 10_000 });
      await client.trpc.chat.cancel.mutate({ sessionId });
      const end = await run.next('tool-end');
      // Looked at once, as the person sees the card change: not waited for.
      expect(processesWith(tag)).toStrictEqual([]);
      expect(end).toMatchObject({ outcome: 'cancelled' });
      expect(end.result).toContain('was running. It was told to stop, but it may have done part or all of its work.');
      expect(await run.ended).toMatchObject({ reason: 'cancelled' });
    } finally {
      await client.close();
      killAllWith(tag);
    }
  }, 60_000);
});

describe('nothing outlives a crash', () => {
  test.each(SANDBOX_KINDS)('a server killed with SIGKILL takes its running terminal call with it (sandbox: %s)', async (sandbox) => {
    await using folder = await tempFolder();
    await using fake = await startFakeOpenAIServer();
    const tag = uniqueToken();
    await using server = await launch({ env: {}, args: ['--workspace', folder.path, '--data-dir', path.join(folder.path, '.data'), '--model-url', fake.url, '--tool-sandbox', sandbox] });
    const { client } = await runTerminal(server, fake, `setsid sh -c 'while :; do date > heartbeat; sleep 0.05; done' ${tag} & sh -c 'sleep 300' ${tag}`);
    try {
      await vi.waitFor(() => expect(processesWith(tag).length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
      process.kill(server.serverPid, 'SIGKILL');
      await vi.waitFor(async () => expect(await isRunning(server.serverPid)).toBe(false), { timeout: 10_000 });
      await vi.waitFor(() => expect(processesWith(tag)).toStrictEqual([]), { timeout: 10_000 });
    } finally {
      await client.close();
      killAllWith(tag);
    }
  }, 60_000);

  test('a launcher killed with SIGKILL takes the server with it, which shuts down as on SIGTERM', async () => {
    await using folder = await tempFolder();
    await using server = await launch({ env: {}, args: ['--workspace', folder.path, '--data-dir', path.join(folder.path, 'data'), '--model-url', 'http://127.0.0.1:9/v1'] });
    server.launcher.kill('SIGKILL');
    await server.ended;
    expect(await isRunning(server.serverPid)).toBe(false);
    expect(server.output()).toContain('The launcher exited.\nShutting down…');
  }, 60_000);
});

describe.skipIf(!(await probeBubblewrap(true)).available)('a hidden path inside the workspace stays hidden when what holds it moves', () => {
  /** A workspace holding the data folder and the token file, as when the server starts in the home folder. */
  async function home(folder: string) {
    const dataDir = path.join(folder, '.local', 'share', 'airlock');
    const tokenFile = path.join(folder, '.config', 'airlock', 'token');
    const [db, token] = [secret('db'), secret('tok')];
    await mkdir(dataDir, { recursive: true });
    await mkdir(path.dirname(tokenFile), { recursive: true });
    await writeFile(path.join(dataDir, 'airlock.db'), db);
    await writeFile(tokenFile, token);
    const tools = createBuiltinTools({ workspace: folder, sandbox: 'bubblewrap', hiddenPaths: [dataDir, tokenFile], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    const terminal = (command: string) => runTool(toolNamed(tools, 'terminal'), { command }, callContext());
    const python = (code: string) => runTool(toolNamed(tools, 'python'), { code }, callContext());
    return { db, token, terminal, python, at: (...names: string[]) => path.join(folder, ...names) };
  }
  const readAll = 'cat .local/share/airlock/* .local/share2/airlock/* .local2/share/airlock/* .config/airlock/token .config2/airlock/token .config/airlock2/token; echo read-done';

  test('a call cannot move a folder that holds a hidden path, so the next call still sees nothing', async () => {
    await using folder = await tempFolder();
    const { db, token, terminal } = await home(folder.path);
    const moves = await terminal('mv .local/share .local/share2 && echo moved; mv .local .local2 && echo moved; mv .config/airlock .config/airlock2 && echo moved; echo tried');
    expect(moves.content).toContain('Device or resource busy');
    expect(moves.content).not.toContain('moved\n');
    const next = await terminal(readAll);
    expect(next.content).toContain('read-done');
    expect(next.content).not.toContain(db);
    expect(next.content).not.toContain(token);
  });

  test('after a hidden path moved, calls are refused and run nothing until it is back', async () => {
    await using folder = await tempFolder();
    const { db, token, terminal, python, at } = await home(folder.path);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    onTestFinished(() => warn.mockRestore());
    expect(await terminal('echo first')).toStrictEqual({ content: 'first\nexit code: 0', isError: false });
    // Moved from outside the sandbox (by the person, or a process the sandbox does not hold).
    await rename(at('.local', 'share'), at('.local', 'share2'));
    for (const refused of [await terminal(`touch ran; ${readAll}`), await python("open('ran', 'w'); print(open('.local/share2/airlock/airlock.db').read())")]) {
      expect(refused.isError).toBe(true);
      expect(refused.content).toMatch(/^Refused: ".*\/\.local\/share\/airlock", which tool calls must not see, has been moved or removed since the server started/);
      expect(refused.content).not.toContain(db);
      expect(refused.content).not.toContain(token);
    }
    expect(existsSync(at('ran'))).toBe(false);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^Tool call of session test-session: Refused: ".*\/\.local\/share\/airlock", which tool calls must not see/));
    // A new folder at the old place is not the data folder.
    await mkdir(at('.local', 'share', 'airlock'), { recursive: true });
    expect((await terminal(readAll)).content).toContain('has been moved or replaced since the server started');
    await rename(at('.local', 'share'), at('.local', 'share-new'));
    await rename(at('.local', 'share2'), at('.local', 'share'));
    const back = await terminal(readAll);
    expect(back.content).toContain('read-done');
    expect(back.content).not.toContain(db);
  });

  test('a move from outside while a call runs does not uncover the hidden path within that call', async () => {
    await using folder = await tempFolder();
    const { db, terminal, at } = await home(folder.path);
    const call = terminal('touch ready; while [ ! -e go ]; do :; done; ls -A .local/share2/airlock; cat .local/share2/airlock/airlock.db; echo read-done');
    await vi.waitFor(() => expect(existsSync(at('ready'))).toBe(true), { timeout: 20_000 });
    await rename(at('.local', 'share'), at('.local', 'share2'));
    await writeFile(at('go'), '');
    const result = await call;
    expect(result.content).toContain('read-done');
    expect(result.content).toContain('.local/share2/airlock/airlock.db: No such file or directory');
    expect(result.content).not.toContain(db);
  });
});

const NOBODY: User = { uid: 65534, gid: 65534 };
const TOOL_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * Who the server runs as for the limit on processes to hold: this user, or nobody when this is root (the kernel does
 * not count root's processes). Or why it cannot run here: that user cannot run the server (a checkout only root may
 * read), start a bubblewrap sandbox (unprivileged user namespaces turned off), find python3 or reach the temporary folder.
 */
async function limitedUser(): Promise<{ user: User | undefined } | { skip: string }> {
  const probe = await probeBubblewrap(true);
  if (!probe.available) return { skip: probe.reason };
  const user = process.getuid?.() === 0 ? NOBODY : undefined;
  const checks = [
    { what: 'run the server', file: process.execPath, args: [LAUNCHER, '--help'] },
    { what: 'start a bubblewrap sandbox', file: probe.bwrap, args: [...bubblewrapArgs({ workspace: '/tmp', network: true }), '--', '/bin/sh', '-c', 'exit 0'] },
    { what: `find python3 on ${TOOL_PATH}`, file: '/bin/sh', args: ['-c', 'exec python3 -c ""'] },
    { what: `reach ${os.tmpdir()}, where the test's folders are`, file: '/bin/sh', args: ['-c', 'cd "$1"', 'sh', os.tmpdir()] },
  ];
  for (const { what, file, args } of checks) {
    const result = spawnSync(file, args, { env: { PATH: TOOL_PATH }, cwd: '/', stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000, ...user });
    if (result.status !== 0) {
      const detail = result.stderr?.toString().trim().split('\n')[0] || result.error?.message || `exit status ${result.status}`;
      return { skip: `${user === undefined ? 'this user' : 'nobody (uid 65534)'} cannot ${what} here: ${detail}` };
    }
  }
  return { user };
}

/**
 * Launches Airlock with the bubblewrap sandbox on the workspace `ws` it makes in `folder`, the model at `fake` and `args`
 * added; with `user`, as that user, to whom the folder and the workspace are given.
 */
async function launchSandboxed(options: { folder: string; fake: FakeOpenAIServer; user: User | undefined; args?: string[] }): Promise<LaunchedServer & { workspace: string }> {
  const { folder, fake, user } = options;
  const workspace = path.join(folder, 'ws');
  await mkdir(workspace);
  if (user !== undefined) for (const entry of [folder, workspace]) await chown(entry, user.uid, user.gid);
  const server = await launch({
    env: { PATH: TOOL_PATH, HOME: folder },
    args: ['--workspace', workspace, '--data-dir', path.join(folder, 'data'), '--model-url', fake.url, '--tool-sandbox', 'bubblewrap', ...(options.args ?? [])],
    ...(user === undefined ? {} : { user }),
  });
  return Object.assign(server, { workspace });
}

const who = await limitedUser();
const bubblewrapProbe = await probeBubblewrap(true);
const notRoot = process.getuid?.() === 0 ? undefined : `the tests run as uid ${process.getuid?.()}, not root`;
const rootSkip = notRoot ?? (bubblewrapProbe.available ? undefined : bubblewrapProbe.reason);

describe('the limit on processes of a sandboxed call', () => {
  const LIMIT = 32;
  // Forks at most four times the limit, each child waiting to be killed: without the limit the test fails, not the machine.
  const forkLoop = (tag: string) =>
    `python3 -c '
import os, time
forked = 0
try:
    for _ in range(${4 * LIMIT}):
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        forked += 1
finally:
    print("forked", forked, flush=True)
' ${tag}`;
  // Each background subshell is a fork of the shell (so carries the tag), and waits on a fifo no one writes to.
  const shellForkLoop = (tag: string) =>
    `exec /bin/sh -c 'mkfifo /tmp/hold; i=0; while [ $i -lt ${4 * LIMIT} ]; do (read x < /tmp/hold) & i=$((i+1)); done; echo started $i' ${tag}`;

  test.skipIf('skip' in who)(
    `stops a fork loop in python and in the shell: the call ends with its error, and the server runs the next call${'skip' in who ? ` (skipped: ${who.skip})` : ''}`,
    async () => {
      const user = 'user' in who ? who.user : undefined;
      await using folder = await tempFolder();
      await using fake = await startFakeOpenAIServer();
      const tag = uniqueToken();
      await using server = await launchSandboxed({ folder: folder.path, fake, user, args: ['--tool-max-processes', String(LIMIT)] });
      try {
        // Its real user id, which the kernel counts processes by.
        expect(/^Uid:\t(\d+)/m.exec(readFileSync(`/proc/${server.serverPid}/status`, 'utf8'))?.[1]).toBe(String(user?.uid ?? process.getuid?.()));
        expect(server.output()).not.toContain('Warning: Airlock runs as root');

        const python = await allowedCall(server, fake, forkLoop(tag));
        expect(python.outcome).toBe('error');
        expect(python.result).toContain('BlockingIOError: [Errno 11] Resource temporarily unavailable');
        expect(python.result).toMatch(/\nexit code: 1$/);
        const forked = Number(/^forked (\d+)$/m.exec(python.result)?.[1]);
        // bubblewrap's pid 1 and python count too.
        expect(forked).toBeGreaterThan(0);
        expect(forked).toBeLessThanOrEqual(LIMIT - 2);

        const shell = await allowedCall(server, fake, shellForkLoop(tag));
        expect(shell.outcome).toBe('error');
        // dash gives up at once; bash retries for 15 s first.
        expect(shell.result).toMatch(/Cannot fork|fork: Resource temporarily unavailable/);
        expect(shell.result).not.toContain('started');

        // The call's processes went with it, and the server goes on.
        await vi.waitFor(() => expect(processesWith(tag)).toStrictEqual([]), { timeout: 10_000 });
        expect(await allowedCall(server, fake, 'echo still here')).toMatchObject({ outcome: 'executed', result: 'still here\nexit code: 0' });
        expect(await isRunning(server.serverPid)).toBe(true);
      } finally {
        killAllWith(tag);
      }
    },
    60_000,
  );

  test.skipIf(rootSkip !== undefined)(
    `as root, the server says once at start-up that the limit does not apply${rootSkip === undefined ? '' : ` (skipped: ${rootSkip})`}`,
    async () => {
      await using folder = await tempFolder();
      await using server = await launch({
        env: {},
        args: ['--workspace', folder.path, '--data-dir', path.join(folder.path, 'data'), '--model-url', 'http://127.0.0.1:9/v1', '--tool-sandbox', 'bubblewrap', '--tool-max-processes', '64'],
      });
      const warning = 'Warning: Airlock runs as root, so the limit of 64 processes per tool call does not apply (Linux does not count root’s processes against it)';
      expect(server.output().split(warning)).toHaveLength(2);
    },
    60_000,
  );
});

describe('the open files of a sandboxed call', () => {
  test.skipIf('skip' in who)(
    `each of its processes may have --tool-max-open-files open, soft and hard, up to which a program may raise its soft limit${'skip' in who ? ` (skipped: ${who.skip})` : ''}`,
    async () => {
      const user = 'user' in who ? who.user : undefined;
      await using folder = await tempFolder();
      await using fake = await startFakeOpenAIServer();
      await using server = await launchSandboxed({ folder: folder.path, fake, user, args: ['--tool-max-open-files', '4096'] });
      // What `ulimit -n 4096` and the JVM or Go (which raise the soft limit to the hard one) need.
      const seen = await allowedCall(
        server,
        fake,
        'ulimit -Sn; ulimit -Hn; ulimit -Sn 1024 && ulimit -Sn 4096 && echo raised; ' +
          'python3 -u -c "import resource; print(*resource.getrlimit(resource.RLIMIT_NOFILE)); resource.setrlimit(resource.RLIMIT_NOFILE, (4097, 4097))" 2>&1',
      );
      expect(seen.outcome).toBe('error');
      expect(seen.result).toMatch(/^4096\n4096\nraised\n4096 4096\n/);
      // Past it, as the hard limit stands.
      expect(seen.result).toContain('ValueError: not allowed to raise maximum limit\n');
      expect(seen.result).toMatch(/\nexit code: 1$/);
    },
    60_000,
  );
});

describe('--tool-max-open-files above the server’s own limit', () => {
  const HARD = 4096;
  const skipped = 'skip' in who ? ` (skipped: ${who.skip})` : '';

  /** A workspace (owned by the limited user, when the tests have one) and the settings each server here starts with. */
  async function openFilesSetUp() {
    const user = 'user' in who ? who.user : undefined;
    const folder = await tempFolder();
    const fake = await startFakeOpenAIServer();
    const workspace = path.join(folder.path, 'ws');
    await mkdir(workspace);
    if (user !== undefined) for (const entry of [folder.path, workspace]) await chown(entry, user.uid, user.gid);
    return {
      user,
      fake,
      args: ['--workspace', workspace, '--data-dir', path.join(folder.path, 'data'), '--model-url', fake.url, '--tool-sandbox', 'bubblewrap'],
      env: { PATH: TOOL_PATH, HOME: folder.path },
      [Symbol.asyncDispose]: async () => {
        await fake[Symbol.asyncDispose]();
        await folder[Symbol.asyncDispose]();
      },
    };
  }

  test.skipIf('skip' in who)(
    `given, stops start-up naming both${skipped}`,
    async () => {
      await using setUp = await openFilesSetUp();
      const { user, args, env } = setUp;
      // Given above it: the calls would get the server's limit, not the one asked for.
      const refused = spawn('/bin/sh', ['-c', `ulimit -n ${HARD} && exec "$0" "$@"`, process.execPath, LAUNCHER, '--port', '0', ...args, '--tool-max-open-files', String(2 * HARD)], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        ...user,
      });
      onTestFinished(() => void refused.kill('SIGKILL'));
      let said = '';
      refused.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()));
      refused.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
      let code: number | null | undefined;
      refused.once('close', (exitCode) => (code = exitCode));
      // Ended, or running (as before: then the test fails on what it said).
      await vi.waitFor(() => expect(code !== undefined || said.includes('running at')).toBe(true), { timeout: 30_000, interval: 50 });
      expect(said).toContain(
        `airlock: --tool-max-open-files: ${2 * HARD} is above this server's own limit on open files (${HARD}, ulimit -Hn), which no process of a tool ` +
          `call can go past: raise that limit where Airlock starts, or give at most ${HARD}\n`,
      );
      expect(said).not.toContain('running at');
      await vi.waitFor(() => expect(code).toBe(1), { timeout: 10_000 });
    },
    120_000,
  );

  test.skipIf('skip' in who)(
    `given at it, runs, and its calls get it${skipped}`,
    async () => {
      await using setUp = await openFilesSetUp();
      const { user, args, env, fake } = setUp;
      await using server = await launch({ env, args: [...args, '--tool-max-open-files', String(HARD)], openFiles: HARD, ...(user === undefined ? {} : { user }) });
      expect(server.output()).not.toContain('--tool-max-open-files');
      expect(await allowedCall(server, fake, 'ulimit -Hn')).toMatchObject({ outcome: 'executed', result: `${HARD}\nexit code: 0` });
    },
    120_000,
  );

  test.skipIf('skip' in who)(
    `by default, the server says the limit its calls get${skipped}`,
    async () => {
      await using setUp = await openFilesSetUp();
      const { user, args, env, fake } = setUp;
      // Not given, the default above it: the server says what its calls get.
      await using server = await launch({ env, args, openFiles: 512, ...(user === undefined ? {} : { user }) });
      expect(server.output()).toContain(
        "Warning: this server's own limit on open files is 512 (ulimit -Hn), below the 1024 each process of a tool call may have by default " +
          '(--tool-max-open-files): its calls get 512. Raise that limit where Airlock starts.\n',
      );
      expect(await allowedCall(server, fake, 'ulimit -Hn')).toMatchObject({ outcome: 'executed', result: '512\nexit code: 0' });
    },
    120_000,
  );
});

describe('the memory a sandboxed call can fill', () => {
  const SIZE_MIB = 8;

  test.skipIf('skip' in who)(
    `its /tmp and /dev/shm hold at most --tool-tmp-size and a file per 4 KiB of it, it writes no other place in memory, and the answer says the space ran out${'skip' in who ? ` (skipped: ${who.skip})` : ''}`,
    async () => {
      const user = 'user' in who ? who.user : undefined;
      await using folder = await tempFolder();
      await using fake = await startFakeOpenAIServer();
      await using server = await launchSandboxed({ folder: folder.path, fake, user, args: ['--tool-tmp-size', String(SIZE_MIB)] });
      // Eight times the size: without the bound every byte of it is written, and the test fails, not the machine.
      for (const place of ['/tmp', '/dev/shm']) {
        const filled = await allowedCall(server, fake, `head -c ${8 * SIZE_MIB}M /dev/zero > ${place}/fill; status=$?; echo "wrote $(wc -c < ${place}/fill)"; exit $status`);
        expect(filled.outcome).toBe('error');
        expect(filled.result).toContain(`error writing 'standard output': No space left on device`);
        expect(filled.result).toContain(`wrote ${SIZE_MIB * 1024 * 1024}\n`);
        expect(filled.result).toContain(
          `airlock: this call's ${place} ran out of space: it holds at most ${SIZE_MIB} MiB, in memory (--tool-tmp-size); write larger files in the workspace\n`,
        );
        expect(filled.result).toMatch(/\nexit code: 1$/);
      }
      // /dev itself, the socket folders' covers, and a tmpfs of the call's own in a user namespace it makes.
      const elsewhere = await allowedCall(
        server,
        fake,
        'for place in /dev /run; do head -c 1M /dev/zero > $place/fill 2>/dev/null && echo "wrote $place"; done; ' +
          'unshare --user --map-root-user --mount sh -c "mount -t tmpfs none /mnt && echo mounted"; echo done',
      );
      expect(elsewhere.outcome).toBe('executed');
      expect(elsewhere.result).not.toContain('wrote');
      expect(elsewhere.result).not.toContain('mounted');
      expect(elsewhere.result).toContain('Operation not permitted');
      expect(elsewhere.result).toMatch(/\ndone\nexit code: 0$/);
      // Empty files take no page: without a bound on their number, every one of eight times as many is made.
      const files = (SIZE_MIB * 1024 * 1024) / 4096;
      for (const place of ['/tmp', '/dev/shm']) {
        const made = await allowedCall(
          server,
          fake,
          `python3 -c 'import os\nmade = 0\ntry:\n    while made < ${8 * files}: os.close(os.open(f"${place}/{made}", os.O_CREAT | os.O_WRONLY)); made += 1\nexcept OSError as error: print(error.strerror)\nprint("made", made)'`,
        );
        // Its root folder and the files the calls above left there count too.
        expect(made.result).toMatch(/^No space left on device\nmade \d+\n/);
        const count = Number(/^made (\d+)$/m.exec(made.result)?.[1]);
        expect(count).toBeGreaterThan(files - 8);
        expect(count).toBeLessThan(files);
      }
      // A call that fits says nothing more, and the server runs on.
      expect(await allowedCall(server, fake, 'head -c 1M /dev/zero > /tmp/fits && echo fits')).toMatchObject({ outcome: 'executed', result: 'fits\nexit code: 0' });
      expect(await isRunning(server.serverPid)).toBe(true);
    },
    60_000,
  );

  test.skipIf('skip' in who)(
    `the kernel kills a call's processes before any other when memory runs out${'skip' in who ? ` (skipped: ${who.skip})` : ''}`,
    async () => {
      const user = 'user' in who ? who.user : undefined;
      await using folder = await tempFolder();
      await using fake = await startFakeOpenAIServer();
      await using server = await launchSandboxed({ folder: folder.path, fake, user });
      const adjusted = await allowedCall(server, fake, 'cat /proc/self/oom_score_adj; python3 -c "print(open(\'/proc/self/oom_score_adj\').read().strip())"');
      expect(adjusted).toMatchObject({ outcome: 'executed', result: '1000\n1000\nexit code: 0' });
      expect(readFileSync(`/proc/${server.serverPid}/oom_score_adj`, 'utf8').trim()).toBe('0');
    },
    60_000,
  );
});

describe('the inotify instances and watches a sandboxed call can hold', () => {
  const hostLimit = (name: string) => Number(readFileSync(`/proc/sys/user/max_inotify_${name}`, 'utf8').trim());
  // Makes one inotify instance with a watch on the workspace: "ok", or the error.
  const oneWatch = [
    'import ctypes, os',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'fd = libc.inotify_init1(0)',
    'watch = libc.inotify_add_watch(fd, b".", 2) if fd >= 0 else -1',
    'print("ok" if watch >= 0 else "failed: " + os.strerror(ctypes.get_errno()))',
  ].join('\n');

  test.skipIf('skip' in who)(
    `one call holding all it can leaves the server's user most of its own, for the server, a second call and the person's programs${'skip' in who ? ` (skipped: ${who.skip})` : ''}`,
    async () => {
      const user = 'user' in who ? who.user : undefined;
      const [instances, watches] = [hostLimit('instances'), hostLimit('watches')];
      await using folder = await tempFolder();
      await using fake = await startFakeOpenAIServer();
      await using server = await launchSandboxed({ folder: folder.path, fake, user });
      // Takes instances until refused, then watches each of `files` from each instance until refused: without a bound,
      // every instance and watch of the server's user. It says what it holds in ./held, and holds it until ./release.
      // It runs in a user namespace of its own.
      const files = Math.ceil(watches / instances) + 1;
      const hold = [
        'import ctypes, os, time',
        'libc = ctypes.CDLL(None, use_errno=True)',
        `for i in range(${files}): open(f"/tmp/{i}", "w").close()`,
        'fds = []',
        'while True:',
        '    fd = libc.inotify_init1(0)',
        '    if fd < 0: break',
        '    fds.append(fd)',
        'held = 0',
        'def watch_all():',
        '    global held',
        '    for fd in fds:',
        `        for i in range(${files}):`,
        '            if libc.inotify_add_watch(fd, f"/tmp/{i}".encode(), 2) < 0: return',
        '            held += 1',
        'watch_all()',
        // Written whole under another name, then renamed: the test reads the file as soon as it is there.
        'open("held.part", "w").write(f"{len(fds)} {held}")',
        'os.rename("held.part", "held")',
        'while not os.path.exists("release"): time.sleep(0.05)',
        'print("held", len(fds), held)',
      ].join('\n');
      await writeFile(path.join(server.workspace, 'hold.py'), hold);
      // Whose own limits bound nothing: a new user namespace's are the largest number.
      const unbounded = 'cat /proc/sys/user/max_inotify_instances && exec python3 hold.py';
      // Its answer after the call is enqueued last: the calls below go first.
      const holder = await runTerminal(server, fake, `unshare --user --map-root-user sh -c '${unbounded}'`, []);
      try {
        const held = await vi.waitFor(() => readFileSync(path.join(server.workspace, 'held'), 'utf8'), { timeout: 30_000, interval: 100 });
        // The person's programs, as the server's user on this machine, and a second call meanwhile.
        const outside = spawnSync('python3', ['-c', oneWatch], { cwd: server.workspace, env: { PATH: TOOL_PATH }, encoding: 'utf8', ...user });
        expect(outside.stdout).toBe('ok\n');
        expect(await allowedCall(server, fake, `python3 -c '${oneWatch}'`)).toMatchObject({ outcome: 'executed', result: 'ok\nexit code: 0' });
        const [heldInstances, heldWatches] = held.split(' ').map(Number);
        // An eighth of each (of watches, at least 8192 or half), the most one call may hold; the rest stays the user's.
        expect(heldInstances).toBe(Math.floor(instances / 8));
        expect(heldWatches).toBeLessThanOrEqual(inotifyLimits({ instances, watches })!.watches);
        expect(heldWatches).toBeLessThanOrEqual(watches / 2);
        expect(heldWatches).toBeGreaterThan(0);

        fake.enqueue({ text: 'done' });
        await writeFile(path.join(server.workspace, 'release'), '');
        expect(await holder.run.next('tool-end')).toMatchObject({ outcome: 'executed', result: `${2 ** 31 - 1}\nheld ${held}\nexit code: 0` });
      } finally {
        await writeFile(path.join(server.workspace, 'release'), '');
        await holder.client.close();
      }
    },
    120_000,
  );
});

describe('the inotify instances and watches sandboxed calls can hold at once', () => {
  const hostLimit = (name: string) => Number(readFileSync(`/proc/sys/user/max_inotify_${name}`, 'utf8').trim());
  const CALLS = 8;
  // Takes instances until refused, then a watch on each of 64 files per instance until refused; says what it holds in
  // ./held-<its number>, and holds it until ./release.
  const hold = [
    'import ctypes, os, sys, time',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'for i in range(64): open(f"/tmp/{i}", "w").close()',
    'fds = []',
    'while True:',
    '    fd = libc.inotify_init1(0)',
    '    if fd < 0: break',
    '    fds.append(fd)',
    'held = 0',
    'def watch_all():',
    '    global held',
    '    for fd in fds:',
    '        for i in range(64):',
    '            if libc.inotify_add_watch(fd, f"/tmp/{i}".encode(), 2) < 0: return',
    '            held += 1',
    'watch_all()',
    // Written whole under another name, then renamed: the test reads the file as soon as it is there.
    'open(f"held-{sys.argv[1]}.part", "w").write(f"{len(fds)} {held}")',
    'os.rename(f"held-{sys.argv[1]}.part", f"held-{sys.argv[1]}")',
    'while not os.path.exists("release"): time.sleep(0.05)',
  ].join('\n');
  const oneWatch = [
    'import ctypes, os',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'fd = libc.inotify_init1(0)',
    'watch = libc.inotify_add_watch(fd, b".", 2) if fd >= 0 else -1',
    'print("ok" if watch >= 0 else "failed: " + os.strerror(ctypes.get_errno()))',
  ].join('\n');

  test.skipIf('skip' in who)(
    `${CALLS} calls holding all they can leave the server's user half of its own, and the next call its share once they end${'skip' in who ? ` (skipped: ${who.skip})` : ''}`,
    async () => {
      const user = 'user' in who ? who.user : undefined;
      const [instances, watches] = [hostLimit('instances'), hostLimit('watches')];
      await using folder = await tempFolder();
      await using fake = await startFakeOpenAIServer();
      await using server = await launchSandboxed({ folder: folder.path, fake, user });
      await writeFile(path.join(server.workspace, 'hold.py'), hold);
      const holders: Awaited<ReturnType<typeof runTerminal>>[] = [];
      try {
        // One after the other, each holding its part before the next starts; their answers are enqueued last.
        const held: number[][] = [];
        for (let index = 0; index < CALLS; index++) {
          holders.push(await runTerminal(server, fake, `python3 hold.py ${index}`, []));
          const text = await vi.waitFor(() => readFileSync(path.join(server.workspace, `held-${index}`), 'utf8'), { timeout: 30_000, interval: 100 });
          held.push(text.split(' ').map(Number));
        }
        const sum = (column: number) => held.reduce((total, row) => total + row[column]!, 0);
        // Half the user's in all: without the bound, each held an eighth of the instances, all of them between them.
        expect(sum(0)).toBeLessThanOrEqual(Math.floor(instances / 2));
        expect(sum(1)).toBeLessThanOrEqual(Math.floor(watches / 2));
        // The first holds an eighth, as a call alone does (how the others share the rest: count-budget.test.ts).
        expect(held[0]![0]).toBe(inotifyLimits({ instances, watches })!.instances);
        // The person's programs, as the server's user on this machine, meanwhile.
        const outside = spawnSync('python3', ['-c', oneWatch], { cwd: server.workspace, env: { PATH: TOOL_PATH }, encoding: 'utf8', ...user });
        expect(outside.stdout).toBe('ok\n');

        fake.enqueue(...holders.map(() => ({ text: 'done' })));
        await writeFile(path.join(server.workspace, 'release'), '');
        for (const holder of holders) expect(await holder.run.next('tool-end')).toMatchObject({ outcome: 'executed', result: '(no output)\nexit code: 0' });
        // What they held is given back as each ends: a call alone holds its eighth again.
        await rm(path.join(server.workspace, 'release'));
        const again = await runTerminal(server, fake, `python3 hold.py again`, []);
        holders.push(again);
        const text = await vi.waitFor(() => readFileSync(path.join(server.workspace, 'held-again'), 'utf8'), { timeout: 30_000, interval: 100 });
        expect(Number(text.split(' ')[0])).toBe(inotifyLimits({ instances, watches })!.instances);
        fake.enqueue({ text: 'done' });
        await writeFile(path.join(server.workspace, 'release'), '');
        expect(await again.run.next('tool-end')).toMatchObject({ outcome: 'executed' });
      } finally {
        await writeFile(path.join(server.workspace, 'release'), '');
        for (const holder of holders) await holder.client.close();
      }
    },
    180_000,
  );
});

describe('the namespaces a sandboxed call can hold', () => {
  // Children each in a user and network namespace of their own, held until the end, until refused or 256: each network
  // namespace takes about 120 KB of the kernel's memory, charged to no process.
  const makeAll = [
    'import ctypes, os, time',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'made, error, children = 0, "", []',
    'while made < 256:',
    '    read, write = os.pipe()',
    '    child = os.fork()',
    '    if child == 0:',
    '        ok = libc.unshare(0x10000000 | 0x40000000) == 0',
    '        os.write(write, b"ok" if ok else os.strerror(ctypes.get_errno()).encode())',
    '        if ok: time.sleep(600)',
    '        os._exit(0)',
    '    os.close(write)',
    '    answer = os.read(read, 200).decode()',
    '    os.close(read)',
    '    children.append(child)',
    '    if answer != "ok":',
    '        error = answer',
    '        break',
    '    made += 1',
    'print("made", made, error)',
    'for child in children: os.kill(child, 9)',
  ].join('\n');

  test.skipIf('skip' in who)(
    `at most 128 of each kind, counted with those it is in${'skip' in who ? ` (skipped: ${who.skip})` : ''}`,
    async () => {
      const user = 'user' in who ? who.user : undefined;
      await using folder = await tempFolder();
      await using fake = await startFakeOpenAIServer();
      await using server = await launchSandboxed({ folder: folder.path, fake, user });
      await writeFile(path.join(server.workspace, 'make.py'), makeAll);
      const made = await allowedCall(server, fake, 'python3 make.py');
      // bubblewrap's two user namespaces count too.
      expect(made).toMatchObject({ outcome: 'executed', result: 'made 126 No space left on device\nexit code: 0' });
    },
    60_000,
  );
});

describe('the System V IPC a sandboxed call can hold', () => {
  const SIZE_MIB = 8;
  const MIB = 1024 * 1024;
  // Takes segments of 1 MiB (each filled), message queues and sets of 250 semaphores, each until refused or eight times
  // what the call may hold: without a bound, all of them, and the test fails, not the machine.
  const takeAll = [
    'import ctypes, os',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'libc.shmat.restype = ctypes.c_void_p',
    'libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]',
    'def take(make, most):',
    '    made = 0',
    '    while made < most:',
    '        if make() < 0: return f"{made} then {os.strerror(ctypes.get_errno())}"',
    '        made += 1',
    '    return str(made)',
    'def segment():',
    `    shmid = libc.shmget(0, ${MIB}, 0o1600)`,
    `    if shmid >= 0: ctypes.memset(libc.shmat(shmid, None, 0), 1, ${MIB})`,
    '    return shmid',
    `print("segments", take(segment, ${8 * SIZE_MIB}))`,
    'print("queues", take(lambda: libc.msgget(0, 0o1600), 256))',
    'print("semaphore sets", take(lambda: libc.semget(0, 250, 0o1600), 1024))',
  ].join('\n');

  test.skipIf('skip' in who)(
    `shared memory up to --tool-tmp-size, 32 message queues and 128 semaphore sets, in an IPC namespace the call cannot leave for a new one${'skip' in who ? ` (skipped: ${who.skip})` : ''}`,
    async () => {
      const user = 'user' in who ? who.user : undefined;
      await using folder = await tempFolder();
      await using fake = await startFakeOpenAIServer();
      await using server = await launchSandboxed({ folder: folder.path, fake, user, args: ['--tool-tmp-size', String(SIZE_MIB)] });
      await writeFile(path.join(server.workspace, 'take.py'), takeAll);
      const taken = await allowedCall(
        server,
        fake,
        'python3 take.py; { echo 99999999 > /proc/sys/kernel/shmall; } 2>/dev/null || echo not raised; cat /proc/sys/kernel/shmall; ' +
          'unshare --user --map-root-user --ipc true 2>&1; unshare --user --map-root-user true && echo user namespace made',
      );
      const pages = (SIZE_MIB * MIB) / Number(spawnSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).stdout.trim());
      expect(taken).toMatchObject({
        outcome: 'executed',
        result:
          `segments ${SIZE_MIB} then No space left on device\nqueues 32 then No space left on device\nsemaphore sets 128 then No space left on device\n` +
          `not raised\n${pages}\nunshare: unshare failed: No space left on device\nuser namespace made\nexit code: 0`,
      });
      // What the call held went with it: the next call has as much again.
      expect((await allowedCall(server, fake, 'python3 take.py')).result).toMatch(new RegExp(`^segments ${SIZE_MIB} then No space left on device\nqueues 32 then`));
    },
    60_000,
  );
});
