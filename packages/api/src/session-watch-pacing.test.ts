import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel, textStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatService, type SessionChange } from './chat-service';
import { ConnectionState } from './context';
import { appRouter, createCallerFactory } from './router';
import { ManualWindow } from './test-support';

const createCaller = createCallerFactory(appRouter);
const services: ChatService[] = [];

afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});


describe('sessions.watch on a connection with a send window', () => {
  it('holds its changes while the window is shut and sends them once it opens; a stop gives its place back', async () => {
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([textStep('hi')]), tools: () => [] });
    services.push(chat);
    const window = new ManualWindow();
    const connection = new ConnectionState('c1', { sendWindow: window, maxSubscriptions: 2 });
    const controller = new AbortController();
    const caller = createCaller(
      { services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 't', baseURL: null, model: 't', demo: false }) }, connection },
      { signal: controller.signal },
    );
    const watch = (await caller.sessions.watch())[Symbol.asyncIterator]();
    expect(await watch.next()).toStrictEqual({ done: false, value: { type: 'ready' } });
    expect(connection.openSubscriptions).toBe(1);

    window.open = false;
    let arrived = false;
    const next = watch.next().then((result) => {
      arrived = true;
      return result;
    });
    const stream = (await caller.chat.stream({ sessionId: 's1', runId: 'r1', message: 'hello' }))[Symbol.asyncIterator]();
    // A stream opens at its first read, as tRPC makes at once for a subscription it takes.
    const firstRead = stream.next();
    expect(connection.openSubscriptions).toBe(2);
    // Both wait for the window: the watch's change and the stream's first event.
    await expect.poll(() => window.parked.size).toBe(2);
    expect(arrived).toBe(false);

    window.reopen();
    expect(await next).toMatchObject({ done: false, value: { type: 'session-changed', session: { sessionId: 's1' } } });
    await watch.return?.();
    await stream.return?.();
    expect(((await firstRead).value as unknown as [string, unknown])[1]).toMatchObject({ type: 'run-start', runId: 'r1' });
    expect(connection.openSubscriptions).toBe(0);
  });
});

/** A chat service that only tells its one session watcher what the test says (the watch uses nothing else of it). */
function scriptedChanges() {
  let listener: ((change: SessionChange) => void) | undefined;
  const chat = {
    watchSessions(added: (change: SessionChange) => void) {
      listener = added;
      return () => (listener = undefined);
    },
  };
  return { chat: chat as unknown as ChatService, tell: (change: SessionChange) => listener?.(change), listening: () => listener !== undefined };
}

function callerOn(chat: ChatService, connection: ConnectionState, signal?: AbortSignal) {
  return createCaller(
    { services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 't', baseURL: null, model: 't', demo: false }) }, connection },
    signal === undefined ? {} : { signal },
  );
}

describe('sessions.watch for a slow client', () => {
  it('keeps up to 1000 changes while its window is shut; past that, they make a single "ready", then the changes after it', async () => {
    const { chat, tell } = scriptedChanges();
    const window = new ManualWindow();
    const watch = (await callerOn(chat, new ConnectionState('c1', { sendWindow: window })).sessions.watch())[Symbol.asyncIterator]();
    expect(await watch.next()).toStrictEqual({ done: false, value: { type: 'ready' } });
    // A burst is told in a batch after the first change (see ChangeFanOut): a watch told after this one shows when it came.
    const observer = (await callerOn(chat, new ConnectionState('c2')).sessions.watch())[Symbol.asyncIterator]();
    expect(await observer.next()).toStrictEqual({ done: false, value: { type: 'ready' } });
    const told = async (last: SessionChange) => {
      for (;;) {
        const seen = await observer.next();
        if (seen.done === true || seen.value.type === 'ready' || JSON.stringify(seen.value) === JSON.stringify(last)) return;
      }
    };
    const change = (n: number): SessionChange => ({ type: 'waiting-changed', sessionId: `s${n}` });

    window.open = false;
    const kept = watch.next();
    for (let n = 0; n < 1000; n++) tell(change(n));
    await told(change(999));
    await expect.poll(() => window.parked.size).toBe(1);
    window.reopen();
    expect(await kept).toStrictEqual({ done: false, value: change(0) });
    for (let n = 1; n < 1000; n++) expect(await watch.next()).toStrictEqual({ done: false, value: change(n) });

    window.open = false;
    const collapsed = watch.next();
    for (let n = 0; n < 1001; n++) tell(change(n));
    await told(change(1000));
    await expect.poll(() => window.parked.size).toBe(1);
    window.reopen();
    expect(await collapsed).toStrictEqual({ done: false, value: { type: 'ready' } });
    const after = watch.next();
    tell(change(2000));
    expect(await after).toStrictEqual({ done: false, value: change(2000) });
    await watch.return?.();
    await observer.return?.();
  });

  it('ends when its subscription is stopped: it stops listening and gives its place back', async () => {
    const { chat, listening } = scriptedChanges();
    const connection = new ConnectionState('c1');
    const controller = new AbortController();
    const watch = (await callerOn(chat, connection, controller.signal).sessions.watch())[Symbol.asyncIterator]();
    expect(await watch.next()).toStrictEqual({ done: false, value: { type: 'ready' } });
    const waiting = watch.next();
    controller.abort();
    expect(await waiting).toStrictEqual({ done: true, value: undefined });
    expect([listening(), connection.openSubscriptions]).toStrictEqual([false, 0]);
  });

  it('is refused with TOO_MANY_REQUESTS when the connection holds its most subscriptions, and takes no place', async () => {
    const { chat } = scriptedChanges();
    const connection = new ConnectionState('c1', { maxSubscriptions: 1 });
    const caller = callerOn(chat, connection);
    const first = (await caller.sessions.watch())[Symbol.asyncIterator]();
    await first.next();
    const second = (await caller.sessions.watch())[Symbol.asyncIterator]();
    await expect(second.next()).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    expect(connection.openSubscriptions).toBe(1);
    await first.return?.();
    expect(connection.openSubscriptions).toBe(0);
  });
});
