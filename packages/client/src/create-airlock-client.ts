import type { AppRouter } from '@airlock/api';
import type { LoopEvent } from '@airlock/core';
import { createTRPCClientProxy, type TRPCClient } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { AirlockUntypedClient } from './airlock-untyped-client';
import { AirlockSocket, type KeepAlive, type RejectionReason, type SocketState } from './airlock-socket';
import { randomRunId } from './random-run-id';
import { subscriptionIterator } from './subscription-iterator';
import type { WebSocketConstructor } from './web-socket-like';

type RouterInputs = inferRouterInputs<AppRouter>;
type RouterOutputs = inferRouterOutputs<AppRouter>;

export type RunOptions = NonNullable<RouterInputs['chat']['stream']['options']>;
export type ConfirmResult = RouterOutputs['chat']['confirmTool'];
export type PendingCall = RouterOutputs['chat']['pending'][number];
export type SessionPage = RouterOutputs['sessions']['list'];
export type SessionSummary = SessionPage['sessions'][number];
export type SessionWatchEvent = RouterOutputs['sessions']['watch'] extends AsyncIterable<infer T> ? T : never;
export type ToolInfo = RouterOutputs['tools']['list']['tools'][number];

export interface AirlockClientOptions {
  /** The tRPC WebSocket endpoint, e.g. `ws://127.0.0.1:7700/trpc` (see `socketUrl` and `parseStartupLink`). */
  url: string;
  /** The server's access token, sent as a connection param on every (re)connect; "" when `tab.credential` stands in for it. */
  token: string;
  /**
   * A browser tab's way to survive a reload without keeping the token: the server gives each connection a per-tab
   * credential, handed to `keep`, which re-opens the tab once after that connection closed (within seconds), never
   * while it is open. The last one is sent beside the token on a reconnect (the server then revokes it), or in its
   * place when `token` is "". Default none.
   */
  tab?: {
    /** The credential kept over a reload, to connect with instead of the token. Default none: the token asks for one. */
    credential?: string;
    /** Keeps each new credential (a page: in its sessionStorage), in place of the last. */
    keep: (credential: string) => void;
  };
  /** Default `globalThis.WebSocket` (browsers); Node 20 has none: pass `WebSocket` from `ws`. */
  WebSocket?: WebSocketConstructor;
  /**
   * Sent with the token as the connection param `client`, so the server can tell its clients apart (it keeps the first
   * 100 characters). Default none.
   */
  clientLabel?: string;
  /** Wait before reconnect attempt `attempt` (0, 1, …). Default none for the first, then 500 ms doubling up to 5 s. */
  retryDelayMs?: (attempt: number) => number;
  /** Called when a socket opens, the first time and after every reconnect. */
  onOpen?: () => void;
  /**
   * Called when a socket closes or fails to open, before the next attempt, with why when the socket said: the server
   * turning it away (`the server is full or shutting down (503) …`, `the server refused this address (403) …`),
   * `connect ECONNREFUSED …`. With `connectAttempts: Infinity` this is where a client that keeps trying sees why.
   */
  onClose?: (why: string | undefined) => void;
  /**
   * Called once when the server refuses the token (`reason` "refused"), or cannot prove it knows the token, which is
   * then never sent ("unproven": another program on that port, or Airlock started with another token): the client
   * stops reconnecting and every call fails.
   */
  onRejected?: (message: string, reason: RejectionReason) => void;
  /**
   * Failed attempts to open the first connection after which the client gives up and every call fails with why
   * (`state` is then `unreachable`). Once connected, a dropped connection is retried however long it takes. Default
   * 4, about a second and a half; `Infinity` waits for the server to come up. A socket the server closed to make
   * room for a newcomer before it accepted the token (close code 4001) does not count, once the server proved it knows
   * the token: a 4001 from one that did not counts.
   */
  connectAttempts?: number;
  /**
   * A connection silent for `pingMs` is pinged; with no answer `pongWaitMs` later it is dropped as dead (`onClose`,
   * state `reconnecting`, the calls in flight on it fail) and a new one opened, where runs followed resume. Default
   * 10,000 / 5,000 ms; `false`: never pinged.
   */
  keepAlive?: KeepAlive | false;
  /**
   * The largest request sent, in UTF-8 bytes of JSON: a bigger one fails at once, unsent, with its size, the limit and
   * the field to shorten (code `PAYLOAD_TOO_LARGE`). Default 1 MiB, the server's limit for one message.
   */
  maxMessageBytes?: number;
  /**
   * How long a decision (`decide`, or `chat.confirmTool` through `trpc`) is waited for, counted from when it is
   * written (one made while the connection is down is written once it is back). It is sent with this deadline
   * (`notAfter`, on the clock the connection param `clock` gives the server), which the server checks before applying
   * it; unanswered by then, the call fails (`isExpired`), and the server refuses it if it reads it later (a frozen
   * server, a stalled network). A connection that goes after the decision was sent fails it at once, its answer
   * unknown (`isAnswerUnknown`, `isConnectionLost`: it may have been applied, or may still be until the deadline;
   * `pending(sessionId)` once reconnected tells). Default 10,000 ms.
   */
  decisionTimeoutMs?: number;
  /**
   * How long `close()` waits for the answers to calls already sent: those unanswered then fail (`the client closed
   * before the answer came`, `isConnectionLost`: the server may have applied them). Default 5,000 ms.
   */
  closeWaitMs?: number;
  /**
   * How many of a run stream's events may wait unread (received, not yet taken by the caller). One more ends the
   * stream, after the events that waited, with an `UnreadEventsError` naming this limit: nothing is dropped unsaid,
   * and `attachRun` from the stream's `lastEventId` goes on from the last event taken. A session watch
   * (`watchSessions`, `followSessions`) holds as many changes unread: one more takes their place with one `ready` (read
   * what you keep again), as the server does for a client too slow for it. Default 10,000.
   */
  maxUnreadEvents?: number;
}

