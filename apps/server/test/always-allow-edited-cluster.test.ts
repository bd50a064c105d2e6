import { ChatService, type ClusterMessage } from '@airlock/api';
import { ApprovalRegistry, type AnyTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { tmpdir } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { RuleBook } from '../src/rules';
import { PostgresStore } from '../src/store';
import { cleanupsAfterEach } from './support/cleanups';
import { probeTestDatabase, type TestDatabase } from './support/postgres';
import { recordingTool } from './support/test-airlock';

// With several instances, a person's allow of a call edited on one instance, with "Always allow" for the chat, runs
// the call as edited on its owner, however the owner hears of it: by the decision, or by the grant written with it.

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance "Always allow" of an edited call: ${postgres.reason}`);

const cleanups = cleanupsAfterEach();

async function instance(db: TestDatabase, name: string, tool: AnyTool) {
  const store = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: name, leaseMs: 60_000, log: () => {} });
  const rules = await RuleBook.open({ store, workspace: tmpdir(), cluster: store, log: () => {} });
  const model = new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'once' } }), textStep('done')]);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [tool], store, cluster: store, rules, suspendRunsOnShutdown: true, log: () => {} });
  cleanups.push(async () => {
    await chat.shutdown();
    await store.close();
  });
  await chat.open();
  return { chat, store };
}

describe.skipIf(!postgres.available)('"Always allow" of an edited call, decided on another instance', { timeout: 120_000 }, () => {
  it('runs the edited call when the grant written with the allow reaches its owner before the decision does', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'echo' });
    const [waiting] = await vi.waitFor(
      async () => {
        const listed = await a.chat.listWaiting('s');
        if (listed.length === 0) throw new Error('no call waits yet');
        return listed;
      },
      { timeout: 20_000, interval: 20 },
    );
    // The owner hears of the decision after the grant written with it: it is told of both by one commit, and may read
    // the grant first.
    const listener = (a.store as unknown as { listener: { deliver(message: ClusterMessage): void } }).listener;
    const deliver = listener.deliver.bind(listener);
    const decided: ClusterMessage[] = [];
    const holding = vi.spyOn(listener, 'deliver').mockImplementation((message) => (message.type === 'decided' ? void decided.push(message) : deliver(message)));
    await b.chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'allow', always: true, scope: 'chat', arguments: { text: 'edited' } });
    await vi.waitFor(() => expect(calls).toHaveLength(1), { timeout: 20_000, interval: 20 });
    holding.mockRestore();
    for (const message of decided) deliver(message);
    await vi.waitFor(async () => expect((await a.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 20_000, interval: 20 });
    expect((await a.chat.getSession('s')).toolCalls).toMatchObject([{ editedArguments: { text: 'edited' }, outcome: 'executed' }]);
    expect(calls).toStrictEqual(['edited']);
  });
});
