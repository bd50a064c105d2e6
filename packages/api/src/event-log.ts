import type { LoopEvent } from '@airlock/core';

export interface LoggedEvent {
  /** `<runId>:<seq>`: a reconnecting client sends it back as lastEventId. */
  id: string;
  seq: number;
  event: LoopEvent;
}

type Listener = (entry: LoggedEvent) => void;

/**
 * The ordered events of one run, kept so a client that reconnects (or a second tab) can replay
 * exactly what it missed: no duplicate, no gap.
 */
export class EventLog {
  private readonly entries: LoggedEvent[] = [];
  private readonly listeners = new Set<Listener>();
  private closed = false;

  constructor(private readonly runId: string) {}

  get size(): number {
    return this.entries.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  append(event: LoopEvent): void {
    if (this.closed) return;
    const seq = this.entries.length + 1;
    const entry: LoggedEvent = { id: `${this.runId}:${seq}`, seq, event };
    this.entries.push(entry);
    for (const listener of this.listeners) listener(entry);
  }

  close(): void {
    this.closed = true;
    for (const listener of this.listeners) listener(CLOSED);
  }

  /** Events after `afterSeq`, then live ones, until the log closes or `signal` aborts. */
  async *follow(afterSeq: number, signal: AbortSignal): AsyncGenerator<LoggedEvent, void, undefined> {
    const queue: LoggedEvent[] = [];
    let wake: (() => void) | undefined;
    const listener: Listener = (entry) => {
      queue.push(entry);
      wake?.();
    };
    const onAbort = () => wake?.();
    // Listen before replaying: an event appended during the replay lands in the queue instead of being lost.
    this.listeners.add(listener);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      let cursor = afterSeq;
      const snapshot = this.entries.length;
      for (let i = Math.max(0, cursor); i < snapshot && !signal.aborted; i++) {
        const entry = this.entries[i]!;
        cursor = entry.seq;
        yield entry;
      }
      for (;;) {
        while (queue.length > 0 && !signal.aborted) {
          const entry = queue.shift()!;
          if (entry === CLOSED) return;
          if (entry.seq <= cursor) continue;
          cursor = entry.seq;
          yield entry;
        }
        if (signal.aborted) return;
        if (this.closed && cursor >= this.entries.length) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      this.listeners.delete(listener);
      signal.removeEventListener('abort', onAbort);
    }
  }
}

const CLOSED: LoggedEvent = { id: '', seq: Number.POSITIVE_INFINITY, event: { type: 'status', text: '' } };

/** The seq of a `<runId>:<seq>` event id, when it belongs to `runId`. */
export function parseEventId(eventId: string | undefined): { runId: string; seq: number } | undefined {
  if (!eventId) return undefined;
  const at = eventId.lastIndexOf(':');
  if (at <= 0) return undefined;
  const seq = Number(eventId.slice(at + 1));
  if (!Number.isSafeInteger(seq) || seq < 0) return undefined;
  return { runId: eventId.slice(0, at), seq };
}
