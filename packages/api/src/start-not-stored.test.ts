import { ApprovalRegistry, type LoopEvent } from '@airlock/core';
import { ScriptedModel, textStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatService } from './chat-service';
import { ConnectionState } from './context';
import { MemoryStore } from './memory-store';
import { appRouter, createCallerFactory } from './router';
import { DISK_FULL, echoTool } from './test-support';

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

/** A store whose disk is full while `state.full`: the one write that starts a run is refused. */
function fullStore() {
  const store = Object.assign(new MemoryStore(), { isUnavailable: (error: unknown) => error instanceof Error && error.message === DISK_FULL });
  const state = { full: true };
  const beginRun = store.beginRun.bind(store);
  store.beginRun = (beginning) => (state.full ? Promise.reject(new Error(DISK_FULL)) : beginRun(beginning));
  return { store, state };
}

async function startChat(store: MemoryStore) {
  const model = new ScriptedModel([textStep('hi')]);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [echoTool([])], store });
  services.push(chat);
  await chat.open();
  const caller = createCallerFactory(appRouter)({
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c1'),
  });
  return { chat, caller };
}

/** The events of a stream up to its run-end; rejects when the stream fails, or when it ends without a run-end. */
async function untilEnd(stream: AsyncIterable<unknown>): Promise<LoopEvent[]> {
  const events: LoopEvent[] = [];
  for await (const item of stream) {
    const event = (item as [string, LoopEvent])[1];
    events.push(event);
    if (event.type === 'run-end') return events;
  }
  throw new Error(`the stream ended without a run-end, after ${JSON.stringify(events)}`);
}

describe('ChatService when a message cannot be stored', () => {
  it('a start refused as its write could not be stored leaves nothing of the run, and sent again once space is back runs once with the message once', async () => {
    const { store, state } = fullStore();
    const { chat, caller } = await startChat(store);
    const input = { sessionId: 's', runId: 'r1', message: 'go' };
    await expect(caller.chat.stream(input).then(untilEnd)).rejects.toThrow();
    expect(chat.listSessions().find((s) => s.sessionId === 's')).toMatchObject({ activeRunId: null, lastRunId: null });
    expect(await store.hasRun('r1')).toBe(false);
    expect(await store.loadMessages('s')).toStrictEqual([]);

    state.full = false;
    const events = await caller.chat.stream(input).then(untilEnd);
    expect(events.at(-1)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'done' });
    expect((await chat.getSession('s')).messages).toStrictEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'hi' },
    ]);
    expect(await store.getRun('r1')).toMatchObject({ endReason: 'done' });
  });
});
