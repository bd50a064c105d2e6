import { createHash } from 'node:crypto';
import type { AnyTool, ToolContext, ToolOutput } from '@airlock/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ErrorCode,
  ListToolsResultSchema,
  McpError,
  type RequestId,
  ToolListChangedNotificationSchema,
  type Tool as McpToolDefinition,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { loopbackPinnedFetch } from '../http/loopback-name';
import { AnsweredStreamsTransport } from './answered-streams-transport';
import { BoundedRequestsTransport } from './bounded-requests-transport';
import { lfLineEndsFetch } from './event-stream-line-ends';
import { clockDelay, type McpClock } from './mcp-clock';
import type { McpServerConfig } from './mcp-config';
import { flattenToolResult, inputSchemaProblem, mcpTool, mcpToolName, sharedPrefixServer } from './mcp-tool';
import { outputSchemaMismatch } from './output-schema-mismatch';
import { outputValidator } from './output-validator';
import { McpAnswerRefusedError, sizeLimitedFetch } from './size-limited-fetch';
import { sessionLostFetch } from './session-lost-fetch';
import { STREAM_REOPEN_STORM, streamReopenFetch } from './stream-reopen-fetch';
import { SupervisedStdioTransport } from './supervised-stdio-transport';
import { turnTakingFetch } from './turn-taking-fetch';

export type McpServerState = 'connecting' | 'ready' | 'error' | 'restarting' | 'closed';

export interface McpServerStatus {
  name: string;
  transport: McpServerConfig['transport'];
  state: McpServerState;
  /** Why the server is not usable, or while restarting, why it went down. */
  error?: string;
  toolCount: number;
  /** The child's process id, while a stdio server runs. */
  pid?: number;
}

export interface McpRestartPolicy {
  /** Restart attempts in a row before the server is left in 'error'; 0 never restarts. Default 5. */
  maxAttempts?: number;
  /** Delay before the first attempt, in ms; doubles after each one. Default 500. */
  initialDelayMs?: number;
  /** Longest delay between attempts, in ms. Default 10 000. */
  maxDelayMs?: number;
  /** A server that stayed up this long, in ms, gets a fresh count of attempts when it next goes down. Default 60 000. */
  stableAfterMs?: number;
}

export interface McpLogger {
  info(message: string): void;
  warn(message: string): void;
}

export interface McpConnectionOptions {
  name: string;
  /** Every configured server's name, this one's too: a tool whose name would read as another's gets a hash suffix. */
  servers: readonly string[];
  config: McpServerConfig;
  /** Time allowed to start and initialize, in ms, and again for a whole listing of the tools. */
  connectTimeoutMs: number;
  /** Upper bound on one tool call, in ms. */
  callTimeoutMs: number;
  restart: Required<McpRestartPolicy>;
  logger: McpLogger;
  /** Called after every change of status or tools. */
  onChange(): void;
  /** The clock the floors between listings and between event streams, and the rate stderr is read at, are kept by. */
  clock: McpClock;
}

export const MAX_TOOLS_PER_SERVER = 512;
/**
 * What one server's tool definitions (names, descriptions, schemas) may add up to, in characters of JSON. Real servers
 * list tens of tools of a few KB each; 512 tools of 64 KB schemas made one listing of 49 MB that stayed in memory and
 * was sent to every client.
 */
export const MAX_DEFINITION_CHARS_PER_SERVER = 4 * 1024 * 1024;
export const MAX_LIST_PAGES = 50;
/**
 * The least time, in ms, from the end of one listing of a server's tools to the start of the next: a server that said
 * they changed while each listing was read had them listed back to back for as long as it went on. At start-up, the
 * listing read again for a change announced while the first was read waits this long, whatever the first cost.
 */
export const MIN_RELIST_INTERVAL_MS = 1000;
/**
 * The next listing of a server's tools waits at least this many times the time the last one held the thread
 * (`relistFloor`, `ThreadTime`), so that one server's listings hold at most about a fifth of it: found in review,
 * reading and converting 4 MiB of tools took 3–5 s, and a server that kept saying they changed held it 80–95% of the
 * time behind a floor of 1 s. The time waited for the server's answers is not counted: counted, a server whose listing
 * took 1.5 s to arrive and that said its tools changed once at start-up did not start within 6 s.
 */
