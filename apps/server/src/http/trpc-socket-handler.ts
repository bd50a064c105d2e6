import { callTRPCProcedure, getErrorShape, getTRPCErrorFromUnknown, isTrackedEnvelope, TRPCError, type AnyRouter, type inferRouterContext, type ProcedureType } from '@trpc/server';
import { createURL } from '@trpc/server/adapters/node-http';
import { handleKeepAlive } from '@trpc/server/adapters/ws';
import { isObservable, observableToAsyncIterable, type Observable } from '@trpc/server/observable';
import { parseTRPCMessage, type TRPCClientOutgoingMessage } from '@trpc/server/rpc';
import { isAsyncIterable, iteratorResource, parseConnectionParamsFromUnknown, type TRPCRequestInfo } from '@trpc/server/unstable-core-do-not-import';
import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket, WebSocketServer } from 'ws';

/**
 * tRPC over the server's WebSockets: what `@trpc/server/adapters/ws` does (the protocol, its messages and their order,
 * its keep-alive, connection params, errors and `onError`), with our patch's changes to it (see docs/internals.md), and
 * less work per request, the part a decision's round trip waits on:
 * - a query or a mutation is given no abort signal: tRPC's adapter made it an AbortController, never aborted, whose
 *   signal alone cost Node a few microseconds (an EventTarget set up, its prototype changed);
 * - a message's text is decoded once (tRPC's decoded it again for anything but a ping);
 * - each answer is built already serialized by the router's transformer, where tRPC's spread it into new objects to
 *   serialize (`transformTRPCResponse`, its object spread helper defining each key again).
 * Together about 45 µs of a deny's 0.8 ms in the server, measured against tRPC's adapter build against build
 * (docs/benchmarks.md, "Server's own part of a round trip (ninth session)"). Built from what tRPC exports, so it
 * patches nothing.
 */
export interface TRPCSocketHandlerOptions<TRouter extends AnyRouter> {
  router: TRouter;
  /** Makes a connection's context once its connection params arrive (or at once, when the URL says none will). A throw refuses the connection. */
  createContext: (opts: { req: IncomingMessage; res: WebSocket; info: TRPCRequestInfo }) => inferRouterContext<TRouter> | Promise<inferRouterContext<TRouter>>;
  /** Told of every error answered, as tRPC's `onError` is. Default none. */
  onError?: (opts: { error: TRPCError; type: ProcedureType | 'unknown'; path: string | undefined; req: IncomingMessage; input: unknown; ctx: inferRouterContext<TRouter> | undefined }) => void;
  /** Pings every `pingMs` and drops a socket silent for `pongWaitMs` after (tRPC's `handleKeepAlive`). Default none. */
  keepAlive?: { pingMs: number; pongWaitMs: number };
}

/** A response message, its data and error already serialized by the router's transformer. */
interface Response {
  id: string | number | null;
  jsonrpc?: '2.0' | undefined;
  result?: { type: 'data'; data: unknown; id?: string } | { type: 'started' | 'stopped' };
  error?: unknown;
}

/**
 * A subscription's abort signal, and the connection's: a plain object in place of an AbortController. In Node an
 * AbortSignal costs about 1.7 KB (two Maps, a hidden class of its own, a listener for onabort), held for as long as the
 * subscription lives, one per waiting run. Our subscriptions read `aborted` and add abort listeners; nothing else is
 * done with it.
 */
type AbortListener = ((this: unknown, event: unknown) => void) | { handleEvent(event: unknown): void };

class PlainAbortSignal {
  aborted = false;
  reason: unknown = undefined;
  onabort: ((this: PlainAbortSignal, event: { type: 'abort'; target: PlainAbortSignal }) => void) | null = null;
  listeners: Set<AbortListener> | undefined = undefined;

  addEventListener(type: string, listener: AbortListener): void {
    if (type !== 'abort' || this.aborted) return;
    (this.listeners ??= new Set()).add(listener);
  }

