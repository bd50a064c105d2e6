import { appRouter, clientClockOffset, ConnectionState, LeftRates, LeftRuns, type AirlockServices, type AppRouter, type Context, type ModelInfo, type ToolServerStatus } from '@airlock/api';
import { CLOSE_POLICY_VIOLATION, CLOSE_REPLACED_BEFORE_TOKEN, CLOSE_TRY_AGAIN_LATER, errorMessage, randomId, toVisibleText, visibleTextString } from '@airlock/core';
import { TRPCError } from '@trpc/server';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';
import packageJson from '../package.json' with { type: 'json' };
import { logToConsole } from './console-line';
import { ConfigError, DEFAULT_CAPACITY, isLoopbackHost, type AirlockConfig, type Capacity } from './config';
import { holdLoopbackTwin, loopbackToHold, loopbackTwin, TwinAddressInUseError, type ListenTwin } from './http/loopback-twin';
import { RequestGuard } from './http/request-guard';
import { LinkCodes, type LinkCodesOptions } from './http/link-codes';
import { freshRunHostname } from './http/run-hostname';
import { healthAnswer } from './http/health';
import { coalesceWrites } from './http/coalesce-writes';
import { limitRequestsPerMessage } from './http/requests-per-message';
import { acceptMessagesUpTo, MAX_MESSAGE_BEFORE_TOKEN_BYTES } from './http/before-token-limit';
import { budgetReads, DEFAULT_READ_BUDGET, SocketReads, type ReadBudget } from './http/socket-read-budget';
import { CLOSE_ANSWER_MS, closingWithin } from './http/close-answer-grace';
import { refusedBeforeTokenClose } from './http/refused-before-token';
import { SYSTEM_CLOCK, type Clock } from './clock';
import { answerClientError } from './http/client-error-answer';
import { securityHeaders } from './http/security-headers';
import { isPageLoad, refusedPage } from './http/refused-page';
import { SendBufferBudget } from './http/send-buffer-budget';
import { SocketSendWindow } from './http/socket-send-window';
import { StaticFiles } from './http/static-files';
import { applyTRPCSocketHandler } from './http/trpc-socket-handler';
import { TabCredentials, type TabCredentialsOptions } from './http/tab-credentials';
import { serverProofFrame, tokenMatches } from './http/token';
import { ownLimit } from './own-limits';

export interface StartServerOptions {
  /**
   * Where to listen, the access token (and the file it came from, if any: the start-up line then leaves it out), the
   * extra allowed origins, how much to admit (default DEFAULT_CAPACITY), and the flags or variables these came from
   * (named when the port or host cannot be used; default their variables).
   */
  config: Pick<AirlockConfig, 'host' | 'port' | 'token' | 'tokenFile' | 'allowedOrigins' | 'sources'> & { capacity?: Partial<Capacity> };
  services: AirlockServices;
  /** Folder of the built web app. Default `apps/web/dist` of this repository. */
  webRoot?: string;
  /** Receives the start-up lines and internal errors. Default `logToConsole` (control characters shown as codes). */
  log?: (line: string) => void;
  /** Runs on close once every run has ended, before sockets are closed (e.g. stops MCP servers). Default none. */
  dispose?: () => Promise<void>;
  /**
   * Pacing of each socket: run streams wait while more than `highWaterBytes` wait to be sent, and a socket
   * that has not drained within `stallMs` is closed (1008). Default 256 KiB and 30,000 ms. Over all sockets, at most
   * `totalBytes` wait to be sent: past it, the one that went the longest without reading is closed (1013). Default
   * DEFAULT_SEND_BUFFERS_BYTES.
   */
  sendWindow?: { highWaterBytes: number; stallMs: number; totalBytes?: number };
  /**
   * What each socket may send: `burstBytes` of messages back to back, then `bytesPerSecond`; past it the socket is
   * not read until its budget refills (see budgetReads). Default DEFAULT_READ_BUDGET, 2 MiB then 512 KiB a second.
   */
  readBudget?: ReadBudget;
  /** The clock read budgets refill by, and wait on. Default `performance.now()` and its timers; a test's own, to count against. */
  readBudgetClock?: Clock;
  /** Largest WebSocket message accepted once the token is (before it, 16 KiB); a bigger one closes the connection with 1009. Default 1 MiB. */
  maxPayloadBytes?: number;
  /** Server pings every `pingMs` and drops a connection silent for `pongWaitMs` after. Default 30,000 / 10,000 ms. */
  keepAlive?: { pingMs: number; pongWaitMs: number };
  /** How long closing sockets get to say goodbye on shutdown before they are cut. Default 1,000 ms. */
  closeGraceMs?: number;
  /** How long any other socket the server closes has to answer its close frame before it is cut, in ms. Default CLOSE_ANSWER_MS. */
  closeAnswerMs?: number;
  /** The clock that grace is counted on. Default the system's; a test's own, to move. */
  clock?: Clock;
  /** Deadlines of a plain HTTP socket, before or without an upgrade; one that misses one is closed. Default DEFAULT_HTTP_TIMEOUTS. */
  httpTimeouts?: HttpTimeouts;
  /** Called once each plain HTTP request's handling has ended, after anything it logged: answered, refused, or let go of as its client went away. For tests, to wait on. Default none. */
  onRequestEnd?: () => void;
  /** How the other loopback address ([::1] beside 127.0.0.1) is listened on; for tests. Default a plain listen. */
  listenTwin?: ListenTwin;
  /**
   * Whether `log` writes to a terminal: only then is a start-up link opened again or late answered with a new link
   * printed. Output that is a file, a pipe or a journal may be read by a tool call, which could replay any used code
   * from it to have a live one printed there. Default whether this process's stdout is a terminal (`logToConsole`'s).
   */
  logIsTerminal?: boolean;
  /** The start-up link's one-time codes: lifetime, rate of exchanges, clock. Default `LinkCodes`' defaults. */
  linkCodes?: LinkCodesOptions;
  /** The per-tab credentials pages keep instead of the token: grace after a close, bound, rate, clock. Default `TabCredentials`' defaults. */
  tabCredentials?: TabCredentialsOptions;
}