export const RELIST_COST_FACTOR = 4;
/** The floor a server's listings double to, in ms, while it keeps asking for the next before the last floor has passed. */
export const MAX_RELIST_INTERVAL_MS = 60_000;
const MAX_DESCRIPTION_CHARS = 32_768;
const MAX_SCHEMA_CHARS = 65_536;
/** Names of tools left out that one log line lists; the rest are counted. */
const MAX_NAMES_LOGGED = 50;
/** A server's errors after the first are counted for this long, in ms, and then logged as one line. */
const ERROR_LOG_WINDOW_MS = 10_000;
const MAX_STDERR_TAIL = 2048;
const MAX_MESSAGE_CHARS = 500;
const CLIENT_INFO = { name: 'airlock', version: '0.1.0' };

/** One configured MCP server: its client, its tools, and its restarts after a crash. */
export class McpConnection {
  readonly #options: McpConnectionOptions;
  #state: McpServerState = 'connecting';
  #error: string | undefined;
  /** The client being connected or in use; any other client's events are stale. */
  #client: Client | undefined;
  #transport: BoundedRequestsTransport | undefined;
  /** A digest of the last listing offered: one the same is not converted again. */
  #listingKey = '';
  /** What each tool of that listing was made into, by the digest of its JSON: a tool listed the same is not converted again. */
  #offers = new Map<string, Offer>();
  #tools: readonly AnyTool[] = [];
  #refreshing: Refreshing | undefined;
  /** When the last listing of the tools of this client ended (by the options' clock); undefined before the first. */
  #listedAt: number | undefined;
  /** The time that listing held the thread (`ThreadTime`), by the same clock. */
  #listingCost = 0;
  /** The listings asked for in a row before the floor after the one before had passed: each doubles the next floor. */
  #askedEarly = 0;
  #stderrTail = '';
  /** Why this connection closed the client itself, for the restart's reason. */
  #dropReason: string | undefined;
  #failures = 0;
  #readyAt = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #closed = false;
  #errorsHeld = { count: 0, last: '', timer: undefined as NodeJS.Timeout | undefined };
  /** For an HTTP server named `localhost`: the fetch that reaches the one loopback address it holds, kept across restarts. */
  #loopbackFetch: { url: string; fetch: typeof fetch | undefined } | undefined;

  constructor(options: McpConnectionOptions) {
    this.#options = options;
  }

