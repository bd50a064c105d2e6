import { ChatService, type PendingApproval } from '@airlock/api';
import { ApprovalRegistry, type AnyTool, type ChatModel } from '@airlock/core';
import { tmpdir } from 'node:os';
import { vi } from 'vitest';
import { RuleBook } from '../../src/rules';
import { PostgresStore } from '../../src/store';
import type { Cleanups } from './cleanups';
import type { TestDatabase } from './postgres';

export interface ClusterInstanceOptions {
  /** The instance's id in the cluster. */
  name: string;
  /** The model every run of the instance talks to. */
  model: ChatModel;
  /** The tools, as the instance lists them at each look. */
  tools: () => readonly AnyTool[];
  /** The workspace its rules judge paths in. Default the system's temporary folder. */
  workspace?: string;
}

/**
 * One instance of a cluster on the test database, with a rule book: its chat service is shut down (its runs handed
 * over) and its store closed after the test.
 */
export async function clusterInstance(db: TestDatabase, cleanups: Cleanups, options: ClusterInstanceOptions) {
  const store = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: options.name, leaseMs: 60_000, log: () => {} });
  const rules = await RuleBook.open({ store, workspace: options.workspace ?? tmpdir(), cluster: store, log: () => {} });
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => options.model, tools: options.tools, store, cluster: store, rules, suspendRunsOnShutdown: true, log: () => {} });
  cleanups.push(async () => {
    await chat.shutdown();
    await store.close();
  });
  await chat.open();
  return { chat, store, rules };
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
