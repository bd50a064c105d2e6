import { ApprovalRegistry, type ChatModel } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChatService } from './chat-service';
import { MemoryStore } from './memory-store';
import type { AppendEventInput } from './store';
import { echoTool } from './test-support';

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

/** What one write held: its events with their ledger changes, or the name of a write that is not of events. */
function described(inputs: readonly AppendEventInput[]): string {
  return inputs
    .map((input) => [input.event.type, input.ledger?.kind, input.ledger?.kind === 'decision' ? input.ledger.decision : undefined, input.messages === undefined ? undefined : `${input.messages.length} message`].filter((part) => part !== undefined).join(' '))
    .join(' + ');
}

/**
 * A store that logs every write, in the order made, into `log`. The SQLite store syncs a write of events only when it
 * lets a call run (an allow, a call's start), and every write that is not of events.
 */
function loggingStore(log: string[]) {
  const store = new MemoryStore();
  const one = store.appendEvent.bind(store);
  const many = store.appendEvents.bind(store);
  // The memory store writes a burst through appendEvent, one event at a time: logged once, as the burst.
  let inBurst = false;
  store.appendEvent = (input) => {
    if (!inBurst) log.push(described([input]));
    return one(input);
  };
  store.appendEvents = async (inputs) => {
    log.push(described(inputs));
    inBurst = true;
    try {
      await many(inputs);
    } finally {
      inBurst = false;
    }
  };
  for (const name of ['appendMessage', 'createRun', 'endRun', 'createSession', 'updateSession', 'saveGrant', 'saveRule', 'recordRuleHit', 'setSetting'] as const) {
    const write = (store[name] as (...args: unknown[]) => Promise<void>).bind(store);
    (store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      log.push(name);
      return write(...args);
    };
  }
  return store;
}

describe('an allowed call', () => {
  it('is written once before its tool runs (its allow with its start), and its end with the answer to the model once after', async () => {
    const log: string[] = [];
    const store = loggingStore(log);
    const model: ChatModel = new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'the tool runs' } }), textStep('done')]);
    // The tool writes its text to the same log when it runs.
    const tool = echoTool(log);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [tool], store });
    services.push(chat);
    await chat.open();
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 10_000 });
    log.length = 0;
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await vi.waitFor(() => expect(log).toContain('tool-end end 1 message'), { timeout: 10_000 });
    // Each write the SQLite store would sync costs a disk sync (0.3–1 ms or more) on the path of every allow.
    expect(log.slice(0, log.indexOf('tool-end end 1 message') + 1)).toStrictEqual(['tool-decision decision allow + status running', 'the tool runs', 'tool-end end 1 message']);
  });
});
