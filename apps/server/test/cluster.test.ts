import { StoreUnavailableError, type AppendEventInput, type Cluster, type ClusterMessage, type LoopEvent, type SessionChange } from '@airlock/api';
import { ConcurrencyLimit, defineTool, type AnyTool, type ChatModel, type ChatRequest, type ModelPart } from '@airlock/core';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { tmpdir } from 'node:os';
import type { PostgresStore } from '../src/store';
import { createBuiltinTools } from '../src/tools';
import { killAllWith, processesWith, toolNamed } from '../src/tools/test-support';
import { cleanupsAfterEach } from './support/cleanups';
import { clusterInstance, followRun, interceptCluster, type ClusterInstance as Instance, type ClusterInstanceOptions, type FollowedRun } from './support/cluster-instance';
import { probeTestDatabase, withClient, type TestDatabase } from './support/postgres';
import { recordingTool } from './support/test-airlock';

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance tests: ${postgres.reason}`);

const cleanups = cleanupsAfterEach();

/**
 * The messages `missed` picks never reach the instance (as when its notification connection dropped); `resync`
 * tells it what the store's listener does once that connection is back.
 */
function lossyCluster(store: PostgresStore, missed: (message: ClusterMessage) => boolean): { cluster: Cluster; resync: () => void } {
  const listeners = new Set<(message: ClusterMessage) => void>();
  const cluster = interceptCluster(store, {
    subscribe: (listener) => {
      listeners.add(listener);
      const stop = store.subscribe((message) => {
        if (!missed(message)) listener(message);
      });
      return () => {
        listeners.delete(listener);
        stop();
      };
    },
  });
  return { cluster, resync: () => listeners.forEach((listener) => listener({ type: 'resync' })) };
}

/**
 * Holds the calls of the methods `methods` of what `holding` wraps that `held` picks by their arguments: `asked`
 * resolves once one is made, and it goes on once `release()` is called.
 */
function callsHeldUntilRelease(methods: readonly string[], held: (argument: unknown) => boolean) {
  let asked!: () => void;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    asked: new Promise<void>((resolve) => (asked = resolve)),
    release,
    holding: <Target extends object>(target: Target): Target =>
      new Proxy(target, {
        get(inner, key) {
          const value: unknown = Reflect.get(inner, key, inner);
          if (typeof value !== 'function') return value;
          const bound = (value as (...args: unknown[]) => unknown).bind(inner);
          if (typeof key !== 'string' || !methods.includes(key)) return bound;
          return async (argument: unknown) => {
            if (held(argument)) {
              asked();
              await released;
            }
            return bound(argument);
          };
        },
      }),
  };
}

/** Holds an instance's claims of a call's timeout (see callsHeldUntilRelease). */
const timeoutHeldUntil = () => callsHeldUntilRelease(['claimDecision'], (input) => (input as Parameters<Cluster['claimDecision']>[0]).decision === 'timeout');

/** Holds an instance's write that marks a call running, the last before its tool starts (see callsHeldUntilRelease). */
const runningMarkHeld = () =>
  callsHeldUntilRelease(['appendEvent', 'appendEvents'], (written) =>
    (Array.isArray(written) ? (written as AppendEventInput[]) : [written as AppendEventInput]).some((input) => input.ledger?.kind === 'running'),
  );

/** The store, except that while `down` is set its writes of events fail as with the database gone. */
function flakyStore(store: PostgresStore): { store: PostgresStore; down: boolean } {
  const flaky = {
    down: false,
    store: new Proxy(store, {
      get(target, key) {
        if ((key === 'appendEvent' || key === 'appendEvents') && flaky.down) {
          return () => Promise.reject(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
        }
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    }),
  };
  return flaky;
}

/**
 * The store, except that while `cut.down` every statement it is asked for fails as with the database out of reach:
 * an instance cut off from it, its leases no longer renewed. Messages already on their way still reach it. Its
 * synchronous methods stay synchronous: `damagedRecord` made to answer a promise took every failed read of a run
 * followed here for a damaged event, and the follow read on in a loop that never yielded, until the worker ran out
 * of memory.
 */
function cutOff(store: PostgresStore, cut: { down: boolean }): PostgresStore {
  const sync = new Set<string | symbol>(['isUnavailable', 'damagedRecord', 'subscribe', 'close']);
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (sync.has(key)) return bound;
      return (...args: unknown[]) =>
        cut.down ? Promise.reject(Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' })) : bound(...args);
    },
  });
}

/**
 * An instance that can be made to stall: `stall()` holds every lease renewal from then on (as a paused process
 * would) and resolves once one is held; `resume()` lets them go on. `claims` are the decisions it wrote by itself.
 * `scanned()` resolves once a scan for runs to take over, begun after the call, has been through what it found.
 */
function stallableCluster(store: PostgresStore) {
  // While stalled, every renewal waits (a paused process renews nothing): the interval goes on calling it.
  let paused: Promise<void> | undefined;
  let resume = () => {};
  let stalled: (() => void) | undefined;
  const claims: Promise<unknown>[] = [];
  // Scans run one at a time: the one after a scan begins once that scan has claimed and resumed what it found.
  const scans: { begun: boolean; done: () => void }[] = [];
  const cluster = interceptCluster(store, {
    listClaimableRuns: () => {
      for (const scan of scans.splice(0)) {
        if (scan.begun) scan.done();
        else scans.push({ ...scan, begun: true });
      }
      return store.listClaimableRuns();
    },
    renewLeases: async () => {
      if (paused !== undefined) {
        stalled?.();
        stalled = undefined;
        await paused;
      }
      return store.renewLeases();
    },
    claimDecision: (input) => {
      const claim = store.claimDecision(input);
      claims.push(claim);
      return claim;
    },
  });
  return {
    cluster,
    claims,
    scanned: () => new Promise<void>((done) => scans.push({ begun: false, done })),
    stall: () => {
      paused = new Promise<void>((resolve) => (resume = resolve));
      return new Promise<void>((reached) => (stalled = reached));
    },
    resume: () => {
      paused = undefined;
      resume();
    },
  };
}

function instance(db: TestDatabase, name: string, tool: AnyTool, leaseMs = 60_000, options: Omit<ClusterInstanceOptions, 'name' | 'tools' | 'leaseMs'> = {}): Promise<Instance> {
  return clusterInstance(db, cleanups, { name, tools: () => [tool], leaseMs, ...options });
}

/** Follows a run on one instance from `afterSeq`, as a client's subscription does. */
function follow(on: Instance, sessionId: string, runId: string, afterSeq = 0): Promise<FollowedRun> {
  return followRun(on, cleanups, sessionId, runId, afterSeq);
}

function waitingStart(event: LoopEvent): event is Extract<LoopEvent, { type: 'tool-start' }> {
  return event.type === 'tool-start' && event.awaitingConfirmation;
}

const isEnd = (event: LoopEvent) => event.type === 'run-end';

/** An `echo` tool that runs until released or stopped, recording each text it started with. */
function heldEcho(): { tool: AnyTool; started: string[]; release: () => void } {
  const started: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const tool = defineTool({
    name: 'echo',
    description: 'Echoes its text, slowly.',
    parameters: z.object({ text: z.string() }),
    annotations: { executesCode: false, readOnly: true },
    execute: async ({ text }, { signal }) => {
      started.push(text);
      await Promise.race([held, new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))]);
      return `echo: ${text}`;
    },
  });
  return { tool, started, release };
}

async function startWaiting(owner: Instance, sessionId: string, runId: string, text: string) {
  await owner.chat.startRun({ sessionId, runId, message: text });
  const followed = await follow(owner, sessionId, runId);
  const start = (await followed.until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
  return { followed, approvalId: start.approvalId };
}

/** Like ConversationModel, but a user message asks for two calls at once: `first`, then `second`. */
class TwoCallsModel implements ChatModel {
  readonly name = 'two-calls';

  constructor(
    private readonly tool: string,
    private readonly argument: string,
  ) {}

  async *stream(request: ChatRequest): AsyncIterable<ModelPart> {
    if (request.messages.at(-1)?.role === 'user') {
      yield { type: 'tool-call', id: 'call_1', name: this.tool, arguments: { [this.argument]: 'first' } };
      yield { type: 'tool-call', id: 'call_2', name: this.tool, arguments: { [this.argument]: 'second' } };
      yield { type: 'finish', reason: 'tool-calls' };
      return;
    }
    yield { type: 'text-delta', text: 'done' };
    yield { type: 'finish', reason: 'stop' };
  }
}

/** Calls `echo` once a turn, `turns` times ("call 1", "call 2", …), then answers. */
class ManyTurnsModel implements ChatModel {
  readonly name = 'many-turns';

  constructor(private readonly turns: number) {}

  async *stream(request: ChatRequest): AsyncIterable<ModelPart> {
    const done = request.messages.filter((message) => message.role === 'tool').length;
    if (done < this.turns) {
      yield { type: 'tool-call', id: `call_${done + 1}`, name: 'echo', arguments: { text: `call ${done + 1}` } };
      yield { type: 'finish', reason: 'tool-calls' };
      return;
    }
    yield { type: 'text-delta', text: 'done' };
    yield { type: 'finish', reason: 'stop' };
  }
}

function expectExactIds(runId: string, ids: readonly string[], from = 1) {
  expect(ids).toStrictEqual(ids.map((_, index) => `${runId}:${from + index}`));
}

describe.skipIf(!postgres.available)('several instances on one PostgreSQL database', { timeout: 120_000 }, () => {
  it('a client of B decides a call waiting on A; it runs once on A, and B relays every event once, in order', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const changesOnB: SessionChange[] = [];
    cleanups.push(async () => stopWatching());
    const stopWatching = b.chat.watchSessions((change) => changesOnB.push(change));
    const waitingChangesOnB = () => changesOnB.filter((change) => change.type === 'waiting-changed' && change.sessionId === 's1').length;
    const { followed: onA, approvalId } = await startWaiting(a, 's1', 'r1', 'hello');

    expect((await b.chat.listWaiting('s1')).map((p) => p.approvalId)).toStrictEqual([approvalId]);
    const onB = await follow(b, 's1', 'r1');
    await onB.until(waitingStart);
    // B's own watchers (a tab connected to B) are told that a call waits, once (the events B relays tell nothing more).
    await vi.waitFor(() => expect(waitingChangesOnB()).toBe(1), { timeout: 10_000 });
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', by: { clientLabel: 'on-b' } })).resolves.toMatchObject({ resolved: true, status: 'resolved' });
    await expect(a.chat.confirm({ sessionId: 's1', approvalId, decision: 'deny' })).resolves.toMatchObject({ resolved: false, status: 'already-decided', decision: 'allow' });

    await onA.until(isEnd);
    await onB.until(isEnd);
    await vi.waitFor(() => expect(waitingChangesOnB()).toBe(2), { timeout: 10_000 });
    expect(calls).toStrictEqual(['hello']);
    expectExactIds('r1', onB.ids);
    expect(onB.ids).toStrictEqual(onA.ids);
    expect(onB.events).toStrictEqual(onA.events);
    expect(onB.events.at(-1)).toMatchObject({ type: 'run-end', reason: 'done' });
    const [record] = await b.store.listRunToolCalls('r1');
    expect(record).toMatchObject({ decision: 'allow', source: 'user', clientLabel: 'on-b', outcome: 'executed' });
    expect(await b.chat.listWaiting('s1')).toStrictEqual([]);
  });

  it('a watcher on B that follows nothing is told when a call starts waiting on A and when it is decided, on B or on A; a read then shows it', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    // What a tab connected to B does on each change: it reads the chat's waiting list.
    const readsOnB: Promise<string[]>[] = [];
    const stopWatching = b.chat.watchSessions((change) => {
      if (change.type === 'waiting-changed' && change.sessionId === 's1') readsOnB.push(b.chat.listWaiting('s1').then((list) => list.map((p) => p.approvalId)));
    });
    cleanups.push(async () => stopWatching());

    const first = await startWaiting(a, 's1', 'r1', 'decided on b');
    await vi.waitFor(() => expect(readsOnB).toHaveLength(1), { timeout: 10_000 });
    expect(await readsOnB[0]).toStrictEqual([first.approvalId]);
    await expect(b.chat.confirm({ sessionId: 's1', approvalId: first.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    await vi.waitFor(() => expect(readsOnB).toHaveLength(2), { timeout: 10_000 });
    expect(await readsOnB[1]).toStrictEqual([]);
    await first.followed.until(isEnd);

    const second = await startWaiting(a, 's1', 'r2', 'decided on a');
    await vi.waitFor(() => expect(readsOnB).toHaveLength(3), { timeout: 10_000 });
    expect(await readsOnB[2]).toStrictEqual([second.approvalId]);
    await expect(a.chat.confirm({ sessionId: 's1', approvalId: second.approvalId, decision: 'deny' })).resolves.toMatchObject({ resolved: true });
    await vi.waitFor(() => expect(readsOnB).toHaveLength(4), { timeout: 10_000 });
    expect(await readsOnB[3]).toStrictEqual([]);
    await second.followed.until(isEnd);
    expect(calls).toStrictEqual(['decided on b']);
  });

  it('a call decided or stopped on B while its owner A is dead leaves the waiting list of a watcher on C at once, not when a takeover records it', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    // Leases of a minute: nobody takes the runs over during the test.
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const c = await instance(db, 'c', tool);
    const readsOnC = new Map<string, Promise<string[]>[]>([['s1', []], ['s2', []]]);
    const stopWatching = c.chat.watchSessions((change) => {
      if (change.type === 'waiting-changed') readsOnC.get(change.sessionId)?.push(c.chat.listWaiting(change.sessionId).then((list) => list.map((p) => p.approvalId)));
    });
    cleanups.push(async () => stopWatching());
    const decided = await startWaiting(a, 's1', 'r1', 'denied');
    const stopped = await startWaiting(a, 's2', 'r2', 'stopped');
    await vi.waitFor(() => expect([readsOnC.get('s1')!.length, readsOnC.get('s2')!.length]).toStrictEqual([1, 1]), { timeout: 10_000 });
    expect(await readsOnC.get('s1')![0]).toStrictEqual([decided.approvalId]);
    expect(await readsOnC.get('s2')![0]).toStrictEqual([stopped.approvalId]);
    // A dies as a process killed outright: it hears nothing more, hands nothing over, and records nothing.
    await a.store.close();

    await expect(b.chat.confirm({ sessionId: 's1', approvalId: decided.approvalId, decision: 'deny' })).resolves.toMatchObject({ resolved: true });
    await vi.waitFor(() => expect(readsOnC.get('s1')).toHaveLength(2), { timeout: 10_000 });
    expect(await readsOnC.get('s1')![1]).toStrictEqual([]);
    await vi.waitFor(() => expect(b.chat.listSessions().find((s) => s.sessionId === 's2')?.activeRunId).toBe('r2'), { timeout: 10_000 });
    expect(await b.chat.cancel('s2', 'r2')).toBe(1);
    await vi.waitFor(() => expect(readsOnC.get('s2')).toHaveLength(2), { timeout: 10_000 });
    expect(await readsOnC.get('s2')![1]).toStrictEqual([]);
    expect([await ownerOf(db, 'r1'), await ownerOf(db, 'r2')]).toStrictEqual(['a', 'a']);
    expect(calls).toStrictEqual([]);
  });

  it('a watcher on B that missed the message of a call starting to wait on A is told once B hears it may have missed some', async () => {
    const db = await cleanups.database();
    const { tool } = recordingTool();
    const a = await instance(db, 'a', tool);
    let resyncB = () => {};
    const b = await instance(db, 'b', tool, 60_000, {
      asCluster: (store) => {
        const lossy = lossyCluster(store, (message) => message.type === 'event');
        resyncB = lossy.resync;
        return lossy.cluster;
      },
    });
    const readsOnB: Promise<string[]>[] = [];
    const stopWatching = b.chat.watchSessions((change) => {
      if (change.type === 'waiting-changed' && change.sessionId === 's1') readsOnB.push(b.chat.listWaiting('s1').then((list) => list.map((p) => p.approvalId)));
    });
    cleanups.push(async () => stopWatching());
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'missed');
    await vi.waitFor(() => expect(b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1'), { timeout: 10_000 });
    const before = readsOnB.length;
    resyncB();
    await vi.waitFor(() => expect(readsOnB.length).toBeGreaterThan(before), { timeout: 10_000 });
    expect(await readsOnB[before]).toStrictEqual([approvalId]);
  });

  it('a watcher on B is told when a call on A is decided though the message names no chat, as an instance of an older version sends it', async () => {
    const db = await cleanups.database();
    const { tool } = recordingTool();
    const a = await instance(db, 'a', tool);
    // B hears "decided" as an older instance sends it: without the session.
    const b = await instance(db, 'b', tool, 60_000, {
      asCluster: (store) =>
        interceptCluster(store, {
          subscribe: (listener) => store.subscribe((message) => listener(message.type === 'decided' ? { type: 'decided', runId: message.runId, approvalId: message.approvalId } : message)),
        }),
    });
    const { followed: onA, approvalId } = await startWaiting(a, 's1', 'r1', 'old message');
    await vi.waitFor(async () => expect((await b.chat.listWaiting('s1')).map((p) => p.approvalId)).toStrictEqual([approvalId]), { timeout: 10_000 });
    const readsOnB: Promise<string[]>[] = [];
    const stopWatching = b.chat.watchSessions((change) => {
      if (change.type === 'waiting-changed' && change.sessionId === 's1') readsOnB.push(b.chat.listWaiting('s1').then((list) => list.map((p) => p.approvalId)));
    });
    cleanups.push(async () => stopWatching());

    await expect(a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    await onA.until(isEnd);
    await vi.waitFor(() => expect(readsOnB.length).toBeGreaterThan(0), { timeout: 10_000 });
    expect(await readsOnB.at(-1)).toStrictEqual([]);
  });

  it('a decision on B past its deadline is refused before it is claimed: the call still waits on A, and one in time runs it', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'hello');
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', deadline: performance.now() - 1 })).rejects.toMatchObject({ name: 'DecisionPastDeadlineError' });
    expect((await a.chat.listWaiting('s1')).map((p) => p.approvalId)).toStrictEqual([approvalId]);
    expect(await b.store.listRunToolCalls('r1')).toMatchObject([{ decision: null }]);
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', deadline: performance.now() + 60_000 })).resolves.toMatchObject({ resolved: true });
    await followed.until(isEnd);
    expect(calls).toStrictEqual(['hello']);
  });

  it('a decision on B whose claim waits on a locked row past its deadline is rolled back, not applied when the lock goes: the call still waits', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'hello');
    await withClient(async (holder) => {
      // Another transaction holds the call's row, as a chat deletion or a policy write may: the claim waits on it.
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${db.schema}".tool_calls WHERE approval_id = $1 FOR UPDATE`, [approvalId]);
      const deadline = performance.now() + 1_000;
      const claimed = b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', deadline }).then(
        (answer) => ({ answer }),
        (error: unknown) => ({ error }),
      );
      // The lock is let go only once the claim waits on it and its deadline has passed.
      await vi.waitFor(async () => {
        const { rows } = await holder.query<{ waiting: number }>(`SELECT count(*)::int AS waiting FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'`);
        expect(rows[0]!.waiting + (performance.now() > deadline ? 1 : 0)).toBeGreaterThan(0);
      }, { timeout: 20_000, interval: 20 });
      await vi.waitFor(() => expect(performance.now()).toBeGreaterThan(deadline), { timeout: 20_000, interval: 20 });
      await holder.query('COMMIT');
      expect(await claimed).toMatchObject({ error: { name: 'DecisionPastDeadlineError' } });
    });
    expect((await a.chat.listWaiting('s1')).map((p) => p.approvalId)).toStrictEqual([approvalId]);
    expect(await b.store.listRunToolCalls('r1')).toMatchObject([{ decision: null }]);
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', deadline: performance.now() + 60_000 })).resolves.toMatchObject({ resolved: true });
    await followed.until(isEnd);
    expect(calls).toStrictEqual(['hello']);
  });

  it('a call nobody decides in time is stored as timed out by Airlock (source "system"), not by a person, on every instance', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'late', options: { decisionTimeoutMs: 300 } });
    const followed = await follow(a, 's1', 'r1');
    expect(await followed.until((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'timed-out' });
    expect(followed.events.find((event) => event.type === 'tool-decision')).toMatchObject({ decision: 'timeout', source: 'system' });
    expect(calls).toStrictEqual([]);
    const [record] = await b.store.listRunToolCalls('r1');
    expect(record).toMatchObject({ decision: 'timeout', source: 'system', outcome: 'timed-out' });
  });

  it('B follows A’s run across a reconnect: from lastEventId, nothing repeated and nothing missed', async () => {
    const db = await cleanups.database();
    const { tool } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'again');
    const first = await follow(b, 's1', 'r1');
    await first.until(waitingStart);
    const lastSeq = first.ids.length;
    // The client drops; the run goes on on A; the client comes back to B with the last id it saw.
    await a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' });
    const again = await follow(b, 's1', 'r1', lastSeq);
    await again.until(isEnd);
    expectExactIds('r1', [...first.ids, ...again.ids]);
  });

  // A bound for a loaded machine, not a timing assertion: each of the 1,000 runs makes about twenty durable writes.
  it('two instances deciding one call at the same moment: exactly one wins, 1,000 times in random order', { timeout: 900_000 }, async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const c = await instance(db, 'c', tool);
    const deciders = [a, b, c];
    let expectedRuns = 0;
    for (let i = 0; i < 1000; i++) {
      const owner = deciders[i % 3]!;
      const sessionId = `s${i}`;
      const { followed, approvalId } = await startWaiting(owner, sessionId, `r${i}`, `call ${i}`);
      const first = deciders[Math.floor(Math.random() * 3)]!;
      const second = deciders.filter((d) => d !== first)[Math.floor(Math.random() * 2)]!;
      const decisions = [first, second].map((): 'allow' | 'deny' => (Math.random() < 0.5 ? 'allow' : 'deny'));
      const results = await Promise.all([first, second].map((on, k) => on.chat.confirm({ sessionId, approvalId, decision: decisions[k]! })));
      const winners = results.filter((result) => result.resolved);
      expect(winners, `iteration ${i}`).toHaveLength(1);
      const winner = winners[0]!;
      const loser = results.find((result) => !result.resolved)!;
      expect(loser).toMatchObject({ status: 'already-decided', decision: winner.decision });
      const end = await followed.until((event) => event.type === 'tool-end');
      expect(end).toMatchObject({ outcome: winner.decision === 'allow' ? 'executed' : 'denied' });
      if (winner.decision === 'allow') expectedRuns++;
      await followed.until(isEnd);
    }
    expect(calls).toHaveLength(expectedRuns);
    expect(new Set(calls).size).toBe(expectedRuns);
  });

  it('an owner that stops without a word loses its runs: another instance takes them over, still waiting, and a decision there runs the call once', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 300);
    const b = await instance(db, 'b', tool, 300);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'survive');
    const onB = await follow(b, 's1', 'r1');
    await onB.until(waitingStart);
    await a.crash();
    await expect.poll(() => ownerOf(db, 'r1'), { timeout: 30_000 }).toBe('b');
    expect((await b.chat.listWaiting('s1')).map((p) => p.approvalId)).toStrictEqual([approvalId]);
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    await onB.until(isEnd);
    expect(calls).toStrictEqual(['survive']);
    expectExactIds('r1', onB.ids);
  });

  it('an instance restarted under the same name soon after a crash takes its old runs back and they go on, not held by its leases', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const first = await instance(db, 'a', tool, 60_000);
    const { approvalId } = await startWaiting(first, 's1', 'r1', 'again');
    await first.crash();
    // As a process killed outright leaves it: still owned under its name, the lease a minute away.
    await withClient((client) => client.query(`UPDATE ${db.schema}.runs SET owner = 'a', lease_until = (extract(epoch from clock_timestamp()) * 1000)::bigint + 60000 WHERE run_id = $1`, ['r1']));
    expect(await ownerOf(db, 'r1')).toBe('a');
    const again = await instance(db, 'a', tool, 60_000);
    expect((await again.chat.listWaiting('s1')).map((p) => p.approvalId)).toStrictEqual([approvalId]);
    const onA = await follow(again, 's1', 'r1');
    await expect(again.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    await onA.until(isEnd);
    expect(calls).toStrictEqual(['again']);
  });

  it('a Stop asked for on B while the run’s owner is dead holds: the instance that takes the run over ends it cancelled, running nothing', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 1500);
    const b = await instance(db, 'b', tool, 300);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'never');
    const onB = await follow(b, 's1', 'r1');
    await onB.until(waitingStart);
    // A dies as a process killed outright: it hears nothing more and hands nothing over; its lease runs out later.
    await a.store.close();
    expect(await ownerOf(db, 'r1')).toBe('a');
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    const end = await onB.until(isEnd);
    expect(end).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    expect(calls).toStrictEqual([]);
    expect(await b.chat.listWaiting('s1')).toStrictEqual([]);
    expect((await b.chat.getSession('s1')).toolCalls).toMatchObject([{ approvalId, decision: 'cancel', outcome: 'cancelled' }]);
  });

  it('a Stop on the owner whose cancel cannot be written holds: the instance that takes the run over ends it cancelled, with no further model turn', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool, 300);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'never');
    const onB = await follow(b, 's1', 'r1');
    await onB.until(waitingStart);
    // A's database can no longer take the run's events (its disk is full); its other statements still go through.
    const full = () => Promise.reject(new StoreUnavailableError('test', 'full', '53100: could not extend file'));
    a.store.appendEvent = full;
    a.store.appendEvents = full;
    expect(await a.chat.stop('s1')).toStrictEqual({ cancelled: 1 });
    // A hands the run over, its cancel unwritten. Taken over, the run's call ended cancelled, and then the run went on
    // to the model's next turn and ended "done": the stop held for the call only.
    const end = await onB.until(isEnd);
    expect(end).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    expect(onB.events.filter((event) => event.type === 'text-delta')).toStrictEqual([]);
    expect(calls).toStrictEqual([]);
    expect((await b.chat.getSession('s1')).toolCalls).toMatchObject([{ approvalId, decision: 'cancel', outcome: 'cancelled' }]);
  });

  it('a call whose deadline passed while its owner is dead waits no more: a late allow on B is answered timed out, the timeout recorded then, and B, taking the run over, ends the call so and runs nothing', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 60_000);
    const b = await instance(db, 'b', tool, 300);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'too late', options: { decisionTimeoutMs: 60_000 } });
    const onA = await follow(a, 's1', 'r1');
    const { approvalId } = (await onA.until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
    const onB = await follow(b, 's1', 'r1');
    await onB.until(waitingStart);
    // A dies as a process killed outright, its lease a minute away; then the call's deadline passes (made to have).
    await a.store.close();
    await withClient((client) => client.query(`UPDATE ${db.schema}.tool_calls SET expires_at = 1 WHERE approval_id = $1`, [approvalId]));

    expect(await b.chat.listWaiting('s1')).toStrictEqual([]);
    expect(await b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'timeout' });
    const [timedOut] = await b.store.listRunToolCalls('r1');
    expect(timedOut).toMatchObject({ approvalId, decision: 'timeout', source: 'system', outcome: null });

    await withClient((client) => client.query(`UPDATE ${db.schema}.runs SET lease_until = 0 WHERE run_id = 'r1'`));
    expect(await onB.until((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'timed-out' });
    await onB.until(isEnd);
    expect(onB.events.filter((event) => event.type === 'tool-decision')).toMatchObject([{ decision: 'timeout', source: 'system' }]);
    expect(calls).toStrictEqual([]);
    const [record] = await b.store.listRunToolCalls('r1');
    expect(record).toMatchObject({ approvalId, decision: 'timeout', source: 'system', outcome: 'timed-out' });
  });

  it('a call whose deadline passes while its owner is dead leaves the waiting list of a tab on B then, not at the takeover', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 60_000);
    const b = await instance(db, 'b', tool, 60_000);
    const readsOnB: Promise<string[]>[] = [];
    const stopWatching = b.chat.watchSessions((change) => {
      if (change.type === 'waiting-changed' && change.sessionId === 's1') readsOnB.push(b.chat.listWaiting('s1').then((list) => list.map((p) => p.approvalId)));
    });
    cleanups.push(async () => stopWatching());
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'dies waiting', options: { decisionTimeoutMs: 60_000 } });
    const { approvalId } = (await (await follow(a, 's1', 'r1')).until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
    // A dies as a process killed outright, its lease a minute away; the call's deadline is made a few seconds ahead.
    await a.store.close();
    await withClient((client) => client.query(`UPDATE ${db.schema}.tool_calls SET expires_at = (extract(epoch from clock_timestamp()) * 1000)::bigint + 3000 WHERE approval_id = $1`, [approvalId]));

    // The tab on B reads its list, the call in it.
    expect((await b.chat.listWaiting('s1')).map((p) => p.approvalId)).toStrictEqual([approvalId]);
    const before = readsOnB.length;
    // Nobody records the timeout (the owner is dead, and nobody takes its run over for a minute): B tells its watchers
    // once the deadline has passed, and the list they read then is empty.
    await vi.waitFor(async () => expect(await readsOnB.at(-1)).toStrictEqual([]), { timeout: 20_000, interval: 50 });
    expect(readsOnB.length).toBeGreaterThan(before);
    expect(await b.store.listRunToolCalls('r1')).toMatchObject([{ approvalId, decision: null }]);
    expect(calls).toStrictEqual([]);
  });

  it('a Stop stored while the run’s owner is dead takes its calls off the waiting list at once: an allow after it is answered cancelled, and nothing runs', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 60_000);
    const b = await instance(db, 'b', tool, 300);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'stopped');
    const onB = await follow(b, 's1', 'r1');
    await onB.until(waitingStart);
    await a.store.close();

    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    expect(await b.chat.listWaiting('s1')).toStrictEqual([]);
    expect(await b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'cancel' });

    await withClient((client) => client.query(`UPDATE ${db.schema}.runs SET lease_until = 0 WHERE run_id = 'r1'`));
    expect(await onB.until(isEnd)).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    expect(calls).toStrictEqual([]);
    const [record] = await b.store.listRunToolCalls('r1');
    expect(record).toMatchObject({ approvalId, decision: 'cancel', outcome: 'cancelled' });
  });

  it('a chat deleted on B while its run goes on at A, which missed the stop: A stops the run when it hears the chat is gone, and its clients see the end', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 60_000, { asCluster: (store) => lossyCluster(store, (message) => message.type === 'cancel').cluster });
    const b = await instance(db, 'b', tool, 300);
    const { followed } = await startWaiting(a, 's1', 'r1', 'never');
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId, { timeout: 30_000 }).toBe('r1');
    const onB = await follow(b, 's1', 'r1');
    await onB.until(waitingStart);

    expect(await b.chat.deleteSession('s1')).toBe(true);
    expect(await followed.until(isEnd)).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    expect(await onB.until(isEnd)).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    expect(calls).toStrictEqual([]);
    await expect.poll(() => a.chat.listSessions().map((s) => s.sessionId), { timeout: 30_000 }).toStrictEqual([]);
  });

  it('a call that was running on an instance that died is recorded as interrupted by the instance that takes over, never run again', async () => {
    const db = await cleanups.database();
    // Runs until released or stopped: the call is still going when its instance goes.
    const { tool: slow, started, release } = heldEcho();
    const a = await instance(db, 'a', slow, 300);
    const b = await instance(db, 'b', slow, 300);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'once');
    const onB = await follow(b, 's1', 'r1');
    await a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' });
    await expect.poll(() => started).toStrictEqual(['once']);
    await a.crash();
    release();
    // B takes the run over once A's lease runs out, records the call and goes on to the end at once (so the run's
    // owner is not looked at: it is cleared again by then).
    expect(await onB.until((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'interrupted' });
    await onB.until(isEnd);
    expect(started).toStrictEqual(['once']);
    const [record] = await b.store.listRunToolCalls('r1');
    expect(record).toMatchObject({ decision: 'allow', outcome: 'interrupted' });
  });

  it('a run followed here with a stored event left out as damaged (its running call\'s allow) is set aside when taken over, as a restart would: the call is interrupted, never run again', async () => {
    const db = await cleanups.database();
    const { tool: slow, started, release } = heldEcho();
    const a = await instance(db, 'a', slow, 300);
    const b = await instance(db, 'b', slow, 300);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'once');
    await a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' });
    await expect.poll(() => started).toStrictEqual(['once']);
    await withClient(async (client) => {
      const damaged = await client.query(`UPDATE "${db.schema}".events SET json = json::jsonb || '{"decision":"allox"}' WHERE run_id = 'r1' AND json::jsonb->>'type' = 'tool-decision'`);
      expect(damaged.rowCount).toBe(1);
    });
    const onB = await follow(b, 's1', 'r1');
    await onB.until((event) => event.type === 'status' && event.text.startsWith('A stored event of this run is damaged (an event of run r1: decision: '));
    await a.crash();
    release();
    const end = await onB.until(isEnd);
    expect(end).toMatchObject({ type: 'run-end', reason: 'error', error: expect.stringMatching(/^A stored record of this run is damaged \(an event of run r1: decision: .+\): the run was set aside at the start/) });
    expect(started).toStrictEqual(['once']);
    const [record] = await b.store.listRunToolCalls('r1');
    expect(record).toMatchObject({ decision: 'allow', outcome: 'interrupted' });
  });

  it('an old owner that comes back after its run was taken over is fenced: it writes nothing, and the call runs once', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    // A renews rarely; B looks for runs to take over often.
    const a = await instance(db, 'a', tool, 60_000);
    await instance(db, 'b', tool, 200);
    const { followed: onA, approvalId } = await startWaiting(a, 's1', 'r1', 'fenced');
    // A stalls past its lease (its lease is made to run out, as a long pause would).
    await withClient((client) => client.query(`UPDATE ${db.schema}.runs SET lease_until = 0 WHERE run_id = 'r1'`));
    await expect.poll(() => ownerOf(db, 'r1'), { timeout: 30_000 }).toBe('b');
    // A comes back believing it still owns the run, and a person decides there.
    await expect(a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    // A's own write of that decision is refused; B, the owner, runs the call; A's clients follow B.
    await onA.until(isEnd);
    expect(onA.events.at(-1)).toMatchObject({ type: 'run-end', reason: 'done' });
    expectExactIds('r1', onA.ids);
    expect(calls).toStrictEqual(['fenced']);
    const decisions = onA.events.filter((event) => event.type === 'tool-decision');
    expect(decisions).toHaveLength(1);
    await expect(a.store.appendEvent({ runId: 'r1', sessionId: 's1', seq: 99, event: { type: 'status', text: 'late' }, at: Date.now(), fence: 1 })).rejects.toThrow(/another instance/);
  });

  it('an old owner that finds at its next renewal it lost a waiting run writes no cancel into it; the call is decided on the new owner', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let stallable!: ReturnType<typeof stallableCluster>;
    const a = await instance(db, 'a', tool, 600, { asCluster: (store) => (stallable = stallableCluster(store)).cluster });
    const b = await instance(db, 'b', tool, 200);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'decided on b');
    // A pauses at a renewal; meanwhile its lease runs out and B takes the run over.
    await stallable.stall();
    await withClient((client) => client.query(`UPDATE ${db.schema}.runs SET lease_until = 0 WHERE run_id = 'r1'`));
    await expect.poll(() => ownerOf(db, 'r1'), { timeout: 30_000 }).toBe('b');
    stallable.resume();
    // A learns it lost the run and stops waiting there: nothing it decides by itself may reach the ledger.
    await expect.poll(() => a.chat.registry.listPending('s1').length).toBe(0);
    await Promise.allSettled(stallable.claims);
    const [row] = await b.store.listRunToolCalls('r1');
    expect(row).toMatchObject({ approvalId, decision: null });
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    const onB = await follow(b, 's1', 'r1');
    await onB.until(isEnd);
    expect(calls).toStrictEqual(['decided on b']);
  });

  it('an owner that stalled while its call ran, and finds on resuming that the run was taken over, kills the call’s processes at once', async () => {
    const db = await cleanups.database();
    const terminal = toolNamed(createBuiltinTools({ workspace: tmpdir(), sandbox: 'none', killGraceMs: 500 }), 'terminal');
    // The model's `echo` call runs its text as a command, in the terminal tool's real, confined process.
    const shell = defineTool({
      name: 'echo',
      description: 'Runs its text as a command.',
      parameters: z.object({ text: z.string() }),
      annotations: { executesCode: true, readOnly: false },
      execute: ({ text }, context) => terminal.execute(terminal.parameters.parse({ command: text }), context),
    });
    const token = `600.${Math.floor(Math.random() * 1e9)}`;
    cleanups.push(async () => killAllWith(token));
    let stallable!: ReturnType<typeof stallableCluster>;
    const a = await instance(db, 'a', shell, 600, { asCluster: (store) => (stallable = stallableCluster(store)).cluster });
    const { approvalId } = await startWaiting(a, 's1', 'r1', `sleep ${token}`);
    await a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' });
    await vi.waitFor(() => expect(processesWith(token)).not.toStrictEqual([]), { timeout: 10_000 });
    // A pauses at a renewal while its call runs; meanwhile its lease runs out. A's own scan for runs to take over,
    // which a lapsed lease makes it see first at times, leaves the run it still drives alone.
    await stallable.stall();
    await withClient((client) => client.query(`UPDATE ${db.schema}.runs SET lease_until = 0 WHERE run_id = 'r1'`));
    await stallable.scanned();
    // B, started now, takes the run over and ends it.
    const b = await instance(db, 'b', shell, 200);
    const onB = await follow(b, 's1', 'r1');
    expect(await onB.until((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'interrupted' });
    await onB.until(isEnd);
    // A stalled process stops nothing: the call's processes run on until A resumes.
    expect(processesWith(token)).not.toStrictEqual([]);

    stallable.resume();
    // Within a renewal or two of resuming; a loaded machine (two test runs at once) took longer than 10 s once.
    await vi.waitFor(() => expect(processesWith(token)).toStrictEqual([]), { timeout: 30_000 });
    const [record] = await b.store.listRunToolCalls('r1');
    expect(record).toMatchObject({ approvalId, decision: 'allow', outcome: 'interrupted' });
  });

  it('an owner that stalled as the write starting its call went in, past its lease, starts nothing once it goes on: the instance that took the run over recorded the call interrupted, and the chat is not shown running', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let stallable!: ReturnType<typeof stallableCluster>;
    // The answer to A's write of the call's running status is held (the write itself goes in), as when A stalls
    // right after sending it: the status is stored, the tool not started yet.
    let written!: () => void;
    const wrote = new Promise<void>((resolve) => (written = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const startsCall = (inputs: readonly { event: LoopEvent }[]) => inputs.some(({ event }) => event.type === 'status' && event.toolCallId !== undefined && event.waitingForPlace !== true);
    const holdingStart = (store: PostgresStore) =>
      new Proxy(store, {
        get(target, key) {
          const value: unknown = Reflect.get(target, key, target);
          if (key !== 'appendEvent' && key !== 'appendEvents') return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          return async (input: Parameters<PostgresStore['appendEvent']>[0] | Parameters<PostgresStore['appendEvents']>[0]) => {
            const inputs = Array.isArray(input) ? input : [input];
            await (value as (input: unknown) => Promise<void>).call(target, input);
            if (startsCall(inputs)) {
              written();
              await answered;
            }
          };
        },
      });
    // A hears nothing of chats changed elsewhere: B's end of the run reaches it as it does when it comes while the
    // run is still A's, read as such.
    const deafToChats = (cluster: Cluster): Cluster =>
      new Proxy(cluster, {
        get: (target, key) =>
          key === 'subscribe'
            ? (listener: (message: ClusterMessage) => void) => target.subscribe((message) => message.type !== 'session' && listener(message))
            : (Reflect.get(target, key) as unknown),
      });
    const a = await instance(db, 'a', tool, 600, { asCluster: (store) => deafToChats((stallable = stallableCluster(store)).cluster), asStore: holdingStart });
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'stalled');
    void a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' }).catch(() => undefined);
    await wrote;
    // A stalls there: it renews nothing, its lease runs out, and B takes the run over.
    await stallable.stall();
    const b = await instance(db, 'b', tool, 200);
    const onB = await follow(b, 's1', 'r1');
    expect(await onB.until((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'interrupted' });
    await onB.until(isEnd);

    // A goes on: the answer to its write comes first, then its renewals.
    answer();
    await new Promise<void>((resolve) => setImmediate(resolve));
    stallable.resume();
    await vi.waitFor(() => expect(a.chat.registry.listPending('s1')).toStrictEqual([]));
    await expect.poll(async () => (await a.chat.getSession('s1')).activeRunId, { timeout: 10_000 }).toBeNull();
    expect(calls).toStrictEqual([]);
    const [record] = await b.store.listRunToolCalls('r1');
    expect(record).toMatchObject({ approvalId, decision: 'allow', outcome: 'interrupted' });
  });

  it('a grant revoked here while a re-read of the grants is under way stays revoked, though the read still found it', async () => {
    const db = await cleanups.database();
    const { tool } = recordingTool();
    let lossy!: ReturnType<typeof lossyCluster>;
    let heldRead: { reached: () => void; release: Promise<void> } | undefined;
    let scanned: (() => void) | undefined;
    const a = await instance(db, 'a', tool, 60_000, {
      asCluster: (store) => {
        lossy = lossyCluster(store, () => false);
        // The re-read of the grants comes before the scan for runs to take over: the scan says it is done.
        return interceptCluster(lossy.cluster as PostgresStore, {
          listClaimableRuns: async () => {
            scanned?.();
            return store.listClaimableRuns();
          },
        });
      },
      asStore: (store) =>
        new Proxy(store, {
          get(target, key) {
            if (key === 'listGrants' && heldRead !== undefined) {
              const { reached, release } = heldRead;
              heldRead = undefined;
              return async () => {
                const rows = await target.listGrants();
                reached();
                await release;
                return rows;
              };
            }
            const value: unknown = Reflect.get(target, key, target);
            return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          },
        }),
    });
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'first');
    await a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', always: true });
    await followed.until(isEnd);
    const [grant] = a.chat.listGrants('s1');
    let release!: () => void;
    const read = new Promise<void>((reached) => (heldRead = { reached, release: new Promise<void>((resolve) => (release = resolve)) }));
    const scan = new Promise<void>((resolve) => (scanned = resolve));
    lossy.resync();
    await read;
    // The store was read with the grant in it; the person revokes it before the re-read goes on.
    expect(await a.chat.revokeGrant('s1', grant!.grantId)).toBe(true);
    release();
    await scan;
    expect(a.chat.listGrants('s1')).toStrictEqual([]);
  });

  it('a run whose write fails because the database is gone is given up and resumed once it answers, not left owned and unfinished', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let flaky!: ReturnType<typeof flakyStore>;
    const a = await instance(db, 'a', tool, 600, { asStore: (store) => (flaky = flakyStore(store)).store });
    const b = await instance(db, 'b', tool, 200);
    const { followed: onA, approvalId } = await startWaiting(a, 's1', 'r1', 'through an outage');
    // The allow is claimed in the database on B; A cannot store what follows it.
    flaky.down = true;
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    await onA.until(isEnd);
    flaky.down = false;
    expect(onA.events.at(-1)).toMatchObject({ type: 'run-end', reason: 'done' });
    expect(calls).toStrictEqual(['through an outage']);
    expectExactIds('r1', onA.ids);
    const [row] = await b.store.listRunToolCalls('r1');
    expect(row).toMatchObject({ decision: 'allow', outcome: 'executed' });
    await expect.poll(() => b.chat.listSessions().find((session) => session.sessionId === 's1')?.activeRunId).toBe(null);
  });

  it('a Stop on the owner while the database is gone is stored before the run is given up: the instance taking it over ends it cancelled, and nothing runs', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let flaky!: ReturnType<typeof flakyStore>;
    // The cluster's writes A tried while the database was gone.
    let refused = 0;
    const gone = () => Promise.reject(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
    const a = await instance(db, 'a', tool, 600, {
      asStore: (store) => (flaky = flakyStore(store)).store,
      // The cluster's writes fail with the store's while the database is gone.
      asCluster: (store) =>
        interceptCluster(store, {
          requestCancel: (runId) => {
            if (!flaky.down) return store.requestCancel(runId);
            refused++;
            return gone();
          },
          claimDecision: (input) => (flaky.down ? gone() : store.claimDecision(input)),
          releaseRun: (runId, fence) => {
            if (!flaky.down) return store.releaseRun(runId, fence);
            refused++;
            return gone();
          },
        }),
    });
    const b = await instance(db, 'b', tool, 200);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'stopped in an outage');
    const onB = await follow(b, 's1', 'r1');
    await onB.until(waitingStart);

    flaky.down = true;
    const answer = await a.chat.stop('s1', 'r1');
    expect(answer).toMatchObject({ cancelled: 1, paused: expect.stringContaining('stored while this instance still holds the run, whichever instance takes the run over then ends it, running nothing more') });
    // Neither can the call's cancel: A tries again until the database answers, the stop first.
    const refusedByStop = refused;
    await vi.waitFor(() => expect(refused).toBeGreaterThan(refusedByStop), { timeout: 20_000 });
    flaky.down = false;

    // Given up once the database answers, the stop stored first: whoever takes the run over ends it, its call cancelled.
    expect(await onB.until(isEnd)).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    const [row] = await b.store.listRunToolCalls('r1');
    expect(row).toMatchObject({ approvalId, decision: 'cancel', outcome: 'cancelled' });
    expect(await b.chat.listWaiting('s1')).toStrictEqual([]);
    expect(calls).toStrictEqual([]);
  });

  it('a Stop on the owner cut off from the database past its lease says it holds only while that instance holds the run: another takes the run over without it, and a call allowed there runs', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const cut = { down: false };
    const a = await instance(db, 'a', tool, 600, { asStore: (store) => cutOff(store, cut), asCluster: (store) => cutOff(store, cut) });
    const b = await instance(db, 'b', tool, 200);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'stopped while cut off');
    const onB = await follow(b, 's1', 'r1');
    await onB.until(waitingStart);

    cut.down = true;
    const answer = await a.chat.stop('s1', 'r1');
    // A renews nothing now: once its lease runs out, B takes the run over, and knows nothing of the stop.
    await expect.poll(() => ownerOf(db, 'r1'), { timeout: 30_000 }).toBe('b');
    await vi.waitFor(async () => expect((await b.chat.listWaiting('s1')).map((waiting) => waiting.approvalId)).toStrictEqual([approvalId]), { timeout: 30_000 });
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    expect(await onB.until(isEnd)).toMatchObject({ type: 'run-end', reason: 'done' });
    expect(calls).toStrictEqual(['stopped while cut off']);

    // What happened is what the answer said could.
    expect(answer).toStrictEqual({ cancelled: 1, paused: expect.stringMatching(/^The run r1 is stopped here, but its stop could not be stored \(.*\): it holds while this instance holds the run, and for good once stored\. /) });
    expect(answer.paused).toContain("If the database stays out of reach until this instance's lease on the run runs out (within 0.6 s), another instance may take the run over without the stop: its calls wait for a decision again, and one allowed there runs (stop it again there)");
    cut.down = false;
  });

  it('a Stop on the owner cut off from the database past its lease is stored once the owner reaches it again: the instance that took the run over ends it cancelled, and nothing runs', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const cut = { down: false };
    const a = await instance(db, 'a', tool, 600, { asStore: (store) => cutOff(store, cut), asCluster: (store) => cutOff(store, cut) });
    const b = await instance(db, 'b', tool, 200);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'stopped while cut off');
    const onB = await follow(b, 's1', 'r1');
    await onB.until(waitingStart);

    cut.down = true;
    const answer = await a.chat.stop('s1', 'r1');
    await expect.poll(() => ownerOf(db, 'r1'), { timeout: 30_000 }).toBe('b');
    await vi.waitFor(async () => expect((await b.chat.listWaiting('s1')).map((waiting) => waiting.approvalId)).toStrictEqual([approvalId]), { timeout: 30_000 });
    cut.down = false;

    expect(await onB.until(isEnd)).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    const [row] = await b.store.listRunToolCalls('r1');
    expect(row).toMatchObject({ approvalId, decision: 'cancel', outcome: 'cancelled' });
    expect(calls).toStrictEqual([]);
    expect(answer.paused).toContain('until the stop is stored and stops the run wherever it goes on.');
  });

  it('a run whose write the database refuses with its disk full (53100) is given up, not failed, and goes on once space is back: the allow runs once', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 600);
    const b = await instance(db, 'b', tool, 200);
    const { followed: onA, approvalId } = await startWaiting(a, 's1', 'r1', 'through a full disk');
    // PostgreSQL's own answer to a write when its disk is full, made by a trigger on the events' table while `full`.
    const schema = `"${db.schema}"`;
    await withClient(async (connection) => {
      await connection.query(`CREATE TABLE ${schema}.disk (is_full boolean NOT NULL)`);
      await connection.query(`INSERT INTO ${schema}.disk VALUES (true)`);
      await connection.query(
        `CREATE FUNCTION ${schema}.disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
           IF (SELECT is_full FROM ${schema}.disk) THEN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END IF;
           RETURN NEW;
         END $$`,
      );
      await connection.query(`CREATE TRIGGER disk_full BEFORE INSERT ON ${schema}.events FOR EACH ROW EXECUTE FUNCTION ${schema}.disk_full()`);
    });
    // The allow is claimed (the ledger row takes it); the run cannot store what follows it.
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    const fence = async () => (await withClient((connection) => connection.query<{ fence: string }>(`SELECT fence FROM ${schema}.runs WHERE run_id = 'r1'`))).rows[0]?.fence;
    await expect.poll(fence, { timeout: 30_000 }).not.toBe('1');
    expect(calls).toStrictEqual([]);
    await withClient((connection) => connection.query(`UPDATE ${schema}.disk SET is_full = false`));
    await onA.until(isEnd);
    expect(onA.events.at(-1)).toMatchObject({ type: 'run-end', reason: 'done' });
    expect(calls).toStrictEqual(['through a full disk']);
    const [row] = await b.store.listRunToolCalls('r1');
    expect(row).toMatchObject({ decision: 'allow', outcome: 'executed' });
  });

  it('a graceful stop hands waiting runs over at once, and followers on the other instance see no gap', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const { approvalId } = await startWaiting(a, 's1', 'r1', 'rolling');
    const onB = await follow(b, 's1', 'r1');
    await onB.until(waitingStart);
    await a.chat.shutdown();
    // Leases of a minute: only the hand-over, not an expiry, can have moved the run this soon.
    await expect.poll(() => ownerOf(db, 'r1'), { timeout: 30_000 }).toBe('b');
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    await onB.until(isEnd);
    expect(calls).toStrictEqual(['rolling']);
    expectExactIds('r1', onB.ids);
  });

  it('the session list, grants and a cancel reach every instance', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const changes: SessionChange[] = [];
    b.chat.watchSessions((change) => changes.push(change));
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'first');
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1');
    expect(changes.some((change) => change.type === 'session-changed' && change.session.sessionId === 's1')).toBe(true);
    // A second run in the same session is refused everywhere while the first goes on.
    await expect(b.chat.startRun({ sessionId: 's1', message: 'second' })).rejects.toThrow(/still running/);
    // Always allow on B makes a grant A applies to the next call of the chat.
    await b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', always: true });
    await followed.until(isEnd);
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe(null);
    await expect.poll(() => a.chat.listGrants('s1').length).toBe(1);
    await a.chat.startRun({ sessionId: 's1', runId: 'r2', message: 'granted' });
    const second = await follow(a, 's1', 'r2');
    const decision = await second.until((event) => event.type === 'tool-decision');
    expect(decision).toMatchObject({ decision: 'allow', source: 'grant' });
    await second.until(isEnd);
    expect(calls).toStrictEqual(['first', 'granted']);
    // A cancel on B stops a run waiting on A.
    const third = await startWaiting(a, 's2', 'r3', 'never');
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's2')?.activeRunId).toBe('r3');
    expect(await b.chat.cancel('s2', 'r3')).toBe(1);
    await third.followed.until(isEnd);
    expect(third.followed.events.at(-1)).toMatchObject({ reason: 'cancelled' });
    expect(calls).toStrictEqual(['first', 'granted']);
  });

  it('an Always allow on B that dies right after its decision is written leaves the grant stored with the allow: the next call of the chat runs on the grant', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    // B's process "dies" the moment its decision is in the store: nothing it would do after that write happens.
    let written!: () => void;
    const decisionWritten = new Promise<void>((resolve) => (written = resolve));
    const b = await instance(db, 'b', tool, 60_000, {
      asCluster: (store) =>
        interceptCluster(store, {
          claimDecision: async (input) => {
            await store.claimDecision(input);
            written();
            return new Promise<never>(() => {});
          },
        }),
    });
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'first');
    void b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', always: true });
    await decisionWritten;
    const stored = await a.store.listGrants();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ sessionId: 's1', toolName: tool.name });
    await followed.until(isEnd);
    expect(calls).toStrictEqual(['first']);
    // A re-reads the grants (as after a missed message) and applies the stored grant to the chat's next call.
    await a.chat.startRun({ sessionId: 's1', runId: 'r2', message: 'first' });
    const second = await follow(a, 's1', 'r2');
    await expect(second.until((event) => event.type === 'tool-decision')).resolves.toMatchObject({ decision: 'allow', source: 'grant' });
    await second.until(isEnd);
    expect(calls).toStrictEqual(['first', 'first']);
  });

  it('an Always allow that loses to a deny made at once elsewhere stores no grant', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'first');
    await expect(a.chat.confirm({ sessionId: 's1', approvalId, decision: 'deny', reason: 'no' })).resolves.toMatchObject({ resolved: true });
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', always: true })).resolves.toMatchObject({ resolved: false, status: 'already-decided', decision: 'deny' });
    await followed.until(isEnd);
    expect(await a.store.listGrants()).toStrictEqual([]);
    expect(b.chat.listGrants('s1')).toStrictEqual([]);
    expect(calls).toStrictEqual([]);
  });

  it('a grant revoked on B while its owner A is releasing a call of the chat by it: the call is not run, it waits for a person', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    // A's release of the second call by the grant reaches the database only once the revoke was answered on B.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const releasing = new Promise<void>((resolve) => (reached = resolve));
    const a = await instance(db, 'a', tool, 60_000, {
      model: new TwoCallsModel('echo', 'text'),
      asCluster: (store) =>
        interceptCluster(store, {
          claimDecision: async (input) => {
            if (input.source === 'grant') {
              reached();
              await released;
            }
            return store.claimDecision(input);
          },
        }),
    });
    const b = await instance(db, 'b', tool);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'two' });
    const followed = await follow(a, 's1', 'r1');
    await expect.poll(async () => (await b.chat.listWaiting('s1')).length, { timeout: 20_000 }).toBe(2);
    const [first, second] = await b.chat.listWaiting('s1');
    const allowed = await b.chat.confirm({ sessionId: 's1', approvalId: first!.approvalId, decision: 'allow', always: true });
    expect(allowed).toMatchObject({ resolved: true, grant: { toolName: 'echo' } });
    await releasing;
    expect(await b.chat.revokeGrant('s1', (allowed as { grant: { grantId: string } }).grant.grantId)).toBe(true);
    release();

    await expect.poll(async () => (await b.chat.listWaiting('s1')).map((call) => call.approvalId), { timeout: 20_000 }).toStrictEqual([second!.approvalId]);
    await expect.poll(() => a.chat.registry.listPending('s1').map((call) => call.approvalId), { timeout: 20_000 }).toStrictEqual([second!.approvalId]);
    expect(calls).toStrictEqual(['first']);
    await expect(b.chat.confirm({ sessionId: 's1', approvalId: second!.approvalId, decision: 'deny', reason: 'revoked' })).resolves.toMatchObject({ resolved: true });
    await followed.until(isEnd);
    expect(calls).toStrictEqual(['first']);
    expect((await a.store.listRunToolCalls('r1')).map((record) => [record.decision, record.source, record.outcome])).toStrictEqual([
      ['allow', 'user', 'executed'],
      ['deny', 'user', 'denied'],
    ]);
  });

  it('a release by a grant whose claim the database did not take, over an allow on B and then a Stop on B both missed by the owner A: A reads the run’s Stop before the allow’s row, and nothing more runs', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    // Once A's release of the second call by the grant is under way, A hears no more decisions and no Stop; the
    // release then fails as with the connection lost before it was sent.
    const deaf = { on: false, released: '' };
    let fail!: () => void;
    const failing = new Promise<void>((resolve) => (fail = resolve));
    let reached!: () => void;
    const releasing = new Promise<void>((resolve) => (reached = resolve));
    const a = await instance(db, 'a', tool, 60_000, {
      model: new TwoCallsModel('echo', 'text'),
      asCluster: (store) => {
        const lossy = lossyCluster(store, (message) => deaf.on && (message.type === 'decided' || message.type === 'cancel')).cluster;
        return interceptCluster(store, {
          subscribe: (listener) => lossy.subscribe(listener),
          claimDecision: async (input) => {
            if (input.source !== 'grant' || input.approvalId !== deaf.released) return store.claimDecision(input);
            deaf.on = true;
            reached();
            await failing;
            throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
          },
        });
      },
    });
    const b = await instance(db, 'b', tool);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'two' });
    const followed = await follow(a, 's1', 'r1');
    await expect.poll(async () => (await b.chat.listWaiting('s1')).length, { timeout: 20_000 }).toBe(2);
    const [first, second] = await b.chat.listWaiting('s1');
    deaf.released = second!.approvalId;
    expect(await b.chat.confirm({ sessionId: 's1', approvalId: first!.approvalId, decision: 'allow', always: true })).toMatchObject({ resolved: true });
    await releasing;
    await vi.waitFor(() => expect(calls).toStrictEqual(['first']), { timeout: 20_000, interval: 20 });
    expect(await b.chat.confirm({ sessionId: 's1', approvalId: second!.approvalId, decision: 'allow' })).toMatchObject({ resolved: true });
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    fail();

    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(calls).toStrictEqual(['first']);
    expect((await a.store.listRunToolCalls('r1')).map((record) => [record.decision, record.source, record.outcome])).toStrictEqual([
      ['allow', 'user', 'executed'],
      ['allow', 'user', 'cancelled'],
    ]);
  });

  it('a grant revoked while an instance missed the message stops allowing there once it hears it may have missed some', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let lossy!: ReturnType<typeof lossyCluster>;
    const a = await instance(db, 'a', tool, 60_000, {
      asCluster: (store) => {
        lossy = lossyCluster(store, (message) => message.type === 'grant' && message.revoked);
        return lossy.cluster;
      },
    });
    const b = await instance(db, 'b', tool);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'first');
    await b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', always: true });
    await followed.until(isEnd);
    await expect.poll(() => a.chat.listGrants('s1').length).toBe(1);
    const [grant] = b.chat.listGrants('s1');
    expect(await b.chat.revokeGrant('s1', grant!.grantId)).toBe(true);
    await expect.poll(() => b.chat.listGrants('s1').length).toBe(0);
    // A missed the revoke: it still holds the grant until it re-reads what it may have missed.
    expect(a.chat.listGrants('s1')).toHaveLength(1);
    lossy.resync();
    await expect.poll(() => a.chat.listGrants('s1').length).toBe(0);
    const second = await startWaiting(a, 's1', 'r2', 'asked again');
    expect(calls).toStrictEqual(['first']);
    await b.chat.confirm({ sessionId: 's1', approvalId: second.approvalId, decision: 'deny' });
    await second.followed.until(isEnd);
    expect(calls).toStrictEqual(['first']);
  });

  it('a Stop on B that the owner A missed (its notifications dropped) stops the run once A reads again what it may have missed: the call ends cancelled, as a Stop on A ends it, and nothing runs', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let lossy!: ReturnType<typeof lossyCluster>;
    const a = await instance(db, 'a', tool, 60_000, { asCluster: (store) => (lossy = lossyCluster(store, (message) => message.type === 'cancel')).cluster });
    const b = await instance(db, 'b', tool);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'stopped elsewhere');
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1');
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    // A missed the Stop: the call still waits there, and the store refuses any decision on it as stopped.
    expect(a.chat.registry.listPending('s1').map((call) => call.approvalId)).toStrictEqual([approvalId]);
    expect(await b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'cancel' });
    expect(a.chat.registry.listPending('s1').map((call) => call.approvalId)).toStrictEqual([approvalId]);
    lossy.resync();
    await expect.poll(() => a.chat.registry.listPending('s1'), { timeout: 10_000 }).toStrictEqual([]);
    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(followed.events.find((event) => event.type === 'tool-decision')).toMatchObject({ approvalId, decision: 'cancel', source: 'user' });
    expect(followed.events.find((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'cancelled' });
    expect(calls).toStrictEqual([]);
    expect((await a.store.listRunToolCalls('r1')).map((record) => [record.approvalId, record.decision, record.source, record.outcome])).toStrictEqual([[approvalId, 'cancel', 'user', 'cancelled']]);
  });

  it('an allow on B and then a Stop on B, both missed by the owner A: A stops the run before it lets the allow go, so nothing runs, however slowly the Stop is read', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let lossy!: ReturnType<typeof lossyCluster>;
    // Once A reads its calls' rows at a resync, its read of the run (where the Stop is) answers only when the run
    // has ended: whatever those rows let go has run its course by then.
    const resync = { on: false, rowsRead: false, ended: Promise.resolve<unknown>(undefined) };
    const a = await instance(db, 'a', tool, 60_000, {
      asCluster: (store) => (lossy = lossyCluster(store, (message) => message.type === 'cancel' || message.type === 'decided')).cluster,
      asStore: (store) =>
        new Proxy(store, {
          get(target, key) {
            const value: unknown = Reflect.get(target, key, target);
            if (typeof value !== 'function') return value;
            const bound = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
            if (key === 'listRunToolCalls') return (...args: unknown[]) => ((resync.rowsRead ||= resync.on), bound(...args));
            if (key === 'getRun') return async (...args: unknown[]) => (resync.rowsRead ? resync.ended.then(() => bound(...args)) : bound(...args));
            return bound;
          },
        }),
    });
    const b = await instance(db, 'b', tool);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'allowed then stopped');
    resync.ended = followed.until(isEnd);
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1');
    expect(await b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).toMatchObject({ resolved: true });
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    expect(a.chat.registry.listPending('s1').map((call) => call.approvalId)).toStrictEqual([approvalId]);
    resync.on = true;
    lossy.resync();
    expect(await resync.ended).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(calls).toStrictEqual([]);
    expect(followed.events.find((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'cancelled' });
    expect((await a.store.listRunToolCalls('r1')).map((record) => [record.decision, record.source, record.outcome])).toStrictEqual([['allow', 'user', 'cancelled']]);
  });

  it('a Stop on B that the owner A missed, with nothing read again after it: the call’s deadline on A ends it cancelled, not timed out, and the run stopped, as a Stop heard ends them; nothing runs', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const deadline = timeoutHeldUntil();
    const a = await instance(db, 'a', tool, 60_000, { asCluster: (store) => deadline.holding(lossyCluster(store, (message) => message.type === 'cancel').cluster) });
    const b = await instance(db, 'b', tool);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'stopped unheard', options: { decisionTimeoutMs: 300 } });
    const followed = await follow(a, 's1', 'r1');
    const { approvalId } = (await followed.until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1');
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    // The deadline has come on A, which heard nothing of the Stop; its claim of the timeout goes in after the Stop.
    await deadline.asked;
    deadline.release();

    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(followed.events.filter((event) => event.type === 'tool-decision')).toMatchObject([{ approvalId, decision: 'cancel', source: 'user' }]);
    expect(followed.events.find((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'cancelled' });
    expect(followed.events.filter((event) => event.type === 'text-delta')).toStrictEqual([]);
    expect(calls).toStrictEqual([]);
    expect((await a.store.listRunToolCalls('r1')).map((record) => [record.approvalId, record.decision, record.source, record.outcome])).toStrictEqual([[approvalId, 'cancel', 'user', 'cancelled']]);
  });

  it('an allow on B and then a Stop on B, both missed by the owner A, with nothing read again after them: A’s deadline reads the allow with the Stop, and nothing runs', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const deadline = timeoutHeldUntil();
    const a = await instance(db, 'a', tool, 60_000, { asCluster: (store) => deadline.holding(lossyCluster(store, (message) => message.type === 'cancel' || message.type === 'decided').cluster) });
    const b = await instance(db, 'b', tool);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'allowed then stopped', options: { decisionTimeoutMs: 300 } });
    const followed = await follow(a, 's1', 'r1');
    const { approvalId } = (await followed.until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1');
    await deadline.asked;
    // The allow came in time for the store (its deadline put off there): A's deadline came first on A's clock.
    await withClient((client) => client.query(`UPDATE ${db.schema}.tool_calls SET expires_at = 4102444800000 WHERE approval_id = $1`, [approvalId]));
    expect(await b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).toMatchObject({ resolved: true });
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    deadline.release();

    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(followed.events.find((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'cancelled' });
    expect(calls).toStrictEqual([]);
    expect((await a.store.listRunToolCalls('r1')).map((record) => [record.decision, record.source, record.outcome])).toStrictEqual([['allow', 'user', 'cancelled']]);
  });

  it('a Stop on B whose own message to the others fails (B dies, or its connection drops, right after storing it) reaches the owner A with the Stop’s commit: a run with no call waiting (confirmation off) stops, and runs no further call', async () => {
    const db = await cleanups.database();
    const { tool, started, release } = heldEcho();
    const model = new ManyTurnsModel(3);
    const a = await instance(db, 'a', tool, 60_000, { model });
    const b = await instance(db, 'b', tool, 60_000, {
      model,
      asCluster: (store) =>
        interceptCluster(store, { publish: (message) => (message.type === 'cancel' ? Promise.reject(new Error('Connection terminated unexpectedly')) : store.publish(message)) }),
    });
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'go', options: { confirmToolCalls: false } });
    const followed = await follow(a, 's1', 'r1');
    await vi.waitFor(() => expect(started).toStrictEqual(['call 1']));
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1');
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    await expect.poll(() => a.chat.isRunActive('r1'), { timeout: 10_000 }).toBe(false);
    release();
    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(started).toStrictEqual(['call 1']);
  });

  it('a Stop on B whose message the owner A missed, with nothing read again after it and no call waiting on a deadline: A stops the run at its next lease renewal, which answers its stopped runs, and runs no further call', async () => {
    const db = await cleanups.database();
    const { tool, started, release } = heldEcho();
    const model = new ManyTurnsModel(3);
    const a = await instance(db, 'a', tool, 300, { model, asCluster: (store) => lossyCluster(store, (message) => message.type === 'cancel').cluster });
    const b = await instance(db, 'b', tool, 300, { model });
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'go', options: { confirmToolCalls: false } });
    const followed = await follow(a, 's1', 'r1');
    await vi.waitFor(() => expect(started).toStrictEqual(['call 1']));
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1');
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    await expect.poll(() => a.chat.isRunActive('r1'), { timeout: 10_000 }).toBe(false);
    release();
    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(started).toStrictEqual(['call 1']);
  });

  it.each([
    { how: 'with confirmation off', source: 'confirmation-off' },
    { how: 'by a person on B', source: 'user' },
  ])('a call let through on the owner A $how as a Stop on B is stored, its message missed by A: the write that would start its tool is refused, the call ends cancelled and the run stopped, and the tool never runs', async ({ source }) => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const held = runningMarkHeld();
    const a = await instance(db, 'a', tool, 60_000, { asStore: held.holding, asCluster: (store) => lossyCluster(store, (message) => message.type === 'cancel').cluster });
    const b = await instance(db, 'b', tool);
    let followed: FollowedRun;
    if (source === 'user') {
      const waiting = await startWaiting(a, 's1', 'r1', 'let through');
      followed = waiting.followed;
      expect(await b.chat.confirm({ sessionId: 's1', approvalId: waiting.approvalId, decision: 'allow' })).toMatchObject({ resolved: true });
    } else {
      await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'let through', options: { confirmToolCalls: false } });
      followed = await follow(a, 's1', 'r1');
    }
    await held.asked;
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1');
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    held.release();

    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(calls).toStrictEqual([]);
    expect(followed.events.filter((event) => event.type === 'tool-end')).toMatchObject([{ outcome: 'cancelled' }]);
    expect(followed.events.filter((event) => event.type === 'text-delta')).toStrictEqual([]);
    const stored = await b.store.loadEvents('r1', 0);
    expect(stored.filter((event) => event.type === 'status' && event.toolCallId !== undefined && event.waitingForPlace !== true)).toStrictEqual([]);
    expect((await b.store.listRunToolCalls('r1')).map((record) => [record.decision, record.source, record.outcome, record.startedAt])).toStrictEqual([['allow', source, 'cancelled', null]]);
  });

  it('a person deciding on the owner A a call of a run stopped on B, whose message A missed, is told the Stop’s cancel, and A stops the run: the call waits on nowhere, even with no deadline', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 60_000, { asCluster: (store) => lossyCluster(store, (message) => message.type === 'cancel').cluster });
    const b = await instance(db, 'b', tool);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'stopped unheard', options: { decisionTimeoutMs: 'never' } });
    const followed = await follow(a, 's1', 'r1');
    const { approvalId } = (await followed.until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1');
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    expect(a.chat.registry.listPending('s1').map((call) => call.approvalId)).toStrictEqual([approvalId]);

    expect(await a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'cancel' });
    await expect.poll(() => a.chat.isRunActive('r1'), { timeout: 10_000 }).toBe(false);
    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(a.chat.registry.listPending('s1')).toStrictEqual([]);
    expect(calls).toStrictEqual([]);
    expect((await a.store.listRunToolCalls('r1')).map((record) => [record.approvalId, record.decision, record.source, record.outcome])).toStrictEqual([[approvalId, 'cancel', 'user', 'cancelled']]);
  });

  it('an allow on B and then a Stop on B, the Stop’s message missed by the owner A and the allow’s heard after it: A reads the run’s Stop before the allow’s row, and nothing runs', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // A's "decided" messages come only once the gate opens; its "cancel" messages never.
    const a = await instance(db, 'a', tool, 60_000, {
      asCluster: (store) =>
        interceptCluster(store, {
          subscribe: (listener) =>
            store.subscribe((message) => {
              if (message.type === 'decided') void gate.then(() => listener(message));
              else if (message.type !== 'cancel') listener(message);
            }),
        }),
    });
    const b = await instance(db, 'b', tool);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'allowed then stopped');
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe('r1');
    expect(await b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).toMatchObject({ resolved: true });
    expect(await b.chat.cancel('s1', 'r1')).toBe(1);
    open();

    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'cancelled' });
    expect(followed.events.find((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'cancelled' });
    expect(calls).toStrictEqual([]);
    expect((await a.store.listRunToolCalls('r1')).map((record) => [record.decision, record.source, record.outcome])).toStrictEqual([['allow', 'user', 'cancelled']]);
  });

  it.each([
    { decision: 'timeout' as const, source: 'system' as const, outcome: 'timed-out', runEnd: 'done' },
    { decision: 'cancel' as const, source: 'user' as const, outcome: 'cancelled', runEnd: 'cancelled' },
  ])('a call of A whose row holds a $decision written by a fenced claim whose message A missed ends so once A reads its rows again, as one ended here; it was left waiting, undecidable', async ({ decision, source, outcome, runEnd }) => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    let lossy!: ReturnType<typeof lossyCluster>;
    const a = await instance(db, 'a', tool, 60_000, { asCluster: (store) => (lossy = lossyCluster(store, (message) => message.type === 'decided')).cluster });
    const b = await instance(db, 'b', tool);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'decided unheard');
    const fence = await withClient(async (client) => (await client.query<{ fence: string }>(`SELECT fence FROM ${db.schema}.runs WHERE run_id = 'r1'`)).rows[0]!.fence);
    // The write an owner's arbiter makes for a timeout or a Stop, with the run's token: from an owner whose run was
    // taken over as it went in, it lands on the call now waiting on the taker.
    expect(await b.store.claimDecision({ sessionId: 's1', approvalId, decision, source, decidedAt: Date.now(), fence: Number(fence) })).toMatchObject({ status: 'resolved' });
    expect(a.chat.registry.listPending('s1').map((call) => call.approvalId)).toStrictEqual([approvalId]);
    expect(await a.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'already-decided', decision });
    lossy.resync();
    await expect.poll(() => a.chat.registry.listPending('s1'), { timeout: 10_000 }).toStrictEqual([]);
    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: runEnd });
    expect(followed.events.find((event) => event.type === 'tool-decision')).toMatchObject({ approvalId, decision, source });
    expect(followed.events.find((event) => event.type === 'tool-end')).toMatchObject({ outcome });
    expect(calls).toStrictEqual([]);
    expect((await a.store.listRunToolCalls('r1')).map((record) => [record.approvalId, record.decision, record.source, record.outcome])).toStrictEqual([[approvalId, decision, source, outcome]]);
  });
});

