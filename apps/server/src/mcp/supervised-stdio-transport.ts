import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { statSync } from 'node:fs';
import { sep } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { randomId } from '@airlock/core';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { deserializeMessage, serializeMessage, STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { freezeAndKill, processStartTime, terminateMarkedProcesses, terminateProcessGroup, type MarkedScope } from '../tools/process-group';
import { spawnWatched, type ProcessWatchdog } from '../tools/process-watchdog';
import { JsonDepth, MAX_MCP_MESSAGE_DEPTH, responseIdOf } from './json-depth';
import { SYSTEM_CLOCK, type McpClock } from './mcp-clock';
import { readAtRate } from './read-at-rate';
import { McpMessageTooDeepError } from './size-limited-fetch';

/** Set in an MCP server's environment, with a value unique to the process, to find its processes that left its group. */
export const MCP_SERVER_MARKER_VARIABLE = 'AIRLOCK_MCP_SERVER';

/** How long a server gets after its stdin closed, and then after SIGTERM, before what is left is killed. */
const CLOSE_GRACE_MS = 2_000;
/**
 * What may wait unwritten toward a server's input before it counts as not reading: it is disconnected then. A message
 * is written whatever its size when less than this waits.
 */
export const MAX_QUEUED_INPUT_BYTES = 16 * 1024 * 1024;
/**
 * Lines read from a server in one go: the rest wait, its output paused, until other work has had the thread. Found
 * from outside: 13 MiB of empty lines, each an error, held Airlock's thread for 45 s.
 */
export const MAX_LINES_PER_TURN = 1024;
/** What of a server's stderr is read in a second; a server that writes more waits, its pipe full. */
export const MAX_STDERR_BYTES_PER_SECOND = 1024 * 1024;

export interface SupervisedStdioOptions {
  command: string;
  args: readonly string[];
  /** The server's environment, over the SDK's short list of safe variables (HOME, PATH, USER, SHELL, TERM, LOGNAME). */
  env: Record<string, string>;
  /** Working folder. Default this process's. */
  cwd?: string;
  /**
   * Called once when more than MAX_QUEUED_INPUT_BYTES wait toward the server's input: it does not read it. Messages
   * sent after that fail; the owner closes the transport. Called too, in place of `onerror`, when the server writes a
   * message over 10 MiB: the transport closes then, as nothing after it can be read as a message.
   */
  onOverflow?: (reason: string) => void;
  /** The clock the rate of reading stderr is kept by. Default the system's. */
  clock?: McpClock;
}

/**
 * The MCP client's stdio transport, with the server's processes held as a tool call's are: the server runs in a
 * process group of its own, each of its processes carries a marker variable, and a watchdog, started before the
 * server, kills them all if this server dies, even by SIGKILL (the SDK's own transport leaves a server that ignores
 * the end of its stdin running, orphaned, and a restart of Airlock starts a second one). Closing it, or the server's
 * own exit, stops whatever the server left running too. Messages are read and written as the SDK's transport does
 * (one JSON line each, at most 10 MiB unread), the lines read in time linear in their length (`LineReadBuffer`). A
 * line nested deeper than MAX_MCP_MESSAGE_DEPTH is not parsed: the request it answers, if it answers one, fails with
 * a `McpMessageTooDeepError` as its error's data; anything else is reported as an error, and the lines after it read.
 */
export class SupervisedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: SupervisedStdioOptions;
  readonly #readBuffer = new LineReadBuffer();
  /** The server's stderr, readable before it starts, so nothing it writes early is lost. */
  readonly stderr = new PassThrough();
  #child: ChildProcessByStdio<Writable, Readable, Readable> | undefined;
  #scope: MarkedScope | undefined;
  #watchdog: ProcessWatchdog | undefined;
  #exited: Promise<void> | undefined;
  #startup: Promise<void> | undefined;
  /** Settles once the server's input has room again (or is gone): one wait shared by every message sent meanwhile. */
  #drained: Promise<void> | undefined;
  #overflowed = false;
  /** Set once the server wrote a line over the limit: nothing it writes after is read. */
  #unreadable = false;
  /** Set while lines read wait for their turn (MAX_LINES_PER_TURN), the server's output paused. */
  #deferred = false;
  /** The server's end, told once the lines read before it have been. */
  #closeAfterLines: (() => void) | undefined;
  /** Requests sent, neither answered nor cancelled: a line too deep to read that answers one of them fails it. */
  readonly #awaiting = new Set<RequestId>();

  constructor(options: SupervisedStdioOptions) {
    this.#options = options;
  }

  /** The server's process id, once started and until it exits. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.#startup !== undefined) return Promise.reject(new Error('SupervisedStdioTransport already started'));
    this.#startup = this.#spawn();
    return this.#startup;
  }

  #spawn(): Promise<void> {
    const { command, args, env, cwd } = this.#options;
    const id = randomId('mcp', 12);
    const marker = `${MCP_SERVER_MARKER_VARIABLE}=${id}`;
    return new Promise((resolve, reject) => {
      // The watchdog starts first: this server killed just after the MCP server started must not leave it unwatched.
      // If the MCP server fails to start, its 'close' releases the watchdog (spawnWatched does, when spawn throws).
      let started: { child: ChildProcessByStdio<Writable, Readable, Readable>; watchdog: ProcessWatchdog };
      try {
        started = spawnWatched(marker, () =>
          spawn(command, args, {
            env: { ...getDefaultEnvironment(), ...env, [MCP_SERVER_MARKER_VARIABLE]: id },
            stdio: ['pipe', 'pipe', 'pipe'],
            detached: true,
            ...(cwd === undefined ? {} : { cwd }),
          }),
        );
      } catch (error) {
        // A file as cwd is refused by spawn itself, not told as an 'error' event.
        reject(spawnFailure(error instanceof Error ? error : new Error(String(error)), command, cwd));
        return;
      }
      const { child, watchdog } = started;
      this.#child = child;
      this.#watchdog = watchdog;
      child.once('spawn', () => {
        const pid = child.pid!;
        // Everything the server starts, in its group or not, starts at or after it.
        this.#scope = { marker, group: pid, startedSince: processStartTime(pid) ?? Infinity };
        resolve();
      });
      child.once('error', (failure) => {
        const error = spawnFailure(failure, command, cwd);
        reject(error);
        this.onerror?.(error);
      });
      // What the server left behind goes with it (a restart must not find an old copy still running), and with
      // them whatever held its output open.
      child.once('exit', () => this.#stopLeftovers());
      this.#exited = new Promise((exited) => {
        child.once('close', () => {
          this.#child = undefined;
          this.#stopLeftovers();
          exited();
          if (this.#deferred) this.#closeAfterLines = () => this.onclose?.();
          else this.onclose?.();
        });
      });
      child.stdin.on('error', (error) => this.onerror?.(error));
      child.stdout.on('error', (error) => this.onerror?.(error));
      child.stdout.on('data', (chunk: Buffer) => {
        // The rest of a line over the limit, and what follows it until the server is gone, is no message.
        if (this.#unreadable) return;
        try {
          this.#readBuffer.append(chunk);
        } catch (error) {
          this.#unreadable = true;
          const { onOverflow } = this.#options;
          if (onOverflow === undefined) this.onerror?.(error as Error);
          else onOverflow(`the server sent a message over ${STDIO_DEFAULT_MAX_BUFFER_SIZE / (1024 * 1024)} MiB`);
          void this.close();
          return;
        }
        this.#readMessages();
      });
      // Read at a bounded rate: only its last lines are kept, and a server writing without end had Airlock read it as
      // fast as it wrote, half of a core. Once the server has exited, what is left is read at once.
      const unbounded = readAtRate(child.stderr, this.stderr, MAX_STDERR_BYTES_PER_SECOND, this.#options.clock ?? SYSTEM_CLOCK);
      child.once('exit', unbounded);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (stdin === undefined) return Promise.reject(new Error('Not connected'));
    if (this.#overflowed) return Promise.reject(new Error('the server does not read its input'));
    if (stdin.writableLength > MAX_QUEUED_INPUT_BYTES) {
      this.#overflowed = true;
      this.#options.onOverflow?.(`the server did not read its input: over ${MAX_QUEUED_INPUT_BYTES / (1024 * 1024)} MiB waited to be written to it`);
      return Promise.reject(new Error('the server does not read its input'));
    }
    if ('method' in message && 'id' in message) this.#awaiting.add(message.id);
    if ('method' in message && message.method === 'notifications/cancelled') {
      const id: unknown = message.params?.requestId;
      if (typeof id === 'string' || typeof id === 'number') this.#awaiting.delete(id);
    }
    if (stdin.write(serializeMessage(message))) return Promise.resolve();
    this.#drained ??= new Promise((resolve) => {
      const done = () => {
        stdin.off('drain', done);
        stdin.off('close', done);
        this.#drained = undefined;
        resolve();
      };
      stdin.on('drain', done);
      stdin.on('close', done);
    });
    return this.#drained;
  }

  /** Ends the server's stdin, then SIGTERMs its group and marked processes, then kills whatever is left. */
  async close(): Promise<void> {
    // Before the server has started, what to stop is not known yet; its watchdog must not be released without it.
    await this.#startup?.catch(() => undefined);
    const child = this.#child;
    const scope = this.#scope;
    if (child !== undefined && scope !== undefined) {
      // What still waits to be written is let go of: a server that does not read its input would hold it, and the
      // end of input behind it, for ever.
      if (child.stdin.writableLength > 0) child.stdin.destroy();
      else child.stdin.end();
      const exited = this.#exited ?? Promise.resolve();
      const gone = await Promise.race([exited.then(() => true), delay(CLOSE_GRACE_MS).then(() => false)]);
      if (!gone) {
        await Promise.all([terminateProcessGroup(scope.group, CLOSE_GRACE_MS, scope.startedSince).catch(() => true), terminateMarkedProcesses(scope, CLOSE_GRACE_MS).catch(() => true)]);
        await Promise.race([exited, delay(CLOSE_GRACE_MS)]);
      }
    }
    this.#stopLeftovers();
    this.#readBuffer.clear();
    this.#awaiting.clear();
  }

  #readMessages(): void {
    if (this.#deferred) return;
    for (let read = 0; ; read++) {
      if (read === MAX_LINES_PER_TURN) {
        this.#deferred = true;
        this.#child?.stdout.pause();
        setImmediate(() => {
          this.#deferred = false;
          this.#readMessages();
          if (this.#deferred) return;
          this.#child?.stdout.resume();
          const close = this.#closeAfterLines;
          this.#closeAfterLines = undefined;
          close?.();
        });
        return;
      }
      let message: JSONRPCMessage | null;
      try {
        message = this.#readBuffer.readMessage();
      } catch (error) {
        const answer = error instanceof TooDeepLineError ? this.#refusedAnswer(error.answers) : undefined;
        if (answer === undefined) {
          this.onerror?.(error as Error);
          continue;
        }
        message = answer;
      }
      if (message === null) return;
      if ('id' in message && !('method' in message) && message.id !== undefined) this.#awaiting.delete(message.id);
      // What the SDK throws as it handles a message (its error for an answer to no request was built with
      // JSON.stringify, which throws RangeError on a deep one) must not leave this data handler: it would end the process.
      try {
        this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
    }
  }

  /** The error answer put in place of a line too deep to read that answers `id`, when `id` is a request waiting. */
  #refusedAnswer(id: RequestId | undefined): JSONRPCMessage | undefined {
    if (id === undefined || !this.#awaiting.has(id)) return undefined;
    // The refusal itself is the error's data, an object no server's answer can hold (see McpAnswerRefusedError).
    const refusal = new McpMessageTooDeepError();
    return { jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: refusal.message, data: refusal } };
  }

  #stopLeftovers(): void {
    if (this.#scope !== undefined) freezeAndKill(this.#scope);
    this.#scope = undefined;
    this.#watchdog?.release();
    this.#watchdog = undefined;
  }
}

const TILDE_NOT_EXPANDED = ' (a ~ is not expanded: give the full path)';

/**
 * What to say of a server that could not be started. The system's error blamed the command for a cwd that does not
 * exist (`spawn /usr/bin/node ENOENT`), said `spawn ENOTDIR` for a file as cwd, and nothing of a `~` no shell
 * expanded (`~/bin/server`). Any other error is returned as it is.
 */
function spawnFailure(error: Error, command: string, cwd: string | undefined): Error {
  const { code, syscall } = error as NodeJS.ErrnoException;
  if (syscall?.startsWith('spawn') !== true) return error;
  const folder = cwd === undefined ? 'folder' : kindOf(cwd);
  if (folder === 'missing') {
    const tilde = cwd?.split(sep).some((segment) => segment.startsWith('~')) === true;
    return new Error(`the server's folder (cwd) ${cwd} does not exist${tilde ? TILDE_NOT_EXPANDED : ''}`, { cause: error });
  }
  if (folder === 'other') return new Error(`the server's folder (cwd) ${cwd} is not a folder`, { cause: error });
  if (code !== 'ENOENT') return error;
  const where = command.includes('/') ? '' : ' on the PATH';
  return new Error(`the command ${command} was not found${where}${command.startsWith('~') ? TILDE_NOT_EXPANDED : ''}`, { cause: error });
}

/** Whether `path` is a folder, something else, or nothing (a file on the way to it included); undefined when it cannot be told. */
function kindOf(path: string): 'folder' | 'other' | 'missing' | undefined {
  try {
    const info = statSync(path, { throwIfNoEntry: false });
    return info === undefined ? 'missing' : info.isDirectory() ? 'folder' : 'other';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'missing' : undefined;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * The SDK's `ReadBuffer` (the same limit, messages and errors), reading each byte once: the SDK's joins every piece to
 * what it holds of the line and searches it again from its start, so a server writing one line of just under 10 MiB
 * in pieces cost Airlock's thread seconds of copying and searching (33 s for 4 KiB writes read one at a time), and
 * again at each restart. The pieces of a line are joined once, when its end comes.
 */
class LineReadBuffer {
  readonly #depth = new JsonDepth(MAX_MCP_MESSAGE_DEPTH);
  #pieces: Buffer[] = [];
  #bytes = 0;
  /** How many of the first pieces hold no line end (searched already). */
  #searched = 0;

  append(chunk: Buffer): void {
    if (this.#bytes + chunk.length > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes`);
    }
    this.#pieces.push(chunk);
    this.#bytes += chunk.length;
  }

  /**
   * The next whole message, null when no whole line is held; throws on a line that is no JSON-RPC message, and a
   * TooDeepLineError on one nested deeper than MAX_MCP_MESSAGE_DEPTH (without parsing it).
   */
  readMessage(): JSONRPCMessage | null {
    for (let at = this.#searched; at < this.#pieces.length; at++) {
      const piece = this.#pieces[at]!;
      const end = piece.indexOf(0x0a);
      if (end === -1) {
        this.#searched = at + 1;
        continue;
      }
      const head = this.#pieces.slice(0, at);
      head.push(piece.subarray(0, end));
      const line = head.length === 1 ? head[0]! : Buffer.concat(head);
      const rest = piece.subarray(end + 1);
      this.#pieces = rest.length > 0 ? [rest, ...this.#pieces.slice(at + 1)] : this.#pieces.slice(at + 1);
      this.#bytes -= line.length + 1;
      this.#searched = 0;
      this.#depth.reset();
      if (!this.#depth.read(line)) throw new TooDeepLineError(responseIdOf(line));
      const text = line.toString('utf8');
      return deserializeMessage(text.endsWith('\r') ? text.slice(0, -1) : text);
    }
    return null;
  }

  clear(): void {
    this.#pieces = [];
    this.#bytes = 0;
    this.#searched = 0;
  }
}

/** A line nested deeper than MAX_MCP_MESSAGE_DEPTH, with the id of the request it answers when it is an answer. */
class TooDeepLineError extends Error {
  readonly answers: RequestId | undefined;

  constructor(answers: RequestId | undefined) {
    super(new McpMessageTooDeepError().disconnect);
    this.name = 'TooDeepLineError';
    this.answers = answers;
  }
}
