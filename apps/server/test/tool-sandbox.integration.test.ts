import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, onTestFinished, test, vi } from 'vitest';
import { createBuiltinTools } from '../src/tools';
import { probeBubblewrap } from '../src/tools/sandbox/probe-bubblewrap';
import { callContext, isRunning, killAllWith, processesWith, runTool, SANDBOX_KINDS, tempFolder, toolNamed, uniqueToken } from '../src/tools/test-support';
import { startFakeOpenAIServer, type FakeOpenAIServer } from './support/fake-openai-server';
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

/**
 * Starts Airlock as `npm start` does, through its launcher, and waits until it listens. The token is read from the
 * start-up link, or is `token` when it came from a file (the server then leaves it out of the link).
 */
async function launch(options: { env: Record<string, string>; args: string[]; token?: string; descriptors?: ReadonlyMap<number, number> }): Promise<LaunchedServer> {
  // Descriptors of this process the launcher inherits, by the number it gets, as a shell's `200</folder` would leave them.
  const extra = options.descriptors ?? new Map<number, number>();
  const stdio = Array.from({ length: Math.max(3, ...[...extra.keys()].map((fd) => fd + 1)) }, (_, fd) => extra.get(fd) ?? (fd === 0 ? 'ignore' : fd <= 2 ? 'pipe' : 'ignore'));
  const launcher = spawn(process.execPath, [LAUNCHER, '--port', '0', ...options.args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...options.env },
    stdio,
  }) as ChildProcessByStdio<null, Readable, Readable>;
  let text = '';
  launcher.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  launcher.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  // The server writes to the same pipes: they end when both are gone.
  const ended = new Promise<void>((resolve) => launcher.stdout.once('close', () => resolve()));
  const match = await vi.waitFor(
    () => {
      const found = /running at (http:\/\/[^/\s]+)\/(?:#token=(\S+))?[^\n]*\n/.exec(text);
      if (found === null) throw new Error(`not listening yet:\n${text}`);
      return found;
    },
    { timeout: 30_000, interval: 50 },
  );
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
  const token = match[2] === undefined ? options.token : decodeURIComponent(match[2]);
  if (token === undefined) throw new Error(`no token in the start-up link and none given:\n${text}`);
  return {
    launcher,
    serverPid,
    wsUrl: `${match[1]!.replace('http:', 'ws:')}/trpc`,
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

/** Has the fake model propose one terminal call, allows it, and resolves with the run once the call started. */
async function runTerminal(server: LaunchedServer, fake: FakeOpenAIServer, command: string) {
  fake.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command } }] }, { text: 'done' });
  const client = connectClient(server.wsUrl, server.token);
  const sessionId = `s-${randomBytes(4).toString('hex')}`;
  const run = watchRun(client, { sessionId, runId: `run-${sessionId}`, message: 'run it' });
  const start = await run.next('tool-start');
  await client.trpc.chat.confirmTool.mutate({ sessionId, approvalId: start.approvalId, decision: 'allow' });
  return { run, client };
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
      await vi.waitFor(async () => expect(await isRunning(server.serverPid)).toBe(false));
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
