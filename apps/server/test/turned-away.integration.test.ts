import { ChatService, type ModelInfo } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel } from '@airlock/core/testing';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startServer } from '../src/start-server';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
const MODEL_INFO: ModelInfo = { provider: 'demo', baseURL: null, model: 'demo', demo: true };

async function startFullServer() {
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [] });
  const server = await startServer({
    config: { host: '127.0.0.1', port: 0, token: TOKEN, allowedOrigins: [], capacity: { maxConnections: 1 } },
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => MODEL_INFO },
    webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
    log: () => undefined,
  });
  return { server, [Symbol.asyncDispose]: () => server.close() };
}

describe('a client the server turns away at the upgrade', () => {
  it('says the server is full, not that it cannot be reached; retrying forever, it hears why at each close', async () => {
    await using running = await startFullServer();
    const first = createAirlockClient({ url: running.server.wsUrl, token: TOKEN, WebSocket });
    try {
      expect(await first.trpc.model.info.query()).toStrictEqual(MODEL_INFO);

      const second = createAirlockClient({ url: running.server.wsUrl, token: TOKEN, WebSocket, retryDelayMs: () => 0 });
      await expect(second.trpc.model.info.query()).rejects.toThrow(
        `Airlock at ${running.server.wsUrl} turned the connection away: the server is full or shutting down (503): it holds its maximum of connections (--max-connections)`,
      );
      expect(second.state).toBe('unreachable');
      await second.close();

      const whys: (string | undefined)[] = [];
      const waiting = createAirlockClient({ url: running.server.wsUrl, token: TOKEN, WebSocket, retryDelayMs: () => 0, connectAttempts: Infinity, onClose: (why) => whys.push(why) });
      await vi.waitFor(() => expect(whys.length).toBeGreaterThanOrEqual(2));
      await waiting.close();
      expect(new Set(whys)).toStrictEqual(new Set([expect.stringMatching(/^the server is full or shutting down \(503\)/)]));
    } finally {
      await first.close();
    }
  });

  it('says the server refused this address when the upgrade is answered 403', async () => {
    await using running = await startFullServer();
    const client = createAirlockClient({ url: running.server.wsUrl.replace(/\/trpc$/, '/elsewhere'), token: TOKEN, WebSocket, retryDelayMs: () => 0 });
    await expect(client.trpc.model.info.query()).rejects.toThrow(/turned the connection away: the server refused this address \(403\): the Host or Origin is not one it accepts/);
    await client.close();
  });
});
