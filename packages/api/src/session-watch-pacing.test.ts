import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel, textStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatService } from './chat-service';
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
    await new Promise((resolve) => setImmediate(resolve));
    // Both wait for the window: the watch's change and the stream's first event.
    expect([arrived, window.parked.size]).toStrictEqual([false, 2]);

    window.reopen();
    expect(await next).toMatchObject({ done: false, value: { type: 'session-changed', session: { sessionId: 's1' } } });
    await watch.return?.();
    await stream.return?.();
    expect(((await firstRead).value as unknown as [string, unknown])[1]).toMatchObject({ type: 'run-start', runId: 'r1' });
    expect(connection.openSubscriptions).toBe(0);
  });
});
