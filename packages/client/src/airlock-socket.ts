import { CLOSE_MESSAGE_TOO_BIG, CLOSE_REPLACED_BEFORE_TOKEN } from '@airlock/core';
import type { TRPCClientIncomingMessage, TRPCClientOutgoingMessage, TRPCRequestMessage, TRPCResponseMessage } from '@trpc/server/rpc';
import { connectionRejection } from './connection-rejection';
import { bytesOver, DEFAULT_MAX_MESSAGE_BYTES, oversizeAnswer } from './request-size';
import { shownAddress } from './startup-link';
import { WEB_SOCKET_CLOSED, WEB_SOCKET_CLOSING, WEB_SOCKET_OPEN, type WebSocketConstructor, type WebSocketLike } from './web-socket-like';

export type RequestMethod = TRPCRequestMessage['method'];

/** A query's or mutation's deadline, on `socketClock()` (see `AirlockSocket.request`); a subscription has none. */
export interface RequestOptions {
  /** When it fails if unanswered (the server refuses it after then). */
  deadline?: number;
  /** Its deadline this long after it is written, put in its input (an object) as `notAfter` then. Ignored beside `deadline`. */
  deadlineAfterWriteMs?: number;
}

/** Receives the server's answers to one request. */
export interface RequestHandlers {
  /** An answer: a query's or mutation's result, or a subscription's `started`, `data` and `stopped`. */
  result(message: Extract<TRPCResponseMessage, { result: unknown }>): void;
  /** The request failed: the server's error answer, the socket closing under a query, or the token refused. */
  error(error: SocketError): void;
  /** No more answers will come. */
  complete(): void;
}

/** Why a request failed without an answer from the server; `response` is the server's error answer when there is one. */
export class SocketError extends Error {
  constructor(
    message: string,
    readonly response?: Extract<TRPCResponseMessage, { error: unknown }>,
    /** The request was sent, and the connection went before its answer: the server may have applied it, or may yet. */
    readonly connectionLost = false,
    /**
     * The request had a deadline (a decision's `notAfter`) that passed with no answer: the server refuses it from
     * then on. Sent, it may have been applied before (read the waiting calls again); never after.
     */
    readonly expired = false,
  ) {
    super(message);
    this.name = 'SocketError';
  }
}

/**
 * A request the client did not send because it is over `maxMessageBytes`: its `response` is the client's own answer
 * (`PAYLOAD_TOO_LARGE`), made as the server would word it, not the server's.
 */
export class UnsentRequestError extends SocketError {
  constructor(response: Extract<TRPCResponseMessage, { error: unknown }>) {
    super(response.error.message, response);
    this.name = 'UnsentRequestError';
  }
}

/**
 * A request with a deadline (a decision) whose connection went, closed or silent, after it was sent and before its
 * answer: it may or may not have been applied, and the server may still apply it until its deadline, `openForMs` from
 * when it failed (a frozen server reads it when it wakes), and refuses it after. It fails at once rather than at the
 * deadline, saying so: whether it was applied shows in the chat's waiting calls once reconnected (a call no longer
 * waiting was decided, and its events say how) and, read again after `openForMs`, for good.
 */
export class AnswerUnknownError extends SocketError {
  constructor(
    /** How the connection went: `the connection closed before the answer came`, or went silent. */
    readonly why: string,
    /** How long after this error the server may still apply the request; 0 once its deadline has passed. */
    readonly openForMs: number,
  ) {
    super(
      `${why}: the decision may or may not have been applied${openForMs > 0 ? `, and the server may still apply it in the next ${Math.ceil(openForMs / 1_000)} s (never after its deadline)` : ''}; once reconnected, read the chat's waiting calls: a call no longer waiting was decided, and its events say how`,
      undefined,
      true,
    );
    this.name = 'AnswerUnknownError';
  }
}

/**
 * Whether a decision failed with its answer unknown: its connection went after it was sent (`AnswerUnknownError`,
 * whose `openForMs` says how long the server may still apply it). `error` as thrown by the client's calls.
 */
export function isAnswerUnknown(error: unknown): boolean {
  return error instanceof AnswerUnknownError || (error instanceof Error && error.cause instanceof AnswerUnknownError);
}

/**
 * Whether a call failed because the connection went (closed, or silent) after the request was sent: the server may
 * have applied it, or may yet (a frozen server reads it when it wakes). `error` as thrown by the client's calls.
 */
export function isConnectionLost(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return (error instanceof SocketError && error.connectionLost) || (cause instanceof SocketError && cause.connectionLost);
}

/**
 * Whether a call failed because its deadline passed with no answer (a decision, see `decisionTimeoutMs`): the server
 * does not apply it from then on. It may have before, if it was sent: read the chat's waiting calls to know.
 */
export function isExpired(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return (error instanceof SocketError && error.expired) || (cause instanceof SocketError && cause.expired);
}

/** The clock a request's deadline is read on, and which the connection param `clock` gives the server: monotonic. */
export const socketClock = (): number => performance.now();

