import { LimitExceededError } from '@airlock/core';

/**
 * Changes a token's connections may make together that every watch is told of (a chat's title or settings, a chat
 * deleted, the tool settings): this many back to back, then CHANGES_PER_MINUTE. Each costs the server work for every
 * watch open on every connection, so unbounded they let one client stall everyone. Room for a person: a number
 * setting's arrows held down send a change for each step.
 */
export const CHANGE_BURST = 60;
export const CHANGES_PER_MINUTE = 120;

export interface TokenRatesOptions {
  /** New runs per minute, after the burst. Default 30. */
  runsPerMinute?: number;
  /** New runs that may start back to back before the per-minute rate applies. Default 10. */
  runBurst?: number;
  /** The clock, in milliseconds. Default `Date.now`. */
  now?: () => number;
}

/**
 * The rates that hold for a credential over all its connections: new runs, and changes every watch is told of. A
 * connection is the client's to open and close, so a budget kept with it started full again on each new one: a
 * client that reconnected, or opened a second connection, started as many runs as it liked. A server's connections
 * share the one of its token (a tab's credential stands in for the token, and shares it too). Two counters whatever
 * the number of connections.
 */
export class TokenRates {
  private readonly runs: TokenBucket;
  private readonly changes: TokenBucket;
  private readonly runsPerMinute: number;
  private readonly runBurst: number;

  constructor(options: TokenRatesOptions = {}) {
    const now = options.now ?? Date.now;
    this.runsPerMinute = options.runsPerMinute ?? 30;
    this.runBurst = options.runBurst ?? 10;
    this.runs = new TokenBucket(this.runBurst, this.runsPerMinute, now);
    this.changes = new TokenBucket(CHANGE_BURST, CHANGES_PER_MINUTE, now);
  }

  /** Spends a new run, or throws LimitExceededError (named as its setting is, `--runs-per-minute`, with when the next is let through). */
  spendRun(): void {
    const wait = this.runs.take();
    if (wait === 0) return;
    const what = `${this.runsPerMinute === 1 ? 'run' : 'runs'} per minute over all connections with the token, after a burst of ${this.runBurst}`;
    throw new LimitExceededError(what, this.runsPerMinute, wait);
  }

  /** Spends a change every watch is told of, or throws LimitExceededError. */
  spendChange(): void {
    if (this.changes.take() === 0) return;
    throw new LimitExceededError(`changes to chats and settings per minute over all connections with the token, after a burst of ${CHANGE_BURST}`, CHANGES_PER_MINUTE);
  }
}

/** `burst` tokens, refilled at `perMinute`; each take spends one. */
class TokenBucket {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly burst: number,
    private readonly perMinute: number,
    private readonly now: () => number,
  ) {
    this.tokens = burst;
    this.refilledAt = now();
  }

  /** Spends a token and answers 0, or, with none to spend, how long until one is back (in ms) and spends nothing. */
  take(): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 60_000) * this.perMinute);
    this.refilledAt = now;
    if (this.tokens < 1) return ((1 - this.tokens) / this.perMinute) * 60_000;
    this.tokens -= 1;
    return 0;
  }
}