  removeEventListener(type: string, listener: AbortListener): void {
    if (type === 'abort') this.listeners?.delete(listener);
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }
}

class PlainAbortController {
  readonly signal = new PlainAbortSignal();

  abort(reason?: unknown): void {
    const signal = this.signal;
    if (signal.aborted) return;
    signal.aborted = true;
    signal.reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    const event = { type: 'abort' as const, target: signal };
    const listeners = signal.listeners;
    signal.listeners = undefined;
    signal.onabort?.call(signal, event);
    for (const listener of listeners ?? []) {
      if (typeof listener === 'function') listener.call(signal, event);
      else listener.handleEvent(event);
    }
  }
}

/** The signal handed to a subscription's procedure: typed as tRPC types it. */
function asSignal(controller: PlainAbortController): AbortSignal {
  return controller.signal as unknown as AbortSignal;
}

const WEBSOCKET_OPEN = 1;
/** The longest request id kept: a subscription's is kept and echoed as long as it lives. */
const MAX_ID_CHARS = 128;

/** Handles each connection `wss` emits, as tRPC's `applyWSSHandler` does; answers what it does too. */
export function applyTRPCSocketHandler<TRouter extends AnyRouter>(opts: TRPCSocketHandlerOptions<TRouter> & { wss: WebSocketServer }): { broadcastReconnectNotification: () => void } {
  const onConnection = trpcConnectionHandler(opts);
  opts.wss.on('connection', (client: WebSocket, req: IncomingMessage) => onConnection(client, req));
  return {
    broadcastReconnectNotification: () => {
      const data = JSON.stringify({ id: null, method: 'reconnect' });
      for (const client of opts.wss.clients) if (client.readyState === WEBSOCKET_OPEN) client.send(data);
    },
  };
}

