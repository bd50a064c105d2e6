import { createHmac } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { AirlockSocket, AnswerUnknownError, isAnswerUnknown, isConnectionLost, isExpired, socketClock, UNPROVEN_SERVER_MESSAGE, type AirlockSocketOptions, type RequestHandlers, type SocketError } from './airlock-socket';
import { createAirlockClient } from './create-airlock-client';
import { airlockLink } from './airlock-link';
import { createTRPCClient } from '@trpc/client';
import type { AppRouter } from '@airlock/api';
import { CLOSE_REPLACED_BEFORE_TOKEN } from '@airlock/core';
import type { WebSocketConstructor, WebSocketLike } from './web-socket-like';

/** What an upgrade request says that the proof answers: its URL (with the nonce) and the Host it named. */
interface Upgrade {
  url?: string | undefined;
  headers: { host?: string | undefined };
}

/** The frame Airlock sends first when the upgrade URL asks for a proof: the HMAC of its Host and nonce keyed by the token. */
function proofFrame({ url, headers }: Upgrade, token: string, label = 'airlock server proof v2'): string {
  const nonce = new URL(url ?? '/', 'http://localhost').searchParams.get('proof') ?? '';
  const message = label === 'airlock server proof' ? `${label}\n${nonce}` : `${label}\n${headers.host ?? ''}\n${nonce}`;
  return JSON.stringify({ airlock: 'proof', mac: createHmac('sha256', token).update(message).digest('base64url') });
}

/**
 * A WebSocket server on 127.0.0.1 that records what each connection receives; the test answers by hand. First it
 * proves it knows the token "secret", as Airlock does, unless `greet` says what to send instead (nothing, for null).
 */
