import { ChatService, MemoryStore } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { RuleBook } from '../src/rules';
import { ended, waitingCall } from './support/always-allow';
import { recordingTool } from './support/test-airlock';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const denyOf = (text: string) => ({ effect: 'deny' as const, tool: 'echo', match: { kind: 'exact-arguments' as const, arguments: { text } }, scope: { kind: 'global' as const }, source: 'user' as const });

/** A chat whose call `echo once` waits, and a deny rule for `echo denied`, set before the call or while it waits. */
async function setup(denied = 'once') {
  const store = new MemoryStore();
  const rules = await RuleBook.open({ store, workspace: tmpdir(), log: () => undefined });
  const before = denied === 'once' ? undefined : await rules.add(denyOf(denied));
  const { tool, calls } = recordingTool();
  const model = new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'once' } }), textStep('done')]);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [tool], store, rules, log: () => undefined });
  cleanups.push(() => chat.shutdown());
  await chat.open();
  await chat.startRun({ sessionId: 'a', runId: 'r1', message: 'echo once' });
  const waiting = await waitingCall(chat, 'a');
  // Set while the call waits: the allow is put to the rules again, and this deny refuses it.
  const deny = before ?? (await rules.add(denyOf(denied)));
  return { chat, rules, calls, waiting, deny };
}

describe('"Always allow" of a call a deny rule refuses after all', () => {
  // A deny rule set while the call waits denies it as it comes: "Always allow" after it finds it denied.
  it.each(['workspace', 'global'] as const)('saves no %s allow rule: the call was denied, and is answered so', async (scope) => {
    const { chat, rules, calls, waiting, deny } = await setup();
    const answer = await chat.confirm({ sessionId: 'a', approvalId: waiting.approvalId, decision: 'allow', always: true, scope });
    await ended(chat, 'a');
    expect(calls).toStrictEqual([]);
    expect(answer).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'deny' });
    expect((await rules.list()).map((view) => view.rule.id)).toStrictEqual([deny.rule.id]);
  });

  it.each(['workspace', 'chat'] as const)('saves nothing at scope %s for a call edited to what a deny rule refuses', async (scope) => {
    const { chat, rules, calls, waiting, deny } = await setup('denied');
    const answer = await chat.confirm({ sessionId: 'a', approvalId: waiting.approvalId, decision: 'allow', always: true, scope, arguments: { text: 'denied' } });
    await ended(chat, 'a');
    expect(calls).toStrictEqual([]);
    expect(answer).toStrictEqual({ resolved: true, status: 'resolved', decision: 'deny' });
    expect((await rules.list()).map((view) => view.rule.id)).toStrictEqual([deny.rule.id]);
    expect(chat.listGrants('a')).toStrictEqual([]);
  });

  it('keeps no grant of the chat, and answers none', async () => {
    const { chat, calls, waiting } = await setup();
    const answer = await chat.confirm({ sessionId: 'a', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'chat' });
    await ended(chat, 'a');
    expect(calls).toStrictEqual([]);
    expect(answer).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'deny' });
    expect(chat.listGrants('a')).toStrictEqual([]);
  });
});