export interface AirlockSocketOptions {
  /** The tRPC WebSocket endpoint, e.g. `ws://127.0.0.1:7700/trpc`. */
  url: string;
  /** Sent first on every (re)connect, as tRPC's `connectionParams` message; a function is asked again at each. */
  connectionParams: Record<string, string> | (() => Record<string, string>);
  /** Called with each per-tab credential the server sends (`{"airlock":"tab","credential":…}`, asked for with `tab`). */
  onTabCredential?: (credential: string) => void;
  /** Default `globalThis.WebSocket`; Node 20 has none: pass `ws`'s. */
  WebSocket?: WebSocketConstructor;
  /** Wait before reconnect attempt `attempt` (0, 1, …). Default none for the first, then 500 ms doubling up to 5 s. */
  retryDelayMs?: (attempt: number) => number;
  /** Called when a socket opens (the first time and after every reconnect). */
  onOpen?: () => void;
  /**
   * Called when a socket closes or fails to open, before a reconnect is tried, with why when the socket said: the
   * server turning it away (`the server is full or shutting down (503) …`, `the server refused this address (403) …`),
   * `connect ECONNREFUSED …`, a handshake not answered in time. With `connectAttempts: Infinity` this is where a
   * client that keeps trying sees why.
   */
  onClose?: (why: string | undefined) => void;
  /**
   * Called once when the server refuses the token (`reason` "refused"), or cannot prove it knows the token before
   * the client sends it ("unproven": nothing was sent); the socket then stays closed and every request fails.
   */
  onRejected?: (message: string, reason: RejectionReason) => void;
  /**
   * How long a connection has to open and, with a token, for the server to send its proof: one that has not (a server
   * that accepts the TCP connection and answers nothing, frozen or cut off) is dropped and tried again, as a lost
   * connection is. Default 10 s.
   */
  handshakeTimeoutMs?: number;
  /**
   * Failed attempts to open the first connection after which the client gives up: every request fails with why
   * (`connect ECONNREFUSED …`, no server at that path) and the state is `unreachable`. Once a connection has
   * opened, a drop is retried however long it lasts. A socket the server closed to make room for a newcomer before
   * it accepted the token (close code 4001) does not count, once that server proved it knows the token: it is up. A
   * 4001 from one that did not prove it counts (any program on the port can send that code). Default 4 (about a
   * second and a half with the default delays); `Infinity` waits for the server however long.
   */
  connectAttempts?: number;
  /**
   * A connection the server has sent nothing on for `pingMs` is pinged (tRPC's `PING`, which the server answers
   * `PONG`); with no answer `pongWaitMs` later it is taken as dead: dropped, `onClose` called, the queries and
   * mutations in flight on it failed, and a new connection opened, where subscriptions resume. Without it, a path
   * that died without closing (a frozen server, a network gone quiet) goes unnoticed for minutes. Default
   * 10,000 / 5,000 ms; `false`: never pinged.
   */
  keepAlive?: KeepAlive | false;
  /**
   * The largest request sent, in UTF-8 bytes of its JSON message: a bigger one fails at once, unsent, saying its size
   * and which field to shorten (code `PAYLOAD_TOO_LARGE`). The server closes a connection on a message over its
   * limit (1 MiB), which sent again on every reconnect would never get through. Default 1 MiB.
   */
  maxMessageBytes?: number;
  /**
   * How long `close()` waits for the answers to the queries and mutations already sent. Those still unanswered then
   * fail with `the client closed before the answer came` (`isConnectionLost`: the server may have applied them, or
   * may yet), and the socket closes: a close ends even when the server never answers. Default 5,000 ms.
   */
  closeWaitMs?: number;
}

export interface KeepAlive {
  /** How long the connection may stay silent before the client pings the server. */
  pingMs: number;
  /** How long the client waits for any message after its ping before it drops the connection. */
  pongWaitMs: number;
}

/**
 * How long a socket the server asked to leave for a new one is kept for the answers to what was sent on it. Airlock
 * closes it itself within a second of asking (its close grace).
 */
const DRAIN_MS = 5_000;

/** How long close() waits for the server's answer to its closing frame before it lets the socket go. */
const CLOSE_HANDSHAKE_MS = 1_000;

/**
 * How often the open socket is looked at for a closing its server began and did not finish: one found closing at two
 * looks in a row (so for this long at least) is let go. A server that sends its closing frame and never ends its side
 * of the TCP connection (frozen as it closed, or a proxy holding it) left `ws` waiting on it 30 s, and the client
 * until the keep-alive gave up; nothing is read on such a socket, and nothing sent reaches a procedure.
 */
const CLOSING_CHECK_MS = 500;

export const DEFAULT_KEEP_ALIVE: Readonly<KeepAlive> = Object.freeze({ pingMs: 10_000, pongWaitMs: 5_000 });

/** Why a query or mutation in flight failed when the connection went. */
const CLOSED_BEFORE_ANSWER = 'the connection closed before the answer came';

interface Liveness {
  socket: WebSocketLike;
  ping?: ReturnType<typeof setTimeout>;
  pong?: ReturnType<typeof setTimeout>;
}

interface LiveRequest {
  message: TRPCRequestMessage;
  handlers: RequestHandlers;
  /** Written on the current socket (a subscription is written again after each reconnect). */
  sent: boolean;
  /** The socket it was last written on: a query or mutation is answered on that one only. */
  on?: WebSocketLike;
  /** The server said the subscription started, on the current socket. */
  started?: boolean;
  /** `socketClock()` time after which it fails as expired, answered or not (the server refuses it from then on). */
  deadline?: number;
  /** A deadline this long after it is first written, put in its input as `notAfter` then (see `request`). */
  deadlineAfterWriteMs?: number;
  expiry?: ReturnType<typeof setTimeout>;
  /** The message as JSON, measured when the request was made: its first write sends it as is. */
  text?: string;
}

export type SocketState = 'connecting' | 'open' | 'reconnecting' | 'rejected' | 'unreachable' | 'closed';

/** Why the state is `rejected`: the server refused the token, or could not prove it knows it (the token was not sent). */
export type RejectionReason = 'refused' | 'unproven';

/** Why the client stops when the server at its address does not prove it knows the token. */
export const UNPROVEN_SERVER_MESSAGE =
  'the server at this address could not prove it is Airlock with this token (another program, or Airlock started with another token); the token was not sent';

const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;

const DEFAULT_CONNECT_ATTEMPTS = 4;

const DEFAULT_CLOSE_WAIT_MS = 5_000;

