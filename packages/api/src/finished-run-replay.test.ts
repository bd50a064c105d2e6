import { ApprovalRegistry, type LoopEvent } from '@airlock/core';
import { ScriptedModel, textStep } from '@airlock/core/testing';
import { tracked } from '@trpc/server';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatService, MAX_KEPT_FINISHED_BYTES, REPLAY_PAGE, type ChatServiceOptions } from './chat-service';
import { ConnectionState } from './context';
import { MemoryStore } from './memory-store';
import { appRouter, createCallerFactory } from './router';
import type { EventPage } from './store';
import { ManualWindow } from './test-support';

const createCaller = createCallerFactory(appRouter);
const services: ChatService[] = [];

afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.shutdown()));
});

/** A MemoryStore that counts the events its reads of run events answer, and the largest one read. */
class CountingStore extends MemoryStore {
  loaded = 0;
  largestRead = 0;

  override async loadEvents(runId: string, afterSeq: number, page?: EventPage): Promise<LoopEvent[]> {
    const events = await super.loadEvents(runId, afterSeq, page);
    this.loaded += events.length;
    this.largestRead = Math.max(this.largestRead, events.length);
    return events;
  }
}

const RUN_EVENTS = 10_000;
/** REPLAY_PAGE.events: the most one read of a replay takes. */
const PAGE_EVENTS = 100;

/** The text deltas of the long run: seq 2 to RUN_EVENTS - 1. */
const DELTAS = Array.from({ length: RUN_EVENTS - 2 }, (_, index) => `delta ${index + 2} `);

/**
 * A store holding one run of RUN_EVENTS events (run-start, text deltas, run-end) as a restart finds it: finished, or,
 * `unfinished`, stopped while the model wrote its answer (no run-end); `length` events in all (RUN_EVENTS unless said).
 */
async function storeWithFinishedRun(unfinished = false, length = RUN_EVENTS): Promise<CountingStore> {
  const store = new CountingStore();
  await store.createSession({ sessionId: 's1', title: 'long', createdAt: 1, updatedAt: 1, confirmToolCalls: true, lastRunId: 'r1' });
  await store.createRun({ runId: 'r1', sessionId: 's1', options: {}, startedAt: 1, endedAt: null, endReason: null });
  await store.appendMessage('s1', { role: 'user', content: 'go' }, 1, { runId: 'r1' });
  const events: LoopEvent[] = [{ type: 'run-start', runId: 'r1', sessionId: 's1' }, ...DELTAS.slice(0, length - 2).map((text): LoopEvent => ({ type: 'text-delta', text }))];
  if (!unfinished) events.push({ type: 'run-end', runId: 'r1', reason: 'done' });
  await store.appendEvents(events.map((event, index) => ({ runId: 'r1', sessionId: 's1', seq: index + 1, event, at: 1 })));
  if (!unfinished) await store.endRun('r1', 'done', 2);
  store.loaded = 0;
  return store;
}

async function serviceOn(store: MemoryStore, extra: Pick<ChatServiceOptions, 'maxKeptFinishedEvents' | 'maxKeptFinishedBytes'> = {}, steps = [textStep('hello there')]) {
  const model = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [], store, ...extra });
  services.push(chat);
  await chat.open();
  return chat;
}

function callerFor(chat: ChatService, window?: ManualWindow) {
  const connection = new ConnectionState('c1', window === undefined ? {} : { sendWindow: window });
  return createCaller({ services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) }, connection });
}

type Tracked = [string, LoopEvent, ...unknown[]];

async function readAll(iterable: AsyncIterable<unknown>): Promise<{ id: string; event: LoopEvent }[]> {
  const seen: { id: string; event: LoopEvent }[] = [];
  for await (const item of iterable) {
    const [id, event] = item as Tracked;
    seen.push({ id, event });
  }
  return seen;
}

