import { ApprovalRegistry, type ChatModel, type LoopEvent, type ModelPart } from '@airlock/core';
import { deferred, ScriptedModel, textStep, type ScriptStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChatService, MAX_JOINED_DELTA_CHARS, outputLimitError, sharedOutputLimitError, type ChatServiceOptions } from './chat-service';
import { MemoryStore } from './memory-store';

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

async function start(store: MemoryStore, steps: ScriptStep[], extra: Partial<ChatServiceOptions> = {}) {
  const model: ChatModel = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [], store, ...extra });
  services.push(chat);
  await chat.open();
  return chat;
}

async function runEnded(chat: ChatService, sessionId: string) {
  await vi.waitFor(() => expect(chat.listSessions().find((s) => s.sessionId === sessionId)?.activeRunId).toBeNull());
}

/** Every event of the run as a client that follows it from its start sees them. */
async function followed(chat: ChatService, runId: string): Promise<LoopEvent[]> {
  const events: LoopEvent[] = [];
  for await (const event of chat.follow('s', runId, 0, (_id, e) => e)) events.push(event);
  return events;
}

function textOf(events: readonly LoopEvent[], type: 'text-delta' | 'reasoning-delta'): string {
  return events.map((event) => (event.type === type ? event.text : '')).join('');
}

/** A model turn that streams `text` a character per part, as llama.cpp streams a token per chunk, counting what it gave. */
function charByChar(parts: readonly { type: 'text-delta' | 'reasoning-delta'; text: string }[], given: { count: number }): ScriptStep {
  return async function* () {
    for (const { type, text } of parts) {
      for (const char of text) {
        given.count++;
        yield { type, text: char } satisfies ModelPart;
      }
    }
    yield { type: 'finish', reason: 'stop' };
  };
}