  get status(): McpServerStatus {
    const ready = this.#state === 'ready';
    const pid = ready && this.#transport?.inner instanceof SupervisedStdioTransport ? this.#transport.inner.pid : null;
    return {
      name: this.#options.name,
      transport: this.#options.config.transport,
      state: this.#state,
      ...(this.#error === undefined ? {} : { error: this.#error }),
      toolCount: ready ? this.#tools.length : 0,
      ...(pid === null ? {} : { pid }),
    };
  }

  /** The tools while the server is ready; none otherwise. */
  get tools(): readonly AnyTool[] {
    return this.#state === 'ready' ? this.#tools : [];
  }

  /** Connects once. A server that fails here stays in 'error': a wrong command or URL does not heal by retrying. */
  async start(): Promise<void> {
    const failure = await this.#connect();
    if (failure !== undefined && !this.#closed) {
      this.#options.logger.warn(`MCP server "${this.#options.name}" failed to start: ${failure}`);
      this.#set('error', failure);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#restartTimer);
    const client = this.#client;
    this.#client = undefined;
    this.#transport = undefined;
    this.#set('closed', undefined);
    this.#flushErrors();
    await client?.close();
  }

  /**
   * Calls a tool. A result that does not match the tool's `outputSchema` is kept, marked so: the tool ran, and what it
   * did is not hidden from the person or the model (the SDK's `callTool` threw it away for an error).
   */
  async callTool(name: string, args: Record<string, unknown>, context: ToolContext, outputSchema?: McpToolDefinition['outputSchema']): Promise<ToolOutput> {
    const client = this.#state === 'ready' ? this.#client : undefined;
    if (client === undefined) {
      throw new Error(`the MCP server "${this.#options.name}" is ${this.#state === 'restarting' ? 'restarting' : 'not connected'}`);
    }
    const limit = this.#options.callTimeoutMs;
    const timeout = Number.isFinite(context.timeoutMs) && context.timeoutMs > 0 ? Math.min(context.timeoutMs, limit) : limit;
    const result = await client
      .request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, { signal: context.signal, timeout, maxTotalTimeout: timeout })
      .catch((error: unknown) => {
        if (isRefusedAnswer(error)) throw error.data;
        // The connection was closed for what the server did: the call says so, not a bare "Connection closed" or
        // the HTTP error that showed it.
        const dropped = this.#dropReason;
        if (dropped !== undefined && (isConnectionClosed(error) || this.#client !== client)) throw new Error(`the MCP server "${this.#options.name}" was disconnected: ${dropped}`, { cause: error });
        if (isConnectionClosed(error) && !this.#closed) {
          const how = this.#options.config.transport === 'stdio' ? 'exited' : 'closed the connection';
          throw new Error(`the MCP server "${this.#options.name}" ${how} before it answered`, { cause: error });
        }
        throw error;
      });
    // The schema given makes the SDK return the current result shape; the legacy `toolResult` shape cannot arrive.
    const output = flattenToolResult(result);
    const mismatch = outputSchemaMismatch(result, outputSchema);
    if (mismatch === undefined) return output;
    return { ...output, content: `${output.content}\n[Airlock: this result does not match the tool's output schema: ${mismatch}]` };
  }

  /** Returns why the attempt failed, or undefined once the server is ready (or the connection was closed meanwhile). */
  async #connect(): Promise<string | undefined> {
    const { name, connectTimeoutMs, logger } = this.#options;
    if (this.#closed) return undefined;
    this.#stderrTail = '';
    this.#dropReason = undefined;
    this.#listedAt = undefined;
    this.#listingCost = 0;
    this.#askedEarly = 0;
    // Airlock's validator for structured results, not the SDK's Ajv: see output-validator.ts.
    const client = new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: outputValidator });
    let transport: BoundedRequestsTransport;
    try {
      transport = this.#createTransport();
    } catch (error) {
      return describeError(error);
    }
    this.#client = client;
    this.#transport = transport;
    // What fails once the connection let go of this client (the request that showed the session lost, the server's
    // stream cut short) is not the server's news: why it was let go of is logged.
    client.onerror = (error) => {
      if (this.#client === client) this.#logError(bounded(error.message));
    };
    client.onclose = () => this.#onClose(client);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#onToolsChanged(client));
    try {
      await client.connect(transport, { timeout: connectTimeoutMs });
      // The first listing, read again for each change the server announces meanwhile, ends within the timeout too.
      await this.#refresh(client, Date.now() + connectTimeoutMs);
    } catch (error) {
      if (this.#client === client) {
        this.#client = undefined;
        this.#transport = undefined;
      }
      // Kills the child if it is still running (e.g. it never answered initialize).
      await client.close().catch(() => undefined);
      return this.#withStderr(this.#dropReason ?? describeError(error));
    }
    if (this.#closed || this.#client !== client) {
      await client.close().catch(() => undefined);
      return undefined;
    }
    this.#readyAt = Date.now();
    this.#set('ready', undefined);
    logger.info(`MCP server "${name}" is ready with ${this.#tools.length} tools`);
    return undefined;
  }

  #pinnedFetch(url: string): { fetch: FetchLike } | undefined {
    if (this.#loopbackFetch?.url !== url) this.#loopbackFetch = { url, fetch: loopbackPinnedFetch(url, undefined, { findNow: true }) };
    const pinned = this.#loopbackFetch.fetch;
    return pinned === undefined ? undefined : { fetch: pinned };
  }

  /** The server's transport, its requests to Airlock bounded (`BoundedRequestsTransport`). */
  #createTransport(): BoundedRequestsTransport {
    const onFlood = (reason: string) => this.#onFlood(transport, reason);
    const transport = new BoundedRequestsTransport(this.#createServerTransport(onFlood), onFlood);
    return transport;
  }

  #createServerTransport(onOverflow: (reason: string) => void): Transport {
    const { config } = this.#options;
    if (config.transport === 'http') {
      // The event stream of a request ends once it is settled: see AnsweredStreamsTransport.
      const transport: AnsweredStreamsTransport = new AnsweredStreamsTransport(
        (wrap) =>
          new StreamableHTTPClientTransport(new URL(config.url), {
            requestInit: { headers: config.headers },
            // Its event streams reach the SDK's parser with LF line ends only (lfLineEndsFetch), a bounded piece a
            // turn (turnTakingFetch), and are opened again no faster than streamReopenFetch lets them.
            fetch: wrap(
              streamReopenFetch(
                turnTakingFetch(
                  lfLineEndsFetch(
                    sessionLostFetch(
                      sizeLimitedFetch({ onRefused: (requestIds, refusal) => this.#onRefusedAnswer(transport, requestIds, refusal), ...(this.#pinnedFetch(config.url) ?? {}) }),
                      () => this.#onSessionLost(transport),
                    ),
                  ),
                ),
                { onStorm: () => this.#onReopenStorm(transport), awaitingAnswer: () => transport.awaitingAnswer, clock: this.#options.clock },
              ),
            ),
          }),
      );
      return transport;
    }
    // In a process group of its own, under a watchdog: it does not outlive this server, even one killed by SIGKILL.
    const transport = new SupervisedStdioTransport({
      command: config.command,
      args: config.args,
      // The SDK's short list of safe variables (HOME, PATH, USER, SHELL, TERM, LOGNAME) is added; nothing else of
      // this process's environment, which holds API keys, reaches the child.
      env: { ...safeEnvironment(), ...config.env },
      ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
      onOverflow,
      clock: this.#options.clock,
    });
    // Read stderr always: an unread pipe fills up and blocks the child.
    transport.stderr.on('data', (chunk: unknown) => {
      this.#stderrTail = (this.#stderrTail + String(chunk)).slice(-MAX_STDERR_TAIL);
    });
    return transport;
  }

  /**
   * An answer refused for what it holds (over the size limit, too many messages) fails the requests it was to answer,
   * and the connection goes on. One on the server's own stream closes the connection, to be restarted as after a crash:
   * the SDK would reopen that stream at once, as often as the server likes.
   */
  #onRefusedAnswer(transport: Transport, requestIds: readonly RequestId[], refusal: McpAnswerRefusedError): void {
    if (this.#transport?.inner !== transport) return;
    // The refusal itself is the error's data, an object no server's answer can hold.
    for (const id of requestIds) transport.onmessage?.({ jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: refusal.message, data: refusal } });
    if (requestIds.length > 0 || this.#client === undefined) return;
    this.#dropReason = refusal.disconnect;
    void this.#client.close().catch(() => undefined);
  }

  /** A server that no longer knows the session is connected anew, as after a crash: see sessionLostFetch. */
  #onSessionLost(transport: Transport): void {
    if (this.#transport?.inner !== transport || this.#client === undefined) return;
    this.#dropReason = 'the server no longer knows the session (it restarted, or ended it)';
    void this.#client.close().catch(() => undefined);
  }

  /** A server whose event streams keep ending empty is connected anew, as after a crash: see streamReopenFetch. */
  #onReopenStorm(transport: Transport): void {
    if (this.#transport?.inner !== transport || this.#client === undefined) return;
    this.#dropReason = STREAM_REOPEN_STORM;
    void this.#client.close().catch(() => undefined);
  }

  /** A server that floods Airlock with requests, or does not read its input, is disconnected and restarted as after a crash. */
  #onFlood(transport: BoundedRequestsTransport, reason: string): void {
    if (this.#transport !== transport || this.#client === undefined) return;
    this.#dropReason = reason;
    void this.#client.close().catch(() => undefined);
  }

  #onClose(client: Client): void {
    if (this.#closed || this.#client !== client || this.#state !== 'ready') return;
    this.#client = undefined;
    this.#transport = undefined;
    const what = this.#dropReason ?? (this.#options.config.transport === 'stdio' ? 'the server process exited' : 'the connection closed');
    const reason = this.#withStderr(what);
    if (Date.now() - this.#readyAt >= this.#options.restart.stableAfterMs) this.#failures = 0;
    this.#options.logger.warn(`MCP server "${this.#options.name}": ${reason}`);
    this.#scheduleRestart(reason);
  }

  #scheduleRestart(reason: string): void {
    const { maxAttempts, initialDelayMs, maxDelayMs } = this.#options.restart;
    if (this.#failures >= maxAttempts) {
      this.#set('error', maxAttempts === 0 ? reason : `${reason} (gave up after ${maxAttempts} restart attempts)`);
      return;
    }
    const delay = Math.min(initialDelayMs * 2 ** this.#failures, maxDelayMs);
    this.#failures += 1;
    this.#set('restarting', reason);
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      void this.#restart();
    }, delay);
  }

  async #restart(): Promise<void> {
    const failure = await this.#connect();
    if (failure !== undefined && !this.#closed) this.#scheduleRestart(failure);
  }

  /**
   * Lists the tools again for a change the server announced. One announced during a refresh joins it: while the
   * listing is waited for, that listing covers it; while it is read, it is read again once it ends (it may have missed
   * the change); once it is read, while its tools are converted, by a refresh of its own once this one has ended, which
   * start-up does not wait for. Only the notification that started a refresh reports how it ended.
   */
  #onToolsChanged(client: Client): void {
    if (this.#client !== client) return;
    const joined = this.#refreshing?.client === client ? this.#refreshing : undefined;
    if (joined !== undefined) {
      if (joined.phase === 'reading') joined.again = true;
      else if (joined.phase === 'converting') joined.announcedAfter = true;
      return;
    }
    this.#refresh(client).catch((error: unknown) => {
      this.#options.logger.warn(`MCP server "${this.#options.name}": refreshing its tools failed: ${describeError(error)}`);
    });
  }

  /**
   * Lists the tools, and again while the server announces a change as it is read (`#onToolsChanged`). With `deadline`,
   * the listing and its reruns end by then: a server that announced a change during each listing had the first one
   * read for ever, start-up waiting for it.
   */
  #refresh(client: Client, deadline = Infinity): Promise<void> {
    const joined = this.#refreshing?.client === client ? this.#refreshing : undefined;
    if (joined !== undefined) {
      joined.deadline = Math.min(joined.deadline, deadline);
      return joined.done;
    }
    const refreshing: Refreshing = { client, done: Promise.resolve(), deadline, phase: 'waiting', again: false, announcedAfter: false };
    this.#refreshing = refreshing;
    refreshing.done = (async () => {
      try {
        // Whether this refresh reads the client's first listing: start-up's.
        const first = this.#listedAt === undefined;
        // The listings this refresh has read, each followed by the next for a change announced while it was read.
        let read = 0;
        const { clock } = this.#options;
        do {
          refreshing.phase = 'waiting';
          refreshing.again = false;
          refreshing.announcedAfter = false;
          await this.#afterFloor(read, first, refreshing.deadline);
          if (this.#client !== client) return;
          refreshing.phase = 'reading';
          const spent = new ThreadTime(clock);
          try {
            const listing = await this.#listTools(client, { until: refreshing.deadline, reread: read, spent }, () => {
              refreshing.phase = 'converting';
            });
            if (this.#client !== client) return;
            refreshing.phase = 'converting';
            await this.#applyTools(client, listing, spent);
          } finally {
            if (this.#client === client) {
              this.#listedAt = clock.now();
              this.#listingCost = spent.total;
            }
          }
          if (this.#client !== client) return;
          read += 1;
        } while (refreshing.again);
      } finally {
        if (this.#refreshing === refreshing) this.#refreshing = undefined;
      }
      if (refreshing.announcedAfter) this.#onToolsChanged(client);
    })();
    return refreshing.done;
  }

  /**
   * Resolves once the floor after the last listing of this connection has passed (`relistFloor`), or at `deadline` if
   * sooner, before the listing after the `read` ones of a refresh (`first` when they started with the client's first
   * listing). A listing asked for before then (one read again for a change announced while the last was read, or one
   * asked for while it was waited for) doubles the floor after it; one asked for once the floor has passed starts at
   * once, and the floors start again from the least. At start-up, the first listing read again waits
   * MIN_RELIST_INTERVAL_MS and doubles nothing: a server may well say its tools changed once as it starts, and the
   * first listing's cost (its tools all converted) says nothing of what reading it again costs.
   */
  async #afterFloor(read: number, first: boolean, deadline: number): Promise<void> {
    const listedAt = this.#listedAt;
    if (listedAt === undefined) return;
    const { clock } = this.#options;
    const until = (at: number) => clockDelay(clock, Math.min(at - clock.now(), deadline - Date.now()));
    if (first && read === 1) return until(listedAt + MIN_RELIST_INTERVAL_MS);
    const floor = relistFloor(this.#listingCost, this.#askedEarly);
    if (read === 0 && clock.now() >= listedAt + floor) {
      this.#askedEarly = 0;
      return;
    }
    this.#askedEarly += 1;
    await until(listedAt + floor);
  }

  /**
   * The server's tools, page by page, in at most MAX_LIST_PAGES pages and `connectTimeoutMs` in all (a server that
   * answered each page after 1 s with an endless cursor held start-up for a minute). Each tool listed counts toward
   * MAX_TOOLS_PER_SERVER and MAX_DEFINITION_CHARS_PER_SERVER, whether it can be offered or not, and the listing stops
   * at either: what is kept and converted is bounded by them, not by what the server sends (found in review, tools
   * whose schemas were converted in full and then refused counted toward neither, and a page of 10 MiB held ~160 of
   * them). Nothing is converted here (`#applyTools`). `until` ends it sooner (the refresh's own deadline); `reread`
   * says how many listings before it the server said its tools changed while they were read; the time each page's
   * check and digest hold the thread is added to `spent`. `onRead` is called once its last page has been answered,
   * in order with the notifications the server sent before and after that answer.
   */
  async #listTools(client: Client, { until, reread, spent }: { until: number; reread: number; spent: ThreadTime }, onRead: () => void): Promise<Listing> {
    const { connectTimeoutMs } = this.#options;
    const deadline = Math.min(Date.now() + connectTimeoutMs, until);
    const listing: Listing = { definitions: [], skipped: [], skippedCount: 0, unread: false, key: '' };
    const digest = createHash('sha256');
    let chars = 0;
    let full: string | undefined;
    let cursor: string | undefined;
    for (let page = 0; ; page += 1) {
      if (page === MAX_LIST_PAGES) throw new Error(`the server's tool listing went on past ${MAX_LIST_PAGES} pages`);
      const tooSlow = `the server did not finish listing its tools within ${connectTimeoutMs / 1000} s${changedWhileRead(reread)}`;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(tooSlow);
      spent.pause();
      const result = await client.request({ method: 'tools/list', ...(cursor === undefined ? {} : { params: { cursor } }) }, checkedPage(spent, onRead), { timeout: remaining }).catch((error: unknown) => {
        throw error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number) ? new Error(tooSlow) : error;
      });
      // Counted from the page's check (`checkedPage`) on.
      spent.resume();
      for (const definition of result.tools) {
        if (full === undefined && listing.definitions.length >= MAX_TOOLS_PER_SERVER) full = `past ${MAX_TOOLS_PER_SERVER} tools`;
        if (full === undefined) {
          const text = JSON.stringify(definition);
          if (chars + text.length > MAX_DEFINITION_CHARS_PER_SERVER) full = `past ${MAX_DEFINITION_CHARS_PER_SERVER / (1024 * 1024)} MiB of tool definitions`;
          else {
            chars += text.length;
            const key = createHash('sha256').update(text).digest('base64');
            digest.update(key);
            listing.definitions.push({ definition, key });
            continue;
          }
        }
        listing.skippedCount += 1;
        if (listing.skipped.length < MAX_NAMES_LOGGED) listing.skipped.push(`${bounded(definition.name)} (${full})`);
      }
      cursor = result.nextCursor;
      if (cursor === undefined) break;
      if (full !== undefined) {
        listing.unread = true;
        break;
      }
    }
    listing.key = digest.update(JSON.stringify([listing.skipped, listing.skippedCount, listing.unread])).digest('base64');
    spent.pause();
    return listing;
  }