export interface StartRunInput {
  /**
   * The chat, new or existing: 1 to 128 of the letters A-Z and a-z, digits and `_ : . -` (an e-mail address or a path
   * is refused with BAD_REQUEST; map it to an id of your own). `runId` alike.
   */
  sessionId: string;
  message: string;
  /** Tools, confirmation and limits for this run. Default the server's. */
  options?: RunOptions;
  /** Default a new random id: a reconnect re-attaches to the run by it instead of starting a second one. */
  runId?: string;
  /** Stops following the run: the iteration just ends (the run itself goes on; `cancel()` stops it). */
  signal?: AbortSignal;
}

export interface AttachRunInput {
  sessionId: string;
  runId: string;
  /** Resume after this event (`RunStream.lastEventId`). Default: replay the run from its start. */
  lastEventId?: string;
  /** Stops following the run: the iteration just ends. */
  signal?: AbortSignal;
}

/**
 * A run's events, in order, ending after `run-end`. A dropped connection is re-attached with the last event id:
 * nothing is repeated or skipped. So is a server restart: the server asks for a new connection as it goes down,
 * and the stream follows the run again on it, on the restarted server or another instance, if that server takes the
 * same token (a fixed one: `AIRLOCK_TOKEN`, `--token-file`); one with a new random token refuses it, and the stream
 * fails as every call does (`state` `rejected`, `onRejected`). What the run does after the restart depends on where
 * it was: a call waiting for a decision still waits, and the run goes on once it is decided; a call that was running
 * ends `interrupted` (never run again), the model is told, and the run goes on; a run stopped while the model was
 * answering (or about to) does not resume: the stream gives `run-end` with reason `error` ("The server stopped while
 * this run was going; send the message again to continue."), and the message must be sent again (`startRun`, with a
 * new `runId`). A stream the server stops while the connection stays is followed again once, and ends if it stops
 * again with nothing new. Iterate it once.
 */
export interface RunStream extends AsyncIterableIterator<LoopEvent> {
  readonly sessionId: string;
  readonly runId: string;
  /** The id of the last event this stream gave out, to re-attach from elsewhere (`attachRun`) after leaving it. */
  readonly lastEventId: string | undefined;
  /**
   * Asks the server to stop the run; the stream then ends with `run-end` "cancelled". Answers whether it was running.
   * A paused run (its server cannot store its data for now) is stopped only once it is taken up, and a stop the server
   * could not store may not hold across its restart, nor, with several instances, once another instance takes the run
   * over: `stop()` says so.
   */
  cancel(): Promise<boolean>;
  /** As `cancel`, answering what the server will do. */
  stop(): Promise<StopResult>;
}

