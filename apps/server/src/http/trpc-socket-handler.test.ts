import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { deferred } from '@airlock/core/testing';
import { initTRPC, tracked, TRPCError } from '@trpc/server';
import { getWSConnectionHandler } from '@trpc/server/adapters/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { trpcConnectionHandler } from './trpc-socket-handler';

type Step = Promise<unknown> | (() => unknown);

/** An async iterable whose reads answer `steps` in turn, then never; `extra` adds or replaces iterator methods. */
function stream(steps: Step[], extra: Record<PropertyKey, unknown> = {}): AsyncIterable<unknown> {
  return {
    [Symbol.asyncIterator]() {
      let at = 0;
      return {
        next() {
          const step = steps[at++];
          return typeof step === 'function' ? step() : (step ?? new Promise(() => {}));
        },
        ...extra,
      } as AsyncIterator<unknown>;
    },
  };
}

/** A socket the handler talks to, keeping what it is sent, as sent and as read back, in order. */
class RecordingSocket extends EventEmitter {
  readyState = 1;
  /** Each frame sent, as sent. */
  readonly frames: string[] = [];
  /** What happened, in order: each frame read back (see `record`), and what the streams and onError log. */
  readonly log: string[] = [];
  closed = false;
  private waiters: { until: (log: string[]) => boolean; resolve: () => void }[] = [];

  send(text: string): void {
    this.frames.push(text);
    if (text === 'PONG') {
      this.record('PONG');
      return;
    }
    const message = JSON.parse(text) as { result?: { type: string; data?: unknown }; error?: { message: string } };
    this.record(message.error ? `error:${message.error.message}` : `${message.result!.type}${message.result!.data === undefined ? '' : `:${JSON.stringify(message.result!.data)}`}`);
  }

  close(): void {
    this.closed = true;
  }

  record(entry: string): void {
    this.log.push(entry);
    this.waiters = this.waiters.filter((waiter) => !(waiter.until(this.log) && (waiter.resolve(), true)));
  }

  /** Resolves once the log holds what `until` looks for. */
  when(until: (log: string[]) => boolean): Promise<void> {
    if (until(this.log)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ until, resolve }));
  }

  receive(message: object | string, isBinary = false): void {
    this.emit('message', Buffer.from(typeof message === 'string' ? message : JSON.stringify(message)), isBinary);
  }
}

const REQUEST = { url: '/trpc', headers: { host: '127.0.0.1' } } as unknown as IncomingMessage;

/** Subscribes over a recording socket to a procedure answering `source`; `socket.log` tells what was sent. */
function subscribe(source: (socket: RecordingSocket) => AsyncIterable<unknown>): RecordingSocket {
  const t = initTRPC.create();
  const socket = new RecordingSocket();
  const router = t.router({ s: t.procedure.subscription(() => source(socket)) });
  const handler = trpcConnectionHandler({ router, createContext: () => ({}), onError: ({ error }) => socket.record(`onError:${error.message}`) });
  handler(socket as unknown as WebSocket, REQUEST);
  socket.receive({ id: 1, method: 'subscription', params: { path: 's' } });
  return socket;
}

const has = (entry: string) => (log: string[]) => log.includes(entry);
/** A `return` that records each call of it on the socket. */
const recordedReturn = (socket: RecordingSocket) => ({
  return: async () => {
    socket.record('return');
    return { done: true, value: undefined };
  },
});