describe.skipIf(!postgres.available)('what lets a call run unasked, changed on another instance unheard', { timeout: 120_000 }, () => {
  /** A, as with its notification connection down: it hears of runs and decisions, not of grants, chats or rules. */
  const deaf = (store: PostgresStore) => lossyCluster(store, (message) => message.type === 'grant' || message.type === 'session' || message.type === 'rules').cluster;
  const asked = async (owner: Instance, sessionId: string, runId: string, text: string, decider: Instance) => {
    const { followed, approvalId } = await startWaiting(owner, sessionId, runId, text);
    await decider.chat.confirm({ sessionId, approvalId, decision: 'deny' });
    await followed.until(isEnd);
  };

  it('a grant revoked on B does not let the call run on A: it is asked', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 60_000, { asCluster: deaf });
    const b = await instance(db, 'b', tool);
    const first = await startWaiting(a, 's1', 'r1', 'same');
    await a.chat.confirm({ sessionId: 's1', approvalId: first.approvalId, decision: 'allow', always: true });
    await first.followed.until(isEnd);
    await expect.poll(() => b.chat.listGrants('s1').length).toBe(1);
    expect(await b.chat.revokeGrant('s1', b.chat.listGrants('s1')[0]!.grantId)).toBe(true);
    expect(a.chat.listGrants('s1')).toHaveLength(1);
    await a.chat.startRun({ sessionId: 's1', runId: 'r2', message: 'same' });
    const second = await follow(a, 's1', 'r2');
    const start = (await second.until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
    expect(a.chat.listGrants('s1')).toHaveLength(0);
    await b.chat.confirm({ sessionId: 's1', approvalId: start.approvalId, decision: 'deny' });
    await second.until(isEnd);
    expect(calls).toStrictEqual(['same']);
  });

  it('confirmation turned back on at B holds on A at once', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 60_000, { asCluster: deaf });
    const b = await instance(db, 'b', tool);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'unasked', options: { confirmToolCalls: false } });
    await (await follow(a, 's1', 'r1')).until(isEnd);
    expect(calls).toStrictEqual(['unasked']);
    await expect.poll(() => b.chat.listSessions().find((s) => s.sessionId === 's1')?.activeRunId).toBe(null);
    await b.chat.updateSession('s1', { confirmToolCalls: true });
    await asked(a, 's1', 'r2', 'again', b);
    expect(calls).toStrictEqual(['unasked']);
  });

  it('confirmation turned back on at B between two calls of one run on A: the second call is asked, not run', async () => {
    const db = await cleanups.database();
    const calls: string[] = [];
    const instances = new Map<string, Instance>();
    // The first call turns confirmation back on at B before it ends: the second is judged after that. B learns of the
    // chat, made at A by this run, from the cluster: waited for, or B would refuse the change as of an unknown chat.
    const tool = defineTool({
      name: 'echo',
      description: 'Echoes its text.',
      parameters: z.object({ text: z.string() }),
      annotations: { executesCode: false, readOnly: true },
      execute: async ({ text }) => {
        calls.push(text);
        if (text === 'first') {
          const b = instances.get('b')!;
          await vi.waitFor(() => expect(b.chat.listSessions().map((s) => s.sessionId)).toContain('s1'));
          await b.chat.updateSession('s1', { confirmToolCalls: true });
        }
        return `echo: ${text}`;
      },
    });
    const model = new TwoCallsModel('echo', 'text');
    const a = await instance(db, 'a', tool, 60_000, { asCluster: deaf, model });
    const b = await instance(db, 'b', tool, 60_000, { model });
    instances.set('b', b);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'go', options: { confirmToolCalls: false } });
    const followed = await follow(a, 's1', 'r1');
    const start = (await followed.until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
    expect(start.toolCallId).toBe('call_2');
    expect(calls).toStrictEqual(['first']);
    await b.chat.confirm({ sessionId: 's1', approvalId: start.approvalId, decision: 'deny' });
    await followed.until(isEnd);
    expect(calls).toStrictEqual(['first']);
  });

  /**
   * A, deaf as above, with one place for running calls, held by the test: a call let through unasked waits in line
   * for it. `change` is made at B while it waits; then the place is given back.
   */
  const inLine = async (change: (a: Instance, b: Instance) => Promise<void>, before: (a: Instance) => Promise<void> = async () => {}, confirmToolCalls = false) => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const slots = new ConcurrencyLimit(1);
    const held = slots.tryAcquire()!;
    const a = await instance(db, 'a', tool, 60_000, { asCluster: deaf, service: { toolSlots: slots } });
    const b = await instance(db, 'b', tool);
    await before(a);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'in line', options: { confirmToolCalls } });
    const followed = await follow(a, 's1', 'r1');
    await vi.waitFor(() => expect(slots.waiting).toBe(1));
    await change(a, b);
    held();
    return { a, b, calls, followed };
  };

  it('confirmation turned back on at B while a call let through on A waits for a place: the call is asked when its turn comes, and the run goes on', async () => {
    const { b, calls, followed } = await inLine(async (_a, b) => {
      // B learns of the chat, made at A by this run, from the cluster.
      await vi.waitFor(() => expect(b.chat.listSessions().map((s) => s.sessionId)).toContain('s1'));
      await b.chat.updateSession('s1', { confirmToolCalls: true });
    });
    const start = (await followed.until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
    expect(calls).toStrictEqual([]);
    await b.chat.confirm({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' });
    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'done' });
    expect(calls).toStrictEqual(['in line']);
    expect(await b.store.listRunToolCalls('r1')).toMatchObject([{ approvalId: start.approvalId, decision: 'allow', source: 'user', outcome: 'executed' }]);
  });

  it('an allow rule removed at B while the call it let through on A waits for a place: the call is asked, a deny runs nothing, and the run goes on', async () => {
    let ruleId = '';
    const { b, calls, followed } = await inLine(
      async (_a, b) => {
        await expect.poll(async () => (await b.rules.list()).map((view) => view.rule.id)).toStrictEqual([ruleId]);
        await b.rules.remove(ruleId);
      },
      async (a) => {
        ruleId = (await a.rules.add({ effect: 'allow', tool: 'echo', match: { kind: 'exact-arguments', arguments: { text: 'in line' } }, scope: { kind: 'global' }, source: 'user' })).rule.id;
      },
      true,
    );
    const start = (await followed.until(waitingStart)) as Extract<LoopEvent, { type: 'tool-start' }>;
    await b.chat.confirm({ sessionId: 's1', approvalId: start.approvalId, decision: 'deny' });
    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'done' });
    expect(calls).toStrictEqual([]);
    expect(await b.store.listRunToolCalls('r1')).toMatchObject([{ approvalId: start.approvalId, decision: 'deny', source: 'user', startedAt: null, outcome: 'denied' }]);
  });

  it('a change at B that still lets the call waiting for a place on A through: it runs once, unasked, when its turn comes', async () => {
    const { calls, followed, b } = await inLine(async (_a, b) => {
      await b.rules.add({ effect: 'deny', tool: 'echo', match: { kind: 'exact-arguments', arguments: { text: 'another' } }, scope: { kind: 'global' }, source: 'user' });
    });
    expect(await followed.until(isEnd)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'done' });
    expect(followed.events.some(waitingStart)).toBe(false);
    expect(calls).toStrictEqual(['in line']);
    expect(await b.store.listRunToolCalls('r1')).toMatchObject([{ approvalId: '', decision: 'allow', source: 'confirmation-off', outcome: 'executed' }]);
  });

  it('an allow rule removed at B no longer lets the call run on A', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool, 60_000, { asCluster: deaf });
    const b = await instance(db, 'b', tool);
    const rule = await a.rules.add({ effect: 'allow', tool: 'echo', match: { kind: 'exact-arguments', arguments: { text: 'ruled' } }, scope: { kind: 'global' }, source: 'user' });
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'ruled' });
    await (await follow(a, 's1', 'r1')).until(isEnd);
    expect(calls).toStrictEqual(['ruled']);
    await expect.poll(async () => (await b.rules.list()).map((view) => view.rule.id)).toStrictEqual([rule.rule.id]);
    await b.rules.remove(rule.rule.id);
    await asked(a, 's1', 'r2', 'ruled', b);
    expect(calls).toStrictEqual(['ruled']);
  });
});

