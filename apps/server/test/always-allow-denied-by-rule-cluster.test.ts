import { ChatService } from '@airlock/api';
import { ApprovalRegistry, type AnyTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { tmpdir } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { RuleBook } from '../src/rules';
import { PostgresStore } from '../src/store';
import { cleanupsAfterEach } from './support/cleanups';
import { probeTestDatabase, type TestDatabase } from './support/postgres';
import { recordingTool } from './support/test-airlock';

// With several instances, "Always allow" of a call that a deny rule refuses after all (set while the call waited, or
// matching the person's edit) keeps nothing of the allow: no lasting rule, no grant of the chat.

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance "Always allow" of a denied call: ${postgres.reason}`);

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
  return { chat, rules, store };
}

const denyOf = (text: string) => ({ effect: 'deny' as const, tool: 'echo', match: { kind: 'exact-arguments' as const, arguments: { text } }, scope: { kind: 'global' as const }, source: 'user' as const });

describe.skipIf(!postgres.available)('"Always allow" of a call a deny rule refuses, with several instances', { timeout: 120_000 }, () => {
  it.each([
    ['workspace', 'on the instance that holds the run', 'a'],
    ['workspace', 'on another instance', 'b'],
    ['chat', 'on the instance that holds the run', 'a'],
    ['chat', 'on another instance', 'b'],
  ] as const)('at scope %s, decided %s, for a call edited to what a deny rule refuses: nothing is saved', async (scope, _where, decider) => {
    const db = await cleanups.database();
    const { tool, calls } = recordingTool();
    const a = await instance(db, 'a', tool);
    const b = await instance(db, 'b', tool);
    const deny = await a.rules.add(denyOf('denied'));
    await vi.waitFor(async () => expect(await b.rules.list()).toHaveLength(1), { timeout: 20_000, interval: 20 });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'echo' });
    const [waiting] = await vi.waitFor(
      async () => {
        const listed = await a.chat.listWaiting('s');
        if (listed.length === 0) throw new Error('no call waits yet');
        return listed;
      },
      { timeout: 20_000, interval: 20 },
    );
    const by = decider === 'a' ? a : b;
    await by.chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'allow', always: true, scope, arguments: { text: 'denied' } });
    await vi.waitFor(async () => expect((await a.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 20_000, interval: 20 });
    expect(calls).toStrictEqual([]);
    expect((await a.chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'deny', source: 'rule' }]);
    expect((await a.rules.list()).map((view) => view.rule.id)).toStrictEqual([deny.rule.id]);
    expect((await b.rules.list()).map((view) => view.rule.id)).toStrictEqual([deny.rule.id]);
    expect(await a.store.listGrants()).toStrictEqual([]);
  });
});