describe('a subscription read by the socket handler', () => {
  it('sends its data in order, then "stopped" at its end', async () => {
    const socket = subscribe(() => stream([Promise.resolve({ value: 1, done: false }), Promise.resolve({ value: 2, done: false }), Promise.resolve({ done: true })]));
    await socket.when(has('stopped'));
    expect(socket.log).toEqual(['started', 'data:1', 'data:2', 'stopped']);
  });

  it('sends a failed read as an error, then "stopped"', async () => {
    const socket = subscribe(() => stream([Promise.resolve({ value: 1, done: false }), Promise.reject(new Error('read failed'))]));
    await socket.when(has('stopped'));
    expect(socket.log).toEqual(['started', 'data:1', 'onError:read failed', 'error:read failed', 'stopped']);
  });

  it('ends a pending read on a stop or a close: the stream is returned, then "stopped", and nothing after', async () => {
    for (const end of ['stop', 'close'] as const) {
      const socket = subscribe((to) => stream([Promise.resolve({ value: 1, done: false })], recordedReturn(to)));
      await socket.when(has('data:1'));
      if (end === 'stop') socket.receive({ id: 1, method: 'subscription.stop' });
      else socket.emit('close');
      await socket.when((log) => log.filter((entry) => entry === 'return').length === 2);
      // The stream is returned before "stopped" is sent, and disposed of (returned again) after.
      expect(socket.log).toEqual(['started', 'data:1', 'return', 'stopped', 'return']);
    }
  });

  it('fails the subscription, sending an error and nothing more, when what a read gave cannot be sent', async () => {
    const socket = subscribe(() => stream([Promise.resolve({ value: 1n, done: false })]));
    await socket.when((log) => log.some((entry) => entry.startsWith('error:')));
    expect(socket.log).toEqual(['started', 'onError:Do not know how to serialize a BigInt', 'error:Do not know how to serialize a BigInt']);
  });

  it('fails the subscription when a read gives no result object, rather than reading again without end (found in review)', async () => {
    for (const given of [undefined, null, 'x']) {
      const socket = subscribe(() => stream([Promise.resolve({ value: 1, done: false }), () => Promise.resolve(given)]));
      await socket.when((log) => log.some((entry) => entry.startsWith('error:')));
      expect(socket.log).toEqual(['started', 'data:1', `onError:Iterator result ${String(given)} is not an object`, `error:Iterator result ${String(given)} is not an object`]);
    }
  });

  it('fails the subscription when its stream throws as a read is asked for, or as it is opened (found in review)', async () => {
    const throwing = subscribe(() => stream([() => { throw new Error('next threw'); }]));
    await throwing.when(has('error:next threw'));
    expect(throwing.log).toEqual(['started', 'onError:next threw', 'error:next threw']);

    const unopened = subscribe(() => ({ [Symbol.asyncIterator]: () => { throw new Error('could not open'); } }));
    await unopened.when(has('error:could not open'));
    expect(unopened.log).toEqual(['started', 'onError:could not open', 'error:could not open']);
  });
});

/**
 * A router with a transformer (so that what is serialized, and where, shows in each frame) and an error formatter,
 * whose procedures answer, refuse, throw and stream.
 */
function testRouter(seen: { signals: unknown[] }) {
  const t = initTRPC.context<{ user: string }>().create({
    isDev: false,
    transformer: { serialize: (value: unknown) => ({ wrapped: value }), deserialize: (value: unknown) => (value as { wrapped: unknown }).wrapped },
    errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, cause: error.cause?.message ?? null } }),
  });
  return t.router({
    echo: t.procedure.input(z.object({ text: z.string() })).query(({ input, ctx, signal }) => {
      seen.signals.push(signal);
      return { text: input.text, user: ctx.user };
    }),
    save: t.procedure.input(z.object({ n: z.number() })).mutation(({ input, signal }) => {
      seen.signals.push(signal);
      return input.n * 2;
    }),
    refuse: t.procedure.mutation(() => {
      throw new TRPCError({ code: 'CONFLICT', message: 'no' });
    }),
    crash: t.procedure.query(() => {
      throw new Error('internal detail');
    }),
    iterable: t.procedure.query(async function* () {
      yield 1;
    }),
    events: t.procedure.input(z.object({ from: z.number().optional() }).optional()).subscription(async function* ({ input }) {
      yield tracked('e1', { n: input?.from ?? 0 });
      yield { plain: true };
      throw new TRPCError({ code: 'BAD_REQUEST', message: 'stream over' });
    }),
    plain: t.procedure.query(() => 'not a stream'),
    notStream: t.procedure.subscription(() => 'not a stream' as never),
  });
}