/** Deadlines of a plain HTTP socket. */
export interface HttpTimeouts {
  /** From its first byte, for a request's headers to arrive (an upgrade request's too). */
  headersMs: number;
  /** For a whole request to arrive (the only body this server takes is a link's code, well under a KiB). */
  requestMs: number;
  /** How long a socket may wait for its next request once an answer is sent. */
  keepAliveMs: number;
  /** How long a socket may go with nothing read or written, as when a client stops reading an answer. */
  idleMs: number;
}

/** Node's own are 60 s for the headers, 300 s for the request and none for a client that stops reading. */
export const DEFAULT_HTTP_TIMEOUTS: Readonly<HttpTimeouts> = Object.freeze({ headersMs: 10_000, requestMs: 10_000, keepAliveMs: 5_000, idleMs: 30_000 });

export interface RunningServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`, without the token: what a Node client connects to. */
  url: string;
  /**
   * Where a browser is sent, without the token: on loopback or every address (0.0.0.0, ::)
   * `http://airlock-<random>.localhost:PORT`, a name new at every start that browsers resolve to loopback themselves
   * (Node does not: use `url`); on any other address, `url`.
   */
  browserUrl: string;
  /** `ws://127.0.0.1:PORT/trpc`. */
  wsUrl: string;
  port: number;
  token: string;
  /**
   * A new start-up link, `browserUrl/#code=<one-time code>`: opened within 10 minutes, its page exchanges the code
   * once for the token, which is never in the link (nor in the browser's history).
   */
  newLink(): string;
  /** Stops accepting, cancels every run, closes MCP and every socket. Safe to call twice. */
  close(): Promise<void>;
}

const TRPC_PATH = '/trpc';
/** Where a page (or a terminal client) exchanges a start-up link's code for the token: POST `{"code": "…"}`. */
export const LINK_CODE_PATH = '/link-code';
const MAX_LINK_CODE_BODY_BYTES = 1024;
/** Said instead of a new link when the output is not a terminal. */
const NO_LINK_TO_OUTPUT =
  'no new link is printed, since this output is not a terminal and a tool call may read it (a file, a pipe, a journal): ' +
  'restart Airlock for a new link, or start it with --token-file (or AIRLOCK_TOKEN_FILE) and paste that token on the page';
/** Files kept free for everything the capacity settings do not count: the web app's files, chats on disk, MCP servers. */
const RESERVED_FILES = 256;
/** Descriptors one running tool call may hold: a process's pipes and its handle, or a file tool's folder, entry and checks. */
const FILES_PER_RUNNING_CALL = 8;
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);
const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../web/dist', import.meta.url));

/**
 * Requests a plain HTTP socket may send ahead of their answers (pipelined) and have wait; one more and it is closed.
 * Browsers send none ahead; Node's and curl's clients neither.
 */
export const MAX_PIPELINED_REQUESTS = 16;

/**
 * What the server holds unsent over all its sockets, at most: 256 MiB. One socket's send window holds 256 KiB and the
 * frame that crossed it (a page of a chat is up to 4 Mi characters); thousands of connections that read nothing held
 * gigabytes.
 */
export const DEFAULT_SEND_BUFFERS_BYTES = 256 * 2 ** 20;

/** How many ports a server on port 0 tries before giving up, when another process holds [::1] on the one it got. */
const TWIN_ATTEMPTS = 5;