/** The server's answer to a stop. */
export interface StopResult {
  /** Whether the run was going: it is stopped, or will be (see `paused`). */
  running: boolean;
  /**
   * The stop does not hold for good yet, in the server's words, saying what happens and whether a restart keeps it:
   * the run is paused (its server cannot store its data for now) and is stopped when it is taken up, before anything
   * more of it runs; or the run is stopped but its stop could not be stored (with several instances, it then holds only
   * while the instance that took it holds the run). Absent otherwise.
   */
  paused?: string;
}

/** A person's decision on one pending call. "always" allows it and grants it for the rest of the session. */
export type DecideInput = { sessionId: string; approvalId: string } & (
  | {
      decision: 'allow' | 'always';
      /**
       * The person's edit of the call's arguments: the edited call runs (checked against the tool's schema first; a
       * bad edit is refused and the call goes on waiting), the model is told, and the ledger keeps both. With
       * "always", the grant covers the edited call.
       */
      arguments?: Record<string, unknown>;
    }
  | { decision: 'deny'; reason?: string }
);

export interface AirlockClient {
  /** The typed tRPC client, over the same socket. */
  trpc: TRPCClient<AppRouter>;
  /** Starts a run for a new message and follows it. */
  startRun(input: StartRunInput): RunStream;
  /** Follows a run that exists (started elsewhere, or before a restart). */
  attachRun(input: AttachRunInput): RunStream;
  decide(input: DecideInput): Promise<ConfirmResult>;
  /** The calls of a session waiting for a decision. */
  pending(sessionId: string): Promise<PendingCall[]>;
  /**
   * Every session, most recently active first: now, then again after every change, until `signal` aborts. The list is
   * read a page at a time (`sessions.list` answers at most 500 chats), one page after the other, and given once whole,
   * after every `ready` (the first, and after a reconnect); what changed while it was read is applied after it. It
   * holds every chat: to show only the newest, read `trpc.sessions.list` (the first page without input) and follow
   * `watchSessions` instead.
   */
  followSessions(signal?: AbortSignal): AsyncIterableIterator<SessionSummary[]>;
  /**
   * The server's changes to the sessions as they come, until `signal` aborts: `ready` first (and again after a
   * reconnect, or when this client fell behind: read what you keep again), `session-changed`, `session-deleted`, and
   * `waiting-changed` when a call of that session started or stopped waiting for a decision (`pending(sessionId)`
   * reads what waits now): what a "waiting for you" list across chats follows, without polling.
   */
  watchSessions(signal?: AbortSignal): AsyncIterableIterator<SessionWatchEvent>;
  readonly state: SocketState;
  /**
   * Ends every subscription, fails the calls not sent yet, waits for the answers to those sent (at most `closeWaitMs`,
   * 5 s; those unanswered then fail as lost), and closes the socket.
   */
  close(): Promise<void>;
}

/** How many of a run stream's events may wait unread by default (`maxUnreadEvents`). */
export const DEFAULT_MAX_UNREAD_EVENTS = 10_000;

/**
 * A run stream ended because more events came than `maxUnreadEvents` while the caller did not read them. The run
 * goes on: `attachRun` from `lastEventId` follows it from the last event the stream gave out.
 */
export class UnreadEventsError extends Error {
  override readonly name = 'UnreadEventsError';

  constructor(
    /** The `maxUnreadEvents` reached. */
    readonly limit: number,
    readonly runId: string,
    /** The last event the stream gave out (its `lastEventId`), to attach from. */
    readonly lastEventId: string | undefined,
  ) {
    super(
      `the stream of run "${runId}" stopped following it: ${limit} events waited unread, the most it holds (maxUnreadEvents); ` +
        `the run goes on: attach again (attachRun) from ${lastEventId === undefined ? 'its start' : `lastEventId "${lastEventId}"`} to read on from the last event taken`,
    );
  }
}

/**
 * The characters of a client label sent: the server keeps its first 100 once trimmed, and refuses a message over
 * 16 KiB before the token, so a longer label closed every connection (1009) before it was open.
 */
const MAX_SENT_LABEL_CHARACTERS = 1_000;

function sentLabel(label: string): string {
  return label.trimStart().slice(0, MAX_SENT_LABEL_CHARACTERS);
}