/** Lets every callback already due run (timers aside): what a follower would read without being asked, it reads by then. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 10; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe('replaying a finished run that is only in the store', () => {
  it('reads none of its events for a client attached at its end, and still tells it the run is over', async () => {
    const store = await storeWithFinishedRun();
    const caller = callerFor(await serviceOn(store));
    expect(await readAll(await caller.chat.stream({ sessionId: 's1', lastEventId: `r1:${RUN_EVENTS}` }))).toStrictEqual([]);
    // The old attach read the whole run (10,000 events) into memory for this.
    expect(store.loaded).toBe(0);
    // Past its end is still refused as before, by the number of events it has.
    await expect(readAll(await caller.chat.stream({ sessionId: 's1', lastEventId: `r1:${RUN_EVENTS + 1}` }))).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: `lastEventId: run "r1" has sent ${RUN_EVENTS} events, none numbered ${RUN_EVENTS + 1}`,
    });
    expect(store.loaded).toBe(0);
  });

  it('reads a page at a time, only while the send window is open, and replays every event once, in order, to its end', async () => {
    const store = await storeWithFinishedRun();
    const window = new ManualWindow();
    const caller = callerFor(await serviceOn(store), window);
    const stream = (await caller.chat.stream({ sessionId: 's1', runId: 'r1' }))[Symbol.asyncIterator]();
    const first = await stream.next();
    expect((first.value as unknown as Tracked)[0]).toBe('r1:1');
    expect(store.loaded).toBeLessThanOrEqual(PAGE_EVENTS);

    // A client that stops reading: the window shuts, and nothing more is read for it however long it waits.
    window.open = false;
    const pending = stream.next();
    await expect.poll(() => window.parked.size).toBe(1);
    expect(store.loaded).toBeLessThanOrEqual(PAGE_EVENTS);

    window.reopen();
    const seen = [first.value as unknown as Tracked, (await pending).value as unknown as Tracked];
    for (let next = await stream.next(); next.done !== true; next = await stream.next()) seen.push(next.value as unknown as Tracked);
    expect(seen.map(([id]) => id)).toStrictEqual(Array.from({ length: RUN_EVENTS }, (_, index) => `r1:${index + 1}`));
    expect(seen.at(-1)?.[1]).toStrictEqual({ type: 'run-end', runId: 'r1', reason: 'done' });
    // Each event read once, a page of REPLAY_PAGE.events at most at a time.
    expect(store.loaded).toBe(RUN_EVENTS);
    expect(store.largestRead).toBeLessThanOrEqual(PAGE_EVENTS);
    expect(REPLAY_PAGE.events).toBe(PAGE_EVENTS);
  });

  it('reads a page at a time still when its page reads fail as damaged and its events read alone do not: each is read again alone, a page of them at most', async () => {
    // A failure taken for damage, as a store may take one it cannot tell apart: every event reads alone, and the old
    // code read them all so, to the run's end, before handing on the first.
    const damaged = new Error('a page of run r1: taken for a damaged record');
    const length = 1_000;
    const store = Object.assign(await storeWithFinishedRun(false, length), { damagedRecord: (error: unknown) => (error === damaged ? damaged.message : undefined) });
    const loadEvents = store.loadEvents.bind(store);
    store.loadEvents = async (runId, afterSeq, page) => ((page?.events ?? Infinity) > 1 ? Promise.reject(damaged) : loadEvents(runId, afterSeq, page));
    const caller = callerFor(await serviceOn(store));
    const stream = (await caller.chat.stream({ sessionId: 's1', runId: 'r1' }))[Symbol.asyncIterator]();
    const first = await stream.next();
    expect((first.value as unknown as Tracked)[0]).toBe('r1:1');
    expect(store.loaded).toBeLessThanOrEqual(PAGE_EVENTS);

    const seen = [first.value as unknown as Tracked];
    for (let next = await stream.next(); next.done !== true; next = await stream.next()) seen.push(next.value as unknown as Tracked);
    expect(seen.map(([id]) => id)).toStrictEqual(Array.from({ length }, (_, index) => `r1:${index + 1}`));
    expect(store.loaded).toBe(length);
  });

  it('serves many clients replaying the same run from different points, each exactly what comes after its lastEventId', async () => {
    const store = await storeWithFinishedRun();
    const chat = await serviceOn(store);
    const starts = [0, 1, 99, 100, 101, 499, 9_998, 9_999, RUN_EVENTS];
    const replays = await Promise.all(
      starts.map(async (after) => readAll(await callerFor(chat).chat.stream(after === 0 ? { sessionId: 's1', runId: 'r1' } : { sessionId: 's1', lastEventId: `r1:${after}` }))),
    );
    replays.forEach((replay, index) => {
      const after = starts[index]!;
      expect(replay.map(({ id }) => id)).toStrictEqual(Array.from({ length: RUN_EVENTS - after }, (_, at) => `r1:${after + at + 1}`));
      if (after < RUN_EVENTS) expect(replay.at(-1)?.event.type).toBe('run-end');
    });
  });

  it('ends a stream disposed of as tRPC does when its subscription stops, reading no more pages', async () => {
    const store = await storeWithFinishedRun();
    const caller = callerFor(await serviceOn(store));
    const stream = (await caller.chat.stream({ sessionId: 's1', runId: 'r1' }))[Symbol.asyncIterator]() as AsyncIterator<unknown> & AsyncDisposable;
    expect((await stream.next()).done).toBe(false);
    const loaded = store.loaded;
    await stream[Symbol.asyncDispose]();
    expect(await stream.next()).toStrictEqual({ done: true, value: undefined });
    await settle();
    expect(store.loaded).toBe(loaded);
  });

  it('ends a replay whose client stops at once, reading no more pages', async () => {
    const store = await storeWithFinishedRun();
    const chat = await serviceOn(store);
    await chat.attachable('s1', 'r1');
    const follower = chat.follow('s1', 'r1', 0, (id, event) => tracked(id, event));
    expect((await follower.next()).done).toBe(false);
    const loaded = store.loaded;
    expect(await follower.return()).toStrictEqual({ done: true, value: undefined });
    expect(await follower.next()).toStrictEqual({ done: true, value: undefined });
    await settle();
    expect(store.loaded).toBe(loaded);
  });
});

describe('finished runs kept in memory', () => {
  it('are bounded by their events over all runs, the least recently attached to going first; one let go of is replayed from the store', async () => {
    const store = new MemoryStore();
    const steps = ['one', 'two', 'three', 'four'].map((text) => textStep(text));
    // Learn how many events one such run has, then allow two of them.
    const probe = await serviceOn(new MemoryStore(), {}, [textStep('zero')]);
    const probeEvents = await readAll(await callerFor(probe).chat.stream({ sessionId: 'p', runId: 'p1', message: 'go' }));
    const perRun = probeEvents.length;
    const chat = await serviceOn(store, { maxKeptFinishedEvents: 2 * perRun }, steps);
    const caller = callerFor(chat);
    const live: Record<string, { id: string; event: LoopEvent }[]> = {};
    for (const runId of ['r1', 'r2', 'r3']) live[runId] = await readAll(await caller.chat.stream({ sessionId: 's1', runId, message: 'go' }));
    // r1 went when r3 ended: two runs' events are all that may stay (with the old code all three stayed 10 minutes).
    expect([chat.eventsShown('r1'), chat.eventsShown('r2'), chat.eventsShown('r3')]).toStrictEqual([undefined, perRun, perRun]);

    // Attaching to r2 makes it the most recently used: r3 goes when r4 ends, not r2.
    expect(await chat.attachable('s1', 'r2')).toBe(true);
    live['r4'] = await readAll(await caller.chat.stream({ sessionId: 's1', runId: 'r4', message: 'go' }));
    expect(chat.isRunActive('r3')).toBe(false);
    expect([chat.eventsShown('r2'), chat.eventsShown('r3'), chat.eventsShown('r4')]).toStrictEqual([perRun, undefined, perRun]);

    // A run let go of replays from the store exactly what its client saw live.
    for (const runId of ['r1', 'r3']) {
      expect(await readAll(await caller.chat.stream({ sessionId: 's1', runId }))).toStrictEqual(live[runId]);
    }
  });

  it('are bounded by their size too: a few huge events let older runs go, and a run larger than the bound alone is not kept', async () => {
    const store = new MemoryStore();
    // Three runs of about 100,000 bytes each (one text delta holds most of it), where the bound allows two.
    const huge = (letter: string) => letter.repeat(100_000);
    const steps = [textStep(huge('a')), textStep(huge('b')), textStep(huge('c')), textStep(huge('d').repeat(3))];
    const chat = await serviceOn(store, { maxKeptFinishedBytes: 250_000 }, steps);
    const caller = callerFor(chat);
    const live: Record<string, { id: string; event: LoopEvent }[]> = {};
    for (const runId of ['r1', 'r2', 'r3']) live[runId] = await readAll(await caller.chat.stream({ sessionId: 's1', runId, message: 'go' }));
    const perRun = live['r1']!.length;
    // A handful of events each, far below the bound on events: with events alone counted, all three stayed.
    expect(perRun).toBeLessThan(10);
    expect([chat.eventsShown('r1'), chat.eventsShown('r2'), chat.eventsShown('r3')]).toStrictEqual([undefined, perRun, perRun]);

    // A run of 300,000 bytes does not fit at all: it is not kept, and does not push out the two that are.
    live['r4'] = await readAll(await caller.chat.stream({ sessionId: 's1', runId: 'r4', message: 'go' }));
    expect([chat.eventsShown('r2'), chat.eventsShown('r3'), chat.eventsShown('r4')]).toStrictEqual([perRun, perRun, undefined]);

    // Those let go of replay from the store exactly what their clients saw live.
    for (const runId of ['r1', 'r4']) {
      expect(await readAll(await caller.chat.stream({ sessionId: 's1', runId }))).toStrictEqual(live[runId]);
    }
    expect(MAX_KEPT_FINISHED_BYTES).toBe(64 * 1024 * 1024);
  });
});

describe('a run resumed at start-up', () => {
  it('is read from the store a page at a time, never whole, and every event of it is still there', async () => {
    const store = await storeWithFinishedRun(true);
    // It stopped while the model wrote: it ends after the restart, its partial answer kept.
    const chat = await serviceOn(store, {}, []);
    // The old resume read all 9,999 events in one read.
    expect(store.largestRead).toBeLessThanOrEqual(PAGE_EVENTS);
    expect(store.loaded).toBe(RUN_EVENTS - 1);
    expect((await chat.getSession('s1')).messages).toStrictEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: DELTAS.join('') },
    ]);
    const replay = await readAll(await callerFor(chat).chat.stream({ sessionId: 's1', runId: 'r1' }));
    expect(replay.map(({ id }) => id)).toStrictEqual(Array.from({ length: RUN_EVENTS }, (_, index) => `r1:${index + 1}`));
    expect(replay.at(-1)?.event).toMatchObject({ type: 'run-end', reason: 'error' });
  });
});