async function startWireServer(greet: (upgrade: Upgrade, socket: WebSocket) => string | null = (upgrade) => proofFrame(upgrade, 'secret')) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const connections: { url: string; socket: WebSocket; received: string[]; closed: Promise<void> }[] = [];
  const arrivals: (() => void)[] = [];
  wss.on('connection', (socket, req) => {
    const connection = { url: req.url ?? '', socket, received: [] as string[], closed: new Promise<void>((resolve) => socket.once('close', () => resolve())) };
    connections.push(connection);
    const first = greet(req, socket);
    if (first !== null) socket.send(first);
    socket.on('message', (data) => {
      connection.received.push((data as Buffer).toString('utf8'));
      for (const wake of arrivals.splice(0)) wake();
    });
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/trpc`,
    connections,
    /** Resolves once connection `index` has received `count` messages. */
    async received(index: number, count: number): Promise<unknown[]> {
      await vi.waitFor(() => expect(connections[index]?.received.length ?? 0).toBeGreaterThanOrEqual(count));
      return connections[index]!.received.map((text): unknown => (text === 'PONG' || text === 'PING' ? text : JSON.parse(text)));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

/**
 * `ws` sockets, the first `held` of which hand their messages over only with their close, in the same tick: a proof
 * and a close read together, so the close is handled while the proof is still being checked.
 */
function proofReadWithClose(held = Infinity): WebSocketConstructor {
  let made = 0;
  return class ProofReadWithClose implements WebSocketLike {
    private readonly socket: WebSocket;
    private readonly held: { data: unknown }[] = [];
    private onMessage: ((event: { data: unknown }) => void) | undefined;
    constructor(url: string) {
      this.socket = new WebSocket(url);
      const holds = ++made <= held;
      this.socket.addEventListener('message', (event) => {
        if (holds) this.held.push({ data: event.data });
        else this.onMessage?.({ data: event.data });
      });
    }
    get readyState(): number {
      return this.socket.readyState;
    }
    send(data: string): void {
      this.socket.send(data);
    }
    close(code?: number, reason?: string): void {
      this.socket.close(code, reason);
    }
    addEventListener(type: 'open' | 'close' | 'error' | 'message', listener: (event: never) => void): void {
      const call = listener as (event?: unknown) => void;
      if (type === 'message') this.onMessage = call;
      else if (type === 'close') {
        this.socket.addEventListener('close', (event) => {
          for (const message of this.held.splice(0)) this.onMessage?.(message);
          call({ code: event.code });
        });
      } else this.socket.addEventListener(type, (event) => call(event));
    }
  }
}

function recorder() {
  const results: unknown[] = [];
  const errors: SocketError[] = [];
  let completed = 0;
  const handlers: RequestHandlers = {
    result: (message) => results.push(message.result),
    error: (error) => errors.push(error),
    complete: () => completed++,
  };
  return { handlers, results, errors, completed: () => completed };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(options: Partial<Pick<AirlockSocketOptions, 'onRejected' | 'onClose' | 'keepAlive' | 'maxMessageBytes'>> = {}) {
  const server = await startWireServer();
  const written: string[] = [];
  class RecordingWebSocket extends WebSocket {
    override send(data: string): void {
      written.push(data);
      super.send(data);
    }
  }
  const opened: (() => void)[] = [];
  const socket = new AirlockSocket({
    url: server.url,
    connectionParams: { token: 'secret' },
    WebSocket: RecordingWebSocket,
    retryDelayMs: () => 0,
    onOpen: () => opened.splice(0).forEach((wake) => wake()),
    // A test's server answers only what the test sends: a close fails the rest at once.
    closeWaitMs: 0,
    ...options,
  });
  cleanups.push(server.close, () => socket.close());
  const open = () => new Promise<void>((resolve) => opened.push(resolve));
  return { server, socket, written, open };
}

describe('AirlockSocket speaks the tRPC WebSocket protocol', () => {
  it('sends the connection params first, then each request in the call that makes it', async () => {
    const { server, socket, written, open } = await setUp();
    const early = recorder();
    socket.request({ method: 'query', path: 'model.info', input: undefined }, early.handlers);
    await open();
    expect(server.connections[0]!.url).toMatch(/^\/trpc\?connectionParams=1&proof=[A-Za-z0-9_-]{22}$/);
    expect(await server.received(0, 2)).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      { id: 1, method: 'query', params: { path: 'model.info' } },
    ]);

    const before = written.length;
    socket.request({ method: 'mutation', path: 'chat.cancel', input: { sessionId: 's' } }, recorder().handlers);
    // Written synchronously: no timer, no microtask in between.
    expect(written.slice(before).map((text): unknown => JSON.parse(text))).toStrictEqual([{ id: 2, method: 'mutation', params: { path: 'chat.cancel', input: { sessionId: 's' } } }]);

    server.connections[0]!.socket.send(JSON.stringify({ id: 1, result: { type: 'data', data: { model: 'm' } } }));
    await vi.waitFor(() => expect(early.completed()).toBe(1));
    expect(early.results).toStrictEqual([{ type: 'data', data: { model: 'm' } }]);
  });

  it('re-subscribes with the last event id after the connection drops, and fails the query that was in flight', async () => {
    const { server, socket, open } = await setUp();
    await open();
    const stream = recorder();
    const stop = socket.request({ method: 'subscription', path: 'chat.stream', input: { sessionId: 's', runId: 'r' } }, stream.handlers);
    const query = recorder();
    socket.request({ method: 'query', path: 'sessions.list', input: undefined }, query.handlers);
    await server.received(0, 3);
    const first = server.connections[0]!.socket;
    first.send(JSON.stringify({ id: 1, result: { type: 'started' } }));
    first.send(JSON.stringify({ id: 1, result: { type: 'data', id: 'r:1', data: { id: 'r:1', data: { type: 'run-start' } } } }));
    await vi.waitFor(() => expect(stream.results).toHaveLength(2));

    const reopened = open();
    first.terminate();
    await reopened;
    expect(query.errors.map((error) => error.message)).toStrictEqual(['the connection closed before the answer came']);
    expect(await server.received(1, 2)).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      { id: 1, method: 'subscription', params: { path: 'chat.stream', input: { sessionId: 's', runId: 'r' }, lastEventId: 'r:1' } },
    ]);
    expect(stream.errors).toStrictEqual([]);

    server.connections[1]!.socket.send(JSON.stringify({ id: 1, result: { type: 'started' } }));
    await vi.waitFor(() => expect(stream.results).toHaveLength(3));
    stop();
    expect(await server.received(1, 3)).toContainEqual({ id: 1, method: 'subscription.stop' });
    expect(stream.completed()).toBe(1);
  });

  it('sends a query and a mutation again, once, on the next connection when the server closed the socket as replaced before its token was accepted', async () => {
    const { server, socket, open } = await setUp();
    await open();
    const query = recorder();
    const mutation = recorder();
    socket.request({ method: 'query', path: 'model.info', input: undefined }, query.handlers);
    socket.request({ method: 'mutation', path: 'rules.add', input: { tool: 'terminal' } }, mutation.handlers);
    await server.received(0, 3);

    const reopened = open();
    server.connections[0]!.socket.close(CLOSE_REPLACED_BEFORE_TOKEN, 'replaced before its token was presented');
    await reopened;
    expect(await server.received(1, 2)).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      [
        { id: 1, method: 'query', params: { path: 'model.info' } },
        { id: 2, method: 'mutation', params: { path: 'rules.add', input: { tool: 'terminal' } } },
      ],
    ]);
    expect([query.errors, mutation.errors]).toStrictEqual([[], []]);
    const second = server.connections[1]!.socket;
    second.send(JSON.stringify({ id: 1, result: { type: 'data', data: { model: 'm' } } }));
    second.send(JSON.stringify({ id: 2, result: { type: 'data', data: { added: true } } }));
    await vi.waitFor(() => expect([query.completed(), mutation.completed()]).toStrictEqual([1, 1]));
    expect([query.results, mutation.results]).toStrictEqual([[{ type: 'data', data: { model: 'm' } }], [{ type: 'data', data: { added: true } }]]);
    // Once: a third connection would not see them either.
    expect(server.connections).toHaveLength(2);
  });

  it('does not count a socket the server closed to make room (4001) as a failed attempt at the first connection', async () => {
    let made = 0;
    // As Airlock does: the proof first, then, once a newcomer takes its place, the close.
    const server = await startWireServer((upgrade, socket) => {
      const proof = proofFrame(upgrade, 'secret');
      if (++made > 3) return proof;
      socket.send(proof);
      socket.close(CLOSE_REPLACED_BEFORE_TOKEN, 'replaced before its token was presented');
      return null;
    });
    const whys: string[] = [];
    // Each close is handled while its proof is still being checked: it counts or not once the check has ended.
    const options = { url: server.url, connectionParams: { token: 'secret' }, WebSocket: proofReadWithClose(3), retryDelayMs: () => 0, connectAttempts: 2, closeWaitMs: 0 };
    const socket = new AirlockSocket({ ...options, onClose: () => whys.push('closed') });
    cleanups.push(server.close, () => socket.close());
    const query = recorder();
    socket.request({ method: 'query', path: 'model.info', input: undefined }, query.handlers);
    expect((await server.received(3, 2))[1]).toStrictEqual({ id: 1, method: 'query', params: { path: 'model.info' } });
    expect([socket.state, whys.length, query.errors]).toStrictEqual(['open', 3, []]);
  });

  it('counts a 4001 close from a server that did not prove it knows the token, and gives up after connectAttempts saying why', async () => {
    const server = await startWireServer((_upgrade, socket) => {
      socket.close(CLOSE_REPLACED_BEFORE_TOKEN, 'replaced before its token was presented');
      return null;
    });
    const socket = new AirlockSocket({ url: server.url, connectionParams: { token: 'secret' }, WebSocket, retryDelayMs: () => 0, connectAttempts: 3 });
    cleanups.push(server.close, () => socket.close());
    const query = recorder();
    socket.request({ method: 'query', path: 'model.info', input: undefined }, query.handlers);
    await vi.waitFor(() => expect(query.errors).toHaveLength(1));
    expect([socket.state, server.connections.length, query.errors[0]!.message]).toStrictEqual([
      'unreachable',
      3,
      `cannot reach Airlock at ${server.url} (the connection was closed with code 4001 (as if to make room) before the server proved it knows the token)`,
    ]);
  });

  it('stops for good on a 4001 close that came with a proof for another token, sending nothing, though the close is handled while the proof is checked', async () => {
    const rejected: string[] = [];
    const server = await startWireServer((upgrade, socket) => {
      socket.send(proofFrame(upgrade, 'another token'));
      socket.close(CLOSE_REPLACED_BEFORE_TOKEN, 'replaced before its token was presented');
      return null;
    });
    const socket = new AirlockSocket({ url: server.url, connectionParams: { token: 'secret' }, WebSocket: proofReadWithClose(), retryDelayMs: () => 0, connectAttempts: Infinity, onRejected: (_message, reason) => rejected.push(reason) });
    cleanups.push(server.close, () => socket.close());
    const query = recorder();
    socket.request({ method: 'query', path: 'model.info', input: undefined }, query.handlers);
    await vi.waitFor(() => expect(query.errors).toHaveLength(1));
    expect([socket.state, rejected, query.errors[0]!.message, server.connections.flatMap((connection) => connection.received)]).toStrictEqual(['rejected', ['unproven'], UNPROVEN_SERVER_MESSAGE, []]);
  });

  it('reconnects when the server asks, and answers its PING', async () => {
    const { server, socket, open } = await setUp();
    await open();
    socket.request({ method: 'subscription', path: 'sessions.watch', input: undefined }, recorder().handlers);
    await server.received(0, 2);
    server.connections[0]!.socket.send('PING');
    expect((await server.received(0, 3)).at(-1)).toBe('PONG');

    const reopened = open();
    server.connections[0]!.socket.send(JSON.stringify({ id: null, method: 'reconnect' }));
    await reopened;
    expect(await server.received(1, 2)).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      { id: 1, method: 'subscription', params: { path: 'sessions.watch' } },
    ]);
  });

  it('stops for good when the server refuses the token, failing every request', async () => {
    const rejections: string[] = [];
    const { server, socket, open } = await setUp({ onRejected: (message) => rejections.push(message) });
    await open();
    const stream = recorder();
    socket.request({ method: 'subscription', path: 'chat.stream', input: {} }, stream.handlers);
    await server.received(0, 2);
    server.connections[0]!.socket.send(JSON.stringify({ id: null, error: { message: 'a valid access token is required', code: -32001, data: { code: 'UNAUTHORIZED' } } }));
    await vi.waitFor(() => expect(rejections).toStrictEqual(['a valid access token is required']));
    expect(stream.errors.map((error) => error.message)).toStrictEqual(['a valid access token is required']);
    expect(socket.state).toBe('rejected');

    const late = recorder();
    socket.request({ method: 'query', path: 'model.info', input: undefined }, late.handlers);
    expect(late.errors.map((error) => error.message)).toStrictEqual(['the server refused the access token']);
    await socket.close();
    expect(server.connections).toHaveLength(1);
  });

  it('passes an error answer on with the server message, and ends a subscription the server stops', async () => {
    const { server, socket, open } = await setUp();
    await open();
    const query = recorder();
    socket.request({ method: 'query', path: 'sessions.get', input: { sessionId: 'x' } }, query.handlers);
    const stream = recorder();
    socket.request({ method: 'subscription', path: 'chat.stream', input: {} }, stream.handlers);
    await server.received(0, 3);
    const error = { message: 'session "x" not found', code: -32004, data: { code: 'NOT_FOUND' } };
    server.connections[0]!.socket.send(JSON.stringify({ id: 1, error }));
    server.connections[0]!.socket.send(JSON.stringify({ id: 2, result: { type: 'stopped' } }));
    await vi.waitFor(() => expect(stream.completed()).toBe(1));
    expect(query.errors[0]!.response).toStrictEqual({ id: 1, error });
    expect(query.completed()).toBe(0);
  });

  it('stops a subscription ended before the server said it started once it says so, where the server can find it', async () => {
    const { server, socket, open } = await setUp();
    await open();
    const early = recorder();
    const end = socket.request({ method: 'subscription', path: 'sessions.watch', input: {} }, early.handlers);
    await server.received(0, 2);
    end();
    expect(early.completed()).toBe(1);
    // A request after it: once the server has it, a stop sent before it would have arrived too.
    socket.request({ method: 'query', path: 'sessions.list', input: undefined }, recorder().handlers);
    await server.received(0, 3);
    // Not yet: the server would not find it, and the subscription would go on holding a place.
    const stopFor = (id: number) => server.connections[0]!.received.filter((text) => text !== 'PONG' && JSON.parse(text).method === 'subscription.stop' && JSON.parse(text).id === id);
    expect(stopFor(1)).toStrictEqual([]);
    server.connections[0]!.socket.send(JSON.stringify({ id: 1, result: { type: 'started' } }));
    expect(await server.received(0, 4)).toContainEqual({ id: 1, method: 'subscription.stop' });
    server.connections[0]!.socket.send(JSON.stringify({ id: 1, result: { type: 'stopped' } }));

    // Ended after it started: stopped at once.
    const late = recorder();
    const endLate = socket.request({ method: 'subscription', path: 'sessions.watch', input: {} }, late.handlers);
    await server.received(0, 5);
    server.connections[0]!.socket.send(JSON.stringify({ id: 3, result: { type: 'started' } }));
    await vi.waitFor(() => expect(late.results).toStrictEqual([{ type: 'started' }]));
    endLate();
    expect(await server.received(0, 6)).toContainEqual({ id: 3, method: 'subscription.stop' });
    expect(stopFor(1)).toHaveLength(1);
  });
});

describe('AirlockSocket notices a connection that went silent', () => {
  it('pings a silent server and, with no answer, drops the connection, fails the query in flight and reconnects', async () => {
    const closes: string[] = [];
    const { server, socket, open } = await setUp({ keepAlive: { pingMs: 20, pongWaitMs: 20 }, onClose: () => closes.push(socket.state) });
    await open();
    const stream = recorder();
    socket.request({ method: 'subscription', path: 'chat.stream', input: { sessionId: 's', runId: 'r' } }, stream.handlers);
    const query = recorder();
    socket.request({ method: 'mutation', path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a', decision: 'allow' } }, query.handlers);
    const first = server.connections[0]!;
    first.socket.send(JSON.stringify({ id: 1, result: { type: 'started' } }));
    first.socket.send(JSON.stringify({ id: 1, result: { type: 'data', id: 'r:1', data: { id: 'r:1', data: { type: 'run-start' } } } }));
    // The server (a frozen process, a path gone quiet) sends nothing more, and answers no ping.
    const reopened = open();
    expect((await server.received(0, 4)).at(-1)).toBe('PING');
    await reopened;
    await first.closed;
    expect(closes).toStrictEqual(['reconnecting']);
    expect(query.errors.map((error) => [error.message, isConnectionLost(error)])).toStrictEqual([['the connection went silent (no answer to a ping) before the answer came', true]]);
    // The new connection is pinged in its turn.
    expect((await server.received(1, 2)).filter((message) => message !== 'PING')).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      { id: 1, method: 'subscription', params: { path: 'chat.stream', input: { sessionId: 's', runId: 'r' }, lastEventId: 'r:1' } },
    ]);
    expect(stream.errors).toStrictEqual([]);
  });

  // Found in review: a server that sent its closing frame and never closed its side of the connection kept the client
  // on it until the keep-alive gave up (about 15 s), or `ws`'s own 30 s closing timer: requests waited, unsent.
  it('drops a connection whose server sent its closing frame but never finished closing, and reconnects', async () => {
    const closes: string[] = [];
    // A keep-alive of a minute: it is not what notices.
    const { server, socket, open } = await setUp({ keepAlive: { pingMs: 60_000, pongWaitMs: 60_000 }, onClose: () => closes.push(socket.state) });
    await open();
    const query = recorder();
    socket.request({ method: 'query', path: 'chat.pending', input: { sessionId: 's' } }, query.handlers);
    await server.received(0, 2);
    const first = server.connections[0]!.socket;
    const reopened = open();
    // The server sends its closing frame, then reads nothing more: the client's closing frame and its end of the TCP
    // connection go unread, and the server's side stays open.
    first.close(1001, 'going away');
    first.pause();
    // Well before ws's own closing timer (30 s) and the keep-alive.
    await vi.waitFor(() => expect(server.connections).toHaveLength(2), { timeout: 10_000 });
    await reopened;
    expect(closes).toStrictEqual(['reconnecting']);
    expect(query.errors.map((error) => [error.message, isConnectionLost(error)])).toStrictEqual([['the connection closed before the answer came', true]]);
    // What is asked now goes on the new connection.
    socket.request({ method: 'query', path: 'model.info', input: undefined }, recorder().handlers);
    expect((await server.received(1, 2)).at(-1)).toStrictEqual({ id: 2, method: 'query', params: { path: 'model.info' } });
  });

  it('keeps a connection whose server answers its pings', async () => {
    const closes: number[] = [];
    const { server, socket, open } = await setUp({ keepAlive: { pingMs: 5, pongWaitMs: 60_000 }, onClose: () => closes.push(1) });
    await open();
    const connection = server.connections[0]!;
    connection.socket.on('message', (data) => {
      if ((data as Buffer).toString('utf8') === 'PING') connection.socket.send('PONG');
    });
    await vi.waitFor(() => expect(connection.received.filter((text) => text === 'PING').length).toBeGreaterThanOrEqual(3));
    expect(closes).toStrictEqual([]);
    expect(server.connections).toHaveLength(1);
    expect(socket.state).toBe('open');
  });

  it('sends no ping when keepAlive is false', async () => {
    const { server, socket, open } = await setUp({ keepAlive: false });
    await open();
    const answer = recorder();
    socket.request({ method: 'query', path: 'model.info', input: undefined }, answer.handlers);
    expect(await server.received(0, 2)).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      { id: 1, method: 'query', params: { path: 'model.info' } },
    ]);
  });
});

describe('AirlockSocket never sends a request over the size limit', () => {
  it('fails a request over 1 MiB at once, unsent, naming its size, the limit and the field to shorten', async () => {
    const { server, socket, written, open } = await setUp();
    await open();
    await server.received(0, 1);
    const before = written.length;
    const run = recorder();
    const message = 'x'.repeat(2 * 1024 * 1024);
    socket.request({ method: 'subscription', path: 'chat.stream', input: { sessionId: 's', runId: 'r', message } }, run.handlers);
    expect(written.slice(before)).toStrictEqual([]);
    expect(run.errors.map((error) => [error.message, error.response])).toStrictEqual([
      [
        `message: the request is 2097267 bytes, over the 1048576 bytes (1 MiB) the server takes in one message; shorten message (2097154 bytes of it)`,
        {
          id: 1,
          error: {
            code: -32013,
            message: `message: the request is 2097267 bytes, over the 1048576 bytes (1 MiB) the server takes in one message; shorten message (2097154 bytes of it)`,
            data: { code: 'PAYLOAD_TOO_LARGE', httpStatus: 413, path: 'chat.stream' },
          },
        },
      ],
    ]);
    // Measured in UTF-8 bytes, as the server counts: 400,000 three-byte characters are over 1 MiB.
    const decision = recorder();
    socket.request({ method: 'mutation', path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a', decision: 'deny', reason: '€'.repeat(400_000) } }, decision.handlers);
    expect(decision.errors.map((error) => error.message)).toStrictEqual([
      'reason: the request is 1200138 bytes, over the 1048576 bytes (1 MiB) the server takes in one message; shorten reason (1200002 bytes of it)',
    ]);
    expect(written.slice(before)).toStrictEqual([]);
    expect(socket.state).toBe('open');
  });

  it('does not send again a subscription the server closed the connection on for its size (1009)', async () => {
    const { server, socket, open } = await setUp({ maxMessageBytes: Infinity });
    await open();
    const run = recorder();
    socket.request({ method: 'subscription', path: 'chat.stream', input: { sessionId: 's', runId: 'r', message: 'big' } }, run.handlers);
    const follow = recorder();
    socket.request({ method: 'subscription', path: 'sessions.watch', input: undefined }, follow.handlers);
    await server.received(0, 3);
    server.connections[0]!.socket.send(JSON.stringify({ id: 2, result: { type: 'started' } }));
    await vi.waitFor(() => expect(follow.results).toHaveLength(1));
    const reopened = open();
    server.connections[0]!.socket.close(1009, 'Max payload size exceeded');
    await reopened;
    expect(run.errors.map((error) => error.message)).toStrictEqual(['the server closed the connection on a message over its size limit (1009) before the answer came']);
    // The subscription the server had started was not the one: it is followed again.
    expect(await server.received(1, 2)).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      { id: 2, method: 'subscription', params: { path: 'sessions.watch' } },
    ]);
    expect(follow.errors).toStrictEqual([]);
  });
});

describe('AirlockSocket sends the token only to a server that proves it knows it', () => {
  async function impostor(greet: (upgrade: Upgrade, socket: WebSocket) => string | null) {
    const server = await startWireServer(greet);
    const rejections: [string, string][] = [];
    const written: string[] = [];
    class RecordingWebSocket extends WebSocket {
      override send(data: string): void {
        written.push(data);
        super.send(data);
      }
    }
    const socket = new AirlockSocket({
      url: server.url,
      connectionParams: { token: 'secret', client: 'web' },
      WebSocket: RecordingWebSocket,
      retryDelayMs: () => 0,
      connectAttempts: Infinity,
      onRejected: (message, reason) => rejections.push([message, reason]),
    });
    cleanups.push(server.close, () => socket.close());
    const query = recorder();
    socket.request({ method: 'query', path: 'model.info', input: undefined }, query.handlers);
    await vi.waitFor(() => expect(socket.state).toBe('rejected'), { timeout: 10_000 });
    // The client closes the socket itself, and opens no other.
    await server.connections[0]!.closed;
    expect(server.connections).toHaveLength(1);
    expect(server.connections[0]!.url).toMatch(/^\/trpc\?connectionParams=1&proof=[A-Za-z0-9_-]{22}$/);
    expect(server.connections[0]!.received).toStrictEqual([]);
    expect(written).toStrictEqual([]);
    expect(rejections).toStrictEqual([[UNPROVEN_SERVER_MESSAGE, 'unproven']]);
    expect(socket.rejectionReason).toBe('unproven');
    expect(query.errors.map((error) => error.message)).toStrictEqual([UNPROVEN_SERVER_MESSAGE]);
    await expect(socket.nextOpen()).rejects.toThrow(UNPROVEN_SERVER_MESSAGE);
  }

  it('a server that answers with a proof for another token gets nothing, and is not tried again', async () => {
    await impostor((upgrade) => proofFrame(upgrade, 'another token'));
  });

  it('a server that answers with a proof for another host gets nothing: what another Airlock with this token answers a relay', async () => {
    await impostor((upgrade) => proofFrame({ url: upgrade.url, headers: { host: '127.0.0.1:7701' } }, 'secret'));
  });

  it('a server that answers with the proof of the nonce alone, bound to no host, gets nothing', async () => {
    await impostor((upgrade) => proofFrame(upgrade, 'secret', 'airlock server proof'));
  });

  it('a server that answers with a proof for another nonce gets nothing', async () => {
    await impostor((upgrade) => proofFrame({ url: '/trpc?proof=AAAAAAAAAAAAAAAAAAAAAA', headers: upgrade.headers }, 'secret'));
  });

  it('a server whose first frame is anything but the proof gets nothing', async () => {
    await impostor(() => JSON.stringify({ id: null, method: 'reconnect' }));
  });

  it('a server that accepts the connection and closes it without a proof gets nothing, however often it is tried again', async () => {
    // Airlock itself closes a socket before its proof is checked when it shuts down or makes room: that is no verdict.
    const server = await startWireServer((_upgrade, socket) => {
      socket.close();
      return null;
    });
    const written: string[] = [];
    class RecordingWebSocket extends WebSocket {
      override send(data: string): void {
        written.push(data);
        super.send(data);
      }
    }
    const socket = new AirlockSocket({ url: server.url, connectionParams: { token: 'secret', client: 'web' }, WebSocket: RecordingWebSocket, retryDelayMs: () => 0, connectAttempts: Infinity });
    cleanups.push(server.close, () => socket.close());
    await vi.waitFor(() => expect(server.connections.length).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
    expect(socket.state).not.toBe('rejected');
    expect(socket.state).not.toBe('open');
    expect(server.connections.flatMap((connection) => connection.received)).toStrictEqual([]);
    expect(written).toStrictEqual([]);
  });

  it('a server that accepts the connection and says nothing gets nothing, and is tried again once the proof is overdue', async () => {
    // Silence is no verdict either: a frozen Airlock says nothing too, and answers once it wakes.
    const server = await startWireServer(() => null);
    const written: string[] = [];
    class RecordingWebSocket extends WebSocket {
      override send(data: string): void {
        written.push(data);
        super.send(data);
      }
    }
    // The overdue timer runs on fake time, moved on only once the server holds the connection: however slow the
    // machine, the upgrade itself is never what runs out of time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    cleanups.push(async () => {
      vi.useRealTimers();
    });
    const hour = 3_600_000;
    const socket = new AirlockSocket({ url: server.url, connectionParams: { token: 'secret' }, WebSocket: RecordingWebSocket, retryDelayMs: () => 0, connectAttempts: Infinity, handshakeTimeoutMs: hour });
    cleanups.push(server.close, () => socket.close());
    for (const count of [1, 2, 3]) {
      await vi.waitFor(() => expect(server.connections.length).toBe(count), { timeout: 10_000 });
      vi.advanceTimersByTime(hour);
    }
    await server.connections[0]!.closed;
    await server.connections[1]!.closed;
    expect(socket.state).toBe('connecting');
    expect(server.connections.flatMap((connection) => connection.received)).toStrictEqual([]);
    expect(written).toStrictEqual([]);
  });

  it('a client with no token asks for no proof and sends its connection params as before', async () => {
    const server = await startWireServer(() => null);
    cleanups.push(server.close);
    const socket = new AirlockSocket({ url: server.url, connectionParams: { client: 'web' }, WebSocket, retryDelayMs: () => 0 });
    cleanups.push(() => socket.close());
    expect(await server.received(0, 1)).toStrictEqual([{ method: 'connectionParams', data: { client: 'web', clock: expect.any(String) } }]);
    expect(server.connections[0]!.url).toBe('/trpc?connectionParams=1');
    expect(socket.state).toBe('open');
  });
});

describe('AirlockSocket fails a request with a deadline at its deadline, or at once with its answer unknown when its connection goes', () => {
  it('unanswered, it fails at its deadline; its connection lost, it fails then and there, saying it may have been applied, and is not sent again', async () => {
    const { server, socket, open } = await setUp();
    await open();
    const decide = (approvalId: string, deadline: number) => {
      const calls = recorder();
      const failedAt: number[] = [];
      const handlers: RequestHandlers = {
        ...calls.handlers,
        error: (failure) => {
          failedAt.push(socketClock());
          calls.handlers.error(failure);
        },
      };
      socket.request({ method: 'mutation', path: 'chat.confirmTool', input: { sessionId: 's', approvalId, decision: 'allow' } }, handlers, { deadline });
      return { ...calls, failedAt, deadline };
    };
    const unanswered = decide('a1', socketClock() + 100);
    await vi.waitFor(() => expect(unanswered.errors).toHaveLength(1));
    expect(unanswered.failedAt[0]).toBeGreaterThan(unanswered.deadline);
    expect(unanswered.errors.map((error) => [error.message, isExpired(error), isConnectionLost(error), isAnswerUnknown(error)])).toStrictEqual([
      ['no answer came before its deadline: the server does not apply it from now on', true, false, false],
    ]);

    // A minute ahead: it fails when the connection goes, not at its deadline.
    const lost = decide('a2', socketClock() + 60_000);
    await server.received(0, 3);
    const reopened = open();
    server.connections[0]!.socket.terminate();
    await vi.waitFor(() => expect(lost.errors).toHaveLength(1));
    const [error] = lost.errors as [AnswerUnknownError];
    expect([error instanceof AnswerUnknownError, isExpired(error), isConnectionLost(error), isAnswerUnknown(error), error.why]).toStrictEqual([
      true,
      false,
      true,
      true,
      'the connection closed before the answer came',
    ]);
    expect(error.openForMs).toBeGreaterThan(0);
    expect(error.message).toMatch(
      /^the connection closed before the answer came: the decision may or may not have been applied, and the server may still apply it in the next \d+ s \(never after its deadline\); once reconnected, read the chat's waiting calls: a call no longer waiting was decided, and its events say how$/,
    );
    // And it is not sent again on the new connection.
    await reopened;
    socket.request({ method: 'query', path: 'model.info', input: undefined }, recorder().handlers);
    expect(await server.received(1, 2)).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      { id: 3, method: 'query', params: { path: 'model.info' } },
    ]);
  });
});

describe('a decision with a deadline counted from its write', () => {
  const decision = { method: 'mutation' as const, path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a1', decision: 'allow' } };

  it('whose write threw is not left waiting: the throw is its answer, nothing fails it again, and closing does not wait for it', async () => {
    const server = await startWireServer();
    let failing = false;
    class FailingWebSocket extends WebSocket {
      override send(data: string): void {
        if (failing) throw new Error('the socket failed to send');
        super.send(data);
      }
    }
    let wake = () => {};
    const opened = new Promise<void>((resolve) => (wake = resolve));
    // Closing waits a minute for the answers of what was sent: one left waiting would hold it past the test's time.
    const socket = new AirlockSocket({ url: server.url, connectionParams: { token: 'secret' }, WebSocket: FailingWebSocket, retryDelayMs: () => 0, onOpen: () => wake(), closeWaitMs: 60_000 });
    cleanups.push(server.close);
    await opened;
    failing = true;
    const calls = recorder();
    expect(() => socket.request(decision, calls.handlers, { deadlineAfterWriteMs: 50 })).toThrow('the socket failed to send');
    expect(() => socket.request({ method: 'mutation', path: 'chat.cancel', input: { sessionId: 's' } }, calls.handlers)).toThrow('the socket failed to send');
    await socket.close();
    expect([calls.errors, calls.results, calls.completed()]).toStrictEqual([[], [], 0]);
  });

  it('written again after the server closed its connection as replaced before its token was taken (4001), fails at its new deadline', async () => {
    const { server, socket, open } = await setUp();
    await open();
    const calls = recorder();
    socket.request(decision, calls.handlers, { deadlineAfterWriteMs: 300 });
    const [, first] = (await server.received(0, 2)) as [unknown, { params: { input: { notAfter: number } } }];
    // Some time passes before the close, so a deadline counted from the second write is a later one.
    await vi.waitFor(() => expect(socketClock()).toBeGreaterThan(first.params.input.notAfter - 300 + 100));
    server.connections[0]!.socket.close(CLOSE_REPLACED_BEFORE_TOKEN, 'replaced before its token was presented');
    const [, again] = (await server.received(1, 2)) as [unknown, { params: { path: string; input: { notAfter: number } } }];
    expect(again.params.path).toBe('chat.confirmTool');
    expect(again.params.input.notAfter - first.params.input.notAfter).toBeGreaterThanOrEqual(100);
    await vi.waitFor(() => expect(calls.errors.map((error) => [isExpired(error), socketClock() > again.params.input.notAfter])).toStrictEqual([[true, true]]));
  });

  it('given a deadline already past, fails at once and is not written', async () => {
    const { server, socket, written, open } = await setUp();
    await open();
    const calls = recorder();
    socket.request(decision, calls.handlers, { deadline: socketClock() - 1 });
    expect(calls.errors.map((error) => [error.message, isExpired(error)])).toStrictEqual([['not sent before its deadline (no connection): the server never got it', true]]);
    socket.request({ method: 'query', path: 'model.info', input: undefined }, recorder().handlers);
    await server.received(0, 2);
    expect(written.map((text) => (JSON.parse(text) as { method: string }).method)).toStrictEqual(['connectionParams', 'query']);
  });
});

describe('AirlockSocket on a WebSocket whose send throws while it writes what waited for a connection', () => {
  it('drops that connection as one that went: what went out fails as such, what did not is written on the next', async () => {
    const server = await startWireServer();
    let made = 0;
    class FirstFailsOnCancel extends WebSocket {
      private readonly failing = ++made === 1;
      override send(data: string): void {
        if (this.failing && data.includes('"chat.cancel"')) throw new Error('the socket failed to send');
        super.send(data);
      }
    }
    // Each request fits alone, the three together do not: written one message each, the second throws.
    const socket = new AirlockSocket({ url: server.url, connectionParams: { token: 'secret' }, WebSocket: FirstFailsOnCancel, retryDelayMs: () => 0, closeWaitMs: 0, maxMessageBytes: 220 });
    cleanups.push(server.close, () => socket.close());
    const decision = recorder();
    const cancel = recorder();
    const query = recorder();
    socket.request({ method: 'mutation', path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a1', decision: 'allow' } }, decision.handlers, { deadlineAfterWriteMs: 60_000 });
    socket.request({ method: 'mutation', path: 'chat.cancel', input: { sessionId: 's' } }, cancel.handlers);
    socket.request({ method: 'query', path: 'model.info', input: undefined }, query.handlers);
    const [, first] = (await server.received(0, 2)) as [unknown, { id: number; params: { path: string } }];
    expect([first.id, first.params.path]).toStrictEqual([1, 'chat.confirmTool']);
    await vi.waitFor(() => expect(decision.errors.map((error) => [isAnswerUnknown(error), error.message.startsWith('the connection failed to send: the decision may or may not have been applied')])).toStrictEqual([[true, true]]));
    expect(await server.received(1, 2)).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      [
        { id: 2, method: 'mutation', params: { path: 'chat.cancel', input: { sessionId: 's' } } },
        { id: 3, method: 'query', params: { path: 'model.info' } },
      ],
    ]);
    expect(server.connections[0]!.received).toHaveLength(2);
    expect([cancel.errors, query.errors]).toStrictEqual([[], []]);
  });
});

// Found from outside: a decision typed while the connection was down (a server restarting, about 10 s here) ran out
// its deadline before it was ever written, though the terminal had said twice it would be sent once the connection
// was back.
describe('a decision made while the connection is down', () => {
  it('is written once a connection opens, however long that takes, with its whole deadline counted from then', async () => {
    const greetings: (() => void)[] = [];
    const server = await startWireServer((upgrade, ws) => {
      greetings.push(() => ws.send(proofFrame(upgrade, 'secret')));
      return null;
    });
    // Time runs only as the test moves it: the hour the decision waits unwritten, then its deadline.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const hour = 3_600_000;
    const socket = new AirlockSocket({ url: server.url, connectionParams: { token: 'secret' }, WebSocket, retryDelayMs: () => 0, handshakeTimeoutMs: 10 * hour, closeWaitMs: 0 });
    // Run last to first: real time again before the socket closes.
    cleanups.push(server.close, () => socket.close(), async () => {
      vi.useRealTimers();
    });
    const trpc = createTRPCClient<AppRouter>({ links: [airlockLink<AppRouter>(socket, { decisionTimeoutMs: 10_000 })] });
    const answer = trpc.chat.confirmTool.mutate({ sessionId: 's', approvalId: 'a1', decision: 'allow' }).then(
      () => 'answered',
      (error: unknown) => error,
    );
    await vi.waitFor(() => expect(greetings).toHaveLength(1));
    vi.advanceTimersByTime(hour);
    expect(socket.state).toBe('connecting');

    const writtenAt = socketClock();
    greetings[0]!();
    const [, decision] = (await server.received(0, 2)) as [unknown, { params: { input: { notAfter: number } } }];
    const notAfter = decision.params.input.notAfter;
    expect(decision).toStrictEqual({ id: 1, method: 'mutation', params: { path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a1', decision: 'allow', notAfter } } });
    // Counted from the write, which came after the proof (waiting for it moves the test's clock on a little).
    expect(notAfter).toBeGreaterThanOrEqual(writtenAt + 10_000);
    expect(notAfter).toBeLessThanOrEqual(socketClock() + 10_000);

    // Unanswered, it fails at the deadline counted from its write, as one the server no longer applies.
    vi.advanceTimersByTime(notAfter - socketClock() + 2);
    const failure = await answer;
    expect(failure instanceof Error && isExpired(failure)).toBe(true);
    expect(failure instanceof Error && failure.message).toBe('no answer came before its deadline: the server does not apply it from now on');
  });
});

describe('AirlockSocket asked by the server for a new connection', () => {
  it('reads the answers to what it sent on the old one until the server closes it: a decision refused as the server stops is answered with why, not lost', async () => {
    const { server, socket, open } = await setUp();
    await open();
    const decision = recorder();
    socket.request({ method: 'mutation', path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a1', decision: 'allow' } }, decision.handlers, { deadline: socketClock() + 60_000 });
    const query = recorder();
    socket.request({ method: 'query', path: 'chat.pending', input: { sessionId: 's' } }, query.handlers);
    await server.received(0, 3);
    const old = server.connections[0]!.socket;
    const reopened = open();
    old.send(JSON.stringify({ id: null, method: 'reconnect' }));
    await reopened;
    // A request made now goes on the new connection; the old one still answers what was sent on it.
    socket.request({ method: 'query', path: 'model.info', input: undefined }, recorder().handlers);
    expect((await server.received(1, 2)).at(-1)).toStrictEqual({ id: 3, method: 'query', params: { path: 'model.info' } });
    const stopping = 'Airlock is stopping: the decision was not applied, nothing was stored, and the call still waits for a decision when Airlock is started again';
    old.send(JSON.stringify({ id: 1, error: { message: stopping, code: -32009, data: { code: 'CONFLICT' } } }));
    await vi.waitFor(() => expect(decision.errors).toHaveLength(1));
    const [refused] = decision.errors;
    expect([refused!.message, refused!.response?.error.data, isConnectionLost(refused), isAnswerUnknown(refused)]).toStrictEqual([stopping, { code: 'CONFLICT' }, false, false]);

    // What is still unanswered when the server closes the old connection fails as lost.
    old.close();
    await vi.waitFor(() => expect(query.errors).toHaveLength(1));
    expect([query.errors[0]!.message, isConnectionLost(query.errors[0])]).toStrictEqual(['the connection closed before the answer came', true]);
    expect(socket.state).toBe('open');
  });

  it('fails what is still unanswered on the old one when the server has not closed it in time, without waiting on a closing handshake that server never answers', async () => {
    const { server, socket, open } = await setUp();
    await open();
    const decision = recorder();
    socket.request({ method: 'mutation', path: 'chat.confirmTool', input: { sessionId: 's', approvalId: 'a1', decision: 'allow' } }, decision.handlers, { deadline: socketClock() + 3_600_000 });
    const query = recorder();
    socket.request({ method: 'query', path: 'chat.pending', input: { sessionId: 's' } }, query.handlers);
    await server.received(0, 3);
    // Time runs only as the test moves it, ws's own closing timer included.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    cleanups.push(async () => {
      vi.useRealTimers();
    });
    const old = server.connections[0]!.socket;
    old.send(JSON.stringify({ id: null, method: 'reconnect' }));
    // The server froze after asking: it reads nothing more, the client's closing frame included.
    old.pause();
    await vi.waitFor(() => expect(socket.state).not.toBe('open'));
    // Past the time the client keeps the old connection for its answers, well short of ws's 30 s closing handshake.
    vi.advanceTimersByTime(5_001);
    await vi.waitFor(() => expect(query.errors).toHaveLength(1));
    expect([query.errors[0]!.message, isConnectionLost(query.errors[0]), isAnswerUnknown(query.errors[0])]).toStrictEqual(['the connection closed before the answer came', true, false]);
    expect(decision.errors).toHaveLength(1);
    const [unknown] = decision.errors;
    expect(unknown instanceof AnswerUnknownError && unknown.openForMs > 0).toBe(true);
  });
});

describe('AirlockSocket does not wait forever on a handshake', () => {
  it('drops a reconnect that a TCP server accepts and never answers, tries again after its delay, and resumes once a server answers', async () => {
    const server = await startWireServer();
    // In front of the server: passes connections through, or (silent) accepts them and says nothing, as a frozen
    // server's kernel does.
    let silent = false;
    const held: Socket[] = [];
    const accepted: Socket[] = [];
    const front = createServer((client) => {
      accepted.push(client);
      if (silent) {
        held.push(client);
        return;
      }
      const upstream = connect(Number(new URL(server.url).port), '127.0.0.1');
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', () => resolve()));
    const url = `ws://127.0.0.1:${(front.address() as AddressInfo).port}/trpc`;
    const attempts: number[] = [];
    const opened: (() => void)[] = [];
    const socket = new AirlockSocket({
      url,
      connectionParams: { token: 'secret' },
      WebSocket,
      // Read at each connect: short only while the front is silent, so no healthy handshake is ever overdue.
      get handshakeTimeoutMs() {
        return silent ? 50 : 60_000;
      },
      retryDelayMs: (attempt) => {
        attempts.push(attempt);
        return 0;
      },
      // The proof names the Host the client dialed: the front's, which the wire server answers for.
      onOpen: () => opened.splice(0).forEach((wake) => wake()),
    });
    cleanups.push(server.close, () => socket.close(), () => new Promise<void>((resolve) => {
      for (const client of accepted) client.destroy();
      front.close(() => resolve());
    }));
    const stream = recorder();
    socket.request({ method: 'subscription', path: 'sessions.watch', input: {} }, stream.handlers);
    await server.received(0, 2);
    expect(socket.state).toBe('open');

    silent = true;
    server.connections[0]!.socket.terminate();
    // Each silent handshake is dropped and tried again, with the reconnect delay asked each time.
    await vi.waitFor(() => expect(held.length).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
    expect(socket.state).toBe('reconnecting');
    expect(attempts.slice(0, 3)).toStrictEqual([0, 1, 2]);

    const reopened = new Promise<void>((resolve) => opened.push(resolve));
    silent = false;
    await reopened;
    expect(await server.received(server.connections.length - 1, 2)).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      { id: 1, method: 'subscription', params: { path: 'sessions.watch', input: {} } },
    ]);
    expect(stream.errors).toStrictEqual([]);
  });
});

