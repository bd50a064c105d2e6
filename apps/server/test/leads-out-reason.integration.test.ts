import { randomBytes } from 'node:crypto';
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

describe('a command line a rule covers only inside the workspace, through the real server', () => {
  it('the card says why it is asked (the cd through a link that leads out, the rule), and confirmation off still runs it', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-leads-out-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, dataDir, other] = [join(folder, 'ws'), join(folder, 'data'), join(folder, 'other')];
    await mkdir(workspace, { recursive: true });
    await mkdir(other);
    await writeFile(join(other, 'listed-from-outside'), '');
    await symlink(other, join(workspace, 'out'));
    const command = 'cd out && ls';
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command } }] }, { text: 'done' }, { toolCalls: [{ name: 'terminal', arguments: { command } }] }, { text: 'done' });
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());
    const allow = (tokens: string[]) =>
      client.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens, exact: false }, scope: { kind: 'global' }, source: 'user' });
    await allow(['cd']);
    const { rule: ls } = await allow(['ls']);

    const asked = watchRun(client, { sessionId: 's', runId: 'run-1', message: 'go', options: { confirmToolCalls: true } });
    const start = await asked.next('tool-start');
    // The field the web's card and the terminal's both draw as "Why you are asked: …".
    expect(start).toMatchObject({
      awaitingConfirmation: true,
      askedBecause: {
        ruleId: ls.id,
        reason: [
          { code: 'cd out' },
          { text: ' may leave the workspace, and the rule (Allow commands starting with ' },
          { code: 'ls' },
          { text: ' everywhere) covers commands run inside it only' },
        ],
      },
    });
    await client.trpc.chat.confirmTool.mutate({ sessionId: 's', approvalId: start.approvalId, decision: 'deny' });
    expect((await asked.ended).reason).toBe('done');

    // With confirmation off the person asks for no card: an allow rule makes that no stricter.
    const unasked = watchRun(client, { sessionId: 's', runId: 'run-2', message: 'again', options: { confirmToolCalls: false } });
    expect(await unasked.next('tool-decision')).toMatchObject({ decision: 'allow', source: 'confirmation-off' });
    const end = await unasked.next('tool-end');
    expect(end.outcome).toBe('executed');
    expect(end.result).toContain('listed-from-outside');
    expect((await unasked.ended).reason).toBe('done');
  }, 90_000);
});
