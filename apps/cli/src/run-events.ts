import type { LoopEvent } from '@airlock/client';

/**
 * A run's events, taken in order with `next`, that can also be read ahead while the terminal waits on the person:
 * `arrival` watches for an event (the decision of the call being asked about) without taking the ones before it,
 * which `next` then gives in their order.
 */
export class RunEvents {
  private readonly queued: LoopEvent[] = [];
  private reading: Promise<void> | undefined;
  private ended = false;
  private failure: { error: unknown } | undefined;

  constructor(private readonly source: AsyncIterator<LoopEvent>) {}

  /** The next event; undefined once the run's events have ended. Throws what the stream failed with, after the events before it. */
  async next(): Promise<LoopEvent | undefined> {
    while (this.queued.length === 0 && !this.ended) await this.read();
    const event = this.queued.shift();
    if (event !== undefined || this.failure === undefined) return event;
    const { error } = this.failure;
    this.failure = undefined;
    throw error;
  }

  /** The first event read already but not taken that `matches`. */
  find(matches: (event: LoopEvent) => boolean): LoopEvent | undefined {
    return this.queued.find(matches);
  }

  /**
   * The first event not taken yet, read already or still to come, that `matches`, left in its place. Undefined when
   * the events end (or fail) without one, or once `signal` aborts.
   */
  async arrival(matches: (event: LoopEvent) => boolean, signal: AbortSignal): Promise<LoopEvent | undefined> {
    const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    for (let index = 0; ; index++) {
      while (index >= this.queued.length) {
        if (this.ended || signal.aborted) return undefined;
        await Promise.race([this.read(), aborted]);
      }
      if (matches(this.queued[index]!)) return this.queued[index];
    }
  }

  /** Takes `event` out of its place: it was shown out of turn, and `next` does not give it again. */
  remove(event: LoopEvent): void {
    const index = this.queued.indexOf(event);
    if (index >= 0) this.queued.splice(index, 1);
  }

  /** Stops reading: the stream is let go of, and nothing more is given. */
  async close(): Promise<void> {
    this.queued.length = 0;
    if (this.ended) return;
    this.ended = true;
    await this.source.return?.();
  }

  /** Reads one more event into the queue; one read at a time, shared by whoever waits for it. */
  private read(): Promise<void> {
    this.reading ??= this.source.next().then(
      (result) => {
        this.reading = undefined;
        if (result.done === true) this.ended = true;
        else if (!this.ended) this.queued.push(result.value);
      },
      (error: unknown) => {
        this.reading = undefined;
        this.ended = true;
        this.failure = { error };
      },
    );
    return this.reading;
  }
}