describe('createAirlockClient over the wire', () => {
  const event = (runId: string, seq: number, data: Record<string, unknown>) => ({ type: 'data', id: `${runId}:${seq}`, data: { id: `${runId}:${seq}`, data } });

  async function clientOn(url: string) {
    const opened: (() => void)[] = [];
    const client = createAirlockClient({ url, token: 'secret', WebSocket, retryDelayMs: () => 0, closeWaitMs: 0, onOpen: () => opened.splice(0).forEach((wake) => wake()) });
    cleanups.push(() => client.close());
    return { client, open: () => new Promise<void>((resolve) => opened.push(resolve)) };
  }

  it('a run stream follows its run across a server restart: the server asks for a new connection, then stops the stream on the old one', async () => {
    const server = await startWireServer();
    cleanups.push(server.close);
    const { client, open } = await clientOn(server.url);
    const run = client.attachRun({ sessionId: 's', runId: 'r' });
    const first = run.next();
    await server.received(0, 2);
    const old = server.connections[0]!.socket;
    old.send(JSON.stringify({ id: 1, result: { type: 'started' } }));
    old.send(JSON.stringify({ id: 1, result: event('r', 1, { type: 'run-start', runId: 'r', sessionId: 's' }) }));
    expect(await first).toStrictEqual({ done: false, value: { type: 'run-start', runId: 'r', sessionId: 's' } });
    const reopened = open();
    old.send(JSON.stringify({ id: null, method: 'reconnect' }));
    old.send(JSON.stringify({ id: 1, result: { type: 'stopped' } }));
    await reopened;
    expect(await server.received(1, 2)).toStrictEqual([
      { method: 'connectionParams', data: { token: 'secret', clock: expect.any(String) } },
      { id: 1, method: 'subscription', params: { path: 'chat.stream', input: { sessionId: 's', runId: 'r' }, lastEventId: 'r:1' } },
    ]);
    const next = run.next();
    server.connections[1]!.socket.send(JSON.stringify({ id: 1, result: event('r', 2, { type: 'run-end', runId: 'r', reason: 'done' }) }));
    expect(await next).toStrictEqual({ done: false, value: { type: 'run-end', runId: 'r', reason: 'done' } });
    expect(await run.next()).toStrictEqual({ done: true, value: undefined });
    expect(run.lastEventId).toBe('r:2');
  });

  it('a run stream the server stops while the connection stays is followed again once from its last event, and ends when stopped again with nothing new', async () => {
    const server = await startWireServer();
    cleanups.push(server.close);
    const { client } = await clientOn(server.url);
    const run = client.attachRun({ sessionId: 's', runId: 'r' });
    const first = run.next();
    await server.received(0, 2);
    const socket = server.connections[0]!.socket;
    socket.send(JSON.stringify({ id: 1, result: event('r', 1, { type: 'run-start', runId: 'r', sessionId: 's' }) }));
    await first;
    const rest = run.next();
    socket.send(JSON.stringify({ id: 1, result: { type: 'stopped' } }));
    const again = (await server.received(0, 3))[2];
    expect(again).toStrictEqual({ id: 2, method: 'subscription', params: { path: 'chat.stream', input: { sessionId: 's', runId: 'r', lastEventId: 'r:1' } } });
    socket.send(JSON.stringify({ id: 2, result: { type: 'stopped' } }));
    expect(await rest).toStrictEqual({ done: true, value: undefined });
    expect(run.lastEventId).toBe('r:1');
  });

  it('a run stream ends, without an error, when the client is closed', async () => {
    const server = await startWireServer();
    cleanups.push(server.close);
    const { client } = await clientOn(server.url);
    const run = client.attachRun({ sessionId: 's', runId: 'r' });
    const first = run.next();
    await server.received(0, 2);
    await client.close();
    expect(await first).toStrictEqual({ done: true, value: undefined });
  });

  it('followSessions ends quietly when the client is closed while it reads the list', async () => {
    const server = await startWireServer();
    cleanups.push(server.close);
    const { client } = await clientOn(server.url);
    const lists = client.followSessions();
    const first = lists.next();
    await server.received(0, 2);
    const socket = server.connections[0]!.socket;
    socket.send(JSON.stringify({ id: 1, result: { type: 'started' } }));
    socket.send(JSON.stringify({ id: 1, result: { type: 'data', data: { type: 'ready' } } }));
    expect((await server.received(0, 3))[2]).toStrictEqual({ id: 2, method: 'query', params: { path: 'sessions.list', input: { limit: 500 } } });
    await client.close();
    expect(await first).toStrictEqual({ done: true, value: undefined });
  });

  it('lastEventId is the id of the last event given out, not of one still waiting to be read', async () => {
    const server = await startWireServer();
    cleanups.push(server.close);
    const { client } = await clientOn(server.url);
    const run = client.attachRun({ sessionId: 's', runId: 'r' });
    const first = run.next();
    await server.received(0, 2);
    const socket = server.connections[0]!.socket;
    socket.send(JSON.stringify({ id: 1, result: event('r', 1, { type: 'run-start', runId: 'r', sessionId: 's' }) }));
    socket.send(JSON.stringify({ id: 1, result: event('r', 2, { type: 'status', text: 'thinking' }) }));
    socket.send(JSON.stringify({ id: 1, result: event('r', 3, { type: 'status', text: 'still thinking' }) }));
    await first;
    // Both later events have arrived by the time a query sent after them is answered.
    const info = client.trpc.model.info.query();
    const [, , query] = (await server.received(0, 3)) as [unknown, unknown, { id: number }];
    socket.send(JSON.stringify({ id: query.id, result: { type: 'data', data: { model: 'm' } } }));
    await info;
    expect(run.lastEventId).toBe('r:1');
    await run.next();
    expect(run.lastEventId).toBe('r:2');
  });

  it('gives up on a server it cannot reach: every call fails with why, and the state says so', async () => {
    const server = await startWireServer();
    const url = server.url;
    await server.close();
    const { client } = await clientOn(url);
    await expect(client.trpc.model.info.query()).rejects.toThrow(/cannot reach Airlock at ws:\/\/127\.0\.0\.1:\d+\/trpc \(.*ECONNREFUSED.*\)/);
    expect(client.state).toBe('unreachable');
    await expect(client.pending('s')).rejects.toThrow(/cannot reach Airlock/);
    const run = client.attachRun({ sessionId: 's', runId: 'r' });
    await expect(run.next()).rejects.toThrow(/cannot reach Airlock/);
  });

  it('says which server it cannot reach without a token the address carries', async () => {
    const server = await startWireServer();
    const url = `${server.url}?token=SECRET`;
    await server.close();
    const { client } = await clientOn(url);
    const failure = await client.trpc.model.info.query().then(
      () => 'answered',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    expect(failure).toMatch(/^cannot reach Airlock at ws:\/\/127\.0\.0\.1:\d+\/trpc\?token=<hidden>( \(.*\))?$/);
    expect(failure).not.toContain('SECRET');
  });
});