interface AwaitingProof {
  socket: WebSocketLike;
  nonce: string;
  /** The proof came and is being checked: any other frame before the token is sent ends the client. */
  verifying: boolean;
  /** Closed to make room (4001) while its proof was being checked: what that close means waits for the check. */
  closedToMakeRoom?: boolean;
}

/** What a socket's `error` event says went wrong: `ws` passes an event with the error, a browser says nothing. */
function failureOf(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const { message, error } = event as { message?: unknown; error?: unknown };
  const text = error instanceof Error && error.message !== '' ? error.message : typeof message === 'string' && message !== '' ? message : undefined;
  return text === undefined ? undefined : (refusalOf(text) ?? text);
}

/**
 * What an upgrade Airlock answered with a status rather than a WebSocket means, from `ws`'s "Unexpected server
 * response: 503": the server was reached, and turned the connection away.
 */
function refusalOf(failure: string): string | undefined {
  const status = /^Unexpected server response: (\d{3})$/.exec(failure)?.[1];
  if (status === '503') {
    return 'the server is full or shutting down (503): it holds its maximum of connections (--max-connections), or every place for a connection still to present its token is taken (--max-unauthenticated)';
  }
  if (status === '403') return 'the server refused this address (403): the Host or Origin is not one it accepts (AIRLOCK_ALLOWED_ORIGINS adds origins), or the path is not /trpc';
  return undefined;
}

const defaultRetryDelay = (attempt: number) => (attempt === 0 ? 0 : Math.min(250 * 2 ** attempt, 5_000));

/**
 * One WebSocket speaking tRPC's wire protocol (the same messages as `@trpc/client`'s wsLink): the connection
 * params first, then `{id, method, params: {path, input, lastEventId}}` per request, `subscription.stop` to end
 * one, answers to the server's PING, and re-subscription with the last event id after a reconnect or the server's
 * `reconnect` notice. Unlike wsLink it writes each request in the call that makes it, never after a timer: in Node
 * wsLink's `setTimeout(0)` costs at least a millisecond per request.
 */
export class AirlockSocket {
  private readonly options: AirlockSocketOptions;
  private readonly WebSocketImpl: WebSocketConstructor;
  private readonly requests = new Map<number, LiveRequest>();
  /**
   * Subscriptions ended before the server said they started: their stop is sent once it does. The server reads a
   * stop only for a subscription it has registered, which it does after it has called the procedure; one sent
   * earlier was lost, and the subscription held one of the connection's places until the connection closed (40
   * quick follow-and-abort calls locked a client out of its own connection).
   */
  private readonly stopWhenStarted = new Set<number>();
  private socket: WebSocketLike | null = null;
  private nextId = 1;
  private attempt = 0;
  /** Attempts at the first connection that failed, not counting those the server closed to make room (4001). */
  private failedAttempts = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private closing: Promise<void> | undefined;
  private currentState: SocketState = 'connecting';
  private opened = false;
  /** The last socket whose server proved it knows the token (or, with no token, that opened). */
  private provenSocket: WebSocketLike | undefined;
  /** Why the last attempt failed, when the socket said (its `error` event). */
  private lastFailure: string | undefined;
  /** Why the state is `rejected`, once it is. */
  private rejection: RejectionReason | undefined;
  /** The socket that opened but has yet to prove the server knows the token, with the nonce it asked about. */
  private awaitingProof: AwaitingProof | undefined;
  /** Drops the socket being opened when it has not opened (and been proven) within `handshakeTimeoutMs`. */
  private handshakeTimer: ReturnType<typeof setTimeout> | undefined;
  /** The timers that ping the open socket when it is silent, and drop it when nothing answers. */
  private liveness: Liveness | undefined;
  /** Looks at the open socket for a closing its server began and did not finish (see `watchClosing`). */
  private closingTimer: ReturnType<typeof setTimeout> | undefined;
  /** Sockets the server asked to leave for a new one, still answering what was sent on them, each closed by its timer. */
  private readonly draining = new Map<WebSocketLike, ReturnType<typeof setTimeout>>();
  /** Resolved when the next socket opens; rejected when the client stops for good. */
  private openWaiters: { resolve: () => void; reject: (error: SocketError) => void }[] = [];

  constructor(options: AirlockSocketOptions) {
    this.options = options;
    const impl = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (impl === undefined) throw new TypeError('No WebSocket implementation: pass one as the WebSocket option (in Node 20, `ws`\'s WebSocket).');
    this.WebSocketImpl = impl;
    const protocol = new URL(options.url).protocol;
    if (protocol !== 'ws:' && protocol !== 'wss:') throw new TypeError(`url: expected a ws: or wss: URL, got ${protocol}`);
    this.connect();
  }

  get state(): SocketState {
    return this.currentState;
  }

  /** Why the state is `rejected`: "refused" (the server refused the token) or "unproven" (nothing was sent); else undefined. */
  get rejectionReason(): RejectionReason | undefined {
    return this.rejection;
  }

  /**
   * Resolves when the next connection opens (not the one open now, if any): where a subscription the server stopped
   * while going down is sent again. Rejects when the client stops for good (closed, token refused, unreachable).
   */
  nextOpen(): Promise<void> {
    const ended = this.endedError();
    if (ended !== undefined) return Promise.reject(ended);
    return new Promise((resolve, reject) => this.openWaiters.push({ resolve, reject }));
  }

