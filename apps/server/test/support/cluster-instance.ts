import { ChatService, type ChatServiceOptions, type Cluster, type PendingApproval } from '@airlock/api';
import { ApprovalRegistry, type AnyTool, type ChatModel, type LoopEvent } from '@airlock/core';
import { tmpdir } from 'node:os';
import { expect, vi } from 'vitest';
import { RuleBook } from '../../src/rules';
import { PostgresStore } from '../../src/store';
import type { Cleanups } from './cleanups';
import { ConversationModel } from './conversation-model';
import type { TestDatabase } from './postgres';

export interface ClusterInstanceOptions {
  /** The instance's id in the cluster. */
  name: string;
  /** The model every run of the instance talks to. Default a ConversationModel calling `echo` once per message. */
  model?: ChatModel;
  /** The tools, as the instance lists them at each look. */
  tools: () => readonly AnyTool[];
  /** The workspace its rules judge paths in. Default the system's temporary folder. */
  workspace?: string;
  /** How long its leases on its runs last, in ms. Default a minute. */
  leaseMs?: number;
  /** What its chat service uses as its store, made from the instance's store. Default that store. */
  asStore?: (store: PostgresStore) => PostgresStore;
  /** What its chat service and rule book use as their cluster, made from the instance's store. Default that store. */
  asCluster?: (store: PostgresStore) => Cluster;
  /** The instance's wall clock, for its store and its approval registry (one whose clock is off the database's). Default Date.now. */
  now?: () => number;
  /** Further options of its chat service, over those above (tool slots, how soon it tries the store again, its model). Default none. */
  service?: Partial<ChatServiceOptions>;
}

export interface ClusterInstance {
  name: string;
  chat: ChatService;
  store: PostgresStore;
  rules: RuleBook;
  /** Stops the instance as a crash would: no hand-over, its leases simply stop being renewed. */
  crash(): Promise<void>;
}

/**
 * One instance of a cluster on the test database, with a rule book: unless it crashed, its chat service is shut down
 * (its runs handed over) and its store closed after the test.
 */
export async function clusterInstance(db: TestDatabase, cleanups: Cleanups, options: ClusterInstanceOptions): Promise<ClusterInstance> {
  const { name, model = new ConversationModel('echo', 'text') } = options;
  const clock = options.now === undefined ? {} : { now: options.now };
  const store = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: name, leaseMs: options.leaseMs ?? 60_000, log: () => {}, ...clock });
  const cluster = options.asCluster?.(store) ?? store;
  const rules = await RuleBook.open({ store, workspace: options.workspace ?? tmpdir(), cluster, log: () => {} });
  const chat = new ChatService({ registry: new ApprovalRegistry(clock), model: () => model, tools: options.tools, store: options.asStore?.(store) ?? store, cluster, rules, suspendRunsOnShutdown: true, log: () => {}, ...options.service });
  let stopped = false;
  cleanups.push(async () => {
    if (stopped) return;
    await chat.shutdown();
    await store.close();
  });
  await chat.open();
  return {
    name,
    chat,
    store,
    rules,
    crash: async () => {
      // Its runs stop here without writing anything, as in a process that died; the store connection goes with it.
      stopped = true;
      const closing = store.close();
      await chat.shutdown().catch(() => undefined);
      await closing;
    },
  };
}

/** The calls of `sessionId` waiting on `chat`, once there are `count` of them. */
export async function waitingCalls(chat: ChatService, sessionId: string, count = 1): Promise<PendingApproval[]> {
  return vi.waitFor(
    async () => {
      const listed = await chat.listWaiting(sessionId);
      if (listed.length !== count) throw new Error(`${listed.length} calls of ${sessionId} wait, not ${count}`);
      return listed;
    },
    { timeout: 20_000, interval: 20 },
  );
}

/** The store as an instance's cluster, with some of its methods replaced (they may call the store's own). */
export function interceptCluster(store: PostgresStore, replaced: Partial<Cluster>): Cluster {
  return new Proxy(store, {
    get(target, key) {
      const own = (replaced as Record<string | symbol, unknown>)[key];
      if (own !== undefined) return own;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A run followed on one instance (followRun): the event ids and events read so far. */
export interface FollowedRun {
  ids: string[];
  events: LoopEvent[];
  /** Resolves with the first event matching, read in order. */
  until(match: (event: LoopEvent) => boolean): Promise<LoopEvent>;
}

/** Follows a run on one instance from `afterSeq`, as a client's subscription does; the follower ends with `cleanups`. */
export async function followRun(on: ClusterInstance, cleanups: Cleanups, sessionId: string, runId: string, afterSeq = 0): Promise<FollowedRun> {
  expect(await on.chat.attachable(sessionId, runId)).toBe(true);
  const follower = on.chat.follow(sessionId, runId, afterSeq, (id, event) => ({ id, event }));
  cleanups.push(async () => void (await follower.return()));
  const followed: FollowedRun = {
    ids: [],
    events: [],
    until: async (match) => {
      const already = followed.events.find(match);
      if (already) return already;
      for (;;) {
        const next = await follower.next();
        if (next.done) throw new Error(`run ${runId} ended on ${on.name} without the event looked for; saw ${followed.events.map((e) => e.type).join(', ')}`);
        followed.ids.push(next.value.id);
        followed.events.push(next.value.event);
        if (match(next.value.event)) return next.value.event;
      }
    },
  };
  return followed;
}