describe.skipIf(!postgres.available)('edits before allow across instances', { timeout: 120_000 }, () => {
  it('an edit on B of a call waiting on A runs the edited call on A; the ledger keeps both; a bad edit is refused and the call waits on', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'proposed');
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', arguments: { text: 42 } })).rejects.toThrow(/text/);
    expect((await b.chat.listWaiting('s1')).map((p) => p.approvalId)).toStrictEqual([approvalId]);
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', arguments: { text: 'edited' } })).resolves.toMatchObject({ resolved: true });
    expect(await followed.until((event) => event.type === 'tool-decision')).toMatchObject({ decision: 'allow', editedArguments: { text: 'edited' } });
    await followed.until(isEnd);
    expect(calls).toStrictEqual(['edited']);
    const [record] = await a.store.listRunToolCalls('r1');
    expect(record).toMatchObject({ arguments: { text: 'proposed' }, editedArguments: { text: 'edited' }, decision: 'allow', outcome: 'executed' });
  });

  it('an instance without the tool refuses an edit it cannot check, and the call waits on; it can still allow the call as proposed', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', recordingTool('other').tool);
    const { followed, approvalId } = await startWaiting(a, 's1', 'r1', 'proposed');
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', arguments: { text: 'edited' } })).rejects.toThrow(/the tool is not available on this server now/);
    expect((await b.chat.listWaiting('s1')).map((p) => p.approvalId)).toStrictEqual([approvalId]);
    await expect(b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', arguments: { text: 'proposed' } })).resolves.toMatchObject({ resolved: true });
    await followed.until(isEnd);
    expect(calls).toStrictEqual(['proposed']);
    const [record] = await a.store.listRunToolCalls('r1');
    expect(record).toMatchObject({ editedArguments: null, decision: 'allow', outcome: 'executed' });
  });
});

