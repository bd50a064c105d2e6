import { ChatService, type AppRouter } from '@airlock/api';
import { ApprovalRegistry, randomId } from '@airlock/core';
import { ScriptedModel } from '@airlock/core/testing';
import { createTRPCClient, createWSClient, wsLink } from '@trpc/client';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startServer } from '../src/start-server';

afterEach(() => {
  vi.useRealTimers();
});

describe('the tRPC WebSocket client as installed here', () => {
  // Stock wsLink waits a setTimeout(0) before each write, at least 1 ms in Node; the patch in
  // patches/@trpc__client@11.19.0.patch uses setImmediate instead. This fails if the patch is lost.
  it('writes a request within one macrotask, without waiting for a timer', async () => {
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [] });
    await using server = await startServer({
      config: { host: '127.0.0.1', port: 0, token: randomId('tok', 32), allowedOrigins: [] },
      services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'test', demo: false }) },
      webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
      log: () => undefined,
    });
    const written: string[] = [];
    class RecordingWebSocket extends WebSocket {
      override send(data: unknown, ...rest: unknown[]): void {
        written.push(String(data));
        (super.send as (...args: unknown[]) => void).call(this, data, ...rest);
      }
    }
    const client = createWSClient({ url: server.wsUrl, WebSocket: RecordingWebSocket as unknown as typeof globalThis.WebSocket, connectionParams: { token: server.token } });
    const trpc = createTRPCClient<AppRouter>({ links: [wsLink({ client })] });
    try {
      // Connected and authenticated first, so the request below needs no connection work.
      await trpc.model.info.query();

      vi.useFakeTimers({ toFake: ['setTimeout'] });
      const answer = trpc.model.info.query();
      await new Promise((resolve) => setImmediate(resolve));
      expect(written.filter((frame) => frame.includes('"model.info"'))).toHaveLength(2);

      vi.useRealTimers();
      expect(await answer).toMatchObject({ provider: 'test' });
    } finally {
      await client.close();
    }
  });
});
