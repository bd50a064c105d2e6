import { ApprovalRegistry, defineTool, type AnyTool, type ChatModel, type PolicyVerdict, type ToolCall } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ChatService } from './chat-service';
import type { RuleService } from './context';
import { MemoryStore } from './memory-store';

// A call a deny rule could not tell from one it denies waits for the person, and only a grant for its exact
// arguments may release it: a chat's grant for any call of its tool was never given for it. That must hold for the
// call as restored from the store too (after a restart, or on the instance that takes a run over).

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((chat) => chat.shutdown()));
});

function echoTool(ran: string[]): AnyTool {
  return defineTool({ name: 'echo', description: 'echoes', parameters: z.object({ text: z.string() }), annotations: { executesCode: false }, execute: ({ text }) => (ran.push(text), Promise.resolve(`echo: ${text}`)) });
}

/** A deny rule over `rm` that cannot tell whether it catches a call naming it, so it has the person asked. */
const rules = {
  evaluate: (_sessionId: string, call: ToolCall): Promise<PolicyVerdict | undefined> =>
    Promise.resolve(call.arguments.text === 'rm -rf ~' ? { effect: 'ask', ruleId: 'rule_rm', description: [{ text: 'A deny rule (rm) may catch this call' }] } : undefined),
} as Partial<RuleService> as RuleService;

async function start(store: MemoryStore, steps: ScriptStep[], ran: string[]) {
  const model: ChatModel = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [echoTool(ran)], store, rules, suspendRunsOnShutdown: true });
  services.push(chat);
  await chat.open();
  return chat;
}

describe('a waiting call a deny rule had asked about, restored from the store', () => {
  it('is not released by "Always allow" on a sibling call of its tool after a restart, and runs only when the person allows it', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const before = await start(store, [toolCallStep({ name: 'echo', arguments: { text: 'rm -rf ~' } }, { name: 'echo', arguments: { text: 'hello' } })], ran);
    await before.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(before.pending('s')).toHaveLength(2), { timeout: 10_000 });
    await before.shutdown();

    const after = await start(store, [textStep('done')], ran);
    const waiting = after.pending('s');
    expect(waiting.map((call) => call.arguments)).toStrictEqual([{ text: 'rm -rf ~' }, { text: 'hello' }]);
    const [risky, plain] = waiting;
    expect(await after.confirm({ sessionId: 's', approvalId: plain!.approvalId, decision: 'allow', always: true })).toMatchObject({ resolved: true, decision: 'allow' });
    expect(after.pending('s').map((call) => call.approvalId)).toStrictEqual([risky!.approvalId]);
    expect(ran).toStrictEqual([]);

    expect(await after.confirm({ sessionId: 's', approvalId: risky!.approvalId, decision: 'allow' })).toMatchObject({ resolved: true, decision: 'allow' });
    await vi.waitFor(() => expect(after.listSessions().find((s) => s.sessionId === 's')?.activeRunId).toBeNull(), { timeout: 10_000 });
    expect(ran).toStrictEqual(['rm -rf ~', 'hello']);
    const ledger = (await store.listSessionToolCalls('s')).map((call) => [call.arguments, call.exactGrantsOnly, call.source]);
    expect(ledger).toStrictEqual([
      [{ text: 'rm -rf ~' }, true, 'user'],
      [{ text: 'hello' }, false, 'user'],
    ]);
  });
});

describe('the waiting list of a call a deny rule had asked about', () => {
  it('says only a grant for its exact arguments may release it, so a list decides it only on its card: live and after a restart', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const before = await start(store, [toolCallStep({ name: 'echo', arguments: { text: 'rm -rf ~' } }, { name: 'echo', arguments: { text: 'hello' } })], ran);
    await before.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(before.pending('s')).toHaveLength(2), { timeout: 10_000 });
    const listed = async (chat: ChatService) => (await chat.listWaiting('s')).map((call) => [call.arguments, call.exactGrantsOnly]);
    expect(await listed(before)).toStrictEqual([
      [{ text: 'rm -rf ~' }, true],
      [{ text: 'hello' }, undefined],
    ]);
    await before.shutdown();

    const after = await start(store, [textStep('done')], ran);
    expect(await listed(after)).toStrictEqual([
      [{ text: 'rm -rf ~' }, true],
      [{ text: 'hello' }, undefined],
    ]);
    expect(ran).toStrictEqual([]);
  });
});
