import { appRouter, ChatService, ConnectionState, createCallerFactory, type LoopEvent } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { hangingStep, ScriptedModel, textStep, type ScriptStep } from '@airlock/core/testing';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { storeImplementations, type OpenedStore } from './store-implementations';

const implementations = await storeImplementations();

/** A chat service over `opened`'s store with its router caller; shut down on dispose, before the store closes. */
async function serve(opened: OpenedStore, steps: ScriptStep[], finishedRunTtlMs?: number) {
  const model = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [], store: opened.store, ...(finishedRunTtlMs === undefined ? {} : { finishedRunTtlMs }) });
  await chat.open();
  const caller = createCallerFactory(appRouter)({
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c1'),
  });
  return { chat, caller, model, [Symbol.asyncDispose]: () => chat.shutdown() };
}

/** A run's events from a stream, up to the first that `until` matches. */
async function read(stream: AsyncIterable<unknown>, until: (event: LoopEvent) => boolean): Promise<{ id: string; event: LoopEvent }[]> {
  const seen: { id: string; event: LoopEvent }[] = [];
  for await (const item of stream) {
    const [id, event] = item as [string, LoopEvent];
    seen.push({ id, event });
    if (until(event)) break;
  }
  return seen;
}

const refused = (runId: string, what: 'another message' | 'other options') => ({
  code: 'CONFLICT',
  message: `runId: run "${runId}" already exists with ${what}; start a new run with a new runId`,
});

describe.each(implementations)('a start naming a run that exists: $name', ({ open, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('with the run’s own message and options (a retry) re-attaches to the run going; with another message or other options it is refused', async () => {
    await using opened = await open();
    await using served = await serve(opened, [hangingStep('thinking')]);
    const { caller, chat } = served;
    const input = { sessionId: 's', runId: 'run-going', message: 'look around', options: { maxToolCalls: 5, confirmToolCalls: true } };
    const first = await read(await caller.chat.stream(input), (event) => event.type === 'text-delta');

    // The same start again, its options' fields in another order: the events it missed, and no second run.
    const again = await read(await caller.chat.stream({ ...input, options: { confirmToolCalls: true, maxToolCalls: 5 } }), (event) => event.type === 'text-delta');
    expect(again).toStrictEqual(first);
    await expect(read(await caller.chat.stream({ ...input, message: 'delete everything' }), () => true)).rejects.toMatchObject(refused('run-going', 'another message'));
    await expect(read(await caller.chat.stream({ ...input, options: { maxToolCalls: 6, confirmToolCalls: true } }), () => true)).rejects.toMatchObject(refused('run-going', 'other options'));
    await expect(read(await caller.chat.stream({ sessionId: 's', runId: 'run-going', message: 'look around' }), () => true)).rejects.toMatchObject(refused('run-going', 'other options'));
    // An attach names no message: it re-attaches as before.
    expect(await read(await caller.chat.stream({ sessionId: 's', runId: 'run-going' }), (event) => event.type === 'text-delta')).toStrictEqual(first);

    expect(await caller.chat.cancel({ sessionId: 's', runId: 'run-going' })).toStrictEqual({ cancelled: 1 });
    await vi.waitFor(() => expect(chat.isRunActive('run-going')).toBe(false));
    expect((await chat.getSession('s')).messages.filter((message) => message.role === 'user')).toStrictEqual([{ role: 'user', content: 'look around' }]);
  });

  it('with the run’s own message re-attaches to a finished run read back from the store; with another message it is refused and nothing is sent', async () => {
    await using opened = await open();
    // Forgotten from memory at its end (ttl 0): a start again finds the run in the store only.
    await using served = await serve(opened, [textStep('once')], 0);
    const { caller, chat, model } = served;
    const input = { sessionId: 's', runId: 'run-done', message: 'say hi' };
    const first = await read(await caller.chat.stream(input), (event) => event.type === 'run-end');
    await vi.waitFor(() => expect(chat.isRunActive('run-done')).toBe(false));

    expect(await read(await caller.chat.stream(input), (event) => event.type === 'run-end')).toStrictEqual(first);
    await expect(read(await caller.chat.stream({ ...input, message: 'say bye' }), () => true)).rejects.toMatchObject(refused('run-done', 'another message'));
    await expect(read(await caller.chat.stream({ ...input, options: { confirmToolCalls: false } }), () => true)).rejects.toMatchObject(refused('run-done', 'other options'));

    model.assertConsumed();
    expect((await chat.getSession('s')).messages).toStrictEqual([
      { role: 'user', content: 'say hi' },
      { role: 'assistant', content: 'once' },
    ]);
  });
});
