import type { AppRouter } from '@airlock/api';
import { createTRPCClient, createTRPCClientProxy, getUntypedClient, TRPCClientError, TRPCUntypedClient, type TRPCClient } from '@trpc/client';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { airlockLink } from './airlock-link';
import { AirlockSocket, isExpired, socketClock } from './airlock-socket';
import { AirlockUntypedClient } from './airlock-untyped-client';
import { createAirlockClient } from './create-airlock-client';

/**
 * A WebSocket server on 127.0.0.1 that proves it knows the token "secret", records each request and answers
 * `model.info` with data and `chat.pending` with an error; the rest (a decision) it leaves unanswered.
 */
async function startServer() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const received: unknown[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  wss.on('connection', (socket, req) => {
    const nonce = new URL(req.url ?? '/', 'http://localhost').searchParams.get('proof') ?? '';
    const mac = createHmac('sha256', 'secret').update(`airlock server proof v2\n${req.headers.host}\n${nonce}`).digest('base64url');
    socket.send(JSON.stringify({ airlock: 'proof', mac }));
    socket.on('message', (data) => {
      const message = JSON.parse((data as Buffer).toString('utf8')) as { id?: number; params?: { path: string } };
      received.push(message);
      for (const waiter of waiters.filter(({ count }) => received.length >= count)) waiter.resolve();
      if (message.params?.path === 'model.info') socket.send(JSON.stringify({ id: message.id, result: { type: 'data', data: { model: 'm' } } }));
      if (message.params?.path === 'chat.pending') {
        socket.send(JSON.stringify({ id: message.id, error: { code: -32600, message: 'no such session', data: { code: 'BAD_REQUEST', httpStatus: 400, path: 'chat.pending' } } }));
      }
    });
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/trpc`,
    received,
    /** Resolves once `count` messages have come. */
    receivedCount: (count: number) => new Promise<void>((resolve) => (received.length >= count ? resolve() : waiters.push({ count, resolve }))),
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

/** A typed client over an open socket: through tRPC's own client and `airlockLink`, or through `AirlockUntypedClient`. */
async function openClient(url: string, through: 'link' | 'untyped client') {
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  const socket = new AirlockSocket({ url, connectionParams: { token: 'secret' }, WebSocket, keepAlive: false, closeWaitMs: 0, onOpen: () => opened() });
  await open;
  const trpc: TRPCClient<AppRouter> =
    through === 'link'
      ? createTRPCClient<AppRouter>({ links: [airlockLink<AppRouter>(socket, { decisionTimeoutMs: 10_000 })] })
      : createTRPCClientProxy<AppRouter>(new AirlockUntypedClient<AppRouter>(socket, { decisionTimeoutMs: 10_000 }));
  return { trpc, socket, [Symbol.asyncDispose]: () => socket.close() };
}

/** How a call settled, as a caller can tell. */
async function outcome(call: Promise<unknown>): Promise<unknown> {
  try {
    return { data: await call };
  } catch (error) {
    if (!(error instanceof TRPCClientError)) return { thrown: error };
    const { cause } = error;
    return { message: error.message, shape: error.shape as unknown, data: error.data as unknown, cause: cause === undefined ? undefined : [cause.name, cause.message] };
  }
}

/** The same calls through either client, and what they sent. */
async function callsThrough(through: 'link' | 'untyped client') {
  await using server = await startServer();
  await using client = await openClient(server.url, through);
  const { trpc } = client;
  const aborting = new AbortController();
  const aborted = outcome(trpc.chat.confirmTool.mutate({ sessionId: 's', approvalId: 'a1', decision: 'deny' }, { signal: aborting.signal }));
  aborting.abort();
  const outcomes = [
    await outcome(trpc.model.info.query()),
    await outcome(trpc.chat.pending.query({ sessionId: 's' })),
    await aborted,
    await outcome(trpc.chat.confirmTool.mutate({ sessionId: 's', approvalId: 'a2', decision: 'deny' }, { signal: AbortSignal.abort() })),
    await outcome(trpc.chat.cancel.mutate({ sessionId: 's', runId: 'x'.repeat(1024 * 1024) })),
    await outcome(trpc.chat.pending.query({ sessionId: 10n as unknown as string })),
  ];
  // Answered, a last query was received after whatever was written before it.
  await trpc.model.info.query();
  const sent = server.received.map((message) => JSON.parse(JSON.stringify(message, (key, value: unknown) => (key === 'notAfter' || key === 'clock' ? typeof value : value))) as unknown);
  return { outcomes, sent };
}

describe('AirlockUntypedClient', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('settles queries and mutations as tRPC’s client over airlockLink does, and sends the same', async () => {
    const throughLink = await callsThrough('link');
    const direct = await callsThrough('untyped client');
    expect(direct).toStrictEqual(throughLink);
    expect(direct.outcomes).toStrictEqual([
      { data: { model: 'm' } },
      { message: 'no such session', shape: { code: -32600, message: 'no such session', data: { code: 'BAD_REQUEST', httpStatus: 400, path: 'chat.pending' } }, data: { code: 'BAD_REQUEST', httpStatus: 400, path: 'chat.pending' }, cause: undefined },
      { message: 'This operation was aborted', shape: undefined, data: undefined, cause: ['AbortError', 'This operation was aborted'] },
      // An already aborted signal: given up unwritten (tRPC's own link writes it, then gives it up).
      { message: 'This operation was aborted', shape: undefined, data: undefined, cause: ['AbortError', 'This operation was aborted'] },
      {
        message: expect.stringMatching(/^runId: the request is \d+ bytes, over the 1048576 bytes \(1 MiB\) the server takes in one message; shorten runId/),
        shape: expect.objectContaining({ code: -32013 }),
        data: { code: 'PAYLOAD_TOO_LARGE', httpStatus: 413, path: 'chat.cancel' },
        cause: ['UnsentRequestError', expect.stringMatching(/^runId: the request is/)],
      },
      { message: 'Do not know how to serialize a BigInt', shape: undefined, data: undefined, cause: ['TypeError', 'Do not know how to serialize a BigInt'] },
    ]);
    expect(direct.sent).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: 'string' } },
      { id: 1, method: 'mutation', params: { path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a1', decision: 'deny', notAfter: 'number' } } },
      { id: 2, method: 'query', params: { path: 'model.info' } },
      { id: 3, method: 'query', params: { path: 'chat.pending', input: { sessionId: 's' } } },
      { id: 6, method: 'query', params: { path: 'model.info' } },
    ]);
  });

  it('sends a decision in one frame with its deadline, decisionTimeoutMs from its write, and fails it as expired then', async () => {
    await using server = await startServer();
    await using client = await openClient(server.url, 'untyped client');
    // Time runs only as the test moves it.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const writtenAt = socketClock();
    let settled = false;
    const answer = client.trpc.chat.confirmTool
      .mutate({ sessionId: 's', approvalId: 'a1', decision: 'allow' })
      .then(
        () => 'answered',
        (error: unknown) => error,
      )
      .finally(() => (settled = true));
    await server.receivedCount(2);
    expect(server.received.slice(1)).toStrictEqual([
      { id: 1, method: 'mutation', params: { path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a1', decision: 'allow', notAfter: writtenAt + 10_000 } } },
    ]);
    // At its deadline it still waits (a turn of the event loop lets a failure through); past it, it fails.
    vi.advanceTimersByTime(10_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    vi.advanceTimersByTime(1);
    const failure = await answer;
    expect(failure instanceof TRPCClientError && isExpired(failure)).toBe(true);
    expect(failure instanceof Error && failure.message).toBe('no answer came before its deadline: the server does not apply it from now on');
  });

  it('is the untyped client behind the typed one, and its subscriptions go through airlockLink', async () => {
    await using server = await startServer();
    await using client = await openClient(server.url, 'untyped client');
    expect(getUntypedClient(client.trpc)).toBeInstanceOf(TRPCUntypedClient);
    const subscription = client.trpc.chat.stream.subscribe({ sessionId: 's', runId: 'r' }, {});
    await server.receivedCount(2);
    subscription.unsubscribe();
    expect(server.received[1]).toStrictEqual({ id: 1, method: 'subscription', params: { path: 'chat.stream', input: { sessionId: 's', runId: 'r' } } });
  });

  it('is what createAirlockClient’s typed client sends its queries and mutations through', async () => {
    await using server = await startServer();
    const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket, retryDelayMs: () => 0, closeWaitMs: 0 });
    try {
      const untyped = getUntypedClient(client.trpc);
      expect(untyped).toBeInstanceOf(AirlockUntypedClient);
      // Reached by the typed proxy itself, not only there to be found: a tRPC whose proxy went round it would fail here.
      const mutation = vi.spyOn(untyped, 'mutation');
      const query = vi.spyOn(untyped, 'query');
      expect(await client.trpc.model.info.query()).toStrictEqual({ model: 'm' });
      await outcome(client.trpc.chat.confirmTool.mutate({ sessionId: 's', approvalId: 'a1', decision: 'deny' }, { signal: AbortSignal.abort() }));
      expect([query.mock.calls.map(([path]) => path), mutation.mock.calls.map(([path]) => path)]).toStrictEqual([['model.info'], ['chat.confirmTool']]);
    } finally {
      await client.close();
    }
  });
});