/** Serves the web app, `/healthz` and the tRPC WebSocket endpoint on one port. */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { config, services } = options;
  const log = options.log ?? logToConsole;
  const timeouts = options.httpTimeouts ?? DEFAULT_HTTP_TIMEOUTS;
  const server = createServer({
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    // Node checks the headers and request deadlines this often (30 s by default, which would stretch a 10 s deadline to 40).
    connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
  });
  // With no 'timeout' listener, Node destroys a socket idle this long. `ws` turns it off on the sockets it takes over.
  server.setTimeout(timeouts.idleMs);
  server.on('clientError', answerClientError);
  const { address, twin } = await listenHoldingLoopback(server, config, options.listenTwin);
  const port = address.port;
  const displayHost = urlHost(address);
  const url = `http://${displayHost}:${port}`;
  // On loopback, or on every address (loopback among them), the token is handed only to an origin nobody could have
  // served a page on before this run.
  const servesLoopback = loopbackTwin(address.address) !== undefined || WILDCARD_HOSTS.has(address.address);
  const runHostname = servesLoopback ? freshRunHostname() : undefined;
  const browserUrl = runHostname === undefined ? url : `http://${runHostname}:${port}`;

  const guard = new RequestGuard({ port, runHostname, extraHostnames: extraHostnames(config.host, address), allowedOrigins: config.allowedOrigins });
  const staticFiles = new StaticFiles({ root: options.webRoot ?? DEFAULT_WEB_ROOT });
  const linkCodes = new LinkCodes(options.linkCodes);
  const logIsTerminal = options.logIsTerminal ?? process.stdout.isTTY === true;
  const newLink = () => `${browserUrl}/#code=${linkCodes.issue()}`;
  const tabCredentials = new TabCredentials<WebSocket>(options.tabCredentials);
  let closing = false;

  const capacity: Capacity = { ...DEFAULT_CAPACITY, ...config.capacity };
  const sendWindow = options.sendWindow ?? { highWaterBytes: 256 * 1024, stallMs: 30_000 };
  const sendBuffers = new SendBufferBudget(sendWindow.totalBytes ?? DEFAULT_SEND_BUFFERS_BYTES);
  const sendBuffersMiB = Math.round((sendWindow.totalBytes ?? DEFAULT_SEND_BUFFERS_BYTES) / 2 ** 20);
  const readBudget = options.readBudget ?? DEFAULT_READ_BUDGET;
  // Sockets still speaking plain HTTP, oldest first, counted apart from WebSockets: one that upgrades leaves for the
  // limits below. Over the cap the oldest gives way, so slow or idle sockets can neither use up the file descriptors
  // nor keep out a newcomer, whose request (an upgrade's too) is answered in far less time than a flood needs to
  // cycle through every place.
  const httpSockets = new Set<Socket>();
  // Sockets Node let go of for idleness (a client that stopped reading an answer): the server gave up on them, which is
  // logged, unlike an answer its client cut short.
  const timedOut = new WeakSet<Socket>();
  function markTimedOut(this: Socket): void {
    timedOut.add(this);
  }
  server.on('connection', (socket: Socket) => {
    if (httpSockets.size >= capacity.maxHttpConnections) {
      const oldest = httpSockets.values().next().value;
      if (oldest !== undefined) {
        httpSockets.delete(oldest);
        oldest.destroy();
      }
    }
    httpSockets.add(socket);
    socket.on('close', () => httpSockets.delete(socket));
    socket.on('timeout', markTimedOut);
  });
  const maxPayloadBytes = options.maxPayloadBytes ?? 1024 * 1024;
  // Before the token, `ws` refuses a frame larger than connection parameters need at its header, its body unread; the
  // limit is raised once the token is accepted (acceptMessagesUpTo).
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: Math.min(maxPayloadBytes, MAX_MESSAGE_BEFORE_TOKEN_BYTES),
    WebSocket: closingWithin(options.clock ?? SYSTEM_CLOCK, options.closeAnswerMs ?? CLOSE_ANSWER_MS),
  });
  // Sockets yet to present their token, oldest first, with when each was admitted (performance.now()), counted apart
  // from authenticated ones: strangers fill only their own few places. A newcomer takes the oldest one's place once
  // that one has had authGraceMs, and is refused (503) while every place is younger, so a flood of strangers can
  // neither keep the UI out for good nor cut a client between its socket opening and its token arriving.
  const unauthenticated = new Map<WebSocket, number>();
  const authenticated = new WeakSet<WebSocket>();
  // Keyed by the request tRPC hands to createContext (see keptRequest); `upgradedAt`, when the upgrade was taken up,
  // before its 101 and the proof are written: nothing the client sends in answer to them (its connection params, their
  // `clock`) can come before this, which a decision's deadline relies on.
  const accepted = new WeakMap<IncomingMessage, { client: WebSocket; window: SocketSendWindow; upgradedAt: number }>();
  let authenticatedCount = 0;
  // Each authenticated socket's state, and the runs of closed ones, which go on: they count against the next
  // connection that starts a run, so reconnecting does not reset --runs-per-connection.
  const connections = new WeakMap<WebSocket, ConnectionState>();
  const leftRuns = new LeftRuns();
  // And what they spent of their budget of new runs and changes, taken over by the connections that open next, so
  // reconnecting does not start --run-burst again.
  const leftRates = new LeftRates({ runsPerMinute: capacity.runsPerMinute, runBurst: capacity.runBurst, maxKept: capacity.maxConnections });
  // Sockets that gave their place to a newcomer, closing, oldest first. Out of `unauthenticated`, no token they send is
  // accepted: nothing they sent reached a procedure, which their close code tells the client, who sends it all again
  // on its next connection (a cut socket's client cannot tell that from a lost answer). One that does not answer the
  // close within its grace is cut (closingWithin), and so is the oldest when maxHttpConnections are closing: a flood
  // holds no more files than that, and a backend opening its connections together gets them all.
  const givenWay = new Set<WebSocket>();
  const makeWay = (client: WebSocket): void => {
    if (givenWay.size >= capacity.maxHttpConnections) {
      const [oldest] = givenWay;
      if (oldest !== undefined) {
        givenWay.delete(oldest);
        oldest.terminate();
      }
    }
    givenWay.add(client);
    client.once('close', () => givenWay.delete(client));
    client.close(CLOSE_REPLACED_BEFORE_TOKEN, 'replaced before its token was presented');
  };
  wss.on('connection', (client: WebSocket, req: IncomingMessage) => {
    // Before anything else, and before tRPC reads the token: the proof a client asked for that this server knows it.
    const proof = serverProofFrame({ url: req.url, host: req.headers.host }, config.token);
    if (proof !== null) client.send(proof);
    unauthenticated.set(client, accepted.get(req)?.upgradedAt ?? performance.now());
    const timer = setTimeout(() => {
      if (unauthenticated.has(client)) client.close(CLOSE_POLICY_VIOLATION, 'no token presented');
    }, capacity.authTimeoutMs);
    // A socket closes once: `on`, here and in the socket's other close listeners, spares the wrapper `once` keeps for
    // each listener as long as the connection lasts (about 0.2 KB apiece).
    client.on('close', () => {
      clearTimeout(timer);
      unauthenticated.delete(client);
      if (authenticated.has(client)) authenticatedCount--;
      connections.get(client)?.close();
      tabCredentials.closed(client);
    });
  });
  const keepAlive = options.keepAlive ?? { pingMs: 30_000, pongWaitMs: 10_000 };
  const handler = applyTRPCSocketHandler<AppRouter>({
    wss,
    router: appRouter,
    keepAlive,
    createContext: ({ info, req }): Context => {
      const params = info.connectionParams;
      const byToken = tokenMatches(params?.token, config.token);
      // A page's `tab`: "new" (or its last credential, then revoked) beside the token, or alone the credential it
      // kept over a reload, which stands in for the token once.
      const tab = typeof params?.tab === 'string' ? params.tab : undefined;
      if (!byToken && (tab === undefined || params?.token !== undefined)) {
        // Thrown here, the error closes the socket: nothing reaches a procedure without the token.
        throw new TRPCError({ code: 'UNAUTHORIZED', message: 'a valid access token is required' });
      }
      const socket = accepted.get(req);
      // A socket dropped for a newcomer may still have its token on the way.
      if (socket === undefined || !unauthenticated.has(socket.client)) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'the time to present a token is over' });
      // Checked again here, not only on upgrade: sockets admitted together may present their tokens together.
      if (authenticatedCount >= capacity.maxConnections) {
        throw new TRPCError({ code: 'TOO_MANY_REQUESTS', message: `the server holds its maximum of ${capacity.maxConnections} connections` });
      }
      if (byToken) {
        if (tab !== undefined) tabCredentials.revoke(tab);
      } else {
        const redeem = tabCredentials.redeem(tab!, (client) => client.readyState === client.OPEN);
        switch (redeem.kind) {
          case 'redeemed':
            break;
          case 'open':
            // Not an auth refusal: the page tries again, and its old connection may just not have been seen to close yet.
            throw new TRPCError({ code: 'CONFLICT', message: 'the connection this tab credential belongs to is still open' });
          case 'unknown':
            throw new TRPCError({ code: 'UNAUTHORIZED', message: 'this tab’s credential is no longer valid (used, or its connection closed too long ago, or Airlock was restarted)' });
          case 'too-many':
            throw new TRPCError({ code: 'TOO_MANY_REQUESTS', message: 'too many tab credentials were tried in the last minute' });
        }
      }
      if (tab !== undefined) socket.client.send(JSON.stringify({ airlock: 'tab', credential: tabCredentials.issue(socket.client) }));
      // Accepted before the client could send its params: by it, a decision's deadline reads at or before the client's own.
      const clientClock = clientClockOffset(params?.clock, unauthenticated.get(socket.client)!);
      acceptMessagesUpTo(socket.client, maxPayloadBytes);
      unauthenticated.delete(socket.client);
      authenticated.add(socket.client);
      authenticatedCount++;
      const connection = new ConnectionState(randomId('conn', 8), {
        maxConcurrentRuns: capacity.runsPerConnection,
        leftRuns,
        leftRates,
        maxSubscriptions: capacity.subscriptionsPerConnection,
        sendWindow: socket.window,
        ...clientLabelOf(info.connectionParams?.client),
        ...(clientClock === undefined ? {} : { clientClockOffset: clientClock }),
      });
      connections.set(socket.client, connection);
      // Its close handler above has run already if it closed while its context was made.
      if (socket.client.readyState === socket.client.CLOSED) connection.close();
      return { services, connection };
    },
    onError: ({ error, path, req }) => {
      // A client that broke the WebSocket protocol (a message over the size limit, text that is not UTF-8, a reserved
      // bit set): `ws` closes its socket with the code that says so, and nothing failed here. Logged, each made a line,
      // so anyone, without the token, could write to the server's output without end, a socket at a time.
      if (brokeWebSocketProtocol(error.cause)) return;
      // Refused before its token was accepted: tRPC sends the refusal right after this, then closes the socket a turn
      // later with no code. This close comes between the two, with a code and a reason a client can act on.
      const socket = accepted.get(req)?.client;
      if (socket !== undefined && !authenticated.has(socket)) {
        const { code, reason } = refusedBeforeTokenClose(error.code);
        queueMicrotask(() => socket.close(code, reason));
      }
      if (error.code === 'INTERNAL_SERVER_ERROR') log(`Error in ${path ?? 'connection'}: ${errorMessage(error.cause ?? error)}`);
    },
  });

  // Requests waiting on each socket behind the one being answered (sent back to back, pipelined).
  const pipelined = new WeakMap<Socket, number>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (res.socket !== null) {
      serve(req, res);
      return;
    }
    // Node hands a pipelined request on at once, its answer queued unsent: each file asked for was read into answers a
    // client that reads nothing never takes. So it is handled once its answer's turn comes. And as waiting requests no
    // longer hold answers, Node reads on without end: a socket with more than MAX_PIPELINED_REQUESTS waiting is closed.
    const socket = req.socket;
    const waiting = (pipelined.get(socket) ?? 0) + 1;
    if (waiting > MAX_PIPELINED_REQUESTS) {
      socket.destroy();
      return;
    }
    pipelined.set(socket, waiting);
    res.once('socket', () => {
      pipelined.set(socket, (pipelined.get(socket) ?? 1) - 1);
      serve(req, res);
    });
  });

  function serve(req: IncomingMessage, res: ServerResponse): void {
    void handleRequest(req, res)
      .catch((error: unknown) => {
        // Its client went away before the answer was done (a reload, a tab closed, or anyone cutting requests short on
        // purpose): nothing failed here. Logged, each such request made a line, so anyone, without the token, could
        // write to the server's output without end.
        if (clientWentAway(error) && !timedOut.has(req.socket)) {
          res.destroy();
          return;
        }
        log(`Error serving ${req.method ?? '?'} request: ${errorMessage(error)}`);
        if (!res.headersSent) sendText(res, 500, 'Internal Server Error', securityHeaders(undefined));
        else res.destroy();
      })
      .finally(() => options.onRequestEnd?.());
  }

  async function handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!guard.check(req.headers, req.rawHeaders).allowed) {
      // A person reloading a tab of an earlier start reads why, and where the new link is; still refused.
      if (isPageLoad(req.method, req.headers)) return sendHtml(res, 403, refusedPage(req.headers.host), securityHeaders(undefined), req.method === 'HEAD');
      return sendText(res, 403, 'Forbidden', securityHeaders(undefined));
    }
    const headers = securityHeaders(req.headers.host);
    if (closing) return sendText(res, 503, 'Service Unavailable', headers);
    const pathname = pathOf(req.url);
    if (pathname === undefined) return sendText(res, 400, 'Bad Request', headers);
    const method = req.method ?? 'GET';
    if (pathname === LINK_CODE_PATH) return exchangeLinkCode(req, res, headers);
    if (method !== 'GET' && method !== 'HEAD') return sendText(res, 405, 'Method Not Allowed', { ...headers, Allow: 'GET, HEAD' });
    if (pathname === '/healthz') {
      const health = healthAnswer(req.headers.authorization, config.token, () => ({ version: packageJson.version, activeRuns: services.chat.activeRunCount }));
      const body = JSON.stringify(health.body);
      res.writeHead(health.status, {
        ...headers,
        ...(health.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {}),
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
        'Cache-Control': 'no-store',
      });
      res.end(method === 'HEAD' ? undefined : body);
      return;
    }
    if (pathname === TRPC_PATH) return sendText(res, 426, 'Upgrade Required', { ...headers, Upgrade: 'websocket' });
    await staticFiles.serve(pathname, res, { head: method === 'HEAD', headers });
  }

  async function exchangeLinkCode(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>): Promise<void> {
    if (req.method !== 'POST') return sendText(res, 405, 'Method Not Allowed', { ...headers, Allow: 'POST' });
    // JSON only: a page on another origin cannot send it without a preflight, which this server never approves.
    if (req.headers['content-type']?.split(';')[0]?.trim().toLowerCase() !== 'application/json') {
      return sendText(res, 415, 'Unsupported Media Type', headers);
    }
    const body = await readBody(req, MAX_LINK_CODE_BODY_BYTES);
    if (body === undefined) {
      res.shouldKeepAlive = false;
      return sendText(res, 413, 'Content Too Large', headers);
    }
    const code = codeOf(body);
    if (code === undefined) return sendText(res, 400, 'Bad Request', headers);
    const exchange = linkCodes.exchange(code);
    switch (exchange.kind) {
      case 'token':
        return sendJson(res, 200, { token: config.token }, headers);
      case 'used':
      case 'expired': {
        // Anyone may send a used code: a new link is printed only where no tool can read it. A server whose token is
        // in a file prints none. At most one a minute: the last one printed is still live.
        const opened = `A start-up link was opened ${exchange.kind === 'used' ? 'again' : 'too late'}`;
        const noNewLink = config.tokenFile !== undefined ? 'token-file' : logIsTerminal ? undefined : 'output-not-a-terminal';
        if (noNewLink === undefined) {
          const reissued = linkCodes.reissue();
          if (reissued !== undefined) log(`${opened}; a new one: ${browserUrl}/#code=${reissued}`);
          return sendJson(res, 410, { problem: exchange.kind, newLinkPrinted: true }, headers);
        }
        if (noNewLink === 'output-not-a-terminal') log(`${opened}; ${NO_LINK_TO_OUTPUT}`);
        return sendJson(res, 410, { problem: exchange.kind, newLinkPrinted: false, noNewLink }, headers);
      }
      case 'unknown':
        return sendJson(res, 404, { problem: 'unknown' }, headers);
      case 'too-many':
        return sendJson(res, 429, { problem: 'too-many' }, headers);
    }
  }

  // Every refusal happens here, before handleUpgrade: a refused client never gets a WebSocket at all.
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    httpSockets.delete(socket as Socket);
    socket.on('error', () => socket.destroy());
    if (pathOf(req.url) !== TRPC_PATH || !guard.check(req.headers, req.rawHeaders).allowed) return refuseUpgrade(socket, 403, 'Forbidden');
    if (closing || authenticatedCount >= capacity.maxConnections) return refuseUpgrade(socket, 503, 'Service Unavailable');
    if (unauthenticated.size >= capacity.maxUnauthenticated) {
      const oldest = unauthenticated.entries().next().value;
      if (oldest !== undefined) {
        const [client, admittedAt] = oldest;
        // The oldest is the first to leave its grace: while it is still in it, so is every other one.
        if (performance.now() - admittedAt < capacity.authGraceMs) return refuseUpgrade(socket, 503, 'Service Unavailable');
        unauthenticated.delete(client);
        makeWay(client);
      }
    }
    const upgradedAt = performance.now();
    // Made here, as the callback below must not name `req`: what it names outlives it in the connection's closures.
    const kept = keptRequest(req);
    wss.handleUpgrade(req, socket, head, (client) => {
      const reads = new SocketReads(client);
      const window = new SocketSendWindow(client, socket, {
        ...sendWindow,
        reads,
        onStall: () => {
          log(`Closed a connection that read nothing for ${sendWindow.stallMs / 1000} s with ${client.bufferedAmount} bytes waiting`);
          client.close(CLOSE_POLICY_VIOLATION, `send buffer not drained in ${sendWindow.stallMs / 1000} s`);
        },
        budget: {
          total: sendBuffers,
          onEvict: () => {
            log(`Closed a connection holding ${Math.round(client.bufferedAmount / 1024)} KiB unsent: the connections' send buffers together held more than ${sendBuffersMiB} MiB, and it had gone the longest without reading`);
            // Its close frame waits behind what it has not read: a client that reads gets it, and the rest is let go of
            // once its time to answer the close is over (closingWithin).
            client.close(CLOSE_TRY_AGAIN_LATER, 'the server holds too much unsent for slow connections: this one went the longest without reading');
          },
        },
      });
      coalesceWrites(client, socket, () => window.sent());
      accepted.set(kept, { client, window, upgradedAt });
      wss.emit('connection', client, kept);
      // tRPC has added its listener by now; this one goes before it.
      limitRequestsPerMessage(client);
      // And this one before both: a message is counted against the socket's budget before anything reads it.
      budgetReads(client, reads, readBudget, options.readBudgetClock);
    });
  });

  log(
    config.tokenFile === undefined
      ? `Airlock is running at ${newLink()}`
      : `Airlock is running at ${browserUrl}/ (token not shown: it is in ${config.tokenFile}; open ${browserUrl}/#token=<that token>, or paste it on the page)`,
  );
  if (!isLoopbackHost(address.address)) {
    log(
      `Warning: Airlock listens on ${address.address}, beyond this machine, over plain HTTP: the token, the chats and every decision ` +
        'cross the network unencrypted, for anyone on the way to read and reuse. Put a reverse proxy that speaks TLS (https and wss) ' +
        'in front of it, with only the proxy able to reach Airlock, or reach it through an SSH tunnel or a VPN.',
    );
  }
  log(`Model: ${describeModel(services.modelInfo())}`);
  const { workspace, workspaceWarning } = services.modelInfo();
  if (workspace !== undefined) log(`Workspace: ${workspace}`);
  if (workspaceWarning !== undefined) log(`Warning: ${workspaceWarning}`);
  // Plain HTTP sockets count twice: those open, and as many given-way sockets closing.
  const sockets = capacity.maxConnections + capacity.maxUnauthenticated + 2 * capacity.maxHttpConnections + capacity.maxModelRequests;
  const calls = capacity.maxRunningCalls * FILES_PER_RUNNING_CALL;
  // Node raises its soft limit to the hard one at start-up: the soft one is what the server has.
  const fileLimit = ownLimit('Max open files', 'soft');
  if (fileLimit !== undefined && fileLimit < sockets + calls + RESERVED_FILES) {
    log(
      `Warning: this process may open ${fileLimit} files, fewer than the capacity settings allow: ${sockets} sockets, ${calls} for running tool calls ` +
        `and ${RESERVED_FILES} for everything else; raise the limit (ulimit -n) or lower --max-connections or --max-running-calls`,
    );
  }
  const servers = services.catalog.servers();
  if (servers.length > 0) log(`MCP servers: ${servers.map(describeServer).join('; ')}`);

  let closed: Promise<void> | undefined;
  async function shutdown(): Promise<void> {
    closing = true;
    const httpClosed = Promise.all([
      new Promise<void>((resolve) => server.close(() => resolve())),
      new Promise<void>((resolve) => (twin === undefined ? resolve() : twin.close(() => resolve()))),
    ]);
    server.closeIdleConnections();
    services.chat.refuseNewWork();
    // A decision read with the stop is refused a turn or two of the event loop later (see ChatService.confirm): its
    // answer goes out before the reconnect notice below, after which a client reads nothing more of its connection.
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    try {
      if (services.chat.suspendsRunsOnShutdown) {
        // Runs go on after the restart (or on another instance): clients are asked to reconnect before their run
        // streams stop, so they take the stop that follows for the old connection's and follow each run again on
        // the new one, from their last event, rather than for the end of a run that has not ended.
        handler.broadcastReconnectNotification();
        await services.chat.shutdown();
      } else {
        // Runs end here: they end first, so connected clients still see each run-end before their socket goes.
        await services.chat.shutdown();
        // Each subscription forwards its last events through a chain of promise callbacks: one macrotask turn
        // lets every chain reach the socket before the reconnect notice and the close frame are queued behind it.
        await new Promise((resolve) => setImmediate(resolve));
        handler.broadcastReconnectNotification();
      }
      await options.dispose?.();
    } finally {
      await closeClients(wss, options.closeGraceMs ?? 1_000);
      wss.close();
      server.closeAllConnections();
      await httpClosed;
    }
  }
  const close = () => (closed ??= shutdown());

  return { url, browserUrl, wsUrl: `ws://${displayHost}:${port}${TRPC_PATH}`, port, token: config.token, newLink, close, [Symbol.asyncDispose]: close };
}

