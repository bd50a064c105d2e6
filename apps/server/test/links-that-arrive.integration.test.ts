import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
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

describe.skipIf(!hasPytest)('links that arrive in the workspace by a checkout or an archive, through the real server without the sandbox', () => {
  // `git checkout links` and `tar -xf links.tar` each ran unasked under their rules and brought a link leading to
  // the other folder; the next `pytest -q` collected it and ran the other folder's conftest.py, unasked.
  it('runs a runner unasked while the folder it reads holds no link leading out, and asks once one has arrived', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-links-arrive-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, other, dataDir, staging] = [join(folder, 'ws'), join(folder, 'other'), join(folder, 'data'), join(folder, 'staging')];
    await mkdir(join(workspace, 't'), { recursive: true });
    await mkdir(join(other, 'pkg'), { recursive: true });
    await mkdir(join(staging, 'sub'), { recursive: true });
    await writeFile(join(workspace, 't', 'test_t.py'), 'def test_t():\n    assert True\n');
    await writeFile(join(other, 'pkg', 'conftest.py'), 'import pathlib, os\npathlib.Path(os.getcwd(), "PWNED_CONFTEST").touch()\n');
    await writeFile(join(other, 'pkg', 'test_other.py'), 'def test_other():\n    assert True\n');
    execFileSync('git', ['init', '-q', '-b', 'main', workspace]);
    execFileSync('git', ['-C', workspace, 'config', 'user.email', 'person@example.com']);
    execFileSync('git', ['-C', workspace, 'config', 'user.name', 'Person']);
    // A link inside the workspace, which no runner is asked about.
    await symlink('t', join(workspace, 'tests'));
    execFileSync('git', ['-C', workspace, 'add', 't', 'tests']);
    execFileSync('git', ['-C', workspace, 'commit', '-q', '-m', 'tests']);
    // A branch that holds a link to the other folder, as a pushed branch or a fetched one may.
    execFileSync('git', ['-C', workspace, 'checkout', '-q', '-b', 'links']);
    await symlink('../../other/pkg', join(workspace, 't', 'o'));
    execFileSync('git', ['-C', workspace, 'add', 't/o']);
    execFileSync('git', ['-C', workspace, 'commit', '-q', '-m', 'link']);
    execFileSync('git', ['-C', workspace, 'checkout', '-q', 'main']);
    await rm(join(workspace, 't', 'o'), { force: true });
    // An archive that holds one, deeper down.
    await symlink('../../../other/pkg', join(staging, 'sub', 'o'));
    execFileSync('tar', ['-cf', join(workspace, 'links.tar'), '-C', staging, 'sub']);
    // Each call is made once: the loop refuses the same call twice in one message.
    const lines = ['git checkout -q links', 'pytest -x', 'git checkout -q main', 'tar -xf links.tar -C t', 'pytest -v'];
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue(...['pytest -q', ...lines].map((command) => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] })), { text: 'done' });
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());
    for (const tokens of [['git', 'checkout'], ['tar'], ['pytest']]) {
      await client.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens, exact: false }, scope: { kind: 'global' }, source: 'user' });
    }

    const run = watchRun(client, { sessionId: 's-arrive', runId: 'run-1', message: 'test' });
    const unasked = async (id: string) => {
      const ran = await run.next('tool-start', (event) => event.toolCallId === id);
      expect({ command: ran.arguments.command, awaitingConfirmation: ran.awaitingConfirmation }).toStrictEqual({ command: ran.arguments.command, awaitingConfirmation: false });
      return run.next('tool-end', (event) => event.toolCallId === id);
    };
    const denied = async (id: string) => {
      const asked = await run.next('tool-start', (event) => event.toolCallId === id);
      expect({ command: asked.arguments.command, awaitingConfirmation: asked.awaitingConfirmation }).toStrictEqual({ command: asked.arguments.command, awaitingConfirmation: true });
      await client.trpc.chat.confirmTool.mutate({ sessionId: 's-arrive', approvalId: asked.approvalId, decision: 'deny' });
    };
    expect(await unasked('call_1_0')).toMatchObject({ outcome: 'executed', result: expect.stringContaining('2 passed') });
    expect(await unasked('call_2_0')).toMatchObject({ outcome: 'executed' });
    await denied('call_3_0');
    expect(await unasked('call_4_0')).toMatchObject({ outcome: 'executed' });
    expect(await unasked('call_5_0')).toMatchObject({ outcome: 'executed' });
    await denied('call_6_0');
    expect((await run.ended).reason).toBe('done');
    expect(existsSync(join(workspace, 'PWNED_CONFTEST'))).toBe(false);
    expect(existsSync(join(workspace, 't', 'sub', 'o'))).toBe(true);
  }, 120_000);
});
