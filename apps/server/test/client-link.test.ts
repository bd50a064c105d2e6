import { ChatService } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import { ApprovalRegistry, randomId } from '@airlock/core';
import { ScriptedModel } from '@airlock/core/testing';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startServer } from '../src/start-server';

afterEach(() => {
  vi.useRealTimers();
});

describe('the @airlock/client link', () => {
  // Stock wsLink writes a request after a setTimeout(0), at least 1 ms in Node. The client's own link writes it in
  // the call that makes it, so integrators get the low latency without patching @trpc/client.
  it('writes a request in the call that makes it, without waiting for a timer or a macrotask', async () => {
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
    const airlock = createAirlockClient({ url: server.wsUrl, token: server.token, WebSocket: RecordingWebSocket });
    try {
      // Connected and authenticated first, so the request below needs no connection work.
      await airlock.trpc.model.info.query();

      vi.useFakeTimers({ toFake: ['setTimeout', 'setImmediate', 'queueMicrotask'] });
      const answer = airlock.trpc.model.info.query();
      expect(written.filter((frame) => frame.includes('"model.info"'))).toHaveLength(2);

      vi.useRealTimers();
      expect(await answer).toMatchObject({ provider: 'test' });
    } finally {
      await airlock.close();
    }
  });
});