/**
 * Refuses a configured port another process holds, as starting would, before anything else starts: the services
 * start MCP servers, which would otherwise run (and do what they do at start) for a start that is then refused. The
 * port is listened on and let go of again at once; one taken in the moment between is still refused by the start.
 * A port of 0 is chosen at the start.
 */
export async function refuseTakenPort(config: StartServerOptions['config']): Promise<void> {
  if (config.port === 0) return;
  const probe = createServer();
  const { twin } = await listenHoldingLoopback(probe, config, undefined);
  await Promise.all([
    new Promise<void>((resolve) => probe.close(() => resolve())),
    ...(twin === undefined ? [] : [new Promise<void>((resolve) => twin.close(() => resolve()))]),
  ]);
}

/**
 * Listens as configured and, bound to a loopback address, holds the other one on the same port too (see
 * `holdLoopbackTwin`); bound to 0.0.0.0, it holds [::1]. When another process holds that one, a browser would reach
 * it: with a port of its own choosing the server takes another, with a configured port it refuses to start.
 */
async function listenHoldingLoopback(
  server: Server,
  config: StartServerOptions['config'],
  listenTwin: ListenTwin | undefined,
): Promise<{ address: AddressInfo; twin: NetServer | undefined }> {
  for (let attempt = 1; ; attempt++) {
    await listen(server, config);
    const address = server.address() as AddressInfo;
    const twinHost = loopbackToHold(address.address);
    if (twinHost === undefined) return { address, twin: undefined };
    try {
      return { address, twin: await holdLoopbackTwin(server, twinHost, address.port, listenTwin) };
    } catch (error) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!(error instanceof TwinAddressInUseError)) throw error;
      if (config.port === 0 && attempt < TWIN_ATTEMPTS) continue;
      const shown = isIP(error.host) === 6 ? `[${error.host}]` : error.host;
      throw new ConfigError(
        config.sources?.port ?? 'AIRLOCK_PORT',
        `port ${error.port} on ${shown} is held by another process, which a browser opening Airlock's link may reach instead of Airlock ` +
          '(browsers try both loopback addresses); stop it, or choose another port with --port or AIRLOCK_PORT',
      );
    }
  }
}

