import type { LoopEvent } from '@airlock/core';

/**
 * The ordered events of one run, kept so a client that reconnects (or a second tab) can replay
 * exactly what it missed: no duplicate, no gap. Event ids are `<runId>:<seq>`, seq from 1; a
 * reconnecting client sends the last one back as lastEventId.
 */
export class EventLog {
  /** The event of seq n is at index n - 1; entries are built when read, so a stored event costs one slot. */
  private readonly events: LoopEvent[] = [];
  private closed = false;
  /** Settles at the next append or close; one promise shared by every follower waiting on this log. */
  private changed: Promise<void> | undefined;
  private settleChanged: (() => void) | undefined;

  constructor(private readonly runId: string) {}

  get size(): number {
    return this.events.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  append(event: LoopEvent): void {
    if (this.closed) return;
    this.events.push(event);
    this.wakeFollowers();
  }

  close(): void {
    this.closed = true;
    this.wakeFollowers();
  }

  /**
   * Events after `afterSeq`, then live ones, until the log closes or `signal` aborts; each yielded as
   * `wrap(id, event)`, so a transport gets its own envelope without another generator around this one.
   */
  async *follow<T>(afterSeq: number, signal: AbortSignal, wrap: (id: string, event: LoopEvent) => T): AsyncGenerator<T, void, undefined> {
    // Bound rather than an arrow in a const: under tsx (esbuild keepNames) a named closure carries a ~256 B name property.
    const onAbort = this.wakeFollowers.bind(this);
    signal.addEventListener('abort', onAbort);
    try {
      // Reads the log itself, not a queue fed by a listener: events appended while replaying cannot be lost or repeated.
      let next = Math.max(0, afterSeq);
      for (;;) {
        while (next < this.events.length && !signal.aborted) {
          const event = this.events[next]!;
          next++;
          yield wrap(`${this.runId}:${next}`, event);
        }
        if (signal.aborted || this.closed) return;
        await this.nextChange();
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  private nextChange(): Promise<void> {
    this.changed ??= new Promise<void>((resolve) => (this.settleChanged = resolve));
    return this.changed;
  }

  /** Every waiting follower re-checks the log and its own signal; one woken for another's abort just waits again. */
  private wakeFollowers(): void {
    const settle = this.settleChanged;
    this.changed = undefined;
    this.settleChanged = undefined;
    settle?.();
  }
}

// What Node 24 gives every async generator. Without it, tRPC attaches a pair of closures to each stream it reads (~230 B per open stream).
Object.defineProperty((EventLog.prototype.follow as { prototype: object }).prototype, Symbol.asyncDispose, {
  async value(this: AsyncGenerator<unknown, void, undefined>): Promise<void> {
    await this.return();
  },
});

/** The seq of a `<runId>:<seq>` event id, when it belongs to `runId`. */
export function parseEventId(eventId: string | undefined): { runId: string; seq: number } | undefined {
  if (!eventId) return undefined;
  const at = eventId.lastIndexOf(':');
  if (at <= 0) return undefined;
  const seq = Number(eventId.slice(at + 1));
  if (!Number.isSafeInteger(seq) || seq < 0) return undefined;
  return { runId: eventId.slice(0, at), seq };
}
