import type { ClaimDecisionInput, Cluster, ClusterMessage, LoopEvent, RunOptions } from '@airlock/api';
import type { AnyTool, ChatModel, ChatRequest, ModelPart } from '@airlock/core';
import { describe, expect, it, vi } from 'vitest';
import type { PostgresStore } from '../src/store';
import { channelName } from '../src/store/postgres-store';
import { cleanupsAfterEach } from './support/cleanups';
import { clusterInstance, type ClusterInstance as Instance, type ClusterInstanceOptions } from './support/cluster-instance';
import { ConversationModel } from './support/conversation-model';
import { probeTestDatabase, withClient, type TestDatabase } from './support/postgres';
import { recordingTool } from './support/test-airlock';

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the tests of store failures with several instances: ${postgres.reason}`);

const cleanups = cleanupsAfterEach();

type InstanceOptions = Omit<ClusterInstanceOptions, 'name' | 'tools' | 'leaseMs'>;

function instance(db: TestDatabase, name: string, tool: AnyTool, leaseMs: number, options: InstanceOptions = {}): Promise<Instance> {
  return clusterInstance(db, cleanups, { name, tools: () => [tool], leaseMs, ...options });
}

/**
 * The store (as a store or a cluster) with one method failing as with the database gone, once for each `arm()`, on
 * the first call `armed` accepts; `arm()` resolves once that call has failed.
 */
function failingOnce<Target extends object>(target: Target, method: keyof Target & string, armed: (...args: unknown[]) => boolean = () => true): { proxy: Target; arm: () => Promise<void> } {
  let failed: (() => void) | undefined;
  const proxy = new Proxy(target, {
    get(own, key) {
      const value: unknown = Reflect.get(own, key, own);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(own);
      if (key !== method) return bound;
      return (...args: unknown[]) => {
        if (failed === undefined || !armed(...args)) return bound(...args);
        const done = failed;
        failed = undefined;
        done();
        return Promise.reject(Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' }));
      };
    },
  });
  return { proxy, arm: () => new Promise<void>((resolve) => (failed = resolve)) };
}

/**
 * Like failingOnce, but the call armed is made: what it wrote is stored, and its answer is lost as with the connection
 * dropped once the statement was sent.
 */
function answerLostOnce<Target extends object>(target: Target, method: keyof Target & string, armed: (...args: unknown[]) => boolean): { proxy: Target; arm: () => Promise<void> } {
  let lost: (() => void) | undefined;
  const proxy = new Proxy(target, {
    get(own, key) {
      const value: unknown = Reflect.get(own, key, own);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(own);
      if (key !== method) return bound;
      return async (...args: unknown[]) => {
        if (lost === undefined || !armed(...args)) return bound(...args);
        const done = lost;
        lost = undefined;
        await bound(...args);
        done();
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
      };
    },
  });
  return { proxy, arm: () => new Promise<void>((resolve) => (lost = resolve)) };
}

/** The store, except that while `down` is set its reads of run events fail as with the database gone; `failures` counts them. */
function eventReadsDown(store: PostgresStore): { store: PostgresStore; down: boolean; failures: number } {
  const outage = {
    down: false,
    failures: 0,
    store: new Proxy(store, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (typeof value !== 'function') return value;
        const bound = (value as (...args: unknown[]) => unknown).bind(target);
        if (key !== 'loadEvents') return bound;
        return (...args: unknown[]) => {
          if (!outage.down) return bound(...args);
          outage.failures++;
          return Promise.reject(Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' }));
        };
      },
    }),
  };
  return outage;
}

/** Follows a run on one instance, as a client's subscription does, until the first event matching. */
async function followUntil(on: Instance, sessionId: string, runId: string, match: (event: LoopEvent) => boolean): Promise<{ events: LoopEvent[]; until: (match: (event: LoopEvent) => boolean) => Promise<LoopEvent> }> {
  expect(await on.chat.attachable(sessionId, runId)).toBe(true);
  const follower = on.chat.follow(sessionId, runId, 0, (_id, event) => event);
  cleanups.push(async () => void (await follower.return()));
  const events: LoopEvent[] = [];
  const until = async (wanted: (event: LoopEvent) => boolean) => {
    const already = events.find(wanted);
    if (already) return already;
    for (;;) {
      const next = await follower.next();
      if (next.done) throw new Error(`run ${runId} ended without the event looked for; saw ${events.map((event) => event.type).join(', ')}`);
      events.push(next.value);
      if (wanted(next.value)) return next.value;
    }
  };
  await until(match);
  return { events, until };
}

function waitingStart(event: LoopEvent): event is Extract<LoopEvent, { type: 'tool-start' }> {
  return event.type === 'tool-start' && event.awaitingConfirmation;
}

const isEnd = (event: LoopEvent) => event.type === 'run-end';

async function startWaiting(owner: Instance, sessionId: string, runId: string, text: string, options?: RunOptions) {
  await owner.chat.startRun({ sessionId, runId, message: text, options });
  const followed = await followUntil(owner, sessionId, runId, waitingStart);
  return { followed, approvalId: (followed.events.find(waitingStart) as Extract<LoopEvent, { type: 'tool-start' }>).approvalId };
}

/** Starts a run of TwoCallsModel on `owner`, and follows it until both its calls wait. */
async function startTwoWaiting(owner: Instance) {
  await owner.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'two' });
  const followed = await followUntil(owner, 's1', 'r1', (event) => waitingStart(event) && event.toolCallId === 'call_2');
  const [first, second] = followed.events.filter(waitingStart).map((event) => event.approvalId);
  return { followed, first: first!, second: second! };
}

/** Like ConversationModel, but a user message asks for two calls of `echo` at once: `first`, then `second`. */
class TwoCallsModel implements ChatModel {
  readonly name = 'two-calls';

  async *stream(request: ChatRequest): AsyncIterable<ModelPart> {
    if (request.messages.at(-1)?.role === 'user') {
      yield { type: 'tool-call', id: 'call_1', name: 'echo', arguments: { text: 'first' } };
      yield { type: 'tool-call', id: 'call_2', name: 'echo', arguments: { text: 'second' } };
      yield { type: 'finish', reason: 'tool-calls' };
      return;
    }
    yield { type: 'text-delta', text: 'done' };
    yield { type: 'finish', reason: 'stop' };
  }
}

/** Picks, for failingOnce or answerLostOnce, the claims of `decision`. */
const claimOf = (decision: ClaimDecisionInput['decision']) => (input: unknown) => (input as ClaimDecisionInput).decision === decision;

/** The cluster, recording the approval id of each claim of `decision` that reaches it (one failingOnce failed never does). */
function recordingClaims(cluster: Cluster, decision: ClaimDecisionInput['decision']): { cluster: Cluster; claimed: string[] } {
  const claimed: string[] = [];
  const recording = new Proxy(cluster, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (key !== 'claimDecision') return bound;
      return (input: ClaimDecisionInput) => {
        if (input.decision === decision) claimed.push(input.approvalId);
        return bound(input);
      };
    },
  });
  return { cluster: recording, claimed };
}

/** Picks, for failingOnce or answerLostOnce, the claims of a grant's release. */
const releaseByGrant = (input: unknown) => (input as ClaimDecisionInput).source === 'grant';

/**
 * An instance of TwoCallsModel whose claim of a grant's release fails once armed (with `answerLost`, once stored: see
 * answerLostOnce), and whose first read of a run's calls after that fails too: the read-back. `arm()` resolves once
 * both have failed.
 */
async function readBackFailing(db: TestDatabase, tool: AnyTool, { answerLost }: { answerLost: boolean }) {
  let claim!: ReturnType<typeof failingOnce<Cluster>>;
  let read!: ReturnType<typeof failingOnce<PostgresStore>>;
  let claimFailed = false;
  const owner = await instance(db, 'a', tool, 60_000, {
    model: new TwoCallsModel(),
    asCluster: (store) => (claim = (answerLost ? answerLostOnce<Cluster> : failingOnce<Cluster>)(store, 'claimDecision', releaseByGrant)).proxy,
    asStore: (store) => (read = failingOnce(store, 'listRunToolCalls', () => claimFailed)).proxy,
  });
  return { owner, arm: () => Promise.all([claim.arm().then(() => (claimFailed = true)), read.arm()]) };
}

/**
 * Instance a, whose first claim of `decision` once armed fails as with the database gone; `claimed` holds the approval
 * ids of its claims of `decision` that reached the store.
 */
async function claimFailingOnce(db: TestDatabase, tool: AnyTool, decision: ClaimDecisionInput['decision']) {
  let failing!: ReturnType<typeof failingOnce<Cluster>>;
  let stored!: ReturnType<typeof recordingClaims>;
  const owner = await instance(db, 'a', tool, 300, {
    asCluster: (store) => (failing = failingOnce<Cluster>((stored = recordingClaims(store, decision)).cluster, 'claimDecision', claimOf(decision))).proxy,
  });
  return { owner, arm: () => failing.arm(), claimed: stored.claimed };
}

/** The store as a cluster, except that this instance hears no message that a call was decided elsewhere (nor, with `stops`, that a run was stopped). */
function deafToDecisions(store: PostgresStore, stops = false): Cluster {
  const missed = (message: ClusterMessage) => message.type === 'decided' || (stops && message.type === 'cancel');
  return new Proxy(store, {
    get(target, key) {
      if (key === 'subscribe') return (listener: (message: ClusterMessage) => void) => store.subscribe((message) => missed(message) || listener(message));
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The cluster, except that its lease renewals never tell of a stored Stop (as before one comes round). */
function stopsUnrenewed(cluster: Cluster): Cluster {
  return new Proxy(cluster, {
    get(target, key) {
      if (key === 'renewLeases') return async () => ({ ...(await target.renewLeases()), stopped: new Set<string>() });
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const ledgerRow = (db: TestDatabase, approvalId: string) =>
  withClient(async (client) => (await client.query<{ decision: string | null; source: string | null }>(`SELECT decision, source FROM ${db.schema}.tool_calls WHERE approval_id = $1`, [approvalId])).rows[0]);

/** The store, except that while `down` is set its writes of run events fail as with the database gone. */
function eventWritesDown(store: PostgresStore): { store: PostgresStore; down: boolean } {
  const outage = {
    down: false,
    store: new Proxy(store, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (typeof value !== 'function') return value;
        const bound = (value as (...args: unknown[]) => unknown).bind(target);
        if (key !== 'appendEvent' && key !== 'appendEvents') return bound;
        return (...args: unknown[]) => (outage.down ? Promise.reject(Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' })) : bound(...args));
      },
    }),
  };
  return outage;
}

/**
 * The store as a cluster, counting the scans for runs to take over, for one run those that found it claimable, and
 * the claims of it that won.
 */
function countingClaims(store: PostgresStore, runId: string): { cluster: Cluster; scans: number; listed: number; claimed: number } {
  const counts = {
    scans: 0,
    listed: 0,
    claimed: 0,
    cluster: new Proxy(store, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (typeof value !== 'function') return value;
        const bound = (value as (...args: unknown[]) => unknown).bind(target);
        if (key === 'listClaimableRuns') {
          return async () => {
            const runs = (await bound()) as { runId: string }[];
            counts.scans++;
            if (runs.some((run) => run.runId === runId)) counts.listed++;
            return runs;
          };
        }
        if (key === 'claimRun') {
          return async (...args: unknown[]) => {
            const fence = await bound(...args);
            if (args[0] === runId && fence !== undefined) counts.claimed++;
            return fence;
          };
        }
        return bound;
      },
    }) as Cluster,
  };
  return counts;
}

/**
 * The second of two calls whose release by a grant failed to be written: back to waiting for a person (then allowed
 * here), or released again by the grant, still in force; not cancelled either way. Both run, each allowed once.
 */
async function secondRunsOnceAllowed(a: Instance, followed: Awaited<ReturnType<typeof followUntil>>, second: string, calls: string[]): Promise<void> {
  const waitingAgain = () => a.chat.pending('s1').some((call) => call.approvalId === second);
  await vi.waitFor(() => expect(waitingAgain() || calls.includes('second')).toBe(true), { timeout: 10_000 });
  if (waitingAgain()) await a.chat.confirm({ sessionId: 's1', approvalId: second, decision: 'allow' });
  await followed.until(isEnd);
  expect(calls).toStrictEqual(['first', 'second']);
  expect(followed.events.filter((event) => event.type === 'tool-decision').map((event) => [event.toolCallId, event.decision])).toStrictEqual([
    ['call_1', 'allow'],
    ['call_2', 'allow'],
  ]);
}

const runRow = (db: TestDatabase, runId: string) =>
  withClient(async (client) => (await client.query<{ owner: string | null; ended_at: string | null }>(`SELECT owner, ended_at FROM ${db.schema}.runs WHERE run_id = $1`, [runId])).rows[0]);

describe.skipIf(!postgres.available)('several instances when the store fails for a moment', { timeout: 120_000 }, () => {
  it('a takeover whose resume fails on one read gives the run up and takes it again: an allow made meanwhile runs its call', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 300);
    let failing!: ReturnType<typeof failingOnce<PostgresStore>>;
    const b = await instance(db, 'b', tool, 300, { asStore: (store) => (failing = failingOnce(store, 'listRunToolCalls')).proxy });
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'orphan');

    // A dies; B claims its run, and the first read of the resume fails.
    const failed = failing.arm();
    await a.crash();
    await failed;
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });

    await vi.waitFor(async () => expect((await runRow(db, 'r1'))?.ended_at).not.toBeNull(), { timeout: 20_000 });
    expect(calls).toStrictEqual(['orphan']);
  });

  it('a takeover whose resume fails after it put the waiting calls back lets them go with the run: the next claim resumes it, and an allow made then runs its call (found in review)', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 300);
    // B's first resume fails as its loop is made, once the run's waiting call is back in its registry.
    const model = new ConversationModel('echo', 'text');
    let failures = 0;
    const b = await instance(db, 'b', tool, 300, {
      service: {
        model: () => {
          if (failures++ === 0) throw new Error('the model could not be made');
          return model;
        },
      },
    });
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'resumed again');

    await a.crash();
    await vi.waitFor(() => expect(failures).toBeGreaterThan(1), { timeout: 20_000 });
    await vi.waitFor(async () => expect(b.chat.pending('s1').map((call) => call.approvalId)).toStrictEqual([approvalId]), { timeout: 20_000 });
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    await vi.waitFor(async () => expect((await runRow(db, 'r1'))?.ended_at).not.toBeNull(), { timeout: 20_000 });
    expect(calls).toStrictEqual(['resumed again']);
  });

  it('a takeover that sets aside a damaged run and fails to record its end gives the run up, and the next claim ends it', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 300);
    let failing!: ReturnType<typeof failingOnce<PostgresStore>>;
    await instance(db, 'b', tool, 300, { asStore: (store) => (failing = failingOnce(store, 'endRun')).proxy });
    await startWaiting(a, 's1', 'r1', 'damaged');
    await withClient(async (client) => {
      const damaged = await client.query(`UPDATE ${db.schema}.events SET json = '{"type":"run-start","runId":5}' WHERE run_id = 'r1' AND seq = 1`);
      expect(damaged.rowCount).toBe(1);
    });

    // A dies; B claims its run, finds it damaged, and the write of its end fails.
    const failed = failing.arm();
    await a.crash();
    await failed;

    await vi.waitFor(async () => expect((await runRow(db, 'r1'))?.ended_at).not.toBeNull(), { timeout: 10_000 });
    expect(calls).toStrictEqual([]);
  });

  it('an allow made on B whose read on the owner A fails once is read again: the call runs, not at its deadline', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let failing!: ReturnType<typeof failingOnce<PostgresStore>>;
    const a = await instance(db, 'a', tool, 300, { asStore: (store) => (failing = failingOnce(store, 'listRunToolCalls')).proxy });
    const b = await instance(db, 'b', tool, 300);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'late');

    const failed = failing.arm();
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    await failed;

    await vi.waitFor(() => expect(calls).toStrictEqual(['late']), { timeout: 10_000 });
    await followed.until(isEnd);
    expect(followed.events.filter((event) => event.type === 'tool-decision')).toMatchObject([{ decision: 'allow', source: 'user' }]);
  });

  it('a grant release whose claim the store did not take goes back to waiting for a person, rather than cancelling the call', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let failing!: ReturnType<typeof failingOnce<Cluster>>;
    const a = await instance(db, 'a', tool, 60_000, {
      model: new TwoCallsModel(),
      asCluster: (store) => (failing = failingOnce<Cluster>(store, 'claimDecision', releaseByGrant)).proxy,
    });
    const { followed, first, second } = await startTwoWaiting(a);

    // "Always allow" on the first: its grant releases the second, whose claim fails with nothing written.
    const failed = failing.arm();
    await expect(a.chat.confirm({ sessionId: 's1', approvalId: first, decision: 'allow', always: true })).resolves.toMatchObject({ resolved: true });
    await failed;
    await secondRunsOnceAllowed(a, followed, second, calls);
  });

  it('a run followed on B whose reads failed while it ended is read again once they work: its clients on B see its end', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 300);
    let outage!: ReturnType<typeof eventReadsDown>;
    const b = await instance(db, 'b', tool, 300, { asStore: (store) => (outage = eventReadsDown(store)).store });
    const { followed: onA, approvalId } = await startWaiting(a, 's1', 'r1', 'followed');
    const onB = await followUntil(b, 's1', 'r1', waitingStart);

    // B's reads of the run's events fail while A runs the call and ends the run; B hears of its end all the same.
    outage.down = true;
    await a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' });
    await onA.until(isEnd);
    await vi.waitFor(() => expect(b.chat.listSessions().find((session) => session.sessionId === 's1')?.activeRunId).toBeNull(), { timeout: 10_000 });
    expect(outage.failures).toBeGreaterThan(0);
    outage.down = false;

    let endedOnB = false;
    void onB.until(isEnd).then(() => (endedOnB = true), () => undefined);
    await vi.waitFor(() => expect(endedOnB).toBe(true), { timeout: 10_000 });
    expect(onB.events).toStrictEqual(onA.events);
    await vi.waitFor(() => expect(b.chat.isRunActive('r1')).toBe(false), { timeout: 10_000 });
    expect(calls).toStrictEqual(['followed']);
  });

  it('resyncs heard while one is read are merged: one pass at a time, and one more after it for all of them', async () => {
    const db = await cleanups.database();
    const { tool } = recordingTool();
    const listeners = new Set<(message: ClusterMessage) => void>();
    let grantReads = 0;
    const b = await instance(db, 'b', tool, 60_000, {
      asStore: (store) =>
        new Proxy(store, {
          get(target, key) {
            const value: unknown = Reflect.get(target, key, target);
            if (typeof value !== 'function') return value;
            const bound = (value as (...args: unknown[]) => unknown).bind(target);
            if (key !== 'listGrants') return bound;
            return (...args: unknown[]) => {
              grantReads++;
              return bound(...args);
            };
          },
        }),
      asCluster: (store) =>
        new Proxy(store, {
          get(target, key) {
            if (key === 'subscribe') {
              return (listener: (message: ClusterMessage) => void) => {
                listeners.add(listener);
                const stop = store.subscribe(listener);
                return () => {
                  listeners.delete(listener);
                  stop();
                };
              };
            }
            const value: unknown = Reflect.get(target, key, target);
            return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          },
        }),
    });
    await b.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'a chat' });
    const read = grantReads;

    // Fifty reconnections at once: a pass begins with the grants, read as the first resync is heard.
    for (let resync = 0; resync < 50; resync++) for (const listener of listeners) listener({ type: 'resync' });
    expect(grantReads - read).toBe(1);
    // The ones heard while it read are read by one more pass, after it.
    await vi.waitFor(() => expect(grantReads - read).toBe(2), { timeout: 10_000 });
    expect(b.chat.listSessions().map((session) => session.sessionId)).toStrictEqual(['s1']);
  });
  it('a timeout whose claim the store did not take, over an allow made on B a moment before, is not applied: the owner reads the call again and runs it as allowed', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let failing!: ReturnType<typeof failingOnce<Cluster>>;
    // A hears nothing of B's allow: it learns of it only by reading the store.
    const a = await instance(db, 'a', tool, 300, { asCluster: (store) => (failing = failingOnce<Cluster>(deafToDecisions(store), 'claimDecision', claimOf('timeout'))).proxy });
    const b = await instance(db, 'b', tool, 300);
    const failed = failing.arm();
    // Long enough for B's allow to land first however loaded the machine; the test waits for it to pass.
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'allowed in time', { decisionTimeoutMs: 10_000 });

    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    // The deadline passes on A, and its claim of the timeout fails as with the database gone.
    await failed;

    await followed.until(isEnd);
    expect(calls).toStrictEqual(['allowed in time']);
    expect(followed.events.filter((event) => event.type === 'tool-decision')).toMatchObject([{ decision: 'allow', source: 'user' }]);
    expect(await ledgerRow(db, approvalId)).toStrictEqual({ decision: 'allow', source: 'user' });
  });
  it('a timeout whose claim the store did not take, over an allow and then a Stop made on B, both missed: the owner reads the Stop before it lets the allow go, and nothing runs', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let failing!: ReturnType<typeof failingOnce<Cluster>>;
    // A hears nothing of B's allow or Stop, nor is told of the Stop by its lease renewals: it learns of them only by
    // reading the store at the call's deadline.
    const a = await instance(db, 'a', tool, 300, { asCluster: (store) => (failing = failingOnce<Cluster>(stopsUnrenewed(deafToDecisions(store, true)), 'claimDecision', claimOf('timeout'))).proxy });
    const b = await instance(db, 'b', tool, 300);
    const failed = failing.arm();
    // Long enough for B's allow and Stop to land first however loaded the machine; the test waits for it to pass.
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'allowed then stopped', { decisionTimeoutMs: 10_000 });

    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    // The deadline passes on A, and its claim of the timeout fails as with the database gone.
    await failed;

    expect(await followed.until(isEnd)).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    expect(calls).toStrictEqual([]);
    expect(followed.events.filter((event) => event.type === 'tool-end')).toMatchObject([{ outcome: 'cancelled' }]);
    expect(await ledgerRow(db, approvalId)).toStrictEqual({ decision: 'allow', source: 'user' });
  });
  it('a timeout whose claim the store did not take, with nothing decided elsewhere, is claimed again later: the call times out, and the ledger says so', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const { owner: a, arm, claimed } = await claimFailingOnce(db, tool, 'timeout');
    const failed = arm();
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'never decided', { decisionTimeoutMs: 1_000 });
    await failed;

    await followed.until(isEnd);
    expect(calls).toStrictEqual([]);
    expect(followed.events.filter((event) => event.type === 'tool-decision')).toMatchObject([{ decision: 'timeout', source: 'system' }]);
    expect(await ledgerRow(db, approvalId)).toStrictEqual({ decision: 'timeout', source: 'system' });
    // The timeout was claimed again, once, after the claim that failed.
    expect(claimed).toStrictEqual([approvalId]);
  });
  it('a stop whose claim the store did not take, over an allow made on B a moment before, runs nothing: the owner reads the call again, and the run and the ledger both say allowed, then cancelled', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let failing!: ReturnType<typeof failingOnce<Cluster>>;
    // A hears nothing of B's allow: it learns of it only by reading the store.
    const a = await instance(db, 'a', tool, 300, { asCluster: (store) => (failing = failingOnce<Cluster>(deafToDecisions(store), 'claimDecision', claimOf('cancel'))).proxy });
    const b = await instance(db, 'b', tool, 300);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'stopped after the allow');
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });

    // A person stops the run on A, whose claim of the call's cancel fails as with the database gone.
    const failed = failing.arm();
    await expect(a.chat.stop('s1')).resolves.toMatchObject({ cancelled: 1 });
    await failed;

    await followed.until(isEnd);
    expect(calls).toStrictEqual([]);
    expect(followed.events.filter((event) => event.type === 'tool-decision')).toMatchObject([{ decision: 'allow', source: 'user' }]);
    expect(followed.events.filter((event) => event.type === 'tool-end')).toMatchObject([{ outcome: 'cancelled' }]);
    expect(followed.events.at(-1)).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    expect(await ledgerRow(db, approvalId)).toStrictEqual({ decision: 'allow', source: 'user' });
  });
  it('a stop whose claim the store did not take, with nothing decided elsewhere, is claimed again later: the call is cancelled, and the ledger says so', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const { owner: a, arm, claimed } = await claimFailingOnce(db, tool, 'cancel');
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'stopped');

    const failed = arm();
    await expect(a.chat.stop('s1')).resolves.toMatchObject({ cancelled: 1 });
    await failed;

    await followed.until(isEnd);
    expect(calls).toStrictEqual([]);
    expect(followed.events.filter((event) => event.type === 'tool-decision')).toMatchObject([{ decision: 'cancel', source: 'user' }]);
    expect(await ledgerRow(db, approvalId)).toStrictEqual({ decision: 'cancel', source: 'user' });
    // The cancel was claimed again, once, after the claim that failed (found in review: the ledger said so before
    // too, the cancel applied at once and never claimed again, so only this tells the two apart).
    expect(claimed).toStrictEqual([approvalId]);
  });
  it('a grant release whose claim and read-back both fail, the database still down, goes back to waiting for a person, rather than cancelling the call', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const { owner: a, arm } = await readBackFailing(db, tool, { answerLost: false });
    const { followed, first, second } = await startTwoWaiting(a);

    // "Always allow" on the first: its grant releases the second, whose claim fails, and so does the read of its row.
    const failed = arm();
    await expect(a.chat.confirm({ sessionId: 's1', approvalId: first, decision: 'allow', always: true })).resolves.toMatchObject({ resolved: true });
    await failed;
    await secondRunsOnceAllowed(a, followed, second, calls);
  });
  it('a grant release stored though its answer was lost, whose read-back failed, is read again as what it is: the run and the ledger say the grant allowed the call', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const { owner: a, arm } = await readBackFailing(db, tool, { answerLost: true });
    const { followed, first, second } = await startTwoWaiting(a);

    // "Always allow" on the first: its grant releases the second, whose claim is stored but answered as failed, and the
    // read of its row fails: it waits again, and its row is read once the database answers.
    const failed = arm();
    const answer = await a.chat.confirm({ sessionId: 's1', approvalId: first, decision: 'allow', always: true });
    await failed;

    await followed.until(isEnd);
    expect(calls).toStrictEqual(['first', 'second']);
    expect(followed.events.filter((event) => event.type === 'tool-decision').map((event) => [event.toolCallId, event.decision, event.source, event.grantId])).toStrictEqual([
      ['call_1', 'allow', 'user', undefined],
      ['call_2', 'allow', 'grant', answer.resolved ? answer.grant?.grantId : undefined],
    ]);
    expect(await ledgerRow(db, second)).toStrictEqual({ decision: 'allow', source: 'grant' });
  });
  it('a run handed over because its writes fail, given up again soon after, is held off by every instance, a third one too: no bouncing between instances', async () => {
    const db = await cleanups.database();
    const { tool } = recordingTool();
    const outages: ReturnType<typeof eventWritesDown>[] = [];
    const claims: ReturnType<typeof countingClaims>[] = [];
    // Leases, and so scans, far longer than the test: runs change hands only on the messages that one was given up.
    const options: InstanceOptions = {
      service: { retryStoreAfterMs: 60_000 },
      asStore: (store) => outages[outages.push(eventWritesDown(store)) - 1]!.store,
      asCluster: (store) => claims[claims.push(countingClaims(store, 'r1')) - 1]!.cluster,
    };
    const a = await instance(db, 'a', tool, 60_000, options);
    await instance(db, 'b', tool, 60_000, options);
    await instance(db, 'c', tool, 60_000, options);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'bounced');
    const claimed = () => claims.reduce((sum, counts) => sum + counts.claimed, 0);

    // The database takes no run's events: A cannot store the allow and gives the run up; B or C claims it at once and
    // cannot store its resume either, and gives it up in turn.
    for (const outage of outages) outage.down = true;
    await a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' });
    await vi.waitFor(async () => {
      expect(claimed()).toBe(1);
      expect((await runRow(db, 'r1'))?.owner).toBeNull();
    }, { timeout: 10_000 });

    // Every instance is told to look for runs to take over: each finds none, the one that never held the run too.
    const scans = claims.map((counts) => counts.scans);
    await withClient((client) => client.query('SELECT pg_notify($1, $2)', [channelName(db.schema), JSON.stringify({ type: 'released', instanceId: 'elsewhere' })]));
    await vi.waitFor(() => expect(claims.map((counts, index) => counts.scans > scans[index]!)).toStrictEqual([true, true, true]), { timeout: 10_000 });
    expect(claimed()).toBe(1);
  });
});
