import { ApprovalRegistry, defineTool } from '@airlock/core';
import { deferred, ScriptedModel, textStep } from '@airlock/core/testing';
import { TRPCError } from '@trpc/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ChatService } from './chat-service';
import { ConnectionState, type ConnectionOptions } from './context';
import { MemoryStore } from './memory-store';
import type { AirlockStore } from './store';
import { appRouter, createCallerFactory } from './router';
import { ManualWindow } from './test-support';
import { defaultToolSettings } from './tool-settings';
import { TOOL_SETTINGS_KEY, ToolSettingsService } from './tool-settings-service';

const createCaller = createCallerFactory(appRouter);
const services: ChatService[] = [];

afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

type SettingsStore = Pick<AirlockStore, 'getSetting' | 'setSetting'>;

/** `settingsStore`: how the settings service sees the store (default: the store itself). */
function setup(connection: ConnectionOptions = {}, settingsStore: (store: MemoryStore) => SettingsStore = (store) => store) {
  const store = new MemoryStore();
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [], store });
  services.push(chat);
  const settings = new ToolSettingsService(settingsStore(store));
  const controller = new AbortController();
  const callerOn = (state: ConnectionState) =>
    createCaller(
      {
        services: { chat, settings, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 't', baseURL: null, model: 't', demo: false }) },
        connection: state,
      },
      { signal: controller.signal },
    );
  const state = new ConnectionState('c1', connection);
  return { store, state, settings, caller: callerOn(state), other: callerOn(new ConnectionState('c2')), stop: () => controller.abort() };
}

describe('settings', () => {
  it('answers the defaults while none were saved', async () => {
    const { caller } = setup();
    expect(await caller.settings.get()).toStrictEqual({ settings: defaultToolSettings, saved: false });
  });

  it('saves a patch under one key, keeps the fields it does not name, and answers the new settings', async () => {
    const { caller, other, store } = setup();
    expect(await caller.settings.update({ disabledTools: ['terminal', 'terminal'], maxToolCalls: 7 })).toStrictEqual({
      ...defaultToolSettings,
      disabledTools: ['terminal'],
      maxToolCalls: 7,
    });
    await caller.settings.update({ decisionTimeoutSeconds: 'never' });
    const expected = { ...defaultToolSettings, disabledTools: ['terminal'], maxToolCalls: 7, decisionTimeoutSeconds: 'never' as const };
    expect(await other.settings.get()).toStrictEqual({ settings: expected, saved: true });
    expect(JSON.parse((await store.getSetting(TOOL_SETTINGS_KEY)) ?? 'null')).toStrictEqual(expected);
  });

  it('keeps both of two patches sent together', async () => {
    const { caller } = setup();
    await Promise.all([caller.settings.update({ maxToolCalls: 3 }), caller.settings.update({ notifyDecisions: true })]);
    expect((await caller.settings.get()).settings).toStrictEqual({ ...defaultToolSettings, maxToolCalls: 3, notifyDecisions: true });
  });

  it('refuses a value outside its limits, or a field it does not know, naming it, and saves nothing', async () => {
    const { caller } = setup();
    const refusal = (input: unknown) => caller.settings.update(input as never).then(() => undefined, (error: unknown) => error);
    const tooMany = await refusal({ maxToolCalls: 999 });
    expect(tooMany).toBeInstanceOf(TRPCError);
    expect((tooMany as TRPCError).code).toBe('BAD_REQUEST');
    expect((tooMany as TRPCError).message).toContain('maxToolCalls');
    for (const input of [{ toolCallTimeoutSeconds: 0 }, { decisionTimeoutSeconds: 1.5 }, { disabledTools: [''] }, { notifyDecisions: 'yes' }, { confirmToolCalls: false }]) {
      expect(await refusal(input)).toMatchObject({ code: 'BAD_REQUEST' });
    }
    expect(await caller.settings.get()).toStrictEqual({ settings: defaultToolSettings, saved: false });
  });

  it('clamps what the store holds when it is read: a record written by hand or by an older version', async () => {
    const { caller, store } = setup();
    await store.setSetting(TOOL_SETTINGS_KEY, JSON.stringify({ maxToolCalls: 999, disabledTools: ['python', 7], extra: true }));
    expect((await caller.settings.get()).settings).toStrictEqual({ ...defaultToolSettings, maxToolCalls: 200, disabledTools: ['python'] });
    await store.setSetting(TOOL_SETTINGS_KEY, '{not json');
    expect(await caller.settings.get()).toStrictEqual({ settings: defaultToolSettings, saved: true });
  });

  it('tells a watcher the settings, then each change made by any connection; a stop gives its place back', async () => {
    const { caller, other, state } = setup();
    const watch = (await caller.settings.watch())[Symbol.asyncIterator]();
    expect(await watch.next()).toStrictEqual({ done: false, value: defaultToolSettings });
    expect(state.openSubscriptions).toBe(1);
    const next = watch.next();
    await other.settings.update({ disabledTools: ['terminal'] });
    expect(await next).toStrictEqual({ done: false, value: { ...defaultToolSettings, disabledTools: ['terminal'] } });
    await watch.return?.();
    expect(state.openSubscriptions).toBe(0);
  });

  it('holds only the newest settings for a watcher whose send window is shut', async () => {
    const window = new ManualWindow();
    const { caller, other } = setup({ sendWindow: window });
    const watch = (await caller.settings.watch())[Symbol.asyncIterator]();
    expect(await watch.next()).toStrictEqual({ done: false, value: defaultToolSettings });
    // A second watch, on a connection whose window stays open, watched after the first: once it has heard the last
    // change, so has the first (changes after the first are told in batches, after a pause, to every watch in turn).
    const witness = (await other.settings.watch())[Symbol.asyncIterator]();
    expect(await witness.next()).toStrictEqual({ done: false, value: defaultToolSettings });
    window.open = false;
    const next = watch.next();
    for (const maxToolCalls of [2, 3, 4]) await other.settings.update({ maxToolCalls });
    for (let heard = await witness.next(); heard.value?.maxToolCalls !== 4; heard = await witness.next()) expect(heard.done).toBe(false);
    await witness.return?.();
    expect(window.parked.size).toBe(1);
    window.reopen();
    expect(await next).toStrictEqual({ done: false, value: { ...defaultToolSettings, maxToolCalls: 4 } });
    const after = watch.next();
    await other.settings.update({ maxToolCalls: 5 });
    // The three changes made one item: the next is the change after them.
    expect(await after).toStrictEqual({ done: false, value: { ...defaultToolSettings, maxToolCalls: 5 } });
    await watch.return?.();
  });

  it('refuses a watch when the connection holds its most subscriptions', async () => {
    const { caller } = setup({ maxSubscriptions: 1 });
    const first = (await caller.settings.watch())[Symbol.asyncIterator]();
    await first.next();
    const second = (await caller.settings.watch())[Symbol.asyncIterator]();
    await expect(second.next()).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    await first.return?.();
  });

  it('sends a change made while the watch reads the settings first, not the older settings it read', async () => {
    const reached = deferred();
    const answer = deferred();
    let calls = 0;
    const { caller, other } = setup({}, (store) => ({
      // The watch's first read reads the store, then waits to answer until the change below is saved.
      getSetting: async (key) => {
        const value = await store.getSetting(key);
        if (++calls === 1) {
          reached.resolve();
          await answer.promise;
        }
        return value;
      },
      setSetting: (key, value) => store.setSetting(key, value),
    }));
    const watch = (await caller.settings.watch())[Symbol.asyncIterator]();
    const first = watch.next();
    await reached.promise;
    await other.settings.update({ maxToolCalls: 9 });
    answer.resolve();
    expect(await first).toStrictEqual({ done: false, value: { ...defaultToolSettings, maxToolCalls: 9 } });
    await watch.return?.();
  });

  it('ends a watch when its subscription is stopped: it stops listening and gives its place back', async () => {
    const { caller, state, settings, stop } = setup();
    const watch = (await caller.settings.watch())[Symbol.asyncIterator]();
    expect(await watch.next()).toStrictEqual({ done: false, value: defaultToolSettings });
    const waiting = watch.next();
    stop();
    expect(await waiting).toStrictEqual({ done: true, value: undefined });
    expect([(settings as unknown as { listeners: Set<unknown> }).listeners.size, state.openSubscriptions]).toStrictEqual([0, 0]);
  });
});