  /**
   * Sends a request now if the socket is open, otherwise as soon as it opens. Returns a function that ends it. With a
   * `deadline` (on `socketClock()`, a query or mutation whose server refuses it after then), it fails at that time if
   * unanswered; a connection lost after it was sent fails it at once with `AnswerUnknownError` (the server may still
   * apply it until its deadline), and it is not sent again. With `deadlineAfterWriteMs` instead, the deadline is set
   * when the request is written, that long after, and put in its input (an object) as `notAfter`: a decision made
   * while the connection is down waits for it, however long, and then has its whole time to be answered.
   */
  request(call: { method: RequestMethod; path: string; input: unknown }, handlers: RequestHandlers, options: RequestOptions = {}): () => void {
    const id = this.nextId++;
    const ended = this.endedError();
    if (ended !== undefined) {
      handlers.error(ended);
      return () => undefined;
    }
    const live: LiveRequest = { message: { id, method: call.method, params: { path: call.path, input: call.input } }, handlers, sent: false };
    const writeNow = this.isOpen();
    const afterWriteMs = call.method === 'subscription' ? undefined : options.deadlineAfterWriteMs;
    if (afterWriteMs !== undefined && options.deadline === undefined) {
      live.deadlineAfterWriteMs = afterWriteMs;
      // Written now, it is serialised once, with its deadline; written later, it is measured with one of that size.
      const deadline = socketClock() + afterWriteMs;
      withNotAfter(live, deadline);
      if (writeNow) live.deadline = deadline;
    }
    const max = this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    live.text = JSON.stringify(live.message);
    const bytes = bytesOver(live.text, max);
    if (bytes !== undefined) {
      const answer = oversizeAnswer({ id, path: call.path, input: call.input }, bytes, max);
      handlers.error(new UnsentRequestError(answer));
      return () => undefined;
    }
    this.requests.set(id, live);
    if (options.deadline !== undefined && call.method !== 'subscription') {
      live.deadline = options.deadline;
      this.expireAt(id, live);
    }
    // Not written when it is past its deadline already (a caller's own): the server would refuse it anyway.
    if (writeNow && this.requests.get(id) === live) {
      try {
        this.write([live]);
      } catch (error) {
        // A WebSocket whose send throws wrote nothing: the request is forgotten, and the throw is the caller's answer.
        clearTimeout(live.expiry);
        this.requests.delete(id);
        throw error;
      }
    }
    return () => {
      clearTimeout(live.expiry);
      if (!this.requests.delete(id)) return;
      if (live.message.method === 'subscription' && live.sent && this.isOpen()) {
        if (live.started === true) this.send({ id, method: 'subscription.stop' });
        else this.stopWhenStarted.add(id);
      }
      handlers.complete();
    };
  }

  /**
   * Stops reconnecting, ends subscriptions, fails what was not sent, waits for the answers to the queries and
   * mutations already sent (at most `closeWaitMs`; those unanswered then fail as lost), then closes the socket.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** Why requests fail now, when the client has stopped for good. */
  private endedError(): SocketError | undefined {
    switch (this.currentState) {
      case 'rejected':
        return new SocketError(this.rejection === 'unproven' ? UNPROVEN_SERVER_MESSAGE : 'the server refused the access token');
      case 'unreachable':
        return new SocketError(this.unreachableMessage());
      case 'closed':
        return new SocketError('the client is closed');
      case 'connecting':
      case 'open':
      case 'reconnecting':
        return undefined;
    }
  }

  private unreachableMessage(): string {
    // The address and what the socket said of it, with any token a URL carries hidden.
    const failure = this.lastFailure;
    if (failure !== undefined && /^the server (is full|refused)/.test(failure)) return shownAddress(`Airlock at ${this.options.url} turned the connection away: ${failure}`);
    return shownAddress(`cannot reach Airlock at ${this.options.url}${failure === undefined ? '' : ` (${failure})`}`);
  }

  private rejectOpenWaiters(): void {
    const error = this.endedError() ?? new SocketError('the client is closed');
    for (const waiter of this.openWaiters.splice(0)) waiter.reject(error);
  }