describe.skipIf(!postgres.available)('rules shared by several instances', { timeout: 120_000 }, () => {
  it('a rule made on B decides a call on A, and its removal on B reaches A too', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const rule = await b.rules.add({ effect: 'deny', tool: 'echo', match: { kind: 'exact-arguments', arguments: { text: 'blocked' } }, scope: { kind: 'global' }, source: 'user', reason: 'not this one' });
    await expect.poll(async () => (await a.rules.list()).map((view) => view.rule.id)).toStrictEqual([rule.rule.id]);
    await a.chat.startRun({ sessionId: 's1', runId: 'r1', message: 'blocked' });
    const first = await follow(a, 's1', 'r1');
    expect(await first.until((event) => event.type === 'tool-decision')).toMatchObject({ decision: 'deny', source: 'rule', ruleId: rule.rule.id });
    await first.until(isEnd);
    await b.rules.remove(rule.rule.id);
    await expect.poll(async () => (await a.rules.list()).length).toBe(0);
    const { approvalId } = await startWaiting(a, 's2', 'r2', 'blocked');
    await b.chat.confirm({ sessionId: 's2', approvalId, decision: 'allow' });
    await expect.poll(() => calls).toStrictEqual(['blocked']);
  });

  it('an "Always allow" whose rule cannot be saved after its allow won still answers the allow, saying the rule was not saved', async () => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const { approvalId, followed } = await startWaiting(a, 's1', 'r1', 'once');
    // The database goes away between the claim, which stored the allow, and the rule's own write.
    vi.spyOn(b.rules, 'add').mockRejectedValue(new Error('terminating connection due to administrator command'));
    expect(await b.chat.confirm({ sessionId: 's1', approvalId, decision: 'allow', always: true, scope: 'global' })).toStrictEqual({
      resolved: true,
      status: 'resolved',
      decision: 'allow',
      alwaysNotSaved: 'the rule could not be saved',
    });
    await followed.until(isEnd);
    expect(calls).toStrictEqual(['once']);
    expect(await b.rules.list()).toStrictEqual([]);
  });
});

async function ownerOf(db: TestDatabase, runId: string): Promise<string | null> {
  return withClient(async (client) => {
    const result = await client.query<{ owner: string | null }>(`SELECT owner FROM ${db.schema}.runs WHERE run_id = $1`, [runId]);
    return result.rows[0]?.owner ?? null;
  });
}
