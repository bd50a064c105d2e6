import type { ToolSlots } from './run-tool-loop';

/**
 * At most `max` holders at once; the others wait their turn, first come first served. A waiter whose signal aborts
 * leaves the line without taking a place. A host's model requests are held to one, its running tool calls to
 * another (as `ToolSlots`).
 */
export class ConcurrencyLimit implements ToolSlots {
  private active = 0;
  private readonly line: (() => void)[] = [];

  constructor(readonly max: number) {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be a whole number of at least 1, got ${max}`);
  }

  /** Holders now. */
  get size(): number {
    return this.active;
  }

  /** Waiting for a place. */
  get waiting(): number {
    return this.line.length;
  }

  /** Takes a place if one is free and nobody waits for one; answers the function that gives it back, else undefined. */
  tryAcquire(): (() => void) | undefined {
    if (this.active >= this.max || this.line.length > 0) return undefined;
    this.active++;
    return this.releaser();
  }

  /**
   * Takes a place, waiting for one if need be. Answers the function that gives it back (once; later calls do
   * nothing), or undefined when `signal` aborted first.
   */
  async acquire(signal?: AbortSignal): Promise<(() => void) | undefined> {
    if (signal?.aborted) return undefined;
    const now = this.tryAcquire();
    if (now !== undefined) return now;
    const admitted = await new Promise<boolean>((resolve) => {
      const enter = () => {
        signal?.removeEventListener('abort', leave);
        resolve(true);
      };
      const leave = () => {
        const at = this.line.indexOf(enter);
        if (at >= 0) this.line.splice(at, 1);
        resolve(false);
      };
      this.line.push(enter);
      signal?.addEventListener('abort', leave, { once: true });
    });
    // A place handed over by release() is already counted as taken.
    return admitted ? this.releaser() : undefined;
  }

  private releaser(): () => void {
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const next = this.line.shift();
      // The place passes straight to the next in line, so nobody arriving meanwhile can take it first.
      if (next) next();
      else this.active--;
    };
  }
}
