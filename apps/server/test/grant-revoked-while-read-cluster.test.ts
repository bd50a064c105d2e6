import { ChatService, type ClusterMessage } from '@airlock/api';
import { ApprovalRegistry, type AnyTool } from '@airlock/core';
import { deferred, ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { PostgresStore } from '../src/store';
import { cleanupsAfterEach } from './support/cleanups';
import { waitingCalls } from './support/cluster-instance';
import { probeTestDatabase, type TestDatabase } from './support/postgres';
import { recordingTool } from './support/test-airlock';

// With several instances, a chat's grant made on one instance is read by the others when they are told of it. A
// revoke they are told of while that read is under way holds: the grant read is not put in force afterwards.

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance grant revoked while it is read: ${postgres.reason}`);

const cleanups = cleanupsAfterEach();

/** Reads of a grant on being told of it, as the instance makes them: `read` is the store's own. */
type GrantRead = (read: PostgresStore['getGrant'], grantId: string) => ReturnType<PostgresStore['getGrant']>;

async function instance(db: TestDatabase, name: string, tool: AnyTool) {
  const store = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: name, leaseMs: 60_000, log: () => {} });
  const reads: { getGrant: GrantRead } = { getGrant: (read, grantId) => read(grantId) };
  const cluster = new Proxy(store, {
    get: (target, key, receiver): unknown => (key === 'getGrant' ? (grantId: string) => reads.getGrant((id) => target.getGrant(id), grantId) : Reflect.get(target, key, receiver)),
  });
  const model = new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'one' } }, { name: 'echo', arguments: { text: 'two' } }), textStep('done')]);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [tool], store, cluster, suspendRunsOnShutdown: true, log: () => {} });
  cleanups.push(async () => {
    await chat.shutdown();
    await store.close();
  });
  await chat.open();
  return { chat, store, reads };
}

describe.skipIf(!postgres.available)('a grant revoked on one instance while another reads it', { timeout: 120_000 }, () => {
  it('is not put in force there once read: a call of the chat waiting there still waits, and the grant is not listed', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'echo' });
    const [first] = await waitingCalls(a.chat, 's', 2);

    // A reads the grant before it is revoked, and has the answer only once it has heard of the revoke.
    const revokeHeard = deferred();
    const listener = (a.store as unknown as { listener: { deliver(message: ClusterMessage): void } }).listener;
    const deliver = listener.deliver.bind(listener);
    vi.spyOn(listener, 'deliver').mockImplementation((message) => {
      deliver(message);
      if (message.type === 'grant' && message.revoked) revokeHeard.resolve();
    });
    const reading = deferred();
    a.reads.getGrant = async (read, grantId) => {
      const grant = await read(grantId);
      reading.resolve();
      await revokeHeard.promise;
      return grant;
    };

    const allowed = await b.chat.confirm({ sessionId: 's', approvalId: first!.approvalId, decision: 'allow', always: true, scope: 'chat' });
    expect(allowed).toMatchObject({ resolved: true, decision: 'allow' });
    await vi.waitFor(() => expect(calls).toStrictEqual(['one']), { timeout: 20_000, interval: 20 });
    await reading.promise;
    expect(await b.chat.revokeGrant('s', allowed.resolved ? allowed.grant!.grantId : '')).toBe(true);
    await revokeHeard.promise;

    // A round trip to the database, by which the grant read has been answered and acted on.
    expect(await a.store.listGrants()).toStrictEqual([]);
    expect(a.chat.listGrants('s')).toStrictEqual([]);
    const [second] = a.chat.pending('s');
    expect(second?.arguments).toStrictEqual({ text: 'two' });
    await a.chat.confirm({ sessionId: 's', approvalId: second!.approvalId, decision: 'deny' });
    await vi.waitFor(async () => expect((await a.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 20_000, interval: 20 });
    expect(calls).toStrictEqual(['one']);
  });
});
