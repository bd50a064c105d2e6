// Instances whose wall clocks are off the database's: a waiting call's deadline is kept on the database's clock, as a
// lease is, so an instance behind neither shortens a call's time to be decided nor an instance ahead lengthens it.
import type { LoopEvent } from '@airlock/api';
import type { AnyTool } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from './support/cleanups';
import { clusterInstance, followRun, type ClusterInstance as Instance } from './support/cluster-instance';
import { probeTestDatabase, withClient, type TestDatabase } from './support/postgres';
import { recordingTool } from './support/test-airlock';

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the clock skew tests: ${postgres.reason}`);
const cleanups = cleanupsAfterEach();

const HOUR_MS = 60 * 60 * 1000;
const MINUTE_MS = 60 * 1000;
/** A wall clock `offsetMs` off this machine's (and so off the database's, which runs here). */
const clockOff = (offsetMs: number) => () => Date.now() + offsetMs;

function instance(db: TestDatabase, name: string, tool: AnyTool, options: { now: () => number; leaseMs: number }): Promise<Instance> {
  return clusterInstance(db, cleanups, { name, tools: () => [tool], ...options });
}

function follow(on: Instance, sessionId: string, runId: string) {
  return followRun(on, cleanups, sessionId, runId);
}

const isEnd = (event: LoopEvent) => event.type === 'run-end';
const waitingStart = (event: LoopEvent): event is Extract<LoopEvent, { type: 'tool-start' }> => event.type === 'tool-start' && event.awaitingConfirmation;

/** The database's now, in epoch ms. */
const databaseNow = () => withClient(async (client) => (await client.query<{ now: string }>('SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now')).rows[0]!.now).then(Number);

async function ownerOf(db: TestDatabase, runId: string): Promise<string | null> {
  return withClient(async (client) => (await client.query<{ owner: string | null }>(`SELECT owner FROM ${db.schema}.runs WHERE run_id = $1`, [runId])).rows[0]?.owner ?? null);
}

describe.skipIf(!postgres.available)('instances whose clocks are off the database’s', { timeout: 120_000 }, () => {
  it('a call put up on an instance two hours behind is listed on every instance, its deadline on each one’s clock, and an allow on another runs it', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const behind = clockOff(-2 * HOUR_MS);
    const ahead = clockOff(HOUR_MS);
    const a = await instance(db, 'a', tool, { now: behind, leaseMs: 60_000 });
    const b = await instance(db, 'b', tool, { now: ahead, leaseMs: 60_000 });
    // The default timeout is an hour: written on A's clock as it is, the deadline was an hour gone by the database's.
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'behind' });
    const onA = await follow(a, 's1', 'r1');
    const { approvalId } = (await onA.until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;

    for (const [on, now] of [[a, behind], [b, ahead]] as const) {
      const [listed, ...more] = await on.chat.listWaiting('s1');
      expect([listed?.approvalId, more]).toStrictEqual([approvalId, []]);
      // On the reading instance's clock: some of the hour left, not two hours gone nor an hour too many.
      const left = listed!.expiresAt! - now();
      expect(left > 0 && left <= HOUR_MS).toBe(true);
    }
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true, status: 'resolved' });
    await onA.until(isEnd);
    expect(calls).toStrictEqual(['behind']);
    expect(await a.store.listRunToolCalls('r1')).toMatchObject([{ approvalId, decision: 'allow', outcome: 'executed' }]);
  });

  it('a call put up for 3 s on an instance a minute ahead that dies: a late allow on another is refused as the timeout it records, and nothing runs', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, { now: clockOff(MINUTE_MS), leaseMs: 60_000 });
    const b = await instance(db, 'b', tool, { now: Date.now, leaseMs: 300 });
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'ahead', options: { decisionTimeoutMs: 3000 } });
    const { approvalId } = (await (await follow(a, 's1', 'r1')).until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
    // Read once the call is written: its real deadline is before this moment plus its timeout.
    const putUp = await databaseNow();
    // A dies as a process killed outright, its lease a minute away: it hands nothing over, and nobody takes its run over meanwhile.
    await a.store.close();
    await expect.poll(databaseNow, { timeout: 20_000, interval: 100 }).toBeGreaterThan(putUp + 3000);

    expect(await b.chat.listWaiting('s1')).toStrictEqual([]);
    expect(await b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'timeout' });
    // The answer is what the ledger holds: the timeout is recorded, not merely expected of an owner that may be gone.
    expect(await b.store.listRunToolCalls('r1')).toMatchObject([{ approvalId, decision: 'timeout', source: 'system', outcome: null }]);

    await withClient((client) => client.query(`UPDATE ${db.schema}.runs SET lease_until = 0 WHERE run_id = 'r1'`));
    const onB = await follow(b, 's1', 'r1');
    expect(await onB.until((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'timed-out' });
    await onB.until(isEnd);
    expect(calls).toStrictEqual([]);
    expect(await b.store.listRunToolCalls('r1')).toMatchObject([{ approvalId, decision: 'timeout', source: 'system', outcome: 'timed-out' }]);
  });

  it('an instance half an hour behind that takes over a run whose owner, a minute ahead, died with a 3 s call waiting times the call out by itself, and a late allow is refused', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, { now: clockOff(MINUTE_MS), leaseMs: 300 });
    const b = await instance(db, 'b', tool, { now: clockOff(-30 * MINUTE_MS), leaseMs: 300 });
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'taken over', options: { decisionTimeoutMs: 3000 } });
    const { approvalId } = (await (await follow(a, 's1', 'r1')).until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
    await a.crash();
    await expect.poll(() => ownerOf(db, 'r1'), { timeout: 30_000 }).toBe('b');
    const onB = await follow(b, 's1', 'r1');

    // Nobody decides: B, holding the run, records the timeout at the call's deadline (on its clock read from the
    // database's), not a minute later (A's clock) nor half an hour later (B's own against A's).
    expect(await onB.until((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'timed-out' });
    expect(await b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'timeout' });
    await onB.until(isEnd);
    expect(onB.events.filter((event) => event.type === 'tool-decision')).toMatchObject([{ decision: 'timeout', source: 'system' }]);
    expect(calls).toStrictEqual([]);
  });
});