async function listen(server: Server, { host, port, sources }: StartServerOptions['config']): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const portSource = sources?.port ?? 'AIRLOCK_PORT';
    if (code === 'EADDRINUSE') throw new ConfigError(portSource, `port ${port} on ${host} is already in use; choose another with --port or AIRLOCK_PORT`);
    if (code === 'EACCES') throw new ConfigError(portSource, `no permission to listen on port ${port}`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ConfigError(sources?.host ?? 'AIRLOCK_HOST', `"${host}" is not an address of this machine`);
    throw error;
  }
}

/** Path of a request target, or undefined when it is not origin-form (`/path?query`). */
function pathOf(target: string | undefined): string | undefined {
  if (target === undefined || !target.startsWith('/')) return undefined;
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string>): void {
  const body = `${text}\n`;
  res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(body);
}

function sendHtml(res: ServerResponse, status: number, html: string, headers: Record<string, string>, head: boolean): void {
  res.writeHead(status, { ...headers, 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(html), 'Cache-Control': 'no-store' });
  res.end(head ? undefined : html);
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string>): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(body);
}

/**
 * What a WebSocket's connection keeps of its upgrade request: the socket handler holds the request it is handed for as
 * long as the connection lasts, and reads only its URL and Host (for the connection's URL, and our createContext
 * nothing else), so it is handed those, not the request with its raw headers, streams and socket (about 0.8 KB a
 * connection).
 */
