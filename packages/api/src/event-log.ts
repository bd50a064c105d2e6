import type { LoopEvent } from '@airlock/core';

/** Whatever waits on a log or a send window: woken once, then it parks again if it must. */
export interface Waker {
  wake(): void;
}

/**
 * A transport's room to send. While it is shut, followers reading for that transport wait before their
 * next event (nothing is skipped), so what a slow reader makes the server hold is bounded by the transport,
 * not by the size of the run.
 */
export interface SendWindow {
  /** False while the transport holds more than it should. */
  readonly open: boolean;
  /** Calls `waiter.wake()` once, when the window opens again. */
  park(waiter: Waker): void;
  unpark(waiter: Waker): void;
}

/** What a follower's subscription counts against (a connection's subscriptions): one place, given back once it ends. */
export interface SubscriptionPlaces {
  releaseSubscription(): void;
}

/** What a transport lends a follower besides its envelope. */
export interface FollowerBinding {
  /** Paces the follower to the transport. Default none: it reads as fast as it is pulled. */
  window?: SendWindow | undefined;
  /**
   * Told once when the follower ends: done, return(), or a failed read. An object rather than a callback, so a
   * waiting follower holds no closure of its own. Default none.
   */
  places?: SubscriptionPlaces | undefined;
}

/**
 * The ordered events of one run, kept so a client that reconnects (or a second tab) can replay
 * exactly what it missed: no duplicate, no gap. Event ids are `<runId>:<seq>`, seq from 1; a
 * reconnecting client sends the last one back as lastEventId.
 */
export class EventLog {
  /** The event of seq n is at index n - 1; entries are built when read, so a stored event costs one slot. */
  private events: LoopEvent[] = [];
  /** The estimated size of its events (see eventSize), counted as they are appended. */
  private eventBytes = 0;
  private closed = false;
  /** Followers waiting for the next append or close, woken together: usually one, kept without an array. */
  private waiting: Waker | Waker[] | undefined = undefined;

  constructor(readonly runId: string) {}

  get size(): number {
    return this.events.length;
  }

  /** About how many bytes its events take as JSON: what keeping the log holds beyond a slot per event. */
  get bytes(): number {
    return this.eventBytes;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  append(event: LoopEvent): void {
    if (this.closed) return;
    this.events.push(event);
    this.eventBytes += eventSize(event);
    this.wakeFollowers();
  }

  close(): void {
    this.closed = true;
    this.wakeFollowers();
  }

  /**
   * For a run that waits on the person, which appends nothing until a decision: its events held in an array of their
   * number, not one grown by appends, which keeps room for more (17 slots for the 4 events of a run's first call).
   */
  compact(): void {
    this.events = this.events.slice();
  }

  /**
   * Events after `afterSeq`, then live ones, until the log closes; each as `wrap(id, event)`, so a
   * transport gets its own envelope without another layer around this one.
   *
   * Stop it with `return()` (a `for await` that breaks does; tRPC does when a subscription stops or
   * its socket closes): a pending `next()` then ends at once. `signal`, when given, is checked at
   * each step; it is not listened to, so a waiting follower costs no listener.
   */
  follow<T>(afterSeq: number, wrap: (id: string, event: LoopEvent) => T, signal?: AbortSignal): LogFollower<T> {
    return new LogFollower(this, Math.max(0, afterSeq), wrap, signal);
  }

  /** @internal The event of `seq` (from 1). */
  eventAt(seq: number): LoopEvent | undefined {
    return this.events[seq - 1];
  }

  /** @internal */
  park(follower: Waker): void {
    const waiting = this.waiting;
    if (waiting === undefined) this.waiting = follower;
    else if (Array.isArray(waiting)) waiting.push(follower);
    else this.waiting = [waiting, follower];
  }

  /** @internal */
  unpark(follower: Waker): void {
    const waiting = this.waiting;
    if (waiting === follower) {
      this.waiting = undefined;
    } else if (Array.isArray(waiting)) {
      const at = waiting.indexOf(follower);
      if (at >= 0) waiting.splice(at, 1);
    }
  }

  private wakeFollowers(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    // wake() never throws: a follower whose read fails gets a rejected next(), the others still wake.
    if (Array.isArray(waiting)) for (const follower of waiting) follower.wake();
    else waiting?.wake();
  }
}

/**
 * What both followers share: the one pending `next()` that a `wake()` answers, the transport they are bound to, and
 * the async-iterator plumbing around them. `return()` ends a pending `next()` at once.
 */
abstract class BoundFollower<T> implements RunFollower<T>, Waker {
  protected finished = false;
  /**
   * Settles the pending next(), while it waits. Only the resolve function is kept: a failed read resolves it with a
   * rejected promise, which rejects next() alike.
   */
  protected pending: ((result: IteratorResult<T, undefined> | Promise<never>) => void) | undefined = undefined;
  protected window: SendWindow | undefined = undefined;
  private places: SubscriptionPlaces | undefined = undefined;

