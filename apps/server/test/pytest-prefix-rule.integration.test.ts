import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
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

describe.skipIf(!hasPytest)('a rule for `pytest` and one for `git commit`, through the real server without the sandbox', () => {
  // The probe's lines: the commit wrote the model's `>>>` line to .git/COMMIT_EDITMSG, and pytest ran it as a
  // doctest; `pytest ../other` ran that folder's conftest.py. Both were allowed by the rules, unasked.
  it("runs the workspace's tests unasked, and asks about a doctest of the commit message and another folder's tests", async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-pytest-rule-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, other, dataDir] = [join(folder, 'ws'), join(folder, 'other'), join(folder, 'data')];
    await mkdir(join(workspace, 'tests'), { recursive: true });
    await mkdir(other);
    await writeFile(join(workspace, 'tests', 'test_ok.py'), 'def test_ok():\n    assert True\n');
    await writeFile(join(other, 'conftest.py'), 'import pathlib, os\npathlib.Path(os.getcwd(), "PWNED_CONFTEST").touch()\n');
    execFileSync('git', ['init', '-q', workspace]);
    execFileSync('git', ['-C', workspace, 'config', 'user.email', 'person@example.com']);
    execFileSync('git', ['-C', workspace, 'config', 'user.name', 'Person']);
    const commit = `git commit --allow-empty -q -m '>>> open("PWNED_DOCTEST", "w").close()'`;
    const doctest = 'pytest -q -p no:cacheprovider --doctest-glob=COMMIT_EDITMSG .git/COMMIT_EDITMSG';
    const doctestPlain = 'pytest -q .git/COMMIT_EDITMSG';
    const elsewhere = 'pytest -q -s ../other';
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'pytest -q tests' } }] },
      { toolCalls: [{ name: 'terminal', arguments: { command: commit } }, { name: 'terminal', arguments: { command: doctest } }] },
      { toolCalls: [{ name: 'terminal', arguments: { command: doctestPlain } }] },
      { toolCalls: [{ name: 'terminal', arguments: { command: elsewhere } }] },
      { text: 'done' },
    );
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());
    for (const tokens of [['pytest'], ['git', 'commit']]) {
      await client.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens, exact: false }, scope: { kind: 'global' }, source: 'user' });
    }

    const run = watchRun(client, { sessionId: 's-pytest', runId: 'run-1', message: 'test' });
    const ran = await run.next('tool-start', (event) => event.arguments.command === 'pytest -q tests');
    expect(ran).toMatchObject({ awaitingConfirmation: false });
    expect(await run.next('tool-end', (event) => event.toolCallId === ran.toolCallId)).toMatchObject({ outcome: 'executed', result: expect.stringContaining('1 passed') });
    expect(await run.next('tool-start', (event) => event.arguments.command === commit)).toMatchObject({ awaitingConfirmation: false });
    for (const command of [doctest, doctestPlain, elsewhere]) {
      const asked = await run.next('tool-start', (event) => event.arguments.command === command);
      expect(asked).toMatchObject({ awaitingConfirmation: true });
      await client.trpc.chat.confirmTool.mutate({ sessionId: 's-pytest', approvalId: asked.approvalId, decision: 'deny' });
    }
    expect((await run.ended).reason).toBe('done');
    expect(execFileSync('git', ['-C', workspace, 'log', '-1', '--format=%s'], { encoding: 'utf8' })).toContain('>>> open');
    expect(existsSync(join(workspace, 'PWNED_DOCTEST'))).toBe(false);
    expect(existsSync(join(workspace, 'PWNED_CONFTEST'))).toBe(false);
  }, 120_000);
});