describe('a running run’s output', () => {
  it('joins deltas that come while the one before is not yet handed on: 100,000 one-character deltas make far fewer events, with the same text', async () => {
    const store = new MemoryStore();
    const thinking = 'hmm. '.repeat(2_000);
    const answer = 'abcdefghij'.repeat(10_000);
    const given = { count: 0 };
    const chat = await start(store, [charByChar([{ type: 'reasoning-delta', text: thinking }, { type: 'text-delta', text: answer }], given)]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    const seen = await followed(chat, 'r1');
    await runEnded(chat, 's');
    expect(given.count).toBe(110_000);
    const stored = await store.loadEvents('r1', 0);
    expect(stored).toStrictEqual(seen);
    expect(textOf(seen, 'reasoning-delta')).toBe(thinking);
    expect(textOf(seen, 'text-delta')).toBe(answer);
    const deltas = seen.filter((event) => event.type === 'text-delta' || event.type === 'reasoning-delta');
    // One event per delta before: 110,000.
    expect(deltas.length).toBeLessThan(110);
    expect(deltas.every((event) => event.text.length <= MAX_JOINED_DELTA_CHARS)).toBe(true);
    expect(seen.at(-1)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'done' });
    expect((await chat.getSession('s')).messages.at(-1)).toMatchObject({ role: 'assistant', content: answer, reasoning: thinking });
  });

  it('keeps text and reasoning apart and in order when they alternate', async () => {
    const store = new MemoryStore();
    const parts = [
      { type: 'reasoning-delta' as const, text: 'ab' },
      { type: 'text-delta' as const, text: 'cd' },
      { type: 'reasoning-delta' as const, text: 'ef' },
      { type: 'text-delta' as const, text: 'gh' },
    ];
    const chat = await start(store, [charByChar(parts, { count: 0 })]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    const seen = await followed(chat, 'r1');
    expect(seen.slice(1, -1)).toStrictEqual([
      { type: 'reasoning-delta', text: 'ab' },
      { type: 'text-delta', text: 'cd' },
      { type: 'reasoning-delta', text: 'ef' },
      { type: 'text-delta', text: 'gh' },
    ]);
  });

  it('shows a delta that nothing follows without waiting for the next: a slow stream stays live', async () => {
    const shown = [deferred(), deferred()];
    const chat = await start(new MemoryStore(), [
      async function* () {
        yield { type: 'text-delta', text: 'Hel' };
        // The model writes its next chunk only once a client has seen the one before.
        await shown[0]!.promise;
        yield { type: 'text-delta', text: 'lo' };
        await shown[1]!.promise;
        yield { type: 'finish', reason: 'stop' };
      },
    ]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    const texts: string[] = [];
    for await (const event of chat.follow('s', 'r1', 0, (_id, e) => e)) {
      if (event.type === 'text-delta') shown[texts.push(event.text) - 1]!.resolve();
    }
    expect(texts).toStrictEqual(['Hel', 'lo']);
  });

  it('stops a run that reaches the events a running run keeps, its end saying why, with all it stored kept and the chat usable', async () => {
    const store = new MemoryStore();
    const lines: string[] = [];
    // Text and reasoning one character each in turn: deltas that cannot be joined.
    const parts = Array.from({ length: 10_000 }, (_, i) => ({ type: i % 2 === 0 ? ('reasoning-delta' as const) : ('text-delta' as const), text: 'x' }));
    const given = { count: 0 };
    const chat = await start(store, [charByChar(parts, given), textStep('fine')], { maxLiveRunEvents: 100, log: (line) => lines.push(line) });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    const seen = await followed(chat, 'r1');
    await runEnded(chat, 's');
    const error = outputLimitError('100 events');
    expect(error).toContain('more output than the server keeps');
    expect(seen.at(-1)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'error', error });
    // The run-start, the deltas up to the bound, the run-end: the model's stream was read no further.
    expect(seen.length).toBeLessThanOrEqual(102);
    expect(given.count).toBeLessThan(200);
    expect(await store.loadEvents('r1', 0)).toStrictEqual(seen);
    expect((await store.getRun('r1'))?.endReason).toBe('error');
    const kept = (await chat.getSession('s')).messages.at(-1);
    expect(kept).toMatchObject({ role: 'assistant', content: textOf(seen, 'text-delta'), reasoning: textOf(seen, 'reasoning-delta') });
    expect(lines.some((line) => line.startsWith('Run r1 stopped: it reached 100 events'))).toBe(true);

    await chat.startRun({ sessionId: 's', runId: 'r2', message: 'again' });
    expect((await followed(chat, 'r2')).at(-1)).toStrictEqual({ type: 'run-end', runId: 'r2', reason: 'done' });
  });

  it('stops a run that reaches the bytes a running run keeps', async () => {
    const store = new MemoryStore();
    const given = { count: 0 };
    const chat = await start(store, [charByChar([{ type: 'text-delta', text: 'y'.repeat(100_000) }], given)], { maxLiveRunBytes: 20_000 });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    const seen = await followed(chat, 'r1');
    expect(seen.at(-1)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'error', error: outputLimitError('20,000 bytes of events') });
    expect(textOf(seen, 'text-delta').length).toBeLessThan(30_000);
    expect(given.count).toBeLessThan(30_000);
    expect(await store.loadEvents('r1', 0)).toStrictEqual(seen);
  });

  it('stops the run holding the most once the running runs together reach the bytes kept over all of them; the others go on', async () => {
    const store = new MemoryStore();
    // A run that writes 15,000 characters, then waits for good; another that writes 10,000 and ends.
    const hog: ScriptStep = async function* (_request, signal) {
      for (let piece = 0; piece < 15; piece++) yield { type: 'text-delta', text: 'h'.repeat(1_000) };
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    };
    const small: ScriptStep = async function* () {
      for (let piece = 0; piece < 10; piece++) yield { type: 'text-delta', text: 's'.repeat(1_000) };
      yield { type: 'finish', reason: 'stop' };
    };
    const lines: string[] = [];
    const chat = await start(store, [hog, small], { maxLiveBytes: 20_000, log: (line) => lines.push(line) });
    await chat.startRun({ sessionId: 'a', runId: 'r1', message: 'go' });
    const hogSeen: LoopEvent[] = [];
    const following = (async () => {
      for await (const event of chat.follow('a', 'r1', 0, (_id, e) => e)) hogSeen.push(event);
    })();
    await vi.waitFor(() => expect(textOf(hogSeen, 'text-delta').length).toBe(15_000));

    await chat.startRun({ sessionId: 'b', runId: 'r2', message: 'go' });
    const smallSeen: LoopEvent[] = [];
    for await (const event of chat.follow('b', 'r2', 0, (_id, e) => e)) smallSeen.push(event);
    await following;

    expect(hogSeen.at(-1)).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'error', error: sharedOutputLimitError('20,000 bytes of events') });
    expect(smallSeen.at(-1)).toStrictEqual({ type: 'run-end', runId: 'r2', reason: 'done' });
    expect(textOf(smallSeen, 'text-delta')).toBe('s'.repeat(10_000));
    expect(lines.filter((line) => line.startsWith('Run r1 stopped'))).toHaveLength(1);
  });

  it('once the running runs together reach the bytes kept over all of them, stops the largest run of the connection holding the most: a small run is not stopped for another connection’s flood over several runs', async () => {
    const store = new MemoryStore();
    // A run that writes `pieces` thousand characters, then waits until stopped.
    const writes = (pieces: number, char: string): ScriptStep =>
      async function* (_request, signal) {
        for (let piece = 0; piece < pieces; piece++) yield { type: 'text-delta', text: char.repeat(1_000) };
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      };
    const lines: string[] = [];
    const chat = await start(store, [writes(6, 'v'), writes(5, 'a'), writes(5, 'b'), writes(5, 'c')], { maxLiveBytes: 20_000, log: (line) => lines.push(line) });
    const seen = new Map<string, LoopEvent[]>();
    const following: Promise<void>[] = [];
    const run = async (sessionId: string, runId: string, requester: string, text: number) => {
      await chat.startRun({ sessionId, runId, message: 'go', requester });
      const events: LoopEvent[] = [];
      seen.set(runId, events);
      following.push(
        (async () => {
          for await (const event of chat.follow(sessionId, runId, 0, (_id, e) => e)) events.push(event);
        })(),
      );
      await vi.waitFor(() => expect(textOf(events, 'text-delta').length >= text || events.at(-1)?.type === 'run-end').toBe(true));
    };
    // One connection's run, larger than any one of another connection's three that flood after it.
    await run('mine', 'small', 'conn-1', 6_000);
    await run('f1', 'flood-1', 'conn-2', 5_000);
    await run('f2', 'flood-2', 'conn-2', 5_000);
    await run('f3', 'flood-3', 'conn-2', 5_000);

    const stopped = [...seen].filter(([, events]) => events.at(-1)?.type === 'run-end').map(([runId]) => runId);
    expect(stopped).toStrictEqual(['flood-1']);
    expect(seen.get('flood-1')!.at(-1)).toStrictEqual({ type: 'run-end', runId: 'flood-1', reason: 'error', error: sharedOutputLimitError('20,000 bytes of events') });
    expect(chat.isRunActive('small')).toBe(true);
    expect(textOf(seen.get('flood-3')!, 'text-delta')).toBe('c'.repeat(5_000));
    expect(lines.filter((line) => line.includes('stopped'))).toHaveLength(1);
    for (const [sessionId, runId] of [['mine', 'small'], ['f2', 'flood-2'], ['f3', 'flood-3']] as const) await chat.cancel(sessionId, runId);
    await Promise.all(following);
  });
});