  /** Binds the follower to its transport before the first read; answers the follower itself. */
  bind(binding: FollowerBinding): this {
    this.window = binding.window;
    this.places = binding.places;
    if (this.finished) this.finish();
    return this;
  }

  abstract next(): Promise<IteratorResult<T, undefined>>;

  /** @internal Answers the pending next() if it can now; otherwise parks the follower again. */
  abstract wake(): void;

  return(): Promise<IteratorResult<T, undefined>> {
    this.finish();
    this.unpark();
    this.settle(DONE);
    return Promise.resolve(DONE);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  /** Takes the follower off whatever it is parked on. */
  protected abstract unpark(): void;

  protected settle(result: IteratorResult<T, undefined> | Promise<never>): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.(result);
  }

  /** Like a generator that throws, a follower whose read failed is done: the pending next() rejects. */
  protected fail(error: unknown): void {
    this.finish();
    this.settle(Promise.reject(asError(error)));
  }

  protected finish(): void {
    this.finished = true;
    const places = this.places;
    this.places = undefined;
    places?.releaseSubscription();
  }
}

/**
 * Reads an EventLog: an async iterator written by hand rather than an async generator, so that a
 * waiting follower is one small object and one pending promise (no suspended frame, no abort
 * listener), and so that `return()` ends a pending `next()` at once; a generator's would queue
 * behind it. Replay and live events come from the log itself, never from a queue fed by a listener:
 * events appended while replaying cannot be lost or repeated.
 */
export class LogFollower<T> extends BoundFollower<T> {
  private seq: number;

  constructor(
    private readonly log: EventLog,
    afterSeq: number,
    private readonly wrap: (id: string, event: LoopEvent) => T,
    private readonly signal: AbortSignal | undefined,
  ) {
    super();
    this.seq = afterSeq;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.pending) return Promise.reject(new Error('LogFollower.next() called while an earlier next() is pending'));
    let result: IteratorResult<T, undefined> | Parking;
    try {
      result = this.step();
    } catch (error) {
      this.finish();
      return Promise.reject(asError(error));
    }
    if (typeof result !== 'string') return Promise.resolve(result);
    return new Promise((resolve) => {
      this.pending = resolve;
      this.park(result);
    });
  }

  /** @internal Called by the log on append or close, and by the window when it opens. */
  wake(): void {
    if (!this.pending) return;
    let result: IteratorResult<T, undefined> | Parking;
    try {
      result = this.step();
    } catch (error) {
      this.fail(error);
      return;
    }
    if (typeof result !== 'string') this.settle(result);
    else this.park(result);
  }

  protected unpark(): void {
    this.log.unpark(this);
    this.window?.unpark(this);
  }

  /** The next result if there is one now; otherwise what the follower has to wait for. */
  private step(): IteratorResult<T, undefined> | Parking {
    if (this.finished || this.signal?.aborted) {
      this.finish();
      return DONE;
    }
    const event = this.log.eventAt(this.seq + 1);
    if (event !== undefined) {
      // Checked only when there is something to send: the end of a run still goes out while the window is shut.
      if (this.window !== undefined && !this.window.open) return 'window';
      this.seq++;
      return { done: false, value: this.wrap(`${this.log.runId}:${this.seq}`, event) };
    }
    if (this.log.isClosed) {
      this.finish();
      return DONE;
    }
    return 'log';
  }

  private park(on: Parking): void {
    if (on === 'log') this.log.park(this);
    else this.window?.park(this);
  }
}

/** What follows a run for one transport: a log's follower, or a finished run's read from the store a page at a time. */
export interface RunFollower<T> extends AsyncIterableIterator<T, undefined, undefined>, AsyncDisposable {
  bind(binding: FollowerBinding): this;
  /** Ends the follower, and a pending `next()` at once. */
  return(): Promise<IteratorResult<T, undefined>>;
}