/** What a handler sends for `messages` given one after another, each once the frames it is known to bring are in. */
async function framesOf(
  make: (opts: Parameters<typeof trpcConnectionHandler<ReturnType<typeof testRouter>>>[0]) => (client: WebSocket, req: IncomingMessage) => void,
  url: string,
  messages: { send: object | string; binary?: boolean; frames: number }[],
  createContext: () => { user: string } = () => ({ user: 'u1' }),
): Promise<{ frames: string[]; errors: string[]; closed: boolean }> {
  const socket = new RecordingSocket();
  const errors: string[] = [];
  const handler = make({ router: testRouter({ signals: [] }), createContext, onError: ({ error, type, path, input }) => errors.push(`${error.code} ${type} ${path} ${JSON.stringify(input)}`) });
  handler(socket as unknown as WebSocket, { url, headers: { host: '127.0.0.1' } } as unknown as IncomingMessage);
  let expected = 0;
  for (const { send, binary, frames } of messages) {
    expected += frames;
    socket.receive(send, binary);
    await socket.when((log) => log.length >= expected);
  }
  // A turn for what would come after (a close of a connection refused at its context).
  await new Promise((resolve) => setImmediate(resolve));
  return { frames: socket.frames, errors, closed: socket.closed };
}

/** tRPC's own, for the handler to be compared with. */
const trpcAdapter = ({ keepAlive, ...opts }: Parameters<typeof trpcConnectionHandler<ReturnType<typeof testRouter>>>[0]) =>
  getWSConnectionHandler({ ...opts, ...(keepAlive === undefined ? {} : { keepAlive: { enabled: true, ...keepAlive } }), wss: new WebSocketServer({ noServer: true }) });

type Said = Awaited<ReturnType<typeof framesOf>>;

/** Where the handler departs from tRPC's adapter on purpose (docs/internals.md): what each says there. */
type Departure = { ours: Partial<Said>; adapter: Partial<Said> };

const longId = 'x'.repeat(129);

