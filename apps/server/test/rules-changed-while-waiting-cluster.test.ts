import { ChatService, type AppendEventInput, type Cluster, type ClusterMessage, type RuleService } from '@airlock/api';
import { ApprovalRegistry, defineTool, toolResultText, type AnyTool, type ChatModel, type ToolCall } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { link, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { RuleBook } from '../src/rules';
import { PostgresStore } from '../src/store';
import { cleanupsAfterEach } from './support/cleanups';
import { clusterInstance, waitingCalls } from './support/cluster-instance';
import { probeTestDatabase, type TestDatabase } from './support/postgres';

// With several instances: a deny rule added on one instance while a call waits on another, that cannot tell that call
// from one it denies (a read of a hard link of a file it denies), has it released only by a grant for its exact
// arguments, on its owner and in the waiting list every instance reads. "Always allow" on a sibling call, given on
// the instance that added the rule, does not release it.

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance rule added while calls wait: ${postgres.reason}`);

const cleanups = cleanupsAfterEach();

/** A workspace with a file `secret/key`, a hard link to it at `src/hard`, and `notes.txt`. */
async function workspaceWithHardLink(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'airlock-rules-changed-cluster-'));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  const workspace = await realpath(folder);
  await mkdir(join(workspace, 'secret'));
  await mkdir(join(workspace, 'src'));
  await writeFile(join(workspace, 'notes.txt'), 'plain\n');
  await writeFile(join(workspace, 'secret', 'key'), 'key\n');
  await link(join(workspace, 'secret', 'key'), join(workspace, 'src', 'hard'));
  return workspace;
}

function readTool(read: string[]): AnyTool {
  return defineTool({
    name: 'read_file',
    description: 'reads a file',
    parameters: z.object({ path: z.string() }),
    annotations: { readOnly: true },
    execute: ({ path }) => (read.push(path), Promise.resolve(`read ${path}`)),
  });
}

/**
 * An instance whose notification connection can be cut: while `cut.down`, no message of the others reaches its chat
 * service or its rules; `resync()` tells both what the store's listener does once the connection is back.
 */
async function cuttableInstance(db: TestDatabase, options: { name: string; model: ChatModel; tools: () => readonly AnyTool[]; workspace: string; leaseMs?: number; registry?: ApprovalRegistry }) {
  const store = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: options.name, leaseMs: options.leaseMs ?? 60_000, log: () => {} });
  const cut = { down: false };
  const listeners = new Set<(message: ClusterMessage) => void>();
  const cluster: Cluster = new Proxy(store, {
    get(target, key) {
      if (key === 'subscribe') {
        return (listener: (message: ClusterMessage) => void) => {
          listeners.add(listener);
          const stop = store.subscribe((message) => {
            if (!cut.down) listener(message);
          });
          return () => {
            listeners.delete(listener);
            stop();
          };
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const rules = await RuleBook.open({ store, workspace: options.workspace, cluster, log: () => {} });
  const chat = new ChatService({ registry: options.registry ?? new ApprovalRegistry(), model: () => options.model, tools: options.tools, store, cluster, rules, suspendRunsOnShutdown: true, log: () => {} });
  cleanups.push(async () => {
    await chat.shutdown();
    await store.close();
  });
  await chat.open();
  const crash = async () => {
    // Its runs stop here without writing anything, as in a process that died; the store connection goes with it.
    const closing = store.close();
    await chat.shutdown().catch(() => undefined);
    await closing.catch(() => undefined);
  };
  return { chat, store, rules, cut, crash, resync: () => listeners.forEach((listener) => listener({ type: 'resync' })) };
}

/**
 * A registry that writes down, in order, each waiting call it marks for exact grants only and each grant put back
 * with the waiting calls as they were then: what the order of a resync's steps is seen by.
 */
class RecordingRegistry extends ApprovalRegistry {
  readonly steps: (readonly [string, ...unknown[]])[] = [];

  override requireExactGrants(...args: Parameters<ApprovalRegistry['requireExactGrants']>): boolean {
    const marked = super.requireExactGrants(...args);
    if (marked) this.steps.push(['marked for exact grants only', args[0]]);
    return marked;
  }

  override restoreGrant(grant: Parameters<ApprovalRegistry['restoreGrant']>[0]): void {
    this.steps.push(['grant put back', grant.grantId, this.listPending(grant.sessionId).map((call) => [call.approvalId, call.exactGrantsOnly])]);
    super.restoreGrant(grant);
  }
}

describe.skipIf(!postgres.available)('a deny rule added on one instance while calls wait on another', { timeout: 120_000 }, () => {
  it('judges the waiting calls by a rule missed while the notification connection of its owner was down before it puts back a grant missed with it: the call stays held (found in review)', async () => {
    const db = await cleanups.database();
    const workspace = await workspaceWithHardLink();
    const read: string[] = [];
    const model = () => new ScriptedModel([toolCallStep({ name: 'read_file', arguments: { path: 'notes.txt' } }, { name: 'read_file', arguments: { path: 'src/hard' } }), textStep('done')]);
    const registry = new RecordingRegistry();
    const a = await cuttableInstance(db, { name: 'a', model: model(), tools: () => [readTool(read)], workspace, registry });
    const b = await clusterInstance(db, cleanups, { name: 'b', model: model(), tools: () => [readTool(read)], workspace });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const [notes, hard] = await waitingCalls(b.chat, 's', 2);

    // A hears nothing of B from here: neither the rule, nor the allow and its grant for any read in the chat.
    a.cut.down = true;
    const deny = await b.rules.add({ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, scope: { kind: 'global' }, source: 'user' });
    const allowed = b.chat.confirm({ sessionId: 's', approvalId: notes!.approvalId, decision: 'allow', always: true, scope: 'chat' });
    await vi.waitFor(async () => expect((await b.store.listGrants()).map((grant) => grant.sessionId)).toStrictEqual(['s']), { timeout: 20_000, interval: 20 });
    expect(a.chat.pending('s').map((call) => [call.approvalId, call.exactGrantsOnly])).toStrictEqual([
      [notes!.approvalId, undefined],
      [hard!.approvalId, undefined],
    ]);

    a.cut.down = false;
    a.resync();
    expect(await allowed).toMatchObject({ resolved: true, decision: 'allow' });
    await vi.waitFor(() => expect(read).toStrictEqual(['notes.txt']), { timeout: 20_000, interval: 20 });
    // The order itself: the call is marked first, and the grant comes back (by the resync, and by its own message when
    // that one came once the connection was back) to a registry where it already is.
    const [grant] = await b.store.listGrants();
    await vi.waitFor(() => expect(registry.steps.map(([step]) => step)).toContain('grant put back'), { timeout: 20_000, interval: 20 });
    const steps = registry.steps.map(([step, id, pending]) =>
      step === 'grant put back' ? [step, id, (pending as [string, boolean | undefined][]).find(([approvalId]) => approvalId === hard!.approvalId)?.[1]] : [step, id],
    );
    expect(steps[0]).toStrictEqual(['marked for exact grants only', hard!.approvalId]);
    expect(steps.slice(1)).toStrictEqual(steps.slice(1).map(() => ['grant put back', grant!.grantId, true]));
    expect(a.chat.pending('s').map((call) => [call.approvalId, call.exactGrantsOnly, call.askedBecause?.ruleId])).toStrictEqual([[hard!.approvalId, true, deny.rule.id]]);
    await b.chat.confirm({ sessionId: 's', approvalId: hard!.approvalId, decision: 'deny' });
    await vi.waitFor(async () => expect((await a.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 20_000, interval: 20 });
    expect(read).toStrictEqual(['notes.txt']);
  });

  it('judges the waiting calls of a run taken over from an instance that died before it heard a deny rule: the call the rule catches is denied at once (found in review)', async () => {
    const db = await cleanups.database();
    const workspace = await workspaceWithHardLink();
    const read: string[] = [];
    const model = () => new ScriptedModel([toolCallStep({ name: 'read_file', arguments: { path: 'secret/key' } }), textStep('done')]);
    const a = await cuttableInstance(db, { name: 'a', model: model(), tools: () => [readTool(read)], workspace, leaseMs: 600 });
    const b = await clusterInstance(db, cleanups, { name: 'b', model: model(), tools: () => [readTool(read)], workspace });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const [key] = await waitingCalls(b.chat, 's', 1);

    a.cut.down = true;
    await b.rules.add({ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, scope: { kind: 'global' }, source: 'user' });
    expect(a.chat.pending('s').map((call) => call.approvalId)).toStrictEqual([key!.approvalId]);
    await a.crash();

    // B takes the run over once A's lease runs out, and the rule, which A never heard, denies the call there at once.
    await vi.waitFor(async () => expect((await b.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 30_000, interval: 50 });
    const [call] = await b.store.listSessionToolCalls('s');
    expect(call).toMatchObject({ approvalId: key!.approvalId, decision: 'deny', source: 'rule' });
    expect(call?.reason).toContain('secret/**');
    expect(read).toStrictEqual([]);
  });

  it('keeps the call it cannot judge waiting past "Always allow" on a sibling, marked on every instance', async () => {
    const db = await cleanups.database();
    const workspace = await workspaceWithHardLink();
    const read: string[] = [];
    const tool = readTool(read);
    const model = () => new ScriptedModel([toolCallStep({ name: 'read_file', arguments: { path: 'notes.txt' } }, { name: 'read_file', arguments: { path: 'src/hard' } }), textStep('done')]);
    const a = await clusterInstance(db, cleanups, { name: 'a', model: model(), tools: () => [tool], workspace });
    const b = await clusterInstance(db, cleanups, { name: 'b', model: model(), tools: () => [tool], workspace });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const [notes, hard] = await waitingCalls(b.chat, 's', 2);
    expect([notes!.arguments, hard!.arguments, hard!.exactGrantsOnly]).toStrictEqual([{ path: 'notes.txt' }, { path: 'src/hard' }, undefined]);

    const deny = await b.rules.add({ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, scope: { kind: 'global' }, source: 'user' });
    expect(await b.chat.confirm({ sessionId: 's', approvalId: notes!.approvalId, decision: 'allow', always: true, scope: 'chat' })).toMatchObject({ resolved: true, decision: 'allow' });
    await vi.waitFor(() => expect(read).toStrictEqual(['notes.txt']), { timeout: 20_000, interval: 20 });

    // The owner holds the call from its judgement on; another instance lists the hold once the owner's write of it is
    // read there, which a loaded machine can put after the grant's call has run.
    expect(a.chat.pending('s').map((call) => [call.approvalId, call.exactGrantsOnly])).toStrictEqual([[hard!.approvalId, true]]);
    await vi.waitFor(async () => expect((await waitingCalls(b.chat, 's')).map((call) => [call.approvalId, call.exactGrantsOnly, call.askedBecause?.ruleId])).toStrictEqual([[hard!.approvalId, true, deny.rule.id]]), { timeout: 20_000, interval: 20 });
    await b.chat.confirm({ sessionId: 's', approvalId: hard!.approvalId, decision: 'deny' });
    await vi.waitFor(async () => expect((await a.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 20_000, interval: 20 });
    expect(read).toStrictEqual(['notes.txt']);
  });
});

/**
 * An instance whose rules cannot read one path while `unreadable.on` (its workspace rules file failing as that call is
 * judged, say) and whose store refuses to keep a call's exact-grants mark `marks.failing` times (a database that
 * drops a write).
 */
async function faultyInstance(db: TestDatabase, options: { name: string; model: ChatModel; tools: () => readonly AnyTool[]; workspace: string; unreadablePath: string }) {
  const store = await PostgresStore.open({ url: db.url, schema: db.schema, instanceId: options.name, leaseMs: 60_000, log: () => {} });
  const marks = { failing: 0, refused: 0 };
  const flaky = new Proxy(store, {
    get(target, key) {
      if (key === 'requireExactGrants') {
        return (...args: Parameters<PostgresStore['requireExactGrants']>) => {
          if (marks.failing === 0) return target.requireExactGrants(...args);
          marks.failing -= 1;
          marks.refused += 1;
          return Promise.reject(new Error('the connection to the database was lost'));
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const book = await RuleBook.open({ store, workspace: options.workspace, cluster: store, log: () => {} });
  const unreadable = { on: false };
  const refuse = (call: ToolCall) => unreadable.on && call.arguments.path === options.unreadablePath;
  const rules: RuleService = new Proxy(book, {
    get(target, key) {
      if (key === 'evaluate') {
        return (...args: Parameters<RuleBook['evaluate']>) => (refuse(args[1]) ? Promise.reject(new Error('the workspace rules file cannot be read')) : target.evaluate(...args));
      }
      if (key === 'snapshot') {
        return async () => {
          const judge = await target.snapshot();
          return (...args: Parameters<typeof judge>) => (refuse(args[1]) ? Promise.reject(new Error('the workspace rules file cannot be read')) : judge(...args));
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => options.model, tools: options.tools, store: flaky, cluster: flaky, rules, suspendRunsOnShutdown: true, log: () => {} });
  cleanups.push(async () => {
    await chat.shutdown();
    await store.close();
  });
  await chat.open();
  return { chat, store, marks, unreadable };
}

describe.skipIf(!postgres.available)('a waiting call the changed rules could not judge again, with several instances', { timeout: 120_000 }, () => {
  it('is held to exact grants on every instance even when the first write of that hold fails (found in review)', async () => {
    const db = await cleanups.database();
    const workspace = await workspaceWithHardLink();
    const read: string[] = [];
    const model = () => new ScriptedModel([toolCallStep({ name: 'read_file', arguments: { path: 'notes.txt' } }, { name: 'read_file', arguments: { path: 'src/hard' } }), textStep('done')]);
    const a = await faultyInstance(db, { name: 'a', model: model(), tools: () => [readTool(read)], workspace, unreadablePath: 'src/hard' });
    const b = await clusterInstance(db, cleanups, { name: 'b', model: model(), tools: () => [readTool(read)], workspace });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const [notes, hard] = await waitingCalls(b.chat, 's', 2);

    // A rule added on B has A judge its waiting calls again: it cannot judge the read of src/hard, and the store drops
    // the first write of the hold.
    a.unreadable.on = true;
    a.marks.failing = 1;
    await b.rules.add({ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, scope: { kind: 'global' }, source: 'user' });
    await vi.waitFor(() => expect(a.chat.pending('s').map((call) => [call.approvalId, call.exactGrantsOnly])).toStrictEqual([[notes!.approvalId, undefined], [hard!.approvalId, true]]), { timeout: 20_000, interval: 20 });
    expect(a.marks.refused).toBe(1);

    // Every instance's waiting list holds it so, as the owner does.
    await vi.waitFor(
      async () => expect((await b.chat.listWaiting('s')).map((call) => [call.approvalId, call.exactGrantsOnly, call.askedBecause?.ruleId])).toStrictEqual([[notes!.approvalId, undefined, undefined], [hard!.approvalId, true, 'rules-unread']]),
      { timeout: 20_000, interval: 50 },
    );

    // "Always allow" in the chat on its sibling, on B: a grant for any read, which does not release it.
    expect(await b.chat.confirm({ sessionId: 's', approvalId: notes!.approvalId, decision: 'allow', always: true, scope: 'chat' })).toMatchObject({ resolved: true, decision: 'allow' });
    await vi.waitFor(() => expect(read).toStrictEqual(['notes.txt']), { timeout: 20_000, interval: 20 });
    expect((await waitingCalls(b.chat, 's')).map((call) => [call.approvalId, call.exactGrantsOnly])).toStrictEqual([[hard!.approvalId, true]]);
    await b.chat.confirm({ sessionId: 's', approvalId: hard!.approvalId, decision: 'deny' });
    await vi.waitFor(async () => expect((await a.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 20_000, interval: 20 });
    expect(read).toStrictEqual(['notes.txt']);
  });
});

/**
 * A's store, except that the write of a run's events that tells a call denied by a rule hangs until `drop()`, then
 * fails as with the connection gone: an owner that dies after the rule's deny was claimed on the call's row, before
 * the run said so.
 */
function diesBeforeRuleDenyIsTold(store: PostgresStore, held: { reached: () => void; dropped: Promise<void> }): PostgresStore {
  const tellsRuleDeny = (input: AppendEventInput) => input.event.type === 'tool-decision' && input.event.source === 'rule';
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
      if (key !== 'appendEvent' && key !== 'appendEvents') return bound;
      return async (written: AppendEventInput | readonly AppendEventInput[]) => {
        if (!(Array.isArray(written) ? (written as readonly AppendEventInput[]) : [written as AppendEventInput]).some(tellsRuleDeny)) return bound(written);
        held.reached();
        await held.dropped;
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
      };
    },
  });
}

/**
 * A's store, except that the write of a run's events that ends a call denied (its tool-end) hangs until `drop()`,
 * then fails as with the connection gone: an owner that dies once the run said a rule denied the call, before it
 * stored the call's end.
 */
function diesBeforeDenyEnds(store: PostgresStore, held: { reached: () => void; dropped: Promise<void> }): PostgresStore {
  const endsDeny = (input: AppendEventInput) => input.event.type === 'tool-end' && input.event.outcome === 'denied';
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
      if (key !== 'appendEvent' && key !== 'appendEvents') return bound;
      return async (written: AppendEventInput | readonly AppendEventInput[]) => {
        if (!(Array.isArray(written) ? (written as readonly AppendEventInput[]) : [written as AppendEventInput]).some(endsDeny)) return bound(written);
        held.reached();
        await held.dropped;
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
      };
    },
  });
}

describe.skipIf(!postgres.available)('a waiting call denied by a rule, with several instances', { timeout: 120_000 }, () => {
  const denySecret = { effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, scope: { kind: 'global' }, source: 'user' } as const;

  it('keeps the rule in the call ledger row, as one instance does: the claim of the deny writes it', async () => {
    const db = await cleanups.database();
    const workspace = await workspaceWithHardLink();
    const read: string[] = [];
    const model = () => new ScriptedModel([toolCallStep({ name: 'read_file', arguments: { path: 'secret/key' } }), textStep('done')]);
    const a = await clusterInstance(db, cleanups, { name: 'a', model: model(), tools: () => [readTool(read)], workspace });
    const b = await clusterInstance(db, cleanups, { name: 'b', model: model(), tools: () => [readTool(read)], workspace });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const [key] = await waitingCalls(b.chat, 's', 1);
    const rule = await b.rules.add(denySecret);
    await vi.waitFor(async () => expect((await b.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 20_000, interval: 20 });

    const told = (await b.store.loadEvents('r1', 0)).find((event) => event.type === 'tool-decision');
    expect(told).toMatchObject({ approvalId: key!.approvalId, decision: 'deny', source: 'rule', ruleId: rule.rule.id, rule: rule.description });
    const [call] = await b.store.listSessionToolCalls('s');
    expect(call).toMatchObject({ approvalId: key!.approvalId, decision: 'deny', source: 'rule', decidedByRule: rule.rule.id, decidedByRuleText: rule.description });
    expect(read).toStrictEqual([]);
  });

  it('tells a deny of a rule on an owner that died before the run said so, read back from the row by the instance taking the run over, as the rule denied it: with the rule and how it reads', async () => {
    const db = await cleanups.database();
    const workspace = await workspaceWithHardLink();
    const read: string[] = [];
    const model = () => new ScriptedModel([toolCallStep({ name: 'read_file', arguments: { path: 'secret/key' } }), textStep('done')]);
    let reached!: () => void;
    let drop!: () => void;
    const held = { reached: () => reached(), dropped: new Promise<void>((resolve) => (drop = resolve)) };
    const deniedOnA = new Promise<void>((resolve) => (reached = resolve));
    const a = await clusterInstance(db, cleanups, { name: 'a', model: model(), tools: () => [readTool(read)], workspace, leaseMs: 600, asStore: (store) => diesBeforeRuleDenyIsTold(store, held) });
    // B's model answers only the turn after the call, which B drives once it took the run over.
    const b = await clusterInstance(db, cleanups, { name: 'b', model: new ScriptedModel([textStep('done')]), tools: () => [readTool(read)], workspace, leaseMs: 300 });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const [key] = await waitingCalls(b.chat, 's', 1);
    const rule = await b.rules.add(denySecret);
    await deniedOnA;
    const crashed = a.crash();
    drop();
    await crashed;

    await vi.waitFor(async () => expect((await b.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 30_000, interval: 50 });
    const told = (await b.store.loadEvents('r1', 0)).filter((event) => event.type === 'tool-decision');
    expect(told).toStrictEqual([
      { type: 'tool-decision', toolCallId: key!.toolCallId, approvalId: key!.approvalId, decision: 'deny', source: 'rule', reason: expect.stringContaining('secret/**'), ruleId: rule.rule.id, rule: rule.description },
    ]);
    // The person's own rule: the model is not told it came from the workspace's rules file.
    const ended = (await b.store.loadEvents('r1', 0)).find((event) => event.type === 'tool-end');
    expect(ended).toMatchObject({ outcome: 'denied', result: toolResultText.deniedByRule('read_file', told[0]!.reason!) });
    expect(read).toStrictEqual([]);
  });

  it("tells a deny of a rule of the workspace's rules file on an owner that died before the run said so, read back from the row by the instance taking the run over, as the owner would have: that the rule came from that file", async () => {
    const db = await cleanups.database();
    const workspace = await workspaceWithHardLink();
    const read: string[] = [];
    const model = () => new ScriptedModel([toolCallStep({ name: 'read_file', arguments: { path: 'secret/key' } }), textStep('done')]);
    let reached!: () => void;
    let drop!: () => void;
    const held = { reached: () => reached(), dropped: new Promise<void>((resolve) => (drop = resolve)) };
    const deniedOnA = new Promise<void>((resolve) => (reached = resolve));
    const a = await clusterInstance(db, cleanups, { name: 'a', model: model(), tools: () => [readTool(read)], workspace, leaseMs: 600, asStore: (store) => diesBeforeRuleDenyIsTold(store, held) });
    const bModel = new ScriptedModel([textStep('done')]);
    const b = await clusterInstance(db, cleanups, { name: 'b', model: bModel, tools: () => [readTool(read)], workspace, leaseMs: 300 });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const [key] = await waitingCalls(b.chat, 's', 1);
    // Written into the workspace while the call waits (by a call, a checkout): A reads it, and its deny rule applies untrusted.
    await mkdir(join(workspace, '.airlock'));
    await writeFile(join(workspace, '.airlock', 'rules.json'), JSON.stringify({ version: 1, rules: [{ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, reason: 'keys stay put' }] }));
    const [rule] = (await a.rules.list()).filter((listed) => !listed.editable);
    await deniedOnA;
    const crashed = a.crash();
    drop();
    await crashed;

    await vi.waitFor(async () => expect((await b.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 30_000, interval: 50 });
    const events = await b.store.loadEvents('r1', 0);
    const told = events.filter((event) => event.type === 'tool-decision');
    expect(told).toStrictEqual([
      { type: 'tool-decision', toolCallId: key!.toolCallId, approvalId: key!.approvalId, decision: 'deny', source: 'rule', reason: expect.stringContaining('keys stay put'), ruleId: rule!.rule.id, rule: rule!.description },
    ]);
    const result = toolResultText.deniedByRule('read_file', told[0]!.reason!, true);
    expect(events.find((event) => event.type === 'tool-end')).toMatchObject({ toolCallId: key!.toolCallId, outcome: 'denied', result });
    expect(bModel.requests[0]?.messages.at(-1)).toMatchObject({ role: 'tool', content: result });
    expect(read).toStrictEqual([]);
  });

  it("tells a deny of a rule of the workspace's rules file on an owner that died once the run said so, before it stored the call's end, as the owner would have: not as the person's words", async () => {
    const db = await cleanups.database();
    const workspace = await workspaceWithHardLink();
    const read: string[] = [];
    const model = () => new ScriptedModel([toolCallStep({ name: 'read_file', arguments: { path: 'secret/key' } }), textStep('done')]);
    let reached!: () => void;
    let drop!: () => void;
    const held = { reached: () => reached(), dropped: new Promise<void>((resolve) => (drop = resolve)) };
    const endingOnA = new Promise<void>((resolve) => (reached = resolve));
    const a = await clusterInstance(db, cleanups, { name: 'a', model: model(), tools: () => [readTool(read)], workspace, leaseMs: 600, asStore: (store) => diesBeforeDenyEnds(store, held) });
    const bModel = new ScriptedModel([textStep('done')]);
    const b = await clusterInstance(db, cleanups, { name: 'b', model: bModel, tools: () => [readTool(read)], workspace, leaseMs: 300 });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const [key] = await waitingCalls(b.chat, 's', 1);
    await mkdir(join(workspace, '.airlock'));
    await writeFile(join(workspace, '.airlock', 'rules.json'), JSON.stringify({ version: 1, rules: [{ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, reason: 'keys stay put' }] }));
    await a.rules.list();
    await endingOnA;
    const crashed = a.crash();
    drop();
    await crashed;

    await vi.waitFor(async () => expect((await b.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 30_000, interval: 50 });
    const events = await b.store.loadEvents('r1', 0);
    const told = events.filter((event) => event.type === 'tool-decision');
    expect(told).toMatchObject([{ approvalId: key!.approvalId, decision: 'deny', source: 'rule', reason: expect.stringContaining('keys stay put') }]);
    const result = toolResultText.deniedByRule('read_file', told[0]!.reason!, true);
    expect(events.filter((event) => event.type === 'tool-end')).toMatchObject([{ toolCallId: key!.toolCallId, outcome: 'denied', result }]);
    expect(bModel.requests[0]?.messages.at(-1)).toMatchObject({ role: 'tool', content: result });
    expect(read).toStrictEqual([]);
  });

  it("tells a deny of a rule of the workspace's rules file that a person's edited allow of a later call of a batch met, on an owner that died before that call's turn, as the owner would have: the edit, and the rule from that file", async () => {
    const db = await cleanups.database();
    const workspace = await workspaceWithHardLink();
    await mkdir(join(workspace, '.airlock'));
    await writeFile(join(workspace, '.airlock', 'rules.json'), JSON.stringify({ version: 1, rules: [{ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, reason: 'keys stay put' }] }));
    const read: string[] = [];
    const started: string[] = [];
    // Runs until stopped: the batch's later call waits for its turn behind it.
    const slow = defineTool({
      name: 'slow',
      description: 'takes a while',
      parameters: z.object({ text: z.string() }),
      annotations: { readOnly: true },
      execute: async ({ text }, { signal }) => {
        started.push(text);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return 'slow done';
      },
    });
    const tools = () => [slow, readTool(read)];
    const aModel = new ScriptedModel([toolCallStep({ name: 'slow', arguments: { text: 'one' } }, { name: 'read_file', arguments: { path: 'notes.txt' } }), textStep('done')]);
    const bModel = new ScriptedModel([textStep('done')]);
    const a = await clusterInstance(db, cleanups, { name: 'a', model: aModel, tools, workspace, leaseMs: 600 });
    const b = await clusterInstance(db, cleanups, { name: 'b', model: bModel, tools, workspace, leaseMs: 600 });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    const [first, later] = await waitingCalls(b.chat, 's', 2);
    expect(await a.chat.confirm({ sessionId: 's', approvalId: first!.approvalId, decision: 'allow' })).toMatchObject({ resolved: true });
    await vi.waitFor(() => expect(started).toStrictEqual(['one']), { timeout: 20_000, interval: 20 });
    const edited = { path: 'secret/key' };
    expect(await b.chat.confirm({ sessionId: 's', approvalId: later!.approvalId, decision: 'allow', arguments: edited })).toMatchObject({ resolved: true });
    // A stores the rule's deny of the edited call alone (from its tool-decision event); its end comes at its turn.
    const ruleDeny = async () => (await a.store.loadEvents('r1', 0)).find((event) => event.type === 'tool-decision' && event.source === 'rule');
    await vi.waitFor(async () => expect(await ruleDeny()).toBeDefined(), { timeout: 20_000, interval: 20 });
    const told = await ruleDeny();
    await a.crash();

    await vi.waitFor(async () => expect((await b.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 30_000, interval: 50 });
    const result = toolResultText.edited(edited, toolResultText.deniedByRule('read_file', told?.type === 'tool-decision' ? told.reason! : '', true), false);
    expect((await b.store.loadEvents('r1', 0)).filter((event) => event.type === 'tool-end' && event.toolCallId === later!.toolCallId)).toMatchObject([{ outcome: 'denied', result }]);
    expect(read).toStrictEqual([]);
  });
});
