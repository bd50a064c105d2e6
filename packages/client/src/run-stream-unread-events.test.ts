import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { createAirlockClient, UnreadEventsError } from './create-airlock-client';

interface Connection {
  socket: ServerSocket;
  /** The messages of the connection, parsed, batches flattened. */
  received: Record<string, unknown>[];
}

/** A WebSocket server on 127.0.0.1 speaking Airlock's protocol as far as these tests need: the proof, then what the test sends. */
async function startServer() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const connections: Connection[] = [];
  const waiters: { until: () => boolean; resolve: () => void }[] = [];
  const check = () => {
    for (const waiter of waiters.splice(0)) {
      if (waiter.until()) waiter.resolve();
      else waiters.push(waiter);
    }
  };
  wss.on('connection', (socket, req) => {
    const nonce = new URL(req.url ?? '/', 'http://localhost').searchParams.get('proof') ?? '';
    const mac = createHmac('sha256', 'secret').update(`airlock server proof v2\n${req.headers.host}\n${nonce}`).digest('base64url');
    socket.send(JSON.stringify({ airlock: 'proof', mac }));
    const connection: Connection = { socket, received: [] };
    connections.push(connection);
    socket.on('message', (data) => {
      const text = (data as Buffer).toString('utf8');
      if (text === 'PONG' || text === 'PING') return;
      const parsed = JSON.parse(text) as Record<string, unknown> | Record<string, unknown>[];
      connection.received.push(...(Array.isArray(parsed) ? parsed : [parsed]));
      check();
    });
  });
  /** Resolves with the first message of the first connection that `match` holds for, once it came. */
  const message = (match: (message: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const found = () => connections[0]?.received.find(match);
      waiters.push({ until: () => found() !== undefined, resolve: () => resolve(found()!) });
      check();
    });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/trpc`,
    send: (message: unknown) => connections[0]!.socket.send(JSON.stringify(message)),
    message,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

const delta = (seq: number) => ({ type: 'text-delta', runId: 'r', text: `t${seq}` });

/**
 * A client holding at most 5 unread events, attached to run `r` of `server`: its first read waiting, and the
 * subscription's id once the server has it (sent once the stream is read, or at once: either way it is waited for).
 */
async function attachedRun(server: Awaited<ReturnType<typeof startServer>>) {
  const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket, retryDelayMs: () => 0, closeWaitMs: 0, maxUnreadEvents: 5 });
  const run = client.attachRun({ sessionId: 's', runId: 'r' });
  const first = run.next();
  const { id } = await server.message((m) => m.method === 'subscription');
  server.send({ id, result: { type: 'started' } });
  return { client, run, first, id, [Symbol.asyncDispose]: () => client.close() };
}

describe('a run stream the caller reads slower than events come', () => {
  it('holds at most maxUnreadEvents unread: gives those out, then ends with an error naming the limit and where to attach from', async () => {
    await using server = await startServer();
    await using attached = await attachedRun(server);
    const { client, run, first, id } = attached;
    for (let seq = 1; seq <= 50; seq += 1) server.send({ id, result: { type: 'data', id: `r:${seq}`, data: { id: `r:${seq}`, data: delta(seq) } } });
    // Answered after the events on the same socket: once the answer is read, so are they.
    const pending = client.pending('s');
    const query = await server.message((m) => m.method === 'query');
    server.send({ id: query.id, result: { type: 'data', data: [] } });
    await pending;

    const given: unknown[] = [(await first).value];
    for (let read = 0; read < 5; read += 1) given.push((await run.next()).value);
    // The first went to the waiting `next`, five more waited; the seventh did not fit.
    expect(given).toStrictEqual([1, 2, 3, 4, 5, 6].map(delta));
    const failure: unknown = await run.next().then((result) => result, (error: unknown) => error);
    expect(failure).toBeInstanceOf(UnreadEventsError);
    expect(failure).toMatchObject({ limit: 5, runId: 'r', lastEventId: 'r:6' });
    expect((failure as Error).message).toBe(
      'the stream of run "r" stopped following it: 5 events waited unread, the most it holds (maxUnreadEvents); the run goes on: attach again (attachRun) from lastEventId "r:6" to read on from the last event taken',
    );
    expect(run.lastEventId).toBe('r:6');
    // It stopped following the run on the server too.
    await expect(server.message((m) => m.method === 'subscription.stop' && m.id === id)).resolves.toStrictEqual({ id, method: 'subscription.stop' });
  });

  it('counts only what waits: a caller that keeps up reads a run of more events than the limit to its end', async () => {
    await using server = await startServer();
    await using attached = await attachedRun(server);
    const { run, first, id } = attached;
    const given: unknown[] = [];
    let next = first;
    for (let seq = 1; seq <= 20; seq += 1) {
      server.send({ id, result: { type: 'data', id: `r:${seq}`, data: { id: `r:${seq}`, data: delta(seq) } } });
      given.push((await next).value);
      next = run.next();
    }
    const end = { type: 'run-end', runId: 'r', reason: 'done' };
    server.send({ id, result: { type: 'data', id: 'r:21', data: { id: 'r:21', data: end } } });
    given.push((await next).value);
    expect(await run.next()).toStrictEqual({ done: true, value: undefined });
    expect(given).toStrictEqual([...Array.from({ length: 20 }, (_, index) => delta(index + 1)), end]);
  });
});

describe('a session watch the caller reads slower than changes come', () => {
  it('holds at most maxUnreadEvents changes unread: one more replaces them with one "ready", and the watch goes on', async () => {
    await using server = await startServer();
    const client = createAirlockClient({ url: server.url, token: 'secret', WebSocket, retryDelayMs: () => 0, closeWaitMs: 0, maxUnreadEvents: 5 });
    await using _closed = { [Symbol.asyncDispose]: () => client.close() };
    const watch = client.watchSessions();
    const first = watch.next();
    const { id } = await server.message((m) => m.method === 'subscription');
    server.send({ id, result: { type: 'started' } });
    const changed = (seq: number) => ({ type: 'session-changed', session: { sessionId: `s${seq}` } });
    server.send({ id, result: { type: 'data', data: { type: 'ready' } } });
    for (let seq = 1; seq <= 50; seq += 1) server.send({ id, result: { type: 'data', data: changed(seq) } });
    // Answered after the changes on the same socket: once the answer is read, so are they.
    const pending = client.pending('s');
    const query = await server.message((m) => m.method === 'query');
    server.send({ id: query.id, result: { type: 'data', data: [] } });
    await pending;

    expect((await first).value).toStrictEqual({ type: 'ready' });
    // The sixth waiting change took the place of the five before it, and itself, with a "ready"; so did the 11th, …
    // the 46th: four more came after that one.
    const given: unknown[] = [];
    for (let read = 0; read < 5; read += 1) given.push((await watch.next()).value);
    expect(given).toStrictEqual([{ type: 'ready' }, ...[47, 48, 49, 50].map(changed)]);
    server.send({ id, result: { type: 'data', data: changed(51) } });
    expect((await watch.next()).value).toStrictEqual(changed(51));
    await watch.return?.();
  });
});
