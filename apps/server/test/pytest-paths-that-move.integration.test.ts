import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer } from './support/fake-openai-server';
import { startServerProcess } from './support/server-process';
import { connectClient, watchRun } from './support/test-airlock';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const hasPytest = spawnSync('pytest', ['--version'], { stdio: 'ignore' }).status === 0;

describe.skipIf(!hasPytest)('a rule for `pytest`, through the real server without the sandbox, and paths that lead elsewhere than their text', () => {
  // Both lines ran unasked: `docs` is a link to .git the repository holds, so `docs/test_hook.py` ran a file under
  // .git; and `t` was a folder inside when the rules judged the line, a link to the other folder when pytest ran.
  it("runs the workspace's tests unasked, and asks about a file under .git through a checked-in link and a folder the line replaces with a link", async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-pytest-paths-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, other, dataDir] = [join(folder, 'ws'), join(folder, 'other'), join(folder, 'data')];
    await mkdir(join(workspace, 'tests'), { recursive: true });
    await mkdir(join(workspace, 't'));
    await mkdir(other);
    await writeFile(join(workspace, 'tests', 'test_ok.py'), 'def test_ok():\n    assert True\n');
    await writeFile(join(workspace, 't', 'test_t.py'), 'def test_t():\n    assert True\n');
    await writeFile(join(other, 'conftest.py'), 'import pathlib, os\npathlib.Path(os.getcwd(), "PWNED_CONFTEST").touch()\n');
    execFileSync('git', ['init', '-q', workspace]);
    execFileSync('git', ['-C', workspace, 'config', 'user.email', 'person@example.com']);
    execFileSync('git', ['-C', workspace, 'config', 'user.name', 'Person']);
    await symlink('.git', join(workspace, 'docs'));
    execFileSync('git', ['-C', workspace, 'add', 'docs', 'tests', 't']);
    execFileSync('git', ['-C', workspace, 'commit', '-q', '-m', 'docs']);
    // Text a call wrote under .git, as `git commit -m …` writes the message there.
    await writeFile(join(workspace, '.git', 'test_hook.py'), 'import pathlib, os\npathlib.Path(os.getcwd(), "PWNED_GIT").touch()\n');
    const tests = 'pytest -q tests';
    const throughLink = 'pytest -q docs/test_hook.py';
    const replaced = 'rm -rf t && ln -s ../other t && pytest -q t';
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue(
      { toolCalls: [{ name: 'terminal', arguments: { command: tests } }] },
      { toolCalls: [{ name: 'terminal', arguments: { command: throughLink } }] },
      { toolCalls: [{ name: 'terminal', arguments: { command: replaced } }] },
      { text: 'done' },
    );
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());
    for (const tokens of [['pytest'], ['rm'], ['ln']]) {
      await client.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens, exact: false }, scope: { kind: 'global' }, source: 'user' });
    }

    const run = watchRun(client, { sessionId: 's-paths', runId: 'run-1', message: 'test' });
    const ran = await run.next('tool-start', (event) => event.arguments.command === tests);
    expect(ran).toMatchObject({ awaitingConfirmation: false });
    expect(await run.next('tool-end', (event) => event.toolCallId === ran.toolCallId)).toMatchObject({ outcome: 'executed', result: expect.stringContaining('1 passed') });
    for (const command of [throughLink, replaced]) {
      const asked = await run.next('tool-start', (event) => event.arguments.command === command);
      expect(asked).toMatchObject({ awaitingConfirmation: true });
      await client.trpc.chat.confirmTool.mutate({ sessionId: 's-paths', approvalId: asked.approvalId, decision: 'deny' });
    }
    expect((await run.ended).reason).toBe('done');
    expect(existsSync(join(workspace, 'PWNED_GIT'))).toBe(false);
    expect(existsSync(join(workspace, 'PWNED_CONFTEST'))).toBe(false);
    expect((await lstat(join(workspace, 't'))).isDirectory()).toBe(true);
  }, 120_000);

  // With no operand pytest collects the folder it runs in, following links there: `ln -s ../other t2 && pytest -q`
  // ran the other folder's conftest.py unasked, as did `cd docs && pytest -q` with a checked-in `docs -> .git`.
  it('runs the workspace tests of a runner given no operand unasked, and asks when the line may have changed or moved the folder it collects', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-pytest-here-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, other, dataDir] = [join(folder, 'ws'), join(folder, 'other'), join(folder, 'data')];
    await mkdir(join(workspace, 't'), { recursive: true });
    await mkdir(other);
    await writeFile(join(workspace, 't', 'test_t.py'), 'def test_t():\n    assert True\n');
    await writeFile(join(other, 'conftest.py'), 'import pathlib, os\npathlib.Path(os.getcwd(), "PWNED_CONFTEST").touch()\n');
    await writeFile(join(other, 'test_other.py'), 'def test_other():\n    assert True\n');
    execFileSync('git', ['init', '-q', workspace]);
    await symlink('.git', join(workspace, 'docs'));
    await writeFile(join(workspace, '.git', 'test_hook.py'), 'import pathlib, os\npathlib.Path(os.getcwd(), "PWNED_GIT").touch()\n');
    const inside = 'cd t && pytest -q';
    const lines = ['ln -s ../other t2 && pytest -q', 'rm -rf t && ln -s ../other t && pytest -q', 'cd docs && pytest -q'];
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue(
      { toolCalls: [{ name: 'terminal', arguments: { command: inside } }] },
      ...lines.map((command) => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] })),
      { text: 'done' },
    );
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());
    for (const tokens of [['pytest'], ['rm'], ['ln'], ['cd']]) {
      await client.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens, exact: false }, scope: { kind: 'global' }, source: 'user' });
    }

    const run = watchRun(client, { sessionId: 's-here', runId: 'run-1', message: 'test' });
    const ran = await run.next('tool-start', (event) => event.arguments.command === inside);
    expect(ran).toMatchObject({ awaitingConfirmation: false });
    expect(await run.next('tool-end', (event) => event.toolCallId === ran.toolCallId)).toMatchObject({ outcome: 'executed', result: expect.stringContaining('1 passed') });
    for (const command of lines) {
      const asked = await run.next('tool-start', (event) => event.arguments.command === command);
      expect(asked).toMatchObject({ awaitingConfirmation: true });
      await client.trpc.chat.confirmTool.mutate({ sessionId: 's-here', approvalId: asked.approvalId, decision: 'deny' });
    }
    expect((await run.ended).reason).toBe('done');
    expect(existsSync(join(workspace, 'PWNED_CONFTEST'))).toBe(false);
    expect(existsSync(join(workspace, 'docs', 'PWNED_GIT'))).toBe(false);
    expect(existsSync(join(workspace, 't2'))).toBe(false);
    expect(existsSync(join(workspace, 'o'))).toBe(false);
    expect((await lstat(join(workspace, 't'))).isDirectory()).toBe(true);
  }, 120_000);

  // A link is followed by later calls: under a rule for `ln`, `ln -s ../other t2` ran, and a later `pytest -q` under a
  // rule for `pytest` collected t2 and ran the other folder's conftest.py; and `ln -s ../other/.git .git` had `git
  // status` run the other repository's core.fsmonitor command.
  it('makes a link inside unasked, and asks about one whose target leads out of the workspace, also one named .git', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-link-target-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, other, dataDir] = [join(folder, 'ws'), join(folder, 'other'), join(folder, 'data')];
    await mkdir(join(workspace, 't'), { recursive: true });
    await writeFile(join(workspace, 't', 'test_t.py'), 'def test_t():\n    assert True\n');
    execFileSync('git', ['init', '-q', workspace]);
    execFileSync('git', ['init', '-q', other]);
    execFileSync('git', ['-C', other, 'config', 'core.fsmonitor', `touch ${join(folder, 'PWNED_FSMONITOR')}`]);
    await writeFile(join(other, 'conftest.py'), 'import pathlib, os\npathlib.Path(os.getcwd(), "PWNED_CONFTEST").touch()\n');
    const inside = 'ln -s t/test_t.py notes.txt';
    const out = 'ln -s ../other t2';
    // Leads inside where it is made (t/../other), out once moved up a level: a link keeps its text when moved.
    const climbing = 'ln -s ../other t/o';
    const moved = 'mv t/o o';
    const tests = 'pytest -q';
    const gitLink = 'rm -rf .git && ln -s ../other/.git .git && git status';
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue(...[inside, out, climbing, moved, tests, gitLink].map((command) => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] })), { text: 'done' });
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());
    for (const tokens of [['ln'], ['mv'], ['pytest'], ['rm'], ['git', 'status']]) {
      await client.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens, exact: false }, scope: { kind: 'global' }, source: 'user' });
    }

    const run = watchRun(client, { sessionId: 's-links', runId: 'run-1', message: 'test' });
    const unasked = async (command: string) => {
      const ran = await run.next('tool-start', (event) => event.arguments.command === command);
      expect(ran).toMatchObject({ awaitingConfirmation: false });
      return run.next('tool-end', (event) => event.toolCallId === ran.toolCallId);
    };
    const denied = async (command: string) => {
      const asked = await run.next('tool-start', (event) => event.arguments.command === command);
      expect(asked).toMatchObject({ awaitingConfirmation: true });
      await client.trpc.chat.confirmTool.mutate({ sessionId: 's-links', approvalId: asked.approvalId, decision: 'deny' });
    };
    expect(await unasked(inside)).toMatchObject({ outcome: 'executed' });
    await denied(out);
    await denied(climbing);
    await unasked(moved);
    expect(await unasked(tests)).toMatchObject({ outcome: 'executed', result: expect.stringContaining('1 passed') });
    await denied(gitLink);
    expect((await run.ended).reason).toBe('done');
    expect((await lstat(join(workspace, 'notes.txt'))).isSymbolicLink()).toBe(true);
    expect(existsSync(join(workspace, 't2'))).toBe(false);
    expect(existsSync(join(workspace, 'o'))).toBe(false);
    expect(existsSync(join(workspace, 'PWNED_CONFTEST'))).toBe(false);
    expect(existsSync(join(folder, 'PWNED_FSMONITOR'))).toBe(false);
    expect((await lstat(join(workspace, '.git'))).isDirectory()).toBe(true);
  }, 120_000);
});