  /**
   * Offers the tools of a listing. A listing the same as the last one offered (by its digest) changes nothing and
   * converts nothing, and a tool listed the same as in the last one (its JSON the same) is offered as it was: found in
   * review, every listing converted every schema again, a server saying its unchanged tools changed cost 3–5 s of the
   * thread a listing. Each tool converted is followed by a turn for other work (a call's answer, a health check), and
   * the clients are told only when the tools offered changed. The time it holds the thread is added to `spent`.
   */
  async #applyTools(client: Client, listing: Listing, spent: ThreadTime): Promise<void> {
    if (listing.key === this.#listingKey) return;
    spent.resume();
    try {
      await this.#offerTools(client, listing, spent);
    } finally {
      spent.pause();
    }
  }

  async #offerTools(client: Client, listing: Listing, spent: ThreadTime): Promise<void> {
    const { name: server, logger } = this.#options;
    const offers = new Map<string, Offer>();
    const tools = new Map<string, AnyTool>();
    const skipped: string[] = [];
    let skippedCount = 0;
    const skip = (definition: McpToolDefinition, why: string) => {
      skippedCount += 1;
      if (skipped.length < MAX_NAMES_LOGGED) skipped.push(`${bounded(definition.name)} (${why})`);
    };
    const renamed: string[] = [];
    let sharedWith: string | undefined;
    for (const { definition, key } of listing.definitions) {
      let offer = offers.get(key) ?? this.#offers.get(key);
      if (offer === undefined) {
        offer = this.#offer(definition);
        // A schema's conversion holds the thread up to ~150 ms, a listing's seconds: other work runs between two.
        spent.pause();
        await new Promise<void>((resolve) => setImmediate(resolve));
        spent.resume();
        if (this.#client !== client) return;
      }
      offers.set(key, offer);
      if ('problem' in offer) {
        skip(definition, offer.problem);
        continue;
      }
      const { tool } = offer;
      const other = sharedPrefixServer(server, mcpToolName(server, definition.name), this.#options.servers);
      if (other !== undefined) {
        sharedWith ??= other;
        if (renamed.length < MAX_NAMES_LOGGED) renamed.push(`${bounded(definition.name)} as ${tool.name}`);
      }
      if (tools.has(tool.name)) {
        skip(definition, 'duplicate name');
        continue;
      }
      tools.set(tool.name, tool);
    }
    this.#listingKey = listing.key;
    this.#offers = offers;
    if (sharedWith !== undefined) {
      logger.warn(`MCP server "${server}": its tools' names would also read as tools of the server "${sharedWith}", so they are offered with a hash: ${renamed.join(', ')}`);
    }
    for (const line of listing.skipped) if (skipped.length < MAX_NAMES_LOGGED) skipped.push(line);
    skippedCount += listing.skippedCount;
    if (skippedCount > 0 || listing.unread) {
      const more = skippedCount > skipped.length ? ` and ${skippedCount - skipped.length} more` : '';
      const unread = listing.unread ? '; the rest of its listing was not read' : '';
      logger.warn(`MCP server "${server}": left out ${skipped.join(', ')}${more}${unread}`);
    }
    const offered = [...tools.values()];
    if (offered.length === this.#tools.length && offered.every((tool, index) => tool === this.#tools[index])) return;
    this.#tools = offered;
    if (this.#state === 'ready') this.#options.onChange();
  }

  /** The tool `definition` offers, or why it cannot be offered: its schema converted (`inputSchemaProblem`, `mcpTool`). */
  #offer(definition: McpToolDefinition): Offer {
    const problem = unusable(definition);
    if (problem !== undefined) return { problem };
    const { name: server, servers } = this.#options;
    return { tool: mcpTool({ server, definition, servers, call: (name, args, context, outputSchema) => this.callTool(name, args, context, outputSchema) }) };
  }

  /**
   * Logs the first of the server's errors at once and counts the ones that follow within ERROR_LOG_WINDOW_MS, logged
   * then as one line: 20,000 progress notifications with a token of no request made 20,000 log lines.
   */
  #logError(message: string): void {
    const held = this.#errorsHeld;
    if (held.timer !== undefined) {
      held.count += 1;
      held.last = message;
      return;
    }
    this.#options.logger.warn(`MCP server "${this.#options.name}": ${message}`);
    held.timer = setTimeout(() => this.#flushErrors(), ERROR_LOG_WINDOW_MS).unref();
  }

  /** Logs the errors counted since the last line; the window stays open while they keep coming. */
  #flushErrors(): void {
    const held = this.#errorsHeld;
    clearTimeout(held.timer);
    held.timer = undefined;
    if (held.count === 0) return;
    this.#options.logger.warn(`MCP server "${this.#options.name}": ${held.count} more errors like this one, the last: ${held.last}`);
    held.count = 0;
    if (!this.#closed) held.timer = setTimeout(() => this.#flushErrors(), ERROR_LOG_WINDOW_MS).unref();
  }

  #set(state: McpServerState, error: string | undefined): void {
    if (this.#state === state && this.#error === error) return;
    this.#state = state;
    this.#error = error;
    this.#options.onChange();
  }

  #withStderr(message: string): string {
    const tail = this.#stderrTail.trim().split('\n').slice(-3).join(' | ');
    return tail === '' ? message : `${message}; stderr: ${bounded(tail)}`;
  }
}

/** Why a listed tool cannot be offered, or undefined. */
function unusable(definition: McpToolDefinition): string | undefined {
  // Such a tool can only run through the experimental tasks API, which this client does not use.
  if (definition.execution?.taskSupport === 'required') return 'needs task-based execution';
  if ((definition.description?.length ?? 0) > MAX_DESCRIPTION_CHARS) return 'description too long';
  if (JSON.stringify(definition.inputSchema).length > MAX_SCHEMA_CHARS) return 'input schema too large';
  if (definition.outputSchema !== undefined && JSON.stringify(definition.outputSchema).length > MAX_SCHEMA_CHARS) return 'output schema too large';
  return inputSchemaProblem(definition.inputSchema);
}

/** The listing being read for a client; a change the server announces meanwhile has it read again (`#onToolsChanged`). */
interface Refreshing {
  client: Client;
  done: Promise<void>;
  /** When it and its reruns must have ended; Infinity for none but each listing's own. */
  deadline: number;
  /** Whether the listing is waited for (the floor after the last), read (its pages asked for), or converted. */
  phase: 'waiting' | 'reading' | 'converting';
  /** Whether a change was announced while it was read: it is read again. */
  again: boolean;
  /** Whether one was announced once it was read: a refresh of its own follows. */
  announcedAfter: boolean;
}

/**
 * One listing of a server's tools: those within the bounds, each with a digest of its JSON, and those past them (up to
 * MAX_NAMES_LOGGED named, all counted).
 */
interface Listing {
  definitions: { definition: McpToolDefinition; key: string }[];
  skipped: string[];
  skippedCount: number;
  /** Whether pages were left unread once the server's tools reached a bound. */
  unread: boolean;
  /** A digest of all of it: the same for a listing the same as the one before. */
  key: string;
}

/**
 * The schema of a page of the listing, whose check is counted in `spent` (resumed from its start: the listing's code
 * that reads the page pauses it), and which calls `onRead` once the last page has been answered. The SDK parses an
 * answer as it arrives and hands a notification to its handler one microtask after it arrives: `onRead`, called one
 * microtask after the answer, comes after the handler of a notification that arrived before the answer, and before
 * that of one that arrived after it, however they were split into reads.
 */
function checkedPage(spent: ThreadTime, onRead: () => void) {
  const checked = ListToolsResultSchema.transform((page) => {
    if (page.nextCursor === undefined) queueMicrotask(onRead);
    return page;
  });
  return z
    .unknown()
    .transform((page) => {
      spent.resume();
      return page;
    })
    .pipe(checked);
}

/**
 * The time a listing holds the thread, by the connection's clock: the sections it runs between its waits (for the
 * server's answers, for the turns it gives other work between conversions), added up. The transport's parse of each
 * answer, which comes before the page's check in the same turn, is not seen here: that is paid for each byte the
 * server sends, which it may as well send unasked. What the floor bounds is the work a notification of a few bytes
 * has Airlock do: read, check and digest the listing, and convert what changed.
 */
class ThreadTime {
  readonly #clock: McpClock;
  #total = 0;
  #since: number | undefined;

