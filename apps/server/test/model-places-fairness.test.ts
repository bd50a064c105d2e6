import { ChatService, type AppRouter, type ModelInfo } from '@airlock/api';
import { ApprovalRegistry, ConcurrencyLimit } from '@airlock/core';
import { createTRPCClient, createWSClient, wsLink } from '@trpc/client';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { OpenAICompatibleModel } from '../src/models/openai-compatible-model';
import { startServer, type RunningServer } from '../src/start-server';
import { startFakeOpenAIServer } from './support';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
const MODEL_INFO: ModelInfo = { provider: 'fake', baseURL: null, model: 'fake-model', demo: false };

function connectClient(server: RunningServer) {
  const wsClient = createWSClient({ url: server.wsUrl, WebSocket: WebSocket as unknown as typeof globalThis.WebSocket, connectionParams: { token: TOKEN } });
  const client = createTRPCClient<AppRouter>({ links: [wsLink({ client: wsClient })] });
  /** Starts a run with `message` and answers when it has ended. */
  const run = (sessionId: string, message: string) =>
    new Promise<void>((resolve, reject) => {
      const subscription = client.chat.stream.subscribe(
        { sessionId, message },
        {
          onData: ({ data }) => {
            if (data.type !== 'run-end') return;
            subscription.unsubscribe();
            resolve();
          },
          onError: reject,
        },
      );
    });
  return { run, [Symbol.asyncDispose]: () => wsClient.close() };
}

it('gives a freed place at the model server to the connection holding the fewest: one connection’s queued turns do not keep another’s behind them', async () => {
  await using fake = await startFakeOpenAIServer();
  let release!: () => void;
  fake.enqueue({ text: 'first', hold: new Promise<void>((resolve) => (release = resolve)) }, { text: 'ok' }, { text: 'ok' }, { text: 'ok' });
  // One place: the first turn holds it while the others queue.
  const requests = new ConcurrencyLimit(1);
  const model = new OpenAICompatibleModel({ baseURL: fake.url, model: 'fake-model', requests });
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [] });
  const server = await startServer({
    config: { host: '127.0.0.1', port: 0, token: TOKEN, allowedOrigins: [], capacity: {} },
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => MODEL_INFO },
    webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
    log: () => undefined,
  });
  await using _server = { [Symbol.asyncDispose]: () => server.close() };
  await using a = connectClient(server);
  await using b = connectClient(server);

  const runs = [a.run('a1', 'a1')];
  await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
  for (const [at, name] of ['a2', 'a3'].entries()) {
    runs.push(a.run(name, name));
    await vi.waitFor(() => expect(requests.waiting).toBe(at + 1));
  }
  // The other connection asks last, behind two of the first's turns.
  runs.push(b.run('b1', 'b1'));
  await vi.waitFor(() => expect(requests.waiting).toBe(3));

  release();
  await Promise.all(runs);
  const asked = fake.requests.map((request) => (request.messages as { role: string; content: string }[]).findLast((message) => message.role === 'user')!.content);
  expect(asked).toStrictEqual(['a1', 'b1', 'a2', 'a3']);
});
