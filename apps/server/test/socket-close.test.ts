import { ChatService, type ModelInfo } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel } from '@airlock/core/testing';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import type { Capacity } from '../src/config';
import { startServer } from '../src/start-server';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
const MODEL_INFO: ModelInfo = { provider: 'demo', baseURL: null, model: 'demo', demo: true };
const WRONG_TOKEN = JSON.stringify({ method: 'connectionParams', data: { token: 'not-the-token-not-the-token-not-the-token' } });

async function startTestServer(options: { capacity?: Partial<Capacity> } = {}) {
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [] });
  const server = await startServer({
    config: { host: '127.0.0.1', port: 0, token: TOKEN, allowedOrigins: [], capacity: options.capacity ?? {} },
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => MODEL_INFO },
    webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
    log: () => undefined,
  });
  return { server, [Symbol.asyncDispose]: () => server.close() };
}

/** A `ws` client that records what the server sends and how it closes the socket. */
async function wsClient(url: string) {
  const socket = new WebSocket(url);
  const messages: unknown[] = [];
  socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString('utf8'))));
  socket.on('error', () => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return { socket, messages, closed, [Symbol.asyncDispose]: async () => socket.terminate() };
}

describe('a socket refused before its token was accepted', () => {
  it('is closed with 1008 and a reason after tRPC’s refusal, for a wrong token', async () => {
    await using running = await startTestServer();
    await using client = await wsClient(`${running.server.wsUrl}?connectionParams=1`);

    client.socket.send(WRONG_TOKEN);

    expect(await client.closed).toStrictEqual({ code: 1008, reason: 'no valid token presented' });
    expect(client.messages).toMatchObject([{ id: null, error: { message: 'a valid access token is required', data: { code: 'UNAUTHORIZED' } } }]);
  });

  it('is closed with 1008 and a reason when its first message is no connection parameters', async () => {
    await using running = await startTestServer();
    for (const first of ['not json', JSON.stringify({ id: 1, method: 'query', params: { path: 'model.info' } })]) {
      await using client = await wsClient(`${running.server.wsUrl}?connectionParams=1`);
      client.socket.send(first);
      expect(await client.closed).toStrictEqual({ code: 1008, reason: 'the first message was not connection parameters' });
    }
  });

  it('is closed with 1008 when it connects without connection parameters, where none can carry the token', async () => {
    await using running = await startTestServer();
    await using client = await wsClient(running.server.wsUrl);
    expect(await client.closed).toStrictEqual({ code: 1008, reason: 'no valid token presented' });
  });

  it('is closed with 1013, try again later, when the server holds its most connections by the time its token comes', async () => {
    await using running = await startTestServer({ capacity: { maxConnections: 1 } });
    await using first = await wsClient(`${running.server.wsUrl}?connectionParams=1`);
    await using second = await wsClient(`${running.server.wsUrl}?connectionParams=1`);
    first.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));
    first.socket.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'model.info' } }));
    await vi.waitFor(() => expect(first.messages).toStrictEqual([{ id: 1, result: { type: 'data', data: MODEL_INFO } }]), { timeout: 10_000 });

    second.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));

    expect(await second.closed).toStrictEqual({ code: 1013, reason: 'not accepted now: try again later' });
    expect(second.messages).toMatchObject([{ id: null, error: { data: { code: 'TOO_MANY_REQUESTS' } } }]);
  });
});