/** Connects to an Airlock server at once (and again whenever the connection drops). */
export function createAirlockClient(options: AirlockClientOptions): AirlockClient {
  const { tab } = options;
  let tabCredential = tab?.credential;
  const socket = new AirlockSocket({
    url: options.url,
    connectionParams: () => ({
      ...(options.token === '' && tab !== undefined ? {} : { token: options.token }),
      ...(tab === undefined ? {} : { tab: tabCredential ?? 'new' }),
      ...(options.clientLabel === undefined ? {} : { client: sentLabel(options.clientLabel) }),
    }),
    ...(tab === undefined
      ? {}
      : {
          onTabCredential: (credential: string) => {
            tabCredential = credential;
            tab.keep(credential);
          },
        }),
    ...(options.WebSocket === undefined ? {} : { WebSocket: options.WebSocket }),
    ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
    ...(options.onOpen === undefined ? {} : { onOpen: options.onOpen }),
    ...(options.onClose === undefined ? {} : { onClose: options.onClose }),
    ...(options.onRejected === undefined ? {} : { onRejected: options.onRejected }),
    ...(options.connectAttempts === undefined ? {} : { connectAttempts: options.connectAttempts }),
    ...(options.keepAlive === undefined ? {} : { keepAlive: options.keepAlive }),
    ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
    ...(options.closeWaitMs === undefined ? {} : { closeWaitMs: options.closeWaitMs }),
  });
  const trpc = createTRPCClientProxy<AppRouter>(new AirlockUntypedClient<AppRouter>(socket, options.decisionTimeoutMs === undefined ? {} : { decisionTimeoutMs: options.decisionTimeoutMs }));

  const maxUnreadEvents = options.maxUnreadEvents ?? DEFAULT_MAX_UNREAD_EVENTS;
  if (!Number.isSafeInteger(maxUnreadEvents) || maxUnreadEvents < 1) throw new RangeError(`maxUnreadEvents must be a whole number of at least 1, got ${String(maxUnreadEvents)}`);
  const follow = (input: { sessionId: string; runId: string; message?: string; options?: RunOptions; lastEventId?: string }, signal?: AbortSignal): RunStream => {
    // Received: where the stream resumes (the last event queued). Given out: what `lastEventId` says (events may wait
    // in the queue).
    let received = input.lastEventId;
    let givenOut = input.lastEventId;
    const events = subscriptionIterator<{ id: string; event: LoopEvent }>((sink) => {
      let subscription: { unsubscribe(): void } | undefined;
      let left = false;
      let stopsInARow = 0;
      const subscribe = () => {
        subscription = trpc.chat.stream.subscribe(
          { ...input, ...(received === undefined ? {} : { lastEventId: received }) },
          {
            onData: ({ id, data }) => {
              stopsInARow = 0;
              // Pushed first: one that does not fit ends the stream, which is to be attached again after the last
              // event that fitted.
              sink.push({ id, event: data });
              received = id;
              if (data.type === 'run-end') sink.end();
            },
            onError: (error) => sink.fail(error),
            onComplete: () => {
              if (left) return;
              // Stopped before its run-end. A server going down asks for a new connection first (its stops reach
              // the old one, unread), and the socket re-sends this subscription on the new one by itself; a stop read
              // here was meant for this stream. It is followed again once, from the last event: a run that went on
              // elsewhere meanwhile picks up; stopped again with no event between, nothing more will come (the run's
              // end was already read, or it is gone: that attach fails with why).
              if (socket.state === 'closed' || ++stopsInARow > 1) {
                sink.end();
                return;
              }
              if (socket.state === 'open') {
                subscribe();
                return;
              }
              socket.nextOpen().then(
                () => {
                  if (!left) subscribe();
                },
                (error: unknown) => sink.fail(error),
              );
            },
          },
        );
      };
      subscribe();
      return () => {
        left = true;
        subscription?.unsubscribe();
      };
    }, signal, { maxQueued: maxUnreadEvents, overflow: () => new UnreadEventsError(maxUnreadEvents, input.runId, received) });
    const stop = async (): Promise<StopResult> => {
      const { cancelled, paused } = await trpc.chat.cancel.mutate({ sessionId: input.sessionId, runId: input.runId });
      return paused === undefined ? { running: cancelled > 0 } : { running: cancelled > 0, paused };
    };
    return {
      sessionId: input.sessionId,
      runId: input.runId,
      get lastEventId() {
        return givenOut;
      },
      cancel: async () => (await stop()).running,
      stop,
      next: async () => {
        const result = await events.next();
        if (result.done === true) return { done: true, value: undefined };
        givenOut = result.value.id;
        return { done: false, value: result.value.event };
      },
      return: async () => {
        await events.return!();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  };

  return {
    trpc,
    startRun: ({ signal, runId, ...input }) => follow({ ...input, runId: runId ?? randomRunId() }, signal),
    attachRun: ({ signal, ...input }) => follow(input, signal),
    decide: async (input) => trpc.chat.confirmTool.mutate(confirmInput(input)),
    pending: (sessionId) => trpc.chat.pending.query({ sessionId }),
    followSessions: (signal) => followSessions(trpc, signal, () => socket.state === 'closed', maxUnreadEvents),
    watchSessions: (signal) => watchSessions(trpc, signal, maxUnreadEvents),
    get state() {
      return socket.state;
    },
    close: () => socket.close(),
  };
}

/** The decisions `decide` takes, spelt exactly so. */
const DECISIONS: ReadonlySet<unknown> = new Set<DecideInput['decision']>(['allow', 'always', 'deny']);

/**
 * What `decide` sends for a decision. From plain JavaScript the type checks nothing: a decision other than "allow",
 * "always" or "deny" ("Deny", "reject", none at all) is refused here, before anything is sent, never taken as an allow.
 */
function confirmInput(input: DecideInput) {
  const decision: unknown = (input as { decision?: unknown }).decision;
  if (!DECISIONS.has(decision)) {
    throw new TypeError(`decide: the decision must be "allow", "always" or "deny", got ${typeof decision === 'string' ? JSON.stringify(decision) : decision === null ? 'null' : typeof decision}`);
  }
  if (input.decision === 'deny') {
    return { sessionId: input.sessionId, approvalId: input.approvalId, decision: 'deny' as const, ...(input.reason !== undefined && input.reason !== '' ? { reason: input.reason } : {}) };
  }
  return {
    sessionId: input.sessionId,
    approvalId: input.approvalId,
    decision: 'allow' as const,
    ...(input.decision === 'always' ? { always: true } : {}),
    ...(input.arguments !== undefined ? { arguments: input.arguments } : {}),
  };
}

function watchSessions(trpc: TRPCClient<AppRouter>, signal: AbortSignal | undefined, maxQueued: number): AsyncIterableIterator<SessionWatchEvent> {
  return subscriptionIterator<SessionWatchEvent>((sink) => {
    const subscription = trpc.sessions.watch.subscribe(undefined, {
      onData: (change) => sink.push(change),
      onError: (error) => sink.fail(error),
      onComplete: () => sink.end(),
    });
    return () => subscription.unsubscribe();
  }, signal, { maxQueued, collapse: () => ({ type: 'ready' }) });
}

async function* followSessions(trpc: TRPCClient<AppRouter>, signal: AbortSignal | undefined, closed: () => boolean, maxQueued: number): AsyncGenerator<SessionSummary[], void, undefined> {
  const changes = watchSessions(trpc, signal, maxQueued);
  let sessions = new Map<string, SessionSummary>();
  try {
    for await (const change of changes) {
      switch (change.type) {
        case 'ready':
          try {
            sessions = await readAllSessions(trpc, signal);
          } catch (error) {
            // Aborted, or the client closed, while the list was read: the following ends quietly, as it does between
            // changes.
            if (signal?.aborted === true || closed()) return;
            throw error;
          }
          break;
        case 'session-changed':
          sessions.set(change.session.sessionId, change.session);
          break;
        case 'session-deleted':
          sessions.delete(change.sessionId);
          break;
        case 'waiting-changed':
          // The list itself is unchanged (pending(sessionId) reads what waits).
          continue;
      }
      yield [...sessions.values()].sort((a, b) => b.updatedAt - a.updatedAt || (a.sessionId < b.sessionId ? 1 : -1));
    }
  } finally {
    await changes.return?.();
  }
}

/** Chats one read of followSessions asks for: the most the server answers. */
const FOLLOW_PAGE = 500;

/**
 * Every chat, page after page. A chat that changed meanwhile may be missing or there twice (by its id: once here);
 * the watch that asked for the read tells of that change next, and its copy replaces this one.
 */
async function readAllSessions(trpc: TRPCClient<AppRouter>, signal: AbortSignal | undefined): Promise<Map<string, SessionSummary>> {
  const sessions = new Map<string, SessionSummary>();
  let cursor: string | undefined;
  do {
    const page = await trpc.sessions.list.query({ limit: FOLLOW_PAGE, ...(cursor === undefined ? {} : { cursor }) }, signal === undefined ? {} : { signal });
    for (const session of page.sessions) sessions.set(session.sessionId, session);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return sessions;
}