describe('a run started with tools turned off in the settings', () => {
  /** A server whose catalog offers `terminal`, `python` and `read_file`, its model answering each run with text. */
  function serverWithTools(runs: number) {
    const store = new MemoryStore();
    const model = new ScriptedModel(Array.from({ length: runs }, () => textStep('ok')));
    const tools = ['terminal', 'python', 'read_file'].map((name) => defineTool({ name, description: name, parameters: z.object({}), execute: async () => name }));
    const settings = new ToolSettingsService(store);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => tools, store, settings });
    services.push(chat);
    const caller = createCaller({
      services: { chat, settings, catalog: { tools: () => tools, servers: () => [] }, modelInfo: () => ({ provider: 't', baseURL: null, model: 't', demo: false }) },
      connection: new ConnectionState('c1'),
    });
    const run = async (sessionId: string, options?: { enabledTools: string[] }) => {
      for await (const item of await caller.chat.stream({ sessionId, message: 'hi', ...(options === undefined ? {} : { options }) })) {
        // A tracked event: its id, then the event.
        if ((item as unknown as [string, { type: string }])[1].type === 'run-end') break;
      }
      return model.requests.at(-1)!.tools.map((tool) => tool.name);
    };
    return { caller, run };
  }

  it('is not offered them, whether the client names no tools (the terminal client) or names them too', async () => {
    const { caller, run } = serverWithTools(3);
    expect(await run('s0')).toStrictEqual(['terminal', 'python', 'read_file']);
    await caller.settings.update({ disabledTools: ['terminal'] });
    expect(await run('s1')).toStrictEqual(['python', 'read_file']);
    expect(await run('s2', { enabledTools: ['terminal', 'read_file'] })).toStrictEqual(['read_file']);
  });
});
