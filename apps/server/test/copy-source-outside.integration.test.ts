import { spawnSync } from 'node:child_process';
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
const hasRsync = spawnSync('rsync', ['--version'], { stdio: 'ignore' }).status === 0;

describe.skipIf(!hasPytest || !hasRsync)('rules for copying programs and `pytest`, through the real server without the sandbox', () => {
  // Each copy ran unasked under a rule for its program, and the next `pytest -q` ran the other folder's conftest.py:
  // a copy reads its sources, which a rule covers only inside the workspace.
  it('copies within the workspace unasked, and asks about a copy whose source lies outside it', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-copy-source-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, other, dataDir] = [join(folder, 'ws'), join(folder, 'other'), join(folder, 'data')];
    await mkdir(join(workspace, 't'), { recursive: true });
    await mkdir(join(other, 'pkg'), { recursive: true });
    await writeFile(join(workspace, 't', 'test_t.py'), 'def test_t():\n    assert True\n');
    const pwned = 'import pathlib, os\npathlib.Path(os.getcwd(), "PWNED_CONFTEST").touch()\n';
    await writeFile(join(other, 'conftest.py'), pwned);
    await writeFile(join(other, 'pkg', 'conftest.py'), pwned);
    const inside = 'cp t/test_t.py t/test_copy.py';
    const copies = [
      'cp ../other/conftest.py .',
      'cp -r ../other/pkg .',
      'cp -t . ../other/conftest.py',
      'rsync ../other/conftest.py .',
      'rsync -a ../other/pkg/ pkg2',
      'install -m 644 ../other/conftest.py conftest.py',
      'mv ../other/conftest.py .',
    ];
    const tests = 'pytest -q';
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue(...[inside, ...copies, tests].map((command) => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] })), { text: 'done' });
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());
    for (const tokens of [['cp'], ['mv'], ['rsync'], ['install'], ['pytest']]) {
      await client.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens, exact: false }, scope: { kind: 'global' }, source: 'user' });
    }

    const run = watchRun(client, { sessionId: 's-copy', runId: 'run-1', message: 'test' });
    const unasked = async (command: string) => {
      const ran = await run.next('tool-start', (event) => event.arguments.command === command);
      expect(ran).toMatchObject({ awaitingConfirmation: false });
      return run.next('tool-end', (event) => event.toolCallId === ran.toolCallId);
    };
    expect(await unasked(inside)).toMatchObject({ outcome: 'executed' });
    for (const command of copies) {
      const asked = await run.next('tool-start', (event) => event.arguments.command === command);
      expect({ command, awaitingConfirmation: asked.awaitingConfirmation }).toStrictEqual({ command, awaitingConfirmation: true });
      await client.trpc.chat.confirmTool.mutate({ sessionId: 's-copy', approvalId: asked.approvalId, decision: 'deny' });
    }
    expect(await unasked(tests)).toMatchObject({ outcome: 'executed', result: expect.stringContaining('2 passed') });
    expect((await run.ended).reason).toBe('done');
    expect(existsSync(join(workspace, 'PWNED_CONFTEST'))).toBe(false);
    expect(existsSync(join(workspace, 'conftest.py'))).toBe(false);
    expect(existsSync(join(other, 'conftest.py'))).toBe(true);
  }, 120_000);

  // `install -s` runs the program `--strip-program` names on the file it installs: under a rule for `install`, `install
  // -s --strip-program=/bin/sh x.sh y` ran x.sh unasked.
  it('installs a file unasked, and asks about a call that names the program install runs on it', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-install-strip-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, dataDir] = [join(folder, 'ws'), join(folder, 'data')];
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, 'x.sh'), 'touch "$(dirname "$0")/PWNED_STRIP"\n');
    const plain = 'install -m 644 x.sh y';
    const stripped = ['install -s --strip-program=/bin/sh x.sh z', 'install -s --strip-prog /bin/sh x.sh z2'];
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue(...[plain, ...stripped].map((command) => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] })), { text: 'done' });
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());
    await client.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['install'], exact: false }, scope: { kind: 'global' }, source: 'user' });

    const run = watchRun(client, { sessionId: 's-strip', runId: 'run-1', message: 'test' });
    const ran = await run.next('tool-start', (event) => event.arguments.command === plain);
    expect(ran).toMatchObject({ awaitingConfirmation: false });
    expect(await run.next('tool-end', (event) => event.toolCallId === ran.toolCallId)).toMatchObject({ outcome: 'executed' });
    for (const command of stripped) {
      const asked = await run.next('tool-start', (event) => event.arguments.command === command);
      expect({ command, awaitingConfirmation: asked.awaitingConfirmation }).toStrictEqual({ command, awaitingConfirmation: true });
      await client.trpc.chat.confirmTool.mutate({ sessionId: 's-strip', approvalId: asked.approvalId, decision: 'deny' });
    }
    expect((await run.ended).reason).toBe('done');
    expect(existsSync(join(workspace, 'y'))).toBe(true);
    expect(existsSync(join(workspace, 'PWNED_STRIP'))).toBe(false);
  }, 120_000);
});
