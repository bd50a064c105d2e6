import type { ClusterMessage } from '@airlock/api';
import type { AnyTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { cleanupsAfterEach } from './support/cleanups';
import { clusterInstance, waitingCalls } from './support/cluster-instance';
import { probeTestDatabase, type TestDatabase } from './support/postgres';
import { recordingTool } from './support/test-airlock';

// With several instances, a person's allow of a call edited on one instance, with "Always allow" for the chat, runs
// the call as edited on its owner, however the owner hears of it: by the decision, or by the grant written with it.

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance "Always allow" of an edited call: ${postgres.reason}`);

const cleanups = cleanupsAfterEach();

const instance = (db: TestDatabase, name: string, tool: AnyTool) =>
  clusterInstance(db, cleanups, { name, model: new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'once' } }), textStep('done')]), tools: () => [tool] });

describe.skipIf(!postgres.available)('"Always allow" of an edited call, decided on another instance', { timeout: 120_000 }, () => {
  it('runs the edited call when the grant written with the allow reaches its owner before the decision does', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'echo' });
    const [waiting] = await waitingCalls(a.chat, 's');
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
