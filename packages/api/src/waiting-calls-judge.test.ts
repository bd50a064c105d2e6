import { ApprovalRegistry, defineTool, type AnyTool, type PolicyVerdict, type ToolCall } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ChatService } from './chat-service';
import type { RuleService } from './context';
import { MemoryStore } from './memory-store';

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((chat) => chat.shutdown()));
});

function echoTool(ran: string[]): AnyTool {
  return defineTool({ name: 'echo', description: 'echoes', parameters: z.object({ text: z.string() }), annotations: { executesCode: false }, execute: ({ text }) => (ran.push(text), Promise.resolve(`echo: ${text}`)) });
}

/** Rules that cannot be read for one call while `damaged` (a workspace rules file unreadable as it is judged, say). */
function damageableRules() {
  const listeners = new Set<() => void>();
  let version = 0;
  const state = { damaged: false };
  const rules = {
    evaluate: (_sessionId: string, call: ToolCall): Promise<PolicyVerdict | undefined> =>
      state.damaged && call.arguments.text === 'cat ~/.ssh/id_rsa' ? Promise.reject(new Error('the workspace rules file cannot be read')) : Promise.resolve(undefined),
    version: () => version,
    onChange: (listener: () => void) => (listeners.add(listener), () => listeners.delete(listener)),
  } as Partial<RuleService> as RuleService;
  const change = () => {
    version++;
    for (const listener of listeners) listener();
  };
  return { rules, state, change };
}

describe('a waiting call the changed rules could not judge again', () => {
  it('is held to exact grants, saying why: a grant for any call of its tool does not release it (found in review)', async () => {
    const { rules, state, change } = damageableRules();
    const ran: string[] = [];
    const log: string[] = [];
    const model = new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'cat ~/.ssh/id_rsa' } }, { name: 'echo', arguments: { text: 'hello' } }), textStep('done')]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [echoTool(ran)], store: new MemoryStore(), rules, log: (line) => log.push(line) });
    services.push(chat);
    await chat.open();
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(2), { timeout: 10_000 });
    const [unjudged, plain] = chat.pending('s');

    state.damaged = true;
    change();
    // "Always allow" in this chat on the other call: a grant for any call of the tool, given after the change.
    expect(await chat.confirm({ sessionId: 's', approvalId: plain!.approvalId, decision: 'allow', always: true })).toMatchObject({ resolved: true, decision: 'allow' });
    expect(chat.pending('s').map((call) => call.approvalId)).toStrictEqual([unjudged!.approvalId]);
    const [listed] = await chat.listWaiting('s');
    expect(listed).toMatchObject({ approvalId: unjudged!.approvalId, exactGrantsOnly: true, askedBecause: { ruleId: 'rules-unread', reason: [{ text: expect.stringContaining('the workspace rules file cannot be read') }] } });
    expect(log).toContainEqual(expect.stringContaining(`Could not judge ${unjudged!.approvalId} again by the rules`));
    expect(ran).toStrictEqual([]);

    // The person's own allow of it, on its card, still runs it.
    state.damaged = false;
    expect(await chat.confirm({ sessionId: 's', approvalId: unjudged!.approvalId, decision: 'allow' })).toMatchObject({ resolved: true, decision: 'allow' });
    await vi.waitFor(() => expect(chat.listSessions().find((s) => s.sessionId === 's')?.activeRunId).toBeNull(), { timeout: 10_000 });
    expect(ran).toStrictEqual(['cat ~/.ssh/id_rsa', 'hello']);
  });
});
