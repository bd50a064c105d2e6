import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel, textStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChatService } from './chat-service';
import { ConnectionState, MAX_WATCHES_PER_KIND } from './context';
import { MemoryStore } from './memory-store';
import { appRouter, createCallerFactory, type SessionWatchEvent } from './router';
import { defaultToolSettings, type ToolSettings } from './tool-settings';
import { ToolSettingsService } from './tool-settings-service';

const createCaller = createCallerFactory(appRouter);
const services: ChatService[] = [];

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

const WATCHERS = 10;
const CHANGERS = 5;
const ROUNDS = 10;

describe('changes told to the watches of many connections', () => {
  it(`a burst of ${CHANGERS * ROUNDS * 2} changes from ${CHANGERS} connections reaches each of ${WATCHERS * MAX_WATCHES_PER_KIND * 2} watches as its first change and then one batch, which ends with the last`, async () => {
    // Time stands still while the changes are made: the pause after the first change runs until the test ends it.
    vi.useFakeTimers({ toFake: ['performance', 'setTimeout', 'clearTimeout'] });
    const store = new MemoryStore();
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([textStep('hi')]), tools: () => [], store });
    services.push(chat);
    const settings = new ToolSettingsService(store);
    const controllers: AbortController[] = [];
    const connect = (id: string) => {
      const controller = new AbortController();
      controllers.push(controller);
      return createCaller(
        { services: { chat, settings, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 't', baseURL: null, model: 't', demo: false }) }, connection: new ConnectionState(id) },
        { signal: controller.signal },
      );
    };
    const author = connect('author');
    for await (const _ of await author.chat.stream({ sessionId: 's1', runId: 'r1', message: 'hello' })) void _;

    const sessionWatches: AsyncIterator<SessionWatchEvent>[] = [];
    const settingsWatches: AsyncIterator<ToolSettings>[] = [];
    for (let w = 0; w < WATCHERS; w++) {
      const watcher = connect(`watcher-${w}`);
      for (let n = 0; n < MAX_WATCHES_PER_KIND; n++) {
        const sessions = (await watcher.sessions.watch())[Symbol.asyncIterator]();
        expect(await sessions.next()).toStrictEqual({ done: false, value: { type: 'ready' } });
        sessionWatches.push(sessions);
        const current = (await watcher.settings.watch())[Symbol.asyncIterator]();
        expect(await current.next()).toStrictEqual({ done: false, value: defaultToolSettings });
        settingsWatches.push(current);
      }
    }

    const lastTitle = `title ${ROUNDS - 1}.${CHANGERS - 1}`;
    const lastSettings = { ...defaultToolSettings, maxToolCalls: ROUNDS * CHANGERS };
    // Each watch is read as tRPC reads it, the next item asked for as soon as one arrives, until the last change.
    const titles = Promise.all(
      sessionWatches.map(async (watch) => {
        const seen: string[] = [];
        while (seen.at(-1) !== lastTitle) {
          const next = await watch.next();
          if (next.done === true) throw new Error('the watch ended');
          seen.push(next.value.type === 'session-changed' ? next.value.session.title : next.value.type);
        }
        return seen;
      }),
    );
    const maxToolCalls = Promise.all(
      settingsWatches.map(async (watch) => {
        const seen: ToolSettings[] = [];
        while (seen.at(-1)?.maxToolCalls !== lastSettings.maxToolCalls) seen.push((await watch.next()).value as ToolSettings);
        expect(seen.at(-1)).toStrictEqual(lastSettings);
        return seen.map((value) => value.maxToolCalls);
      }),
    );

    const changers = Array.from({ length: CHANGERS }, (_, c) => connect(`changer-${c}`));
    const made: Promise<unknown>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [c, changer] of changers.entries()) {
        made.push(changer.sessions.update({ sessionId: 's1', title: `title ${round}.${c}` }));
        made.push(changer.settings.update({ maxToolCalls: 1 + round * CHANGERS + c }));
      }
    }
    await Promise.all(made);
    // The first change of each kind was told at once; the others wait for the pause after it, which ends now.
    await vi.runOnlyPendingTimersAsync();

    // Before, each watch was told of each of the 50 changes of its kind.
    expect(await titles).toStrictEqual(sessionWatches.map(() => ['title 0.0', lastTitle]));
    expect(await maxToolCalls).toStrictEqual(settingsWatches.map(() => [1, lastSettings.maxToolCalls]));
    for (const controller of controllers) controller.abort();
  });
});
