import type { AnyTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { cleanupsAfterEach } from './support/cleanups';
import { clusterInstance, waitingCalls } from './support/cluster-instance';
import { probeTestDatabase, type TestDatabase } from './support/postgres';
import { recordingTool } from './support/test-airlock';

// With several instances, "Always allow" of a call that a deny rule refuses after all (set while the call waited, or
// matching the person's edit) keeps nothing of the allow: no lasting rule, no grant of the chat.

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance "Always allow" of a denied call: ${postgres.reason}`);

const cleanups = cleanupsAfterEach();

const instance = (db: TestDatabase, name: string, tool: AnyTool) =>
  clusterInstance(db, cleanups, { name, model: new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'once' } }), textStep('done')]), tools: () => [tool] });

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
    const [waiting] = await waitingCalls(a.chat, 's');
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
