import { exchangeLinkCode, LinkCodeError, resolveStartupLink } from '@airlock/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test, vi } from 'vitest';
import { probeBubblewrap } from '../src/tools/sandbox/probe-bubblewrap';
import { tempFolder } from '../src/tools/test-support';
import { startFakeOpenAIServer, type FakeOpenAIServer } from './support/fake-openai-server';
import { connectClient, watchRun } from './support/test-airlock';

const LAUNCHER = fileURLToPath(new URL('../bin/airlock.mjs', import.meta.url));
const STARTED = /running at (http:\/\/[^/\s]+:(\d+))\/#code=([A-Za-z0-9_-]{27})/;

/** On dispose, stops the launcher (it forwards the signal) and resolves once it, and so the server, has exited. */
function stopping(launcher: ChildProcess): AsyncDisposable {
  const exited = new Promise((resolve) => launcher.once('exit', resolve));
  return {
    [Symbol.asyncDispose]: async () => {
      if (launcher.exitCode === null && launcher.signalCode === null) launcher.kill('SIGTERM');
      await exited;
    },
  };
}

/** Waits until `output()` holds the start-up line, and gives the link's parts. */
async function startUpLink(output: () => string): Promise<{ origin: string; port: string; code: string }> {
  const match = await vi.waitFor(
    () => {
      const found = STARTED.exec(output());
      if (found === null) throw new Error(`not listening yet:\n${output()}`);
      return found;
    },
    { timeout: 60_000, interval: 50 },
  );
  return { origin: match[1]!, port: match[2]!, code: match[3]! };
}

/** Has the fake model propose one call of `tool`, allows it if asked, and resolves with how it ended. */
async function allowedCall(wsUrl: string, token: string, fake: FakeOpenAIServer, tool: string, args: Record<string, unknown>) {
  fake.enqueue({ toolCalls: [{ name: tool, arguments: args }] }, { text: 'done' });
  const client = connectClient(wsUrl, token);
  try {
    const sessionId = `s-${randomBytes(4).toString('hex')}`;
    const run = watchRun(client, { sessionId, runId: `run-${sessionId}`, message: 'run it' });
    const start = await run.next('tool-start');
    if (start.awaitingConfirmation) await client.trpc.chat.confirmTool.mutate({ sessionId, approvalId: start.approvalId, decision: 'allow' });
    return await run.next('tool-end');
  } finally {
    await client.close();
  }
}

describe.skipIf(!(await probeBubblewrap(true)).available)('Airlock started with its output to files in the workspace (nohup npm start)', () => {
  test('a used code sent again prints no new code, and neither file is readable by a sandboxed terminal call or read_file', async () => {
    await using folder = await tempFolder();
    await using fake = await startFakeOpenAIServer();
    const [workspace, dataDir] = ['ws', 'data'].map((name) => path.join(folder.path, name)) as [string, string];
    await Promise.all([mkdir(workspace), mkdir(dataDir)]);
    const [outFile, errFile] = [path.join(workspace, 'nohup.out'), path.join(workspace, 'errors.log')];
    const [out, err] = [openSync(outFile, 'a'), openSync(errFile, 'a')];
    // Started from the workspace (the default one), its output in files there, as `nohup npm start > nohup.out 2> errors.log &`.
    const launcher = spawn(process.execPath, [LAUNCHER, '--port', '0', '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'bubblewrap'], {
      cwd: workspace,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' },
      stdio: ['ignore', out, err],
    });
    closeSync(out);
    closeSync(err);
    await using _stopped = stopping(launcher);
    const output = () => readFileSync(outFile, 'utf8');
    const link = await startUpLink(output);
    // Printed just after the link: it may not be in the file yet when the link is.
    await vi.waitFor(() => expect(output()).toContain(`Workspace: ${workspace}`), { timeout: 10_000, interval: 50 });
    expect(output()).toContain(`Note: Airlock's output goes to ${outFile}, inside the workspace.`);
    expect(output()).toContain(`Note: Airlock's output goes to ${errFile}, inside the workspace.`);

    const { token } = await resolveStartupLink(`${link.origin}/#code=${link.code}`);
    const replayed = await exchangeLinkCode({ serverUrl: `http://127.0.0.1:${link.port}`, code: link.code }).catch((error: unknown) => error);
    expect(replayed).toBeInstanceOf(LinkCodeError);
    expect(replayed).toMatchObject({ problem: 'used', newLinkPrinted: false, noNewLink: 'output-not-a-terminal' });
    await vi.waitFor(() => expect(output()).toContain('A start-up link was opened again; no new link is printed'), { timeout: 10_000, interval: 50 });
    expect(output().match(/#code=/g)).toHaveLength(1);

    const wsUrl = `ws://127.0.0.1:${link.port}/trpc`;
    const terminal = await allowedCall(wsUrl, token, fake, 'terminal', { command: 'cat nohup.out errors.log; echo read-done' });
    expect(terminal.result).toBe('cat: nohup.out: Permission denied\ncat: errors.log: Permission denied\nread-done\nexit code: 0');
    const read = await allowedCall(wsUrl, token, fake, 'read_file', { path: 'nohup.out' });
    expect(read.result).toBe(`Refused: "nohup.out" is one of the server's private files or a browser's profile; the file tools do not touch it.`);
  }, 120_000);
});

describe('Airlock started in a terminal', () => {
  test('a used code sent again prints a new link there, which opens Airlock', async () => {
    await using folder = await tempFolder();
    const [workspace, dataDir] = ['ws', 'data'].map((name) => path.join(folder.path, name)) as [string, string];
    await Promise.all([mkdir(workspace), mkdir(dataDir)]);
    const command = [process.execPath, LAUNCHER, '--port', '0', '--data-dir', dataDir, '--tool-sandbox', 'none'].map((word) => `'${word}'`).join(' ');
    // `script` runs it on a pseudo-terminal of its own and copies what it shows to this pipe.
    const launcher = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      cwd: workspace,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', TERM: 'dumb' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    await using _stopped = stopping(launcher);
    let text = '';
    launcher.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const link = await startUpLink(() => text);
    const serverUrl = `http://127.0.0.1:${link.port}`;
    expect(text).not.toContain("Note: Airlock's output goes to");

    const { token } = await resolveStartupLink(`${link.origin}/#code=${link.code}`);
    const replayed = await exchangeLinkCode({ serverUrl, code: link.code }).catch((error: unknown) => error);
    expect(replayed).toMatchObject({ problem: 'used', newLinkPrinted: true });
    const reissued = await vi.waitFor(
      () => {
        const found = /A start-up link was opened again; a new one: http:\/\/\S+\/#code=([A-Za-z0-9_-]{27})/.exec(text);
        if (found === null) throw new Error(`no new link yet:\n${text}`);
        return found[1]!;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(await exchangeLinkCode({ serverUrl, code: reissued })).toBe(token);
  }, 120_000);
});