  constructor(clock: McpClock) {
    this.#clock = clock;
  }

  /** The time counted, the section running included. */
  get total(): number {
    return this.#total + (this.#since === undefined ? 0 : this.#clock.now() - this.#since);
  }

  /** The thread is the listing's from now, unless it already was. */
  resume(): void {
    this.#since ??= this.#clock.now();
  }

  /** The listing waits from now. */
  pause(): void {
    if (this.#since === undefined) return;
    this.#total += this.#clock.now() - this.#since;
    this.#since = undefined;
  }
}

/** What the error for a listing not finished in time adds, when the server said its tools changed while `reread` listings before it were read. */
function changedWhileRead(reread: number): string {
  if (reread === 0) return '';
  return reread === 1 ? ': it said they changed while the listing before was read' : ': it said they changed while each listing was read';
}

/** What a listed tool was made into: the tool offered, or why it cannot be. */
type Offer = { tool: AnyTool } | { problem: string };

/**
 * The least time, in ms, from the end of a listing that held the thread `costMs` to the start of the next, once
 * `early` listings in a row were asked for before the floor after the one before had passed: RELIST_COST_FACTOR times
 * the listing's cost and at least MIN_RELIST_INTERVAL_MS, doubled for each of them up to MAX_RELIST_INTERVAL_MS.
 */
function relistFloor(costMs: number, early: number): number {
  const least = Math.max(MIN_RELIST_INTERVAL_MS, RELIST_COST_FACTOR * costMs);
  return Math.max(least, Math.min(MAX_RELIST_INTERVAL_MS, least * 2 ** early));
}

function safeEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME'] as const) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Whether `error` is the answer put in place of one refused for what it holds (`#onRefusedAnswer`). */
function isRefusedAnswer(error: unknown): error is McpError & { data: McpAnswerRefusedError } {
  return error instanceof McpError && error.data instanceof McpAnswerRefusedError;
}

function isConnectionClosed(error: unknown): boolean {
  return error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number);
}

function describeError(error: unknown): string {
  if (isRefusedAnswer(error)) return error.data.message;
  if (isConnectionClosed(error)) return 'the server closed the connection';
  if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) return 'the server did not answer in time';
  if (error instanceof StreamableHTTPError && error.code !== undefined) return bounded(`the server answered HTTP ${error.code} (${error.message})`);
  return bounded(error instanceof Error ? error.message : String(error));
}

function bounded(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_MESSAGE_CHARS ? `${flat.slice(0, MAX_MESSAGE_CHARS)}…` : flat;
}