describe('the socket handler speaks as tRPC’s WebSocket adapter does', () => {
  const conversations: [string, string, { send: object | string; binary?: boolean; frames: number }[], Departure?][] = [
    [
      'queries, mutations, their refusals and failures, batches',
      '/trpc',
      [
        { send: { id: 1, method: 'query', params: { path: 'echo', input: { wrapped: { text: 'hi' } } } }, frames: 1 },
        { send: { id: 'two', jsonrpc: '2.0', method: 'mutation', params: { path: 'save', input: { wrapped: { n: 21 } } } }, frames: 1 },
        { send: { id: 3, method: 'query', params: { path: 'echo', input: { wrapped: { text: 7 } } } }, frames: 1 },
        { send: { id: 4, method: 'mutation', params: { path: 'refuse', input: { wrapped: undefined } } }, frames: 1 },
        { send: { id: 5, method: 'query', params: { path: 'crash', input: { wrapped: undefined } } }, frames: 1 },
        { send: { id: 6, method: 'query', params: { path: 'nowhere', input: { wrapped: undefined } } }, frames: 1 },
        { send: { id: 7, method: 'mutation', params: { path: 'echo', input: { wrapped: { text: 'x' } } } }, frames: 1 },
        { send: { id: 8, method: 'query', params: { path: 'iterable', input: { wrapped: undefined } } }, frames: 1 },
        {
          send: [
            { id: 9, method: 'query', params: { path: 'echo', input: { wrapped: { text: 'a' } } } },
            { id: 10, method: 'mutation', params: { path: 'save', input: { wrapped: { n: 1 } } } },
          ],
          frames: 2,
        },
      ],
    ],
    [
      'subscriptions: tracked and plain data, an error, a resume id, one that is no stream, a duplicate id, a stop; ' +
        'a stream that fails is told to onError without its input, which the adapter kept for the subscription’s life',
      '/trpc',
      [
        { send: { id: 1, method: 'subscription', params: { path: 'events', input: { wrapped: { from: 3 } } } }, frames: 5 },
        { send: { id: 2, method: 'subscription', params: { path: 'events', input: { wrapped: undefined }, lastEventId: 'e0' } }, frames: 5 },
        { send: { id: 3, method: 'subscription', params: { path: 'notStream', input: { wrapped: undefined } } }, frames: 1 },
        { send: { id: 4, method: 'subscription', params: { path: 'plain', input: { wrapped: undefined } } }, frames: 1 },
        { send: { id: 5, method: 'subscription.stop' }, frames: 0 },
      ],
      {
        ours: {
          errors: [
            'BAD_REQUEST subscription events undefined',
            'BAD_REQUEST subscription events undefined',
            'INTERNAL_SERVER_ERROR subscription notStream undefined',
            'NOT_FOUND subscription plain undefined',
          ],
        },
        adapter: {
          errors: [
            'BAD_REQUEST subscription events {"from":3}',
            'BAD_REQUEST subscription events {"lastEventId":"e0"}',
            'INTERNAL_SERVER_ERROR subscription notStream undefined',
            'NOT_FOUND subscription plain undefined',
          ],
        },
      },
    ],
    [
      'what is not a request: no id, text that is not JSON, a binary message, not a request object, a ping',
      '/trpc',
      [
        { send: { id: null, method: 'query', params: { path: 'echo', input: { wrapped: { text: 'hi' } } } }, frames: 1 },
        { send: '{not json', frames: 1 },
        { send: { id: 1, method: 'query', params: { path: 'echo', input: { wrapped: { text: 'hi' } } } }, binary: true, frames: 1 },
        { send: { id: 2, method: 'nothing', params: {} }, frames: 1 },
        { send: 'PING', frames: 1 },
        { send: 'PONG', frames: 0 },
      ],
    ],
    [
      'an id over 128 characters, refused as a missing one, which the adapter answers under',
      '/trpc',
      [{ send: { id: longId, method: 'query', params: { path: 'echo', input: { wrapped: { text: 'hi' } } } }, frames: 1 }],
      {
        ours: {
          frames: [
            JSON.stringify({
              id: null,
              error: { wrapped: { message: '`id` is longer than 128 characters', code: -32700, data: { code: 'PARSE_ERROR', httpStatus: 400, cause: null } } },
            }),
          ],
          errors: ['PARSE_ERROR unknown undefined undefined'],
        },
        adapter: {
          frames: [JSON.stringify({ id: longId, result: { type: 'data', data: { wrapped: { text: 'hi', user: 'u1' } } } })],
          errors: [],
        },
      },
    ],
    [
      'connection params first, then a request',
      '/trpc?connectionParams=1',
      [
        { send: { method: 'connectionParams', data: { token: 't' } }, frames: 0 },
        { send: { id: 1, method: 'query', params: { path: 'echo', input: { wrapped: { text: 'hi' } } } }, frames: 1 },
      ],
    ],
    [
      'connection params that are not strings',
      '/trpc?connectionParams=1',
      [
        { send: { method: 'connectionParams', data: { token: 1 } }, frames: 1 },
        { send: { id: 1, method: 'query', params: { path: 'echo', input: { wrapped: { text: 'hi' } } } }, frames: 1 },
      ],
    ],
  ];

  for (const [name, url, messages, departure] of conversations) {
    it(name, async () => {
      const ours = await framesOf(trpcConnectionHandler, url, messages);
      const adapter = await framesOf(trpcAdapter, url, messages);
      expect(ours.frames).toHaveLength(messages.reduce((sum, { frames }) => sum + frames, 0));
      if (departure !== undefined) {
        expect(ours).toMatchObject(departure.ours);
        expect(adapter).toMatchObject(departure.adapter);
      }
      expect(ours).toStrictEqual({ ...adapter, ...departure?.ours });
    });
  }

  it('a connection whose context cannot be made', async () => {
    const refuse = () => {
      throw new TRPCError({ code: 'UNAUTHORIZED', message: 'a valid access token is required' });
    };
    const messages = [{ send: { id: 1, method: 'query', params: { path: 'echo', input: { wrapped: { text: 'hi' } } } }, frames: 1 }];
    const ours = await framesOf(trpcConnectionHandler, '/trpc', messages.map((m) => ({ ...m, frames: 2 })), refuse);
    expect(ours).toStrictEqual(await framesOf(trpcAdapter, '/trpc', messages.map((m) => ({ ...m, frames: 2 })), refuse));
    expect(ours.closed).toBe(true);
  });
});

