// A Stop stored on B whose message the owner A misses, against a call that waits for a place to run on A: its
// running mark, written alone once it gets the place, is refused by the store, and nothing runs.
import type { Cluster, ClusterMessage, LoopEvent } from '@airlock/api';
import { ConcurrencyLimit, type AnyTool } from '@airlock/core';
import { describe, expect, it, vi } from 'vitest';
import type { PostgresStore } from '../src/store';
import { cleanupsAfterEach } from './support/cleanups';
import { clusterInstance, followRun, interceptCluster, type ClusterInstance as Instance, type ClusterInstanceOptions } from './support/cluster-instance';
import { probeTestDatabase, type TestDatabase } from './support/postgres';
import { recordingTool } from './support/test-airlock';

const postgres = await probeTestDatabase();
const cleanups = cleanupsAfterEach();

function lossyCluster(store: PostgresStore, missed: (message: ClusterMessage) => boolean): Cluster {
  return interceptCluster(store, { subscribe: (listener) => store.subscribe((message) => (missed(message) ? undefined : listener(message))) });
}
function instance(db: TestDatabase, name: string, tool: AnyTool, options: Omit<ClusterInstanceOptions, 'name' | 'tools' | 'leaseMs'> = {}, leaseMs = 60_000): Promise<Instance> {
  return clusterInstance(db, cleanups, { name, tools: () => [tool], leaseMs, ...options });
}
function follow(on: Instance, sessionId: string, runId: string) {
  return followRun(on, cleanups, sessionId, runId);
}
const isEnd = (event: LoopEvent) => event.type === 'run-end';
const waitingStart = (event: LoopEvent): event is Extract<LoopEvent, { type: 'tool-start' }> => event.type === 'tool-start' && event.awaitingConfirmation;

describe.skipIf(!postgres.available)('a Stop stored on B, its message missed by the owner A', { timeout: 120_000 }, () => {
  it.each([
    { how: 'allowed by a person on B', confirm: true },
    { how: 'let through with confirmation off', confirm: false },
  ])('a call $how that waits for a place on A, then gets it after the Stop: nothing runs', async ({ confirm }) => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const slots = new ConcurrencyLimit(1);
    const held = slots.tryAcquire()!;
    const a = await instance(db, 'a', tool, { asCluster: (store) => lossyCluster(store, (m) => m.type === 'cancel'), service: { toolSlots: slots } });
    const b = await instance(db, 'b', tool);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'in line', options: { confirmToolCalls: confirm } });
    const followed = await follow(a, 's1', 'r1');
    if (confirm) {
      const start = (await followed.until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
      expect(await b.chat.confirm({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).toMatchObject({ resolved: true });
    }
    await vi.waitFor(() => expect(slots.waiting).toBe(1), { timeout: 20_000 });
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1');
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    held();
    const end = await followed.until(isEnd);
    expect(calls).toStrictEqual([]);
    const rows = (await b.store.listRunToolCalls('r1')).map((row) => [row.decision, row.outcome, row.startedAt]);
    expect(rows).toStrictEqual([['allow', 'cancelled', null]]);
    expect(end).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
  });
});