/** Reads the page of a finished run's events that comes after `afterSeq` (empty past its last). */
export type EventPageReader = (afterSeq: number) => Promise<LoopEvent[]>;

/**
 * Follows a finished run from the store rather than from a log in memory: it holds one page of events at most, reads
 * the next only once that page is sent and while its transport's window is open, and in a later turn of the event
 * loop, so neither a run's size nor a client that does not read makes the server hold or parse more than a page for
 * it. Ends after `lastSeq`, the run's last event when it was attached to: a client attached at the end reads nothing.
 * Ends a pending `next()` at once on `return()`, as LogFollower does.
 */
export class StoredRunFollower<T> extends BoundFollower<T> {
  private seq: number;
  private page: LoopEvent[] = [];
  private at = 0;
  private reading = false;

  constructor(
    private readonly runId: string,
    afterSeq: number,
    private readonly lastSeq: number,
    private readonly read: EventPageReader,
    private readonly wrap: (id: string, event: LoopEvent) => T,
    private readonly signal: AbortSignal | undefined,
  ) {
    super();
    this.seq = Math.max(0, afterSeq);
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.pending) return Promise.reject(new Error('StoredRunFollower.next() called while an earlier next() is pending'));
    return new Promise((resolve) => {
      this.pending = resolve;
      this.wake();
    });
  }

  /** @internal Answers the pending next() if it can; otherwise waits for the window, or reads the next page. */
  wake(): void {
    if (this.pending === undefined || this.reading) return;
    if (this.finished || this.signal?.aborted || (this.at >= this.page.length && this.seq >= this.lastSeq)) {
      this.finish();
      this.settle(DONE);
      return;
    }
    // Checked before a page is read as before an event is sent: for a client that does not read, nothing more is read.
    if (this.window !== undefined && !this.window.open) {
      this.window.park(this);
      return;
    }
    const event = this.page[this.at];
    if (event !== undefined) {
      this.at++;
      this.seq++;
      this.settle({ done: false, value: this.wrap(`${this.runId}:${this.seq}`, event) });
      return;
    }
    this.reading = true;
    this.readPage().then(
      () => {
        this.reading = false;
        this.wake();
      },
      (error: unknown) => {
        this.reading = false;
        this.fail(error);
      },
    );
  }

  protected unpark(): void {
    this.window?.unpark(this);
  }

  private async readPage(): Promise<void> {
    this.page = [];
    this.at = 0;
    // In a later turn of the event loop: many replays read one page each in turn, not one whole run after another.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.finished) return;
    const page = await this.read(this.seq);
    // Its events are gone (its chat was deleted meanwhile): the run ends here for this follower.
    if (page.length === 0) this.finish();
    this.page = page.slice(0, this.lastSeq - this.seq);
  }
}

/** Where a follower with nothing to answer now waits: for the log to grow, or for the transport to drain. */
type Parking = 'log' | 'window';

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * About how many bytes an event takes as JSON, without writing it: each string's length and a few for each value and
 * key (escapes and multi-byte characters aside). A tool's result or a long text weighs what it holds, a text delta
 * little. Walked without recursion, so arguments nested however deep cost no stack.
 */
export function eventSize(event: LoopEvent): number {
  let size = 0;
  const values: unknown[] = [event];
  while (values.length > 0) {
    const value = values.pop();
    if (typeof value === 'string') {
      size += value.length + 2;
    } else if (typeof value === 'number') {
      size += 16;
    } else if (typeof value !== 'object' || value === null) {
      size += 5;
    } else if (Array.isArray(value)) {
      size += 2;
      for (const item of value as unknown[]) {
        size += 1;
        values.push(item);
      }
    } else {
      size += 2;
      for (const [key, item] of Object.entries(value)) {
        size += key.length + 4;
        values.push(item);
      }
    }
  }
  return size;
}

/** The seq of a `<runId>:<seq>` event id, when it belongs to `runId`. */
export function parseEventId(eventId: string | undefined): { runId: string; seq: number } | undefined {
  if (!eventId) return undefined;
  const at = eventId.lastIndexOf(':');
  if (at <= 0) return undefined;
  const digits = eventId.slice(at + 1);
  if (!/^\d{1,15}$/.test(digits)) return undefined;
  const seq = Number(digits);
  return { runId: eventId.slice(0, at), seq };
}