function keptRequest(req: IncomingMessage): IncomingMessage {
  const kept: Pick<IncomingMessage, 'url' | 'headers'> = { url: req.url, headers: { host: req.headers.host } };
  return kept as IncomingMessage;
}

/** Whether `error` is `ws`'s refusal of what a client sent on its WebSocket (its codes all start `WS_ERR_`). */
function brokeWebSocketProtocol(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('WS_ERR_');
}

/**
 * Whether a request's handling failed only because its client went away: the request cut short before its body ended
 * (`aborted`, ECONNRESET), or the answer's stream closed before it was all sent (a download cut short).
 */
function clientWentAway(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'EPIPE';
}

/** The request's body as text, or undefined when it is longer than `maxBytes`. */
async function readBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The `code` of a `{"code": "…"}` body. */
function codeOf(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null || !Object.hasOwn(parsed, 'code')) return undefined;
    const code: unknown = (parsed as Record<string, unknown>).code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

function refuseUpgrade(socket: Duplex, status: number, text: string): void {
  const body = `${text}\n`;
  socket.once('finish', () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

/** Closes every WebSocket politely (1001 going away), cutting those that do not finish within `graceMs`. */
async function closeClients(wss: WebSocketServer, graceMs: number): Promise<void> {
  const clients = [...wss.clients];
  if (clients.length === 0) return;
  await new Promise<void>((resolve) => {
    let open = clients.length;
    const timer = setTimeout(() => {
      for (const client of clients) client.terminate();
    }, graceMs);
    for (const client of clients) {
      client.once('close', () => {
        open -= 1;
        if (open === 0) {
          clearTimeout(timer);
          resolve();
        }
      });
      client.close(1001, 'Airlock is shutting down');
    }
  });
}

/** The host to print in URLs: a wildcard bind is reached through loopback. */
function urlHost(address: AddressInfo): string {
  if (WILDCARD_HOSTS.has(address.address)) return '127.0.0.1';
  return isIP(address.address) === 6 ? `[${address.address}]` : address.address;
}

/**
 * Host names a browser may use for this server besides the loopback ones: the bound address, or every
 * address of the machine when binding all interfaces. IP literals and the machine's own name cannot be rebound.
 */
function extraHostnames(configuredHost: string, address: AddressInfo): string[] {
  const bracket = (host: string) => (isIP(host) === 6 ? `[${host}]` : host);
  if (!WILDCARD_HOSTS.has(address.address)) return [bracket(configuredHost.replace(/^\[(.*)\]$/, '$1')), bracket(address.address)];
  const addresses = Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .filter((entry) => entry.family === 'IPv4' || !entry.scopeid)
    .map((entry) => bracket(entry.address));
  return [...addresses, hostname()];
}

function describeModel(info: ModelInfo): string {
  if (info.demo) return 'Demo model (offline)';
  // The id is the model server's (its model list): a terminal would obey escape sequences in it, a line break would
  // start a forged line, U+202E would turn the rest around.
  const model = visibleTextString(toVisibleText(info.model, { singleLine: true }));
  return info.baseURL === null ? `${info.provider} ${model}` : `${info.provider} ${model} at ${withoutCredentials(info.baseURL)}`;
}

function withoutCredentials(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    return url.toString();
  } catch {
    return raw;
  }
}

function describeServer(status: ToolServerStatus): string {
  const tools = `${status.toolCount} tool${status.toolCount === 1 ? '' : 's'}`;
  return status.error === undefined ? `${status.name} ${status.state} (${tools})` : `${status.name} ${status.state}: ${status.error}`;
}

/** A client's name for itself, as its connection parameters give it: text of at most 100 characters, or nothing. */
function clientLabelOf(value: unknown): { clientLabel?: string } {
  if (typeof value !== 'string') return {};
  const label = value.trim().slice(0, 100);
  return label === '' ? {} : { clientLabel: label };
}