  private async shutdown(): Promise<void> {
    const wasStopped = this.currentState === 'rejected' || this.currentState === 'unreachable';
    // Read before the state says closed, which isOpen() reads too: what was written on this socket is waited for.
    const open = this.isOpen();
    this.setState('closed');
    this.rejectOpenWaiters();
    clearTimeout(this.retryTimer);
    clearTimeout(this.handshakeTimer);
    const answers: Promise<void>[] = [];
    for (const [id, live] of [...this.requests]) {
      if (live.message.method === 'subscription') {
        this.requests.delete(id);
        live.handlers.complete();
      } else if (!live.sent || !open) {
        this.requests.delete(id);
        clearTimeout(live.expiry);
        live.handlers.error(new SocketError('closed before the request was sent'));
      } else {
        answers.push(this.whenSettled(id, live));
      }
    }
    if (answers.length > 0) await this.settledWithin(answers, this.options.closeWaitMs ?? DEFAULT_CLOSE_WAIT_MS);
    this.closeDraining();
    const socket = this.socket;
    if (socket === null || wasStopped || socket.readyState === WEB_SOCKET_CLOSED) return;
    // The closing handshake is waited for a moment, not for as long as a frozen server or a dead path would hold it
    // (until the keep-alive gave up): then the socket is let go (terminated where the WebSocket can be).
    const handshakeMs = Math.min(CLOSE_HANDSHAKE_MS, this.options.closeWaitMs ?? DEFAULT_CLOSE_WAIT_MS);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        socket.terminate?.();
        resolve();
      }, handshakeMs);
      socket.addEventListener('close', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.close();
    });
  }

  /** Waits for `answers` at most `waitMs`; the requests still unanswered then fail as lost. */
  private async settledWithin(answers: Promise<void>[], waitMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(answers), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    for (const [id, live] of [...this.requests]) {
      this.requests.delete(id);
      clearTimeout(live.expiry);
      live.handlers.error(new SocketError(`the client closed before the answer came (none within ${waitMs} ms)`, undefined, true));
    }
  }

  private whenSettled(id: number, live: LiveRequest): Promise<void> {
    return new Promise((resolve) => {
      const { handlers } = live;
      live.handlers = {
        result: (message) => handlers.result(message),
        error: (error) => {
          handlers.error(error);
          resolve();
        },
        complete: () => {
          handlers.complete();
          resolve();
        },
      };
      if (!this.requests.has(id)) resolve();
    });
  }

  private isOpen(): boolean {
    return this.currentState === 'open' && this.socket?.readyState === WEB_SOCKET_OPEN;
  }

  private setState(state: SocketState): void {
    this.currentState = state;
  }

  /** The token the server must prove it knows before it is sent; none, and nothing is asked (nor sent of one). */
  private token(): string | undefined {
    const { token } = this.connectionParams();
    return typeof token === 'string' && token !== '' ? token : undefined;
  }

  private connectionParams(): Record<string, string> {
    const { connectionParams } = this.options;
    return typeof connectionParams === 'function' ? connectionParams() : connectionParams;
  }

  private connect(): void {
    this.lastFailure = undefined;
    let socket: WebSocketLike;
    const nonce = this.token() === undefined ? undefined : randomNonce();
    try {
      socket = new this.WebSocketImpl(withConnectionParamsFlag(this.options.url, nonce));
    } catch {
      this.socketGone(null);
      return;
    }
    this.socket = socket;
    const timeoutMs = this.options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    clearTimeout(this.handshakeTimer);
    this.handshakeTimer = setTimeout(() => this.handshakeOverdue(socket, timeoutMs), timeoutMs);
    socket.addEventListener('open', () => {
      if (nonce === undefined) this.socketOpened(socket);
      else this.awaitProof(socket, nonce);
    });
    socket.addEventListener('message', (event) => this.received(socket, event.data));
    socket.addEventListener('close', (event) => this.socketClosed(socket, event?.code));
    // A failed socket always closes next, which is where it is handled; without a listener Node's `ws` would throw.
    socket.addEventListener('error', (event?: unknown) => {
      if (socket === this.socket) this.lastFailure = failureOf(event);
    });
  }

  /**
   * The socket opened, but whatever accepted it may not be Airlock (a program that took the port while Airlock was
   * down): the token goes only to a server whose first frame is the HMAC of this connection's nonce keyed by it.
   */
  private awaitProof(socket: WebSocketLike, nonce: string): void {
    if (socket !== this.socket || this.currentState === 'closed') return;
    this.awaitingProof = { socket, nonce, verifying: false };
  }

  /**
   * The socket has not opened, or its server has not sent its proof, in time: whatever accepted the connection is not
   * answering (a frozen server, a path that died during the handshake). Silence proves nothing either way and nothing
   * was sent: it is dropped like a lost connection, and tried again after the usual delay.
   */
  private handshakeOverdue(socket: WebSocketLike, timeoutMs: number): void {
    if (socket !== this.socket || this.endedError() !== undefined) return;
    this.lastFailure = `no answer to the connection's handshake within ${timeoutMs} ms`;
    this.socketGone(socket);
    letGo(socket);
  }

  /**
   * A socket closed. Airlock sends its proof before anything else, so a socket it closes to make room (4001) has
   * its proof, which may still be under check: that close counts as a failed attempt or not by the check's outcome.
   */
  private socketClosed(socket: WebSocketLike, code: number | undefined): void {
    if (this.draining.has(socket)) {
      this.drained(socket);
      return;
    }
    const awaiting = this.awaitingProof;
    if (code === CLOSE_REPLACED_BEFORE_TOKEN && awaiting?.socket === socket && awaiting.verifying) {
      awaiting.closedToMakeRoom = true;
      return;
    }
    this.socketGone(socket, code);
  }

  /** The first frame on a socket awaiting its proof: the proof, checked, or anything else, which ends the client. */
  private receivedProof(data: unknown): void {
    const awaiting = this.awaitingProof!;
    const mac = typeof data === 'string' && !awaiting.verifying ? proofMacOf(data) : undefined;
    if (mac === undefined) {
      this.unproven();
      return;
    }
    awaiting.verifying = true;
    verifyProof(this.token()!, proofMessage(this.options.url, awaiting.nonce), mac).then(
      (proven) => {
        if (this.awaitingProof !== awaiting) return;
        if (!proven) {
          this.unproven();
          return;
        }
        this.awaitingProof = undefined;
        if (awaiting.closedToMakeRoom !== true) {
          this.socketOpened(awaiting.socket);
          return;
        }
        this.provenSocket = awaiting.socket;
        this.socketGone(awaiting.socket, CLOSE_REPLACED_BEFORE_TOKEN);
      },
      () => {
        if (this.awaitingProof === awaiting) this.unproven();
      },
    );
  }

  /** The server did not prove it knows the token: nothing is sent, and nothing is tried again. */
  private unproven(): void {
    this.awaitingProof = undefined;
    this.rejected(UNPROVEN_SERVER_MESSAGE, 'unproven');
  }

  private socketOpened(socket: WebSocketLike): void {
    if (socket !== this.socket || this.currentState === 'closed') return;
    clearTimeout(this.handshakeTimer);
    this.attempt = 0;
    this.opened = true;
    this.provenSocket = socket;
    this.setState('open');
    try {
      // The server reads the first message as the connection params; every request must come after it. `clock`, read
      // as they are sent, is what the server reads a decision's deadline by (see `socketClock`).
      socket.send(JSON.stringify({ method: 'connectionParams', data: { ...this.connectionParams(), clock: String(socketClock()) } }));
      this.heard(socket);
      this.watchClosing(socket);
      const waiting = [...this.requests.values()].filter((live) => !live.sent || live.message.method === 'subscription');
      if (waiting.length > 0) this.write(waiting);
    } catch {
      // A WebSocket of the caller's whose send throws on an open socket: dropped as a connection that went, what
      // went out on it handled so, and what did not written on the next one.
      this.socketGone(socket, undefined, 'the connection failed to send');
      letGo(socket);
      return;
    }
    for (const waiter of this.openWaiters.splice(0)) waiter.resolve();
    this.options.onOpen?.();
  }

  private received(socket: WebSocketLike, data: unknown): void {
    if (socket !== this.socket) {
      if (this.draining.has(socket)) this.receivedWhileDraining(socket, data);
      return;
    }
    if (this.awaitingProof?.socket === socket) {
      this.receivedProof(data);
      return;
    }
    this.heard(socket);
    if (typeof data !== 'string') return;
    if (data === 'PING') {
      socket.send('PONG');
      return;
    }
    if (data === 'PONG') return;
    const tabCredential = tabCredentialOf(data);
    if (tabCredential !== undefined) {
      this.options.onTabCredential?.(tabCredential);
      return;
    }
    const rejection = connectionRejection(data);
    if (rejection !== null) {
      this.rejected(rejection);
      return;
    }
    let message: TRPCClientIncomingMessage;
    try {
      message = JSON.parse(data) as TRPCClientIncomingMessage;
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null) return;
    if ('method' in message) {
      if (message.method === 'reconnect') this.restart();
      return;
    }
    this.answered(message);
  }

  private answered(message: TRPCResponseMessage): void {
    if (typeof message.id !== 'number') return;
    const live = this.requests.get(message.id);
    if (live === undefined) {
      this.stopLate(message);
      return;
    }
    clearTimeout(live.expiry);
    if ('error' in message) {
      this.requests.delete(message.id);
      live.handlers.error(new SocketError(message.error.message, message));
      return;
    }
    live.handlers.result(message);
    const { result } = message;
    if (result.type === 'started') live.started = true;
    if (live.message.method === 'subscription' && result.type !== 'stopped') {
      if (result.type === 'data' && result.id !== undefined) live.message.params.lastEventId = result.id;
      return;
    }
    this.requests.delete(message.id);
    live.handlers.complete();
  }

  /** An answer for a subscription ended before it started: now that it has, it is stopped; once it has stopped, forgotten. */
  private stopLate(message: TRPCResponseMessage): void {
    const id = message.id as number;
    if (!this.stopWhenStarted.has(id)) return;
    if ('result' in message && message.result.type !== 'stopped') {
      if (message.result.type === 'started' && this.isOpen()) this.send({ id, method: 'subscription.stop' });
      return;
    }
    this.stopWhenStarted.delete(id);
  }

  private rejected(message: string, reason: RejectionReason = 'refused'): void {
    if (this.currentState === 'closed' || this.currentState === 'rejected') return;
    this.rejection = reason;
    this.setState('rejected');
    this.stopForGood(new SocketError(message));
    this.options.onRejected?.(message, reason);
    this.socket?.close();
  }

  /** The first connection could not be opened in `connectAttempts` tries: every request fails, and no more are tried. */
  private unreachable(): void {
    this.setState('unreachable');
    this.stopForGood(new SocketError(this.unreachableMessage()));
  }

  private stopForGood(error: SocketError): void {
    clearTimeout(this.retryTimer);
    clearTimeout(this.handshakeTimer);
    this.stopLiveness();
    this.stopWatchingClosing();
    this.closeDraining();
    for (const live of this.requests.values()) {
      clearTimeout(live.expiry);
      live.handlers.error(error);
    }
    this.requests.clear();
    this.rejectOpenWaiters();
  }

  /**
   * The server asked for a new connection (it is shutting down or moving): subscriptions resume on the next one, and
   * new requests go there. The queries and mutations already sent on this one wait for their answers on it until the
   * server closes it (at most DRAIN_MS): a server going down answers what it read before it closes (a decision refused
   * as it stops, with why), and dropped here that answer went unread.
   */
  private restart(): void {
    const socket = this.socket;
    if (socket === null) return;
    const answering = [...this.requests.values()].some((live) => this.awaitsAnswerOn(live, socket));
    this.socketGone(socket, undefined, CLOSED_BEFORE_ANSWER, answering);
    if (!answering) {
      socket.close();
      return;
    }
    const timer = setTimeout(() => this.drainOverdue(socket), DRAIN_MS);
    this.draining.set(socket, timer);
  }

  /**
   * The server has not closed a socket it asked to leave in time (frozen, or its path dead): what was sent on it and
   * is still unanswered fails now, and the socket is let go. Closed politely, `ws` waited for a closing frame such a
   * server never sends, 30 s, before the close that failed those requests.
   */
  private drainOverdue(socket: WebSocketLike): void {
    this.drained(socket);
    letGo(socket);
  }

  private closeDraining(): void {
    for (const [socket, timer] of this.draining) {
      clearTimeout(timer);
      letGo(socket);
    }
    this.draining.clear();
  }

  private awaitsAnswerOn(live: LiveRequest, socket: WebSocketLike): boolean {
    return live.sent && live.on === socket && live.message.method !== 'subscription';
  }

  /** What a socket left for a new connection says: answers to the queries and mutations sent on it, and pings. */
  private receivedWhileDraining(socket: WebSocketLike, data: unknown): void {
    if (data === 'PING') {
      socket.send('PONG');
      return;
    }
    if (typeof data !== 'string') return;
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null || !('id' in message) || typeof message.id !== 'number') return;
    const live = this.requests.get(message.id);
    if (live !== undefined && this.awaitsAnswerOn(live, socket)) this.answered(message as TRPCResponseMessage);
  }

  /** A socket left for a new connection closed: what was sent on it and is still unanswered fails as lost. */
  private drained(socket: WebSocketLike): void {
    clearTimeout(this.draining.get(socket));
    this.draining.delete(socket);
    for (const [id, live] of [...this.requests]) {
      if (!this.awaitsAnswerOn(live, socket)) continue;
      this.requests.delete(id);
      clearTimeout(live.expiry);
      live.handlers.error(live.deadline === undefined ? new SocketError(CLOSED_BEFORE_ANSWER, undefined, true) : new AnswerUnknownError(CLOSED_BEFORE_ANSWER, Math.max(0, live.deadline - socketClock())));
    }
  }

  /** The open socket said something: it is alive. It is pinged once it has been silent for `pingMs`. */
  private heard(socket: WebSocketLike): void {
    const keepAlive = this.options.keepAlive ?? DEFAULT_KEEP_ALIVE;
    if (keepAlive === false) return;
    this.stopLiveness();
    const watch: Liveness = { socket };
    this.liveness = watch;
    watch.ping = setTimeout(() => {
      if (this.liveness !== watch || socket !== this.socket) return;
      socket.send('PING');
      watch.pong = setTimeout(() => {
        if (this.liveness === watch) this.silent(socket);
      }, keepAlive.pongWaitMs);
    }, keepAlive.pingMs);
  }

  private stopLiveness(): void {
    clearTimeout(this.liveness?.ping);
    clearTimeout(this.liveness?.pong);
    this.liveness = undefined;
  }

  private stopWatchingClosing(): void {
    clearTimeout(this.closingTimer);
    this.closingTimer = undefined;
  }

  /**
   * The server sent its closing frame (the socket is closing, and the client did not close it) and has not ended the
   * connection by the next look, `CLOSING_CHECK_MS` on: the socket is let go, and its close is handled as any other
   * (its `close` event carries the server's code). Where a socket cannot be let go (a browser's, which ends such a
   * closing itself), nothing is looked at.
   */
  private watchClosing(socket: WebSocketLike): void {
    if (socket.terminate === undefined) return;
    clearTimeout(this.closingTimer);
    let seen = false;
    const look = () => {
      if (socket !== this.socket || socket.readyState === WEB_SOCKET_CLOSED) return;
      const closing = socket.readyState === WEB_SOCKET_CLOSING;
      if (closing && seen) {
        this.closingTimer = undefined;
        letGo(socket);
        return;
      }
      seen = closing;
      this.closingTimer = setTimeout(look, CLOSING_CHECK_MS);
    };
    this.closingTimer = setTimeout(look, CLOSING_CHECK_MS);
  }

  /**
   * Nothing came back from a ping: the path is dead though the socket says open (its close would wait on a closing
   * handshake that never ends). It is dropped here, as a close is handled, and a new connection tried at once.
   */
  private silent(socket: WebSocketLike): void {
    this.socketGone(socket, undefined, 'the connection went silent (no answer to a ping) before the answer came');
    letGo(socket);
  }

  /** `answering`: the server answers on this socket what was sent on it before it closes it (see restart). */
  private socketGone(socket: WebSocketLike | null, code?: number, why = CLOSED_BEFORE_ANSWER, answering = false): void {
    if (socket !== this.socket) return;
    this.stopLiveness();
    this.stopWatchingClosing();
    clearTimeout(this.handshakeTimer);
    // Closed before its proof was checked: nothing was sent. The next connection asks again: Airlock closes a socket
    // at any moment when it shuts down or makes room for newcomers, and what is not Airlock gets nothing however often.
    if (socket !== null && this.awaitingProof?.socket === socket) this.awaitingProof = undefined;
    this.socket = null;
    // The server ends every subscription of a connection that closed.
    this.stopWhenStarted.clear();
    const tooBig = code === CLOSE_MESSAGE_TOO_BIG;
    // The server let a newcomer have this socket's place before it accepted the token: nothing reached a procedure.
    const neverArrived = code === CLOSE_REPLACED_BEFORE_TOKEN;
    for (const [id, live] of [...this.requests]) {
      // Sent on another socket, still answering (see restart); or on this one, which goes on answering.
      if (live.sent && live.message.method !== 'subscription' && (live.on !== socket || answering)) continue;
      if (neverArrived || (live.message.method === 'subscription' && !(tooBig && live.sent && live.started !== true))) {
        live.sent = false;
        live.started = false;
        // Nothing of it reached the server: its deadline starts again when it is written again.
        if (live.deadlineAfterWriteMs !== undefined) {
          clearTimeout(live.expiry);
          live.expiry = undefined;
          live.deadline = undefined;
        }
      } else if (live.sent && live.deadline !== undefined && !tooBig) {
        // The server may still apply it until its deadline: it fails now, saying so, rather than leave the person
        // waiting out the deadline on a connection known to be gone.
        this.requests.delete(id);
        clearTimeout(live.expiry);
        live.handlers.error(new AnswerUnknownError(why, Math.max(0, live.deadline - socketClock())));
      } else if (live.sent) {
        // The server may or may not have applied it: the caller decides whether to retry (mutations here are idempotent).
        // One it closed the connection on for its size (1009) would be refused again, however often it is sent: a
        // subscription it had yet to start fails rather than being sent again on the next connection.
        this.requests.delete(id);
        live.handlers.error(new SocketError(tooBig ? 'the server closed the connection on a message over its size limit (1009) before the answer came' : why, undefined, true));
      }
    }
    if (this.endedError() !== undefined) return;
    this.setState(this.opened ? 'reconnecting' : 'connecting');
    // A socket closed to make room for a newcomer by a server that proved it knows the token reached Airlock, which
    // is up: it is not a failed attempt. Any program on the port can close a socket with 4001: without the proof, it
    // counts, or such a program would keep the client trying for good.
    const madeRoom = neverArrived && socket !== null && socket === this.provenSocket;
    if (neverArrived && !madeRoom) this.lastFailure ??= 'the connection was closed with code 4001 (as if to make room) before the server proved it knows the token';
    this.options.onClose?.(this.lastFailure);
    if (!madeRoom) this.failedAttempts++;
    if (!this.opened && this.failedAttempts >= (this.options.connectAttempts ?? DEFAULT_CONNECT_ATTEMPTS)) {
      this.unreachable();
      return;
    }
    const delay = (this.options.retryDelayMs ?? defaultRetryDelay)(this.attempt++);
    this.retryTimer = setTimeout(() => {
      if (this.endedError() === undefined) this.connect();
    }, delay);
  }

  /** Fails a request with a deadline once `socketClock()` is past it: a timer may fire a little early, never the failure. */
  private expireAt(id: number, live: LiveRequest): void {
    const wait = live.deadline! - socketClock();
    if (wait >= 0) {
      live.expiry = setTimeout(() => this.expireAt(id, live), Math.ceil(wait) + 1);
      return;
    }
    if (this.requests.get(id) !== live) return;
    this.requests.delete(id);
    const message = live.sent ? 'no answer came before its deadline: the server does not apply it from now on' : 'not sent before its deadline (no connection): the server never got it';
    live.handlers.error(new SocketError(message, undefined, false, true));
  }

  private write(requests: LiveRequest[]): void {
    // Written again after a reconnect, a subscription is serialised anew: its lastEventId has changed since.
    const texts = requests.map((live) => {
      if (live.deadlineAfterWriteMs !== undefined && live.deadline === undefined) {
        live.deadline = socketClock() + live.deadlineAfterWriteMs;
        withNotAfter(live, live.deadline);
        live.text = undefined;
      }
      const text = live.text ?? JSON.stringify(live.message);
      live.text = undefined;
      return text;
    });
    // Marked sent as their frames go out: a send that throws (a WebSocket of the caller's) leaves the rest unsent.
    const sent = (from: number, to: number) => {
      for (const live of requests.slice(from, to)) {
        live.sent = true;
        live.on = this.socket ?? undefined;
      }
    };
    try {
      if (texts.length === 1) {
        this.socket?.send(texts[0]!);
        sent(0, 1);
      } else {
        // Requests that wait for a connection go in one message, unless together they are over the size limit.
        const batch = `[${texts.join(',')}]`;
        if (bytesOver(batch, this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES) === undefined) {
          this.socket?.send(batch);
          sent(0, texts.length);
        } else {
          for (const [index, text] of texts.entries()) {
            this.socket?.send(text);
            sent(index, index + 1);
          }
        }
      }
    } finally {
      // Timed from the write: armed once the frames are out (setting a timer is no reason to send a decision later);
      // one whose frame did not go out counts its deadline from the write that will.
      for (const live of requests) {
        const id = live.message.id as number;
        if (live.deadlineAfterWriteMs === undefined || this.requests.get(id) !== live) continue;
        if (!live.sent) live.deadline = undefined;
        else if (live.expiry === undefined) this.expireAt(id, live);
      }
    }
  }

  private send(message: TRPCClientOutgoingMessage | TRPCClientOutgoingMessage[]): void {
    this.socket?.send(JSON.stringify(message));
  }
}