/** What handles one connection: `getWSConnectionHandler`'s counterpart. */
export function trpcConnectionHandler<TRouter extends AnyRouter>(opts: TRPCSocketHandlerOptions<TRouter>): (client: WebSocket, req: IncomingMessage) => void {
  const { createContext, router } = opts;
  const config = router._def._config;
  const { transformer } = config;
  const serialize = (value: unknown): unknown => transformer.output.serialize(value);
  type Ctx = inferRouterContext<TRouter>;

  return (client, req) => {
    /** The subscriptions running, by id. */
    const clientSubscriptions = new Map<string | number, PlainAbortController>();
    /**
     * The subscriptions whose procedure has yet to answer, by id: tRPC registered one only once its procedure had
     * answered, so a `subscription.stop` that came before found nothing to stop, and the subscription ran, holding its
     * place, until the connection closed. A stop for one of these is kept on it: its signal is aborted, and once the
     * procedure answers it is ended unread, and nothing more is sent for its id. Made with its first entry and dropped
     * with its last.
     */
    let startingSubscriptions: Map<string | number, { stopped: boolean; abortController: PlainAbortController | undefined }> | undefined;
    const abortController = new PlainAbortController();
    if (opts.keepAlive) handleKeepAlive(client, opts.keepAlive.pingMs, opts.keepAlive.pongWaitMs);
    let ctx: Ctx | undefined;

    const respond = (message: Response): void => {
      client.send(JSON.stringify(message));
    };
    const errorShape = (error: TRPCError, type: ProcedureType | 'unknown', path: string | undefined, input: unknown): unknown =>
      serialize(getErrorShape({ config, error, type, path, input, ctx }));
    const tellError = (error: TRPCError, type: ProcedureType | 'unknown', path: string | undefined, input: unknown): void =>
      opts.onError?.({ error, type, path, req, input, ctx });

    async function createCtxPromise(getConnectionParams: () => TRPCRequestInfo['connectionParams']): Promise<{ ok: true; value: Ctx } | { ok: false; error: TRPCError }> {
      try {
        ctx = await createContext({
          req,
          res: client,
          info: { connectionParams: getConnectionParams(), calls: [], isBatchCall: false, accept: null, type: 'unknown', signal: asSignal(abortController), url: null },
        });
        return { ok: true, value: ctx };
      } catch (cause) {
        const error = getTRPCErrorFromUnknown(cause);
        tellError(error, 'unknown', undefined, undefined);
        respond({ id: null, error: errorShape(error, 'unknown', undefined, undefined) });
        setImmediate(() => client.close());
        return { ok: false, error };
      }
    }

    /**
     * Made at once when the URL says no connection params will come; otherwise from the first message, which holds
     * them.
     */
    let ctxPromise = createURL(req).searchParams.get('connectionParams') === '1' ? null : createCtxPromise(() => null);

    function handleRequest(msg: TRPCClientOutgoingMessage, batchIndex: number): void {
      const { id, jsonrpc } = msg;
      // A long id is refused as a missing one: it is kept and echoed for as long as its subscription lives.
      const idTooLong = typeof id === 'string' && id.length > MAX_ID_CHARS;
      if (id === null || idTooLong) {
        const error = getTRPCErrorFromUnknown(new TRPCError({ code: 'PARSE_ERROR', message: idTooLong ? `\`id\` is longer than ${MAX_ID_CHARS} characters` : '`id` is required' }));
        tellError(error, 'unknown', undefined, undefined);
        respond({ id: null, jsonrpc, error: errorShape(error, 'unknown', undefined, undefined) });
        return;
      }
      if (msg.method === 'subscription.stop') {
        const starting = startingSubscriptions?.get(id);
        if (starting !== undefined) {
          starting.stopped = true;
          starting.abortController?.abort();
        }
        clientSubscriptions.get(id)?.abort();
        return;
      }
      const { path, lastEventId } = msg.params;
      let { input } = msg.params;
      const type = msg.method;
      if (lastEventId !== undefined) {
        if (isObject(input)) input = { ...input, lastEventId };
        else input ??= { lastEventId };
      }
      const starting = type === 'subscription' ? { stopped: false, abortController: undefined as PlainAbortController | undefined } : undefined;
      if (starting !== undefined) (startingSubscriptions ??= new Map()).set(id, starting);
      const started = (): void => {
        if (starting === undefined || startingSubscriptions?.get(id) !== starting) return;
        startingSubscriptions.delete(id);
        if (startingSubscriptions.size === 0) startingSubscriptions = undefined;
      };
      void (async () => {
        const res = await ctxPromise!;
        if (!res.ok) throw res.error;
        // A query or a mutation is never aborted: it is given no signal (tRPC's signal type allows none).
        const subscriptionAbort = starting === undefined ? undefined : new PlainAbortController();
        if (starting !== undefined) {
          starting.abortController = subscriptionAbort;
          if (starting.stopped) subscriptionAbort!.abort();
        }
        const result: unknown = await callTRPCProcedure({
          router,
          path,
          getRawInput: async () => input,
          ctx,
          type,
          signal: subscriptionAbort === undefined ? undefined : asSignal(subscriptionAbort),
          batchIndex,
        });
        started();
        // Not kept for as long as a subscription lives: it can be up to a message's size, with keys its schema strips.
        input = undefined;
        const isIterableResult = isAsyncIterable(result) || isObservable(result);
        if (type !== 'subscription') {
          if (isIterableResult) throw new TRPCError({ code: 'UNSUPPORTED_MEDIA_TYPE', message: `Cannot return an async iterable or observable from a ${type} procedure with WebSockets` });
          respond({ id, jsonrpc, result: { type: 'data', data: serialize(result) } });
          return;
        }
        if (!isIterableResult) throw new TRPCError({ message: `Subscription ${path} did not return an observable or a AsyncGenerator`, code: 'INTERNAL_SERVER_ERROR' });
        const subscription = subscriptionAbort!;
        // Refused now that its procedure has answered: what the procedure set up for it is let go of, its stream
        // ended unread and its signal aborted. tRPC's adapter dropped the stream of a socket that closed meanwhile or
        // of an id in use as it was, its signal never aborted.
        const closed = starting!.stopped || client.readyState !== WEBSOCKET_OPEN;
        if (closed || clientSubscriptions.has(id)) {
          endUnread(result, subscription, path);
          if (closed) return;
          throw new TRPCError({ message: `Duplicate id ${id}`, code: 'BAD_REQUEST' });
        }
        pump(id, jsonrpc, path, type, isObservable(result) ? observableToAsyncIterable(result, asSignal(subscription)) : result, subscription);
        clientSubscriptions.set(id, subscription);
        respond({ id, jsonrpc, result: { type: 'started' } });
      })().catch((cause: unknown) => {
        started();
        if (starting?.stopped) return;
        const error = getTRPCErrorFromUnknown(cause);
        tellError(error, type, path, input);
        respond({ id, jsonrpc, error: errorShape(error, type, path, input) });
      });
    }

    /** Ends a subscription's stream that is never read; a failure to end it is told to `onError` alone. */
    function endUnread(result: AsyncIterable<unknown> | Observable<unknown, unknown>, subscription: PlainAbortController, path: string): void {
      subscription.abort();
      if (isObservable(result)) return;
      const told = (cause: unknown): void => tellError(getTRPCErrorFromUnknown(cause), 'subscription', path, undefined);
      try {
        Promise.resolve(result[Symbol.asyncIterator]().return?.()).catch(told);
      } catch (cause) {
        told(cause);
      }
    }

    /**
     * Reads a subscription's stream by five functions made once per subscription, in place of an async function
     * awaiting each read in a loop: a waiting subscription holds its iterator's pending read and one reaction to it,
     * with no suspended frame, no promise of its own and no abort closure per read (~0.9 KB less per waiting
     * subscription). What it sends, and when, is as tRPC's loop's: the data; an error of the iterator followed by
     * "stopped"; "stopped" at its end or after an abort; a failure of its own as the loop's catch (the iterator
     * disposed, the error sent, the signal aborted), but for a failure to dispose of it once "stopped" is sent, told to
     * onError alone.
     */
    function pump(id: string | number, jsonrpc: '2.0' | undefined, path: string, type: ProcedureType, iterable: AsyncIterable<unknown>, controller: PlainAbortController): void {
      const signal = controller.signal;
      let iterator: (AsyncIterator<unknown> & AsyncDisposable) | undefined;
      let ended = false;
      const finish = (how: 'done' | 'aborted' | 'errored' | 'failed', cause?: unknown): void => {
        if (ended) return;
        ended = true;
        signal.onabort = null;
        const dispose = () => (iterator === undefined ? undefined : iterator[Symbol.asyncDispose]());
        const fail = (failure: unknown): void => {
          clientSubscriptions.delete(id);
          const error = getTRPCErrorFromUnknown(failure);
          tellError(error, type, path, undefined);
          respond({ id, jsonrpc, error: errorShape(error, type, path, undefined) });
          controller.abort();
        };
        const failDisposed = (failure: unknown): void => {
          Promise.resolve()
            .then(dispose)
            .then(() => fail(failure), fail);
        };
        const stopped = (): void => {
          try {
            respond({ id, jsonrpc, result: { type: 'stopped' } });
            clientSubscriptions.delete(id);
          } catch (failure) {
            failDisposed(failure);
            return;
          }
          // Said "stopped", its id is the client's to use again: a failure to dispose of it is told to onError alone.
          // Failed as before, it took the id's place from the next subscription under it, which then outlived its
          // stop and its socket, and sent that one an error it went on after.
          Promise.resolve()
            .then(dispose)
            .catch((failure: unknown) => {
              tellError(getTRPCErrorFromUnknown(failure), type, path, undefined);
              controller.abort();
            });
        };
        if (how === 'failed') {
          failDisposed(cause);
          return;
        }
        if (how === 'aborted') {
          Promise.resolve()
            .then(() => iterator!.return?.())
            .then(stopped, failDisposed);
          return;
        }
        if (how === 'errored') {
          try {
            const error = getTRPCErrorFromUnknown(cause);
            tellError(error, type, path, undefined);
            respond({ id, jsonrpc, error: errorShape(error, type, path, undefined) });
          } catch (failure) {
            failDisposed(failure);
            return;
          }
        }
        stopped();
      };
      const onAbort = (): void => finish('aborted');
      const onReadError = (cause: unknown): void => finish('errored', cause);
      // Asks for the next read; its answer comes to onRead or onReadError.
      const read = (): void => {
        if (signal.aborted) {
          finish('aborted');
          return;
        }
        try {
          iterator!.next().then(onRead, onReadError);
        } catch (cause) {
          finish('failed', cause);
        }
      };
      // Sends what a read gave, then reads again. A read that gave no result object fails the subscription, as the
      // loop's reading of it threw.
      const onRead = (next: IteratorResult<unknown>): void => {
        if (ended) return;
        try {
          if (next === null || typeof next !== 'object') throw new TypeError(`Iterator result ${String(next)} is not an object`);
          if (next.done) {
            finish('done');
            return;
          }
          if (isTrackedEnvelope(next.value)) {
            const [trackedId, data] = next.value;
            respond({ id, jsonrpc, result: { type: 'data', data: serialize({ id: trackedId, data }), id: trackedId } });
          } else {
            respond({ id, jsonrpc, result: { type: 'data', data: serialize(next.value) } });
          }
        } catch (cause) {
          finish('failed', cause);
          return;
        }
        read();
      };
      try {
        iterator = iteratorResource(iterable);
      } catch (cause) {
        finish('failed', cause);
      }
      if (iterator !== undefined) {
        signal.onabort = onAbort;
        read();
      }
    }

    client.on('message', (rawData: RawData, isBinary: boolean) => {
      const text = !isBinary && Buffer.isBuffer(rawData) ? rawData.toString('utf8') : undefined;
      if (text === 'PONG') return;
      if (text === 'PING') {
        client.send('PONG');
        return;
      }
      if (!Buffer.isBuffer(rawData)) {
        const error = new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: 'Unexpected WebSocket message format' });
        respond({ id: null, error: errorShape(error, 'unknown', undefined, undefined) });
        return;
      }
      if (!ctxPromise) {
        ctxPromise = createCtxPromise(() => {
          let msg: unknown;
          try {
            msg = decode(text);
            if (!isObject(msg)) throw new Error('Message was not an object');
          } catch (cause) {
            throw new TRPCError({ code: 'PARSE_ERROR', message: 'Malformed TRPCConnectionParamsMessage', cause });
          }
          return parseConnectionParamsFromUnknown(msg.data);
        });
        return;
      }
      let messages: TRPCClientOutgoingMessage[];
      try {
        const msgJSON = decode(text);
        messages = (Array.isArray(msgJSON) ? msgJSON : [msgJSON]).map((raw) => parseTRPCMessage(raw, transformer));
      } catch (cause) {
        const error = new TRPCError({ code: 'PARSE_ERROR', cause });
        respond({ id: null, error: errorShape(error, 'unknown', undefined, undefined) });
        return;
      }
      messages.forEach((msg, index) => handleRequest(msg, index));
    });

    client.on('error', (cause) => {
      opts.onError?.({ ctx, error: getTRPCErrorFromUnknown(cause), input: undefined, path: undefined, type: 'unknown', req });
    });

    // `on`, not `once`, whose wrapper stays as long as the connection: a socket closes once.
    client.on('close', () => {
      for (const sub of clientSubscriptions.values()) sub.abort();
      clientSubscriptions.clear();
      abortController.abort();
    });
  };
}

/** tRPC's JSON decoding of a message: a binary one is refused. */
function decode(text: string | undefined): unknown {
  if (text === undefined) throw new Error('jsonEncoder received binary data. JSON uses text frames. Use a binary encoder for binary data.');
  return JSON.parse(text);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && !Array.isArray(value) && typeof value === 'object';
}
