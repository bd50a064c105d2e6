import { ApprovalRegistry, type ChatModel } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChatService } from './chat-service';
import { MemoryStore } from './memory-store';
import { echoTool } from './test-support';
import type { AirlockStore, AppendEventInput } from './store';

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

const KILLED = 'the process was killed';

/**
 * A store whose process is killed as it writes a person's decision: that write and everything after it are lost
 * (they fail), what was written before stays in `kept`, which a restarted process opens.
 */
function killedAtDecision() {
  const kept = new MemoryStore();
  let killed = false;
  const decides = (input: AppendEventInput) => input.event.type === 'tool-decision' && input.event.approvalId !== '';
  const store = new Proxy(kept, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (!killed && key === 'appendEvent' && decides(args[0] as AppendEventInput)) killed = true;
        if (!killed && key === 'appendEvents' && (args[0] as AppendEventInput[]).some(decides)) killed = true;
        return killed ? Promise.reject(new Error(KILLED)) : (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: store as AirlockStore, kept };
}

async function open(store: AirlockStore, steps: ScriptStep[], ran: string[]) {
  const model: ChatModel = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [echoTool(ran)], store, suspendRunsOnShutdown: true });
  await chat.open();
  return chat;
}

const echoCall = (text: string, id?: string) => toolCallStep({ name: 'echo', arguments: { text }, ...(id === undefined ? {} : { id }) });

describe('ChatService when the process dies during an "Always allow"', () => {
  it('keeps neither the grant nor the allow: after the restart the call waits, a deny of it leaves no grant, and the same call is asked again', async () => {
    const { store, kept } = killedAtDecision();
    const ran: string[] = [];
    const before = await open(store, [echoCall('ls'), textStep('done')], ran);
    await before.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(before.pending('s')).toHaveLength(1), { timeout: 15_000 });
    const approvalId = before.pending('s')[0]!.approvalId;
    await expect(before.confirm({ sessionId: 's', approvalId, decision: 'allow', always: true })).rejects.toThrow(KILLED);
    await before.shutdown().catch(() => undefined);

    // Restarted on what was written before the kill. Before, the grant was written on its own first: it was listed
    // here, beside its call still waiting, and outlived the deny below.
    const after = await open(kept, [textStep('noted'), echoCall('ls'), textStep('done')], ran);
    services.push(after);
    expect(after.listGrants('s')).toStrictEqual([]);
    expect(await kept.listGrants()).toStrictEqual([]);
    expect(after.pending('s').map((p) => p.approvalId)).toStrictEqual([approvalId]);

    expect(await after.confirm({ sessionId: 's', approvalId, decision: 'deny' })).toMatchObject({ resolved: true, decision: 'deny' });
    await vi.waitFor(() => expect(after.listSessions().find((s) => s.sessionId === 's')?.activeRunId).toBeNull(), { timeout: 15_000 });
    // The same call again: no grant lets it through, it waits for the person.
    await after.startRun({ sessionId: 's', runId: 'r2', message: 'again' });
    await vi.waitFor(() => expect(after.pending('s')).toHaveLength(1), { timeout: 15_000 });
    expect(after.pending('s')[0]!.approvalId).not.toBe(approvalId);
    expect(after.listGrants('s')).toStrictEqual([]);
    expect(ran).toStrictEqual([]);
  });

  it('a grant written with its allow lets the run\'s next call of the tool through unasked, and is kept', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const chat = await open(store, [echoCall('ls', 'call_a'), echoCall('pwd', 'call_b'), textStep('done')], ran);
    services.push(chat);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 15_000 });
    const decided = await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow', always: true });
    expect(decided).toMatchObject({ resolved: true, decision: 'allow', grant: { toolName: 'echo' } });
    await vi.waitFor(() => expect(chat.listSessions().find((s) => s.sessionId === 's')?.activeRunId).toBeNull(), { timeout: 15_000 });
    expect(ran).toStrictEqual(['ls', 'pwd']);
    const [grant] = chat.listGrants('s');
    expect((await store.listGrants()).map((kept) => kept.grantId)).toStrictEqual([grant!.grantId]);
    expect((await chat.getSession('s')).toolCalls.map((call) => [call.decision, call.source, call.decidedByGrant])).toStrictEqual([
      ['allow', 'user', null],
      ['allow', 'grant', grant!.grantId],
    ]);
  });
});
