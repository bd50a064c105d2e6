import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel, textStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatService, type SessionChange } from './chat-service';
import { ConnectionState, MAX_WATCHES_PER_KIND, type ConnectionOptions } from './context';
import { CHANGE_BURST, CHANGES_PER_MINUTE } from './connection-rates';
import { MemoryStore } from './memory-store';
import { appRouter, createCallerFactory } from './router';
import { ManualWindow } from './test-support';
import { ToolSettingsService } from './tool-settings-service';

const createCaller = createCallerFactory(appRouter);
const services: ChatService[] = [];

afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

function setup(options: ConnectionOptions = {}) {
  const store = new MemoryStore();
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([textStep('hi')]), tools: () => [], store });
  services.push(chat);
  const settings = new ToolSettingsService(store);
  const controller = new AbortController();
  const connection = new ConnectionState('c1', options);
  const caller = createCaller(
    { services: { chat, settings, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 't', baseURL: null, model: 't', demo: false }) }, connection },
    { signal: controller.signal },
  );
  return { chat, caller, connection, stop: () => controller.abort() };
}

/** A chat with one finished run, for changes to name. */
async function newChat(caller: ReturnType<typeof setup>['caller'], sessionId: string): Promise<void> {
  for await (const _ of await caller.chat.stream({ sessionId, runId: `${sessionId}-r1`, message: 'hello' })) void _;
}

describe('watches per connection', () => {
  it(`admits ${MAX_WATCHES_PER_KIND} session watches and ${MAX_WATCHES_PER_KIND} settings watches, refuses the one over with TOO_MANY_REQUESTS, and counts each kind apart`, async () => {
    const { caller, connection, stop } = setup();
    const sessions = [];
    for (let n = 0; n < MAX_WATCHES_PER_KIND; n++) {
      const watch = (await caller.sessions.watch())[Symbol.asyncIterator]();
      expect(await watch.next()).toStrictEqual({ done: false, value: { type: 'ready' } });
      sessions.push(watch);
    }
    const over = (await caller.sessions.watch())[Symbol.asyncIterator]();
    await expect(over.next()).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS', message: `limit exceeded: at most ${MAX_WATCHES_PER_KIND} watches of the chat list open at once per connection` });
    expect(connection.openSubscriptions).toBe(MAX_WATCHES_PER_KIND);

    for (let n = 0; n < MAX_WATCHES_PER_KIND; n++) {
      const watch = (await caller.settings.watch())[Symbol.asyncIterator]();
      expect((await watch.next()).done).toBe(false);
    }
    const overSettings = (await caller.settings.watch())[Symbol.asyncIterator]();
    await expect(overSettings.next()).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    expect(connection.openSubscriptions).toBe(2 * MAX_WATCHES_PER_KIND);

    // A watch that ends gives its place back.
    await sessions[0]?.return?.();
    const again = (await caller.sessions.watch())[Symbol.asyncIterator]();
    expect(await again.next()).toStrictEqual({ done: false, value: { type: 'ready' } });
    stop();
  });

  it('refuses a watch over the subscriptions cap without taking a place of its kind', async () => {
    const { caller, connection, stop } = setup({ maxSubscriptions: MAX_WATCHES_PER_KIND });
    const settings = (await caller.settings.watch())[Symbol.asyncIterator]();
    await settings.next();
    for (let n = 1; n < MAX_WATCHES_PER_KIND; n++) await (await caller.sessions.watch())[Symbol.asyncIterator]().next();
    const refused = (await caller.sessions.watch())[Symbol.asyncIterator]();
    await expect(refused.next()).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS', message: `limit exceeded: at most ${MAX_WATCHES_PER_KIND} subscriptions open at once per connection` });
    await settings.return?.();
    const last = (await caller.sessions.watch())[Symbol.asyncIterator]();
    expect(await last.next()).toStrictEqual({ done: false, value: { type: 'ready' } });
    expect(connection.openSubscriptions).toBe(MAX_WATCHES_PER_KIND);
    stop();
  });
});

describe('changes every watch is told of', () => {
  it(`are refused with TOO_MANY_REQUESTS past ${CHANGE_BURST} back to back on one connection, change nothing, and are admitted again as the budget refills`, async () => {
    let now = 1_000_000;
    const { caller, stop } = setup({ now: () => now });
    // Starting chats is budgeted as messages, not here.
    await newChat(caller, 's1');
    await newChat(caller, 's2');
    for (let n = 0; n < CHANGE_BURST - 2; n++) await caller.sessions.update({ sessionId: 's1', title: `title ${n}` });
    await caller.settings.update({ maxToolCalls: 5 });
    await caller.sessions.delete({ sessionId: 's2' });

    await expect(caller.sessions.update({ sessionId: 's1', title: 'one too many' })).rejects.toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      message: `limit exceeded: at most ${CHANGES_PER_MINUTE} changes to chats and settings per minute per connection, after a burst of ${CHANGE_BURST}`,
    });
    await expect(caller.settings.update({ maxToolCalls: 6 })).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    await expect(caller.sessions.delete({ sessionId: 's1' })).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    const list = (await caller.sessions.list()).sessions;
    expect(list.map((s) => [s.sessionId, s.title])).toStrictEqual([['s1', `title ${CHANGE_BURST - 3}`]]);
    expect((await caller.settings.get()).settings.maxToolCalls).toBe(5);

    now += 60_000 / CHANGES_PER_MINUTE;
    expect((await caller.sessions.update({ sessionId: 's1', title: 'later' })).title).toBe('later');
    await expect(caller.sessions.update({ sessionId: 's1', title: 'again' })).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    stop();
  });

  it('are budgeted per connection: one client over its budget leaves another its own', async () => {
    const first = setup();
    await newChat(first.caller, 's1');
    for (let n = 0; n < CHANGE_BURST; n++) await first.caller.settings.update({ maxToolCalls: 1 + (n % 5) });
    await expect(first.caller.settings.update({ maxToolCalls: 9 })).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    const second = setup();
    expect((await second.caller.settings.update({ maxToolCalls: 9 })).maxToolCalls).toBe(9);
    first.stop();
    second.stop();
  });
});

describe('a session watch parked on a shut send window', () => {
  it('is not woken for each change: the changes wait in its queue and go out once the window opens', async () => {
    let listener: ((change: SessionChange) => void) | undefined;
    const chat = {
      watchSessions(added: (change: SessionChange) => void) {
        listener = added;
        return () => (listener = undefined);
      },
    } as unknown as ChatService;
    let parks = 0;
    const window = new ManualWindow();
    const park = window.park.bind(window);
    window.park = (waiter) => {
      parks++;
      park(waiter);
    };
    const connection = new ConnectionState('c1', { sendWindow: window });
    const caller = createCaller({ services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 't', baseURL: null, model: 't', demo: false }) }, connection });
    const watch = (await caller.sessions.watch())[Symbol.asyncIterator]();
    expect(await watch.next()).toStrictEqual({ done: false, value: { type: 'ready' } });

    window.open = false;
    const kept = watch.next();
    const change = (n: number): SessionChange => ({ type: 'waiting-changed', sessionId: `s${n}` });
    listener?.(change(0));
    await expect.poll(() => window.parked.size).toBe(1);
    for (let n = 1; n < 100; n++) {
      listener?.(change(n));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(parks).toBe(1);

    window.reopen();
    expect(await kept).toStrictEqual({ done: false, value: change(0) });
    for (let n = 1; n < 100; n++) expect(await watch.next()).toStrictEqual({ done: false, value: change(n) });
    await watch.return?.();
    expect(connection.openSubscriptions).toBe(0);
  });
});
