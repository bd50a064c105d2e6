import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
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

describe('"Always allow" on `pip list`, through the real server without the sandbox', () => {
  // The probe's line: under the rule "commands starting with `pip list`", `--log` appended pip's debug log to a file
  // the model chose, unasked.
  it('the saved rule runs `pip list --format=json` unasked, and asks about `pip list --log <file>`, which writes nothing', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-pip-rule-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, dataDir] = [join(folder, 'ws'), join(folder, 'data')];
    await mkdir(workspace, { recursive: true });
    const logged = join(workspace, 'pwned.log');
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    const hostile = `pip list --log ${logged}`;
    fake.enqueue(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'pip list' } }] },
      { text: 'one' },
      { toolCalls: [{ name: 'terminal', arguments: { command: 'pip list --format=json' } }] },
      { toolCalls: [{ name: 'terminal', arguments: { command: hostile } }] },
      { text: 'two' },
    );
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());

    const first = watchRun(client, { sessionId: 's-pip', runId: 'run-1', message: 'list' });
    const asked = await first.next('tool-start');
    expect(asked).toMatchObject({ awaitingConfirmation: true, arguments: { command: 'pip list' } });
    await client.trpc.chat.confirmTool.mutate({ sessionId: 's-pip', approvalId: asked.approvalId, decision: 'allow', always: true, scope: 'workspace' });
    expect((await first.ended).reason).toBe('done');

    const second = watchRun(client, { sessionId: 's-pip2', runId: 'run-2', message: 'again' });
    expect(await second.next('tool-start', (event) => event.arguments.command === 'pip list --format=json')).toMatchObject({ awaitingConfirmation: false });
    expect(await second.next('tool-decision')).toMatchObject({ decision: 'allow', source: 'rule' });
    const hostileStart = await second.next('tool-start', (event) => event.arguments.command === hostile);
    expect(hostileStart).toMatchObject({ awaitingConfirmation: true });
    await client.trpc.chat.confirmTool.mutate({ sessionId: 's-pip2', approvalId: hostileStart.approvalId, decision: 'deny' });
    expect((await second.ended).reason).toBe('done');
    expect(existsSync(logged)).toBe(false);
  }, 120_000);
});