/** Puts a request's deadline in its input (an object) as `notAfter`, where the server reads it. */
function withNotAfter(live: LiveRequest, notAfter: number): void {
  live.message.params.input = { ...(live.message.params.input as object), notAfter };
}

/** Drops a socket nothing more is read from, without a closing handshake (where the WebSocket can: `ws`'s terminate). */
function letGo(socket: WebSocketLike): void {
  if (socket.terminate === undefined) socket.close();
  else socket.terminate();
}

function withConnectionParamsFlag(url: string, nonce: string | undefined): string {
  return `${url}${url.includes('?') ? '&' : '?'}connectionParams=1${nonce === undefined ? '' : `&proof=${nonce}`}`;
}

/** 128 random bits, base64url: a new one for every connection, so no earlier answer proves anything. */
function randomNonce(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
}

/** The `mac` of a `{"airlock":"proof","mac":"…"}` frame; undefined for anything else. */
function proofMacOf(data: string): Uint8Array<ArrayBuffer> | undefined {
  let frame: unknown;
  try {
    frame = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof frame !== 'object' || frame === null) return undefined;
  const { airlock, mac } = frame as { airlock?: unknown; mac?: unknown };
  if (airlock !== 'proof' || typeof mac !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(mac)) return undefined;
  return fromBase64Url(mac);
}