describe('the socket handler', () => {
  it('gives a query or a mutation no abort signal: none was ever aborted', async () => {
    const seen = { signals: [] as unknown[] };
    const socket = new RecordingSocket();
    trpcConnectionHandler({ router: testRouter(seen), createContext: () => ({ user: 'u1' }) })(socket as unknown as WebSocket, REQUEST);
    socket.receive({ id: 1, method: 'query', params: { path: 'echo', input: { wrapped: { text: 'hi' } } } });
    socket.receive({ id: 2, method: 'mutation', params: { path: 'save', input: { wrapped: { n: 1 } } } });
    await socket.when((log) => log.length === 2);
    expect(seen.signals).toStrictEqual([undefined, undefined]);
  });
});

/** A connection to a router of subscriptions `s` (id 1) answered by `answer`, which is handed each one's signal. */
function subscriptions(answer: (signal: AbortSignal | undefined, socket: RecordingSocket) => Promise<AsyncIterable<unknown>> | AsyncIterable<unknown>): RecordingSocket {
  const t = initTRPC.create();
  const socket = new RecordingSocket();
  const router = t.router({ s: t.procedure.subscription(({ signal }) => answer(signal, socket)) });
  trpcConnectionHandler({ router, createContext: () => ({}), onError: ({ error }) => socket.record(`onError:${error.message}`) })(socket as unknown as WebSocket, REQUEST);
  return socket;
}

const SUBSCRIBE = { id: 1, method: 'subscription', params: { path: 's' } };

describe('a subscription the socket handler refuses once its procedure has answered', () => {
  it('is returned unread, its signal aborted, when its socket closed while its procedure answered', async () => {
    const answered = deferred();
    const socket = subscriptions(async (signal, to) => {
      await answered.promise;
      return stream([], { return: async () => {
        to.record(`return, aborted ${signal?.aborted}`);
        return { done: true, value: undefined };
      } });
    });
    socket.receive(SUBSCRIBE);
    socket.readyState = 3;
    socket.emit('close');
    answered.resolve();
    await vi.waitFor(() => expect(socket.log).toStrictEqual(['return, aborted true']));
  });

  it('is returned unread, its signal aborted, when its id is already in use', async () => {
    const socket = subscriptions((signal, to) => stream([], { return: async () => {
      to.record(`return, aborted ${signal?.aborted}`);
      return { done: true, value: undefined };
    } }));
    socket.receive(SUBSCRIBE);
    await socket.when(has('started'));
    socket.receive(SUBSCRIBE);
    await socket.when(has('error:Duplicate id 1'));
    expect(socket.log).toStrictEqual(['started', 'return, aborted true', 'onError:Duplicate id 1', 'error:Duplicate id 1']);
  });
});

describe('a subscription that has said "stopped"', () => {
  it('leaves its id to the next subscription under it when its stream then fails to be disposed of: told to onError, nothing sent (found in review)', async () => {
    const disposed = deferred();
    let opened = 0;
    const socket = subscriptions((_signal, to) => {
      const which = ++opened;
      return which === 1
        ? stream([Promise.resolve({ done: true, value: undefined })], { [Symbol.asyncDispose]: () => disposed.promise })
        : stream([], { return: async () => {
            to.record('second returned');
            return { done: true, value: undefined };
          } });
    });
    socket.receive(SUBSCRIBE);
    await socket.when(has('stopped'));
    socket.receive(SUBSCRIBE);
    await socket.when((log) => log.filter((entry) => entry === 'started').length === 2);
    disposed.reject(new Error('dispose failed'));
    await socket.when(has('onError:dispose failed'));
    expect(socket.log).toStrictEqual(['started', 'stopped', 'started', 'onError:dispose failed']);
    // The second is still the one under id 1: a stop ends it.
    socket.receive({ id: 1, method: 'subscription.stop' });
    await socket.when((log) => log.filter((entry) => entry === 'stopped').length === 2);
    expect(socket.log).toStrictEqual(['started', 'stopped', 'started', 'onError:dispose failed', 'second returned', 'stopped']);
  });
});
