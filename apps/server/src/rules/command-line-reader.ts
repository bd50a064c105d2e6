import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Clock } from '../clock';
import type { CommandLine } from './parse-command-line';

export interface CommandLineReaderOptions {
  /**
   * How long the worker may take over one line before it is stopped and a new one started. Its parser gives up on
   * its own after 1 s (see PARSE_BUDGET_MS); this bounds the rest (the walks over a large tree). Default 5 s.
   */
  timeLimitMs?: number;
  /** A worker with no line to read for this long is stopped, its memory given back. Default 30 s. */
  idleMs?: number;
  /** How long a new worker may take to load the grammar before it is given up. Default 30 s. */
  startLimitMs?: number;
  /** For tests: the worker to start instead of command-line-worker (the same messages). */
  worker?: () => Worker;
  /** The clock a line's time limit is counted on. Default the process's timers, which keep no process alive; a test's own, to move. */
  clock?: Pick<Clock, 'after'>;
}

/** The process's timers, each unreferenced: a line being read does not keep the process alive. */
const UNREFERENCED_TIMERS: Pick<Clock, 'after'> = {
  after: (ms, callback) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

interface Waiting {
  text: string;
  resolve: (line: CommandLine) => void;
}

/** Whose lines share a turn when no owner is named. */
const NO_OWNER = '';

/**
 * Reads command lines for the rules in a worker thread, one at a time: however long a line takes to parse (the
 * grammar's error recovery is quadratic on some broken lines), the server's own thread goes on serving. A line the
 * worker does not finish within the time limit is refused as unread (asked about, never allowed), and the worker
 * is replaced. Lines wait in one line per owner (a chat), and the owners take turns: a chat whose model sends many
 * slow lines delays another chat's line by at most one line's time, not by all of its own.
 */
export class CommandLineReader {
  readonly #timeLimitMs: number;
  readonly #idleMs: number;
  readonly #startLimitMs: number;
  readonly #newWorker: () => Worker;
  readonly #clock: Pick<Clock, 'after'>;
  /** Lines waiting, by owner; an owner's place in the map is its turn (taken from the front, put back at the end). */
  readonly #queues = new Map<string, Waiting[]>();
  #worker: Worker | undefined;
  /** The worker has loaded the grammar: a line's time limit runs only from then. */
  #ready = false;
  #starting: ReturnType<typeof setTimeout> | undefined;
  /** The line being read, and what cancels its time limit once that runs. */
  #current: (Waiting & { id: number; timer: (() => void) | undefined }) | undefined;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #nextId = 1;

  constructor(options: CommandLineReaderOptions = {}) {
    this.#timeLimitMs = options.timeLimitMs ?? 5_000;
    this.#idleMs = options.idleMs ?? 30_000;
    this.#startLimitMs = options.startLimitMs ?? 30_000;
    this.#newWorker = options.worker ?? (() => new Worker(...workerEntry()));
    this.#clock = options.clock ?? UNREFERENCED_TIMERS;
  }

  /** `owner`: whose line this is (a chat's id); owners' lines are read in turn. */
  read(text: string, owner: string = NO_OWNER): Promise<CommandLine> {
    return new Promise((resolve) => {
      const queue = this.#queues.get(owner);
      if (queue === undefined) this.#queues.set(owner, [{ text, resolve }]);
      else queue.push({ text, resolve });
      this.#next();
    });
  }

  /** Stops the worker (the lines being read or waiting end unread); lines asked for later start a new one. */
  async close(): Promise<void> {
    clearTimeout(this.#idle);
    clearTimeout(this.#starting);
    const worker = this.#worker;
    this.#worker = undefined;
    const current = this.#current;
    this.#current = undefined;
    if (current !== undefined) {
      current.timer?.();
      current.resolve(unread('the command parser was stopped'));
    }
    const queues = [...this.#queues.values()];
    this.#queues.clear();
    for (const waiting of queues.flat()) waiting.resolve(unread('the command parser was stopped'));
    await worker?.terminate();
  }

  #next(): void {
    if (this.#current !== undefined) return;
    const waiting = this.#takeTurn();
    if (waiting === undefined) {
      clearTimeout(this.#idle);
      this.#idle = setTimeout(() => void this.close(), this.#idleMs);
      this.#idle.unref();
      return;
    }
    clearTimeout(this.#idle);
    let worker: Worker;
    try {
      worker = this.#worker ?? this.#start();
    } catch (error) {
      waiting.resolve(unread(`the command parser could not start (${messageOf(error)})`));
      this.#next();
      return;
    }
    const id = this.#nextId++;
    this.#current = { ...waiting, id, timer: undefined };
    worker.postMessage({ id, text: waiting.text });
    if (this.#ready) this.#arm(worker);
  }

  /** The first line of the owner whose turn it is; the owner, if it has more, goes to the back. */
  #takeTurn(): Waiting | undefined {
    const first = this.#queues.entries().next();
    if (first.done === true) return undefined;
    const [owner, queue] = first.value;
    const waiting = queue.shift();
    this.#queues.delete(owner);
    if (queue.length > 0) this.#queues.set(owner, queue);
    return waiting;
  }

  /** Starts the time limit of the line being read. */
  #arm(worker: Worker): void {
    const current = this.#current;
    if (current === undefined || current.timer !== undefined) return;
    current.timer = this.#clock.after(this.#timeLimitMs, () => this.#fail(worker, `the command parser took longer than ${this.#timeLimitMs} ms`));
  }

  #start(): Worker {
    const worker = this.#newWorker();
    worker.unref();
    this.#ready = false;
    this.#starting = setTimeout(() => this.#fail(worker, `the command parser did not start within ${this.#startLimitMs} ms`), this.#startLimitMs);
    this.#starting.unref();
    worker.on('message', (answer: { ready: true } | { id: number; line: CommandLine }) => {
      if (worker !== this.#worker) return;
      if ('ready' in answer) {
        clearTimeout(this.#starting);
        this.#ready = true;
        this.#arm(worker);
        return;
      }
      const current = this.#current;
      if (current === undefined || current.id !== answer.id) return;
      current.timer?.();
      this.#current = undefined;
      current.resolve(answer.line);
      this.#next();
    });
    worker.on('error', (error) => this.#fail(worker, `the command parser stopped (${messageOf(error)})`));
    worker.on('exit', (code) => this.#fail(worker, `the command parser exited (${code})`));
    this.#worker = worker;
    return worker;
  }

  /** Ends the line being read as unread, drops `worker` and goes on with the next line on a new one. */
  #fail(worker: Worker, reason: string): void {
    if (worker !== this.#worker) return;
    this.#worker = undefined;
    clearTimeout(this.#starting);
    void worker.terminate();
    const current = this.#current;
    this.#current = undefined;
    if (current !== undefined) {
      current.timer?.();
      current.resolve(unread(reason));
    }
    this.#next();
  }
}

/** A line not read: asked about, never allowed, and deny rules cannot vouch for it. */
function unread(reason: string): CommandLine {
  return { kind: 'refused', reason, reachable: [], incomplete: true };
}

/**
 * The worker's script: beside the bundle when built (dist/), else the TypeScript source, imported once tsx's
 * loader is registered in the worker (a loader given with --import does not reach a worker's entry in Node 20).
 */
function workerEntry(): [string | URL, { eval?: boolean; resourceLimits: { maxOldGenerationSizeMb: number } }] {
  const resourceLimits = { maxOldGenerationSizeMb: 256 };
  if (!import.meta.url.endsWith('.ts')) return [new URL('./command-line-worker.js', import.meta.url), { resourceLimits }];
  const tsxApi = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  const source = new URL('./command-line-worker.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(source)}); });`;
  return [code, { eval: true, resourceLimits }];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const shared = new CommandLineReader();

/**
 * Reads a `terminal` command line off the server's thread (see CommandLineReader); never rejects. `owner` (the
 * chat asking) takes turns with other owners.
 */
export function readCommandLine(text: string, owner?: string): Promise<CommandLine> {
  return shared.read(text, owner);
}