/** The credential of a `{"airlock":"tab","credential":"…"}` frame; undefined for anything else. */
function tabCredentialOf(data: string): string | undefined {
  if (!data.startsWith('{"airlock":"tab"')) return undefined;
  let frame: unknown;
  try {
    frame = JSON.parse(data);
  } catch {
    return undefined;
  }
  const { credential } = frame as { credential?: unknown };
  return typeof credential === 'string' && /^[A-Za-z0-9_-]{43}$/.test(credential) ? credential : undefined;
}

/**
 * What Airlock's proof MACs: a versioned label, the host of the URL dialed, the nonce. The host binds the answer to the
 * address this client dialed: any Airlock holding the same token answers for the Host it is sent, so a program on this
 * port relaying the nonce to another one gets an answer for that one's host, which this check rejects; to get one for
 * ours it must send our host, which the other refuses. `URL.host` is what a browser and Node send as Host: lower case,
 * IPv6 in brackets, the scheme's default port left out. Airlock builds the same (apps/server token.ts).
 */
function proofMessage(url: string, nonce: string): string {
  return `airlock server proof v2\n${new URL(url).host.toLowerCase()}\n${nonce}`;
}

/** Whether `mac` is HMAC-SHA256(key = token, message); Web Crypto's verify compares in constant time. */
async function verifyProof(token: string, message: string, mac: Uint8Array<ArrayBuffer>): Promise<boolean> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(token), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  return crypto.subtle.verify('HMAC', key, mac, encoder.encode(message));
}

function toBase64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}
