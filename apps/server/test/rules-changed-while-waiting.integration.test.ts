import { randomBytes } from 'node:crypto';
import { link, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reasonText } from '@airlock/core';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer } from './support/fake-openai-server';
import { startServerProcess } from './support/server-process';
import { connectClient, watchRun } from './support/test-airlock';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SECRET = 'the-key-itself-4711';

describe('a deny rule added while calls wait, through the real server', () => {
  // `src/hard` is a hard link of `secret/key`: a deny rule for `secret/**` cannot tell whether it catches a read of
  // it, so it has the person decide that call. Put up before the rule, the call must be judged again when the rule
  // comes: "Always allow" on its sibling (a grant of read_file for the chat) must not release it.
  it('keeps the call it cannot judge waiting past "Always allow" on a sibling, marked for its card only', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-rules-changed-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, dataDir] = [join(folder, 'ws'), join(folder, 'data')];
    await mkdir(join(workspace, 'secret'), { recursive: true });
    await mkdir(join(workspace, 'src'));
    await writeFile(join(workspace, 'notes.txt'), 'plain notes\n');
    await writeFile(join(workspace, 'secret', 'key'), `${SECRET}\n`);
    await link(join(workspace, 'secret', 'key'), join(workspace, 'src', 'hard'));
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue({ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }, { name: 'read_file', arguments: { path: 'src/hard' } }] }, { text: 'done' });
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());

    const run = watchRun(client, { sessionId: 's', runId: 'run-1', message: 'read them' });
    const notes = await run.next('tool-start', (event) => event.arguments.path === 'notes.txt');
    const hard = await run.next('tool-start', (event) => event.arguments.path === 'src/hard');
    expect([notes.awaitingConfirmation, hard.awaitingConfirmation, hard.exactGrantsOnly]).toStrictEqual([true, true, undefined]);

    const { rule } = await client.trpc.rules.add.mutate({
      effect: 'deny',
      tool: 'read_file',
      match: { kind: 'path-glob', glob: 'secret/**' },
      scope: { kind: 'global' },
      source: 'user',
      reason: 'keys stay private',
    });
    expect(await client.trpc.chat.confirmTool.mutate({ sessionId: 's', approvalId: notes.approvalId, decision: 'allow', always: true, scope: 'chat' })).toMatchObject({ resolved: true, decision: 'allow' });
    await run.next('tool-end', (event) => event.toolCallId === notes.toolCallId);

    const waiting = await client.trpc.chat.pending.query({ sessionId: 's' });
    expect(waiting.map((call) => [call.approvalId, call.exactGrantsOnly, call.askedBecause?.ruleId])).toStrictEqual([[hard.approvalId, true, rule.id]]);
    expect(reasonText(waiting[0]!.askedBecause!.reason)).toContain('keys stay private');
    expect(run.received.some(({ event }) => event.type === 'tool-end' && event.toolCallId === hard.toolCallId)).toBe(false);

    await client.trpc.chat.confirmTool.mutate({ sessionId: 's', approvalId: hard.approvalId, decision: 'deny' });
    expect((await run.ended).reason).toBe('done');
    expect(JSON.stringify(fake.requests)).not.toContain(SECRET);
  }, 90_000);

  it('denies at once, with the rule\'s reason, a waiting call a deny rule added meanwhile catches: the person is not left waiting on it', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-denied-while-waiting-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, dataDir] = [join(folder, 'ws'), join(folder, 'data')];
    await mkdir(join(workspace, 'secret'), { recursive: true });
    await writeFile(join(workspace, 'secret', 'key'), `${SECRET}\n`);
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue({ toolCalls: [{ name: 'read_file', arguments: { path: 'secret/key' } }] }, { text: 'done' });
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());
    const run = watchRun(client, { sessionId: 's', runId: 'run-1', message: 'read it' });
    const waiting = await run.next('tool-start');
    expect(waiting.awaitingConfirmation).toBe(true);

    const { rule } = await client.trpc.rules.add.mutate({ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, scope: { kind: 'global' }, source: 'user', reason: 'keys stay private' });
    const decided = await run.next('tool-decision');
    expect([decided.approvalId, decided.decision, decided.source, decided.ruleId]).toStrictEqual([waiting.approvalId, 'deny', 'rule', rule.id]);
    expect(decided.reason).toContain('keys stay private');
    const end = await run.next('tool-end');
    expect(end.outcome).toBe('denied');
    expect(end.result).toContain('keys stay private');
    expect((await run.ended).reason).toBe('done');
    expect(await client.trpc.chat.pending.query({ sessionId: 's' })).toStrictEqual([]);
    expect(JSON.stringify(fake.requests)).not.toContain(SECRET);
  }, 90_000);

  it('lists, live and after a restart, why a deny rule asked about a call put up under it: the rule and its reason', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-asked-because-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, dataDir] = [join(folder, 'ws'), join(folder, 'data')];
    await mkdir(join(workspace, 'secret'), { recursive: true });
    await mkdir(join(workspace, 'src'));
    await writeFile(join(workspace, 'secret', 'key'), `${SECRET}\n`);
    await link(join(workspace, 'secret', 'key'), join(workspace, 'src', 'hard'));
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue({ toolCalls: [{ name: 'read_file', arguments: { path: 'src/hard' } }] }, { text: 'done' });
    const token = randomBytes(16).toString('hex');
    const start = () => startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const first = await start();
    const client = connectClient(first.wsUrl, token);
    const { rule } = await client.trpc.rules.add.mutate({ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, scope: { kind: 'global' }, source: 'user', reason: 'keys stay private' });
    const run = watchRun(client, { sessionId: 's', runId: 'run-1', message: 'read it' });
    const hard = await run.next('tool-start');
    const whyListed = async (at: typeof client) =>
      (await at.trpc.chat.pending.query({ sessionId: 's' })).map((call) => [call.approvalId, call.exactGrantsOnly, call.askedBecause?.ruleId, call.askedBecause && reasonText(call.askedBecause.reason)]);
    const expected = [[hard.approvalId, true, rule.id, reasonText(hard.askedBecause!.reason)]];
    expect(reasonText(hard.askedBecause!.reason)).toContain('keys stay private');
    expect(await whyListed(client)).toStrictEqual(expected);
    run.unsubscribe();
    await client.close();
    await first.stop('SIGTERM');

    const second = await start();
    const again = connectClient(second.wsUrl, token);
    cleanups.push(() => again.close());
    expect(await whyListed(again)).toStrictEqual(expected);
  }, 90_000);
});
