import { LimitExceededError } from '@airlock/core';

/**
 * Changes one connection may make that every watch is told of (a chat's title or settings, a chat deleted, the tool
 * settings): this many back to back, then CHANGES_PER_MINUTE. Each costs the server work for every watch open on
 * every connection, so unbounded they let one client stall everyone. Room for a person: a number setting's arrows
 * held down send a change for each step.
 */
export const CHANGE_BURST = 60;
export const CHANGES_PER_MINUTE = 120;

export interface RateSettings {
  /** New runs per minute, after the burst. Default 30. */
  runsPerMinute?: number;
  /** New runs that may start back to back before the per-minute rate applies. Default 10. */
  runBurst?: number;
  /** The clock, in milliseconds. Default `Date.now`. */
  now?: () => number;
}

/** A connection's budgets: new runs, and changes every watch is told of. */
export class ConnectionRates {
  private readonly runs: TokenBucket;
  private readonly changes: TokenBucket;
  private readonly runsPerMinute: number;
  private readonly runBurst: number;

  constructor(settings: RateSettings = {}) {
    const now = settings.now ?? Date.now;
    this.runsPerMinute = settings.runsPerMinute ?? 30;
    this.runBurst = settings.runBurst ?? 10;
    this.runs = new TokenBucket(this.runBurst, this.runsPerMinute, now);
    this.changes = new TokenBucket(CHANGE_BURST, CHANGES_PER_MINUTE, now);
  }

  /** Spends a new run, or throws LimitExceededError (named as its setting is, `--runs-per-minute`, with when the next is let through). */
  spendRun(): void {
    const wait = this.runs.take();
    if (wait === 0) return;
    const what = `${this.runsPerMinute === 1 ? 'run' : 'runs'} per minute per connection, after a burst of ${this.runBurst}`;
    throw new LimitExceededError(what, this.runsPerMinute, wait);
  }

  /** Spends a change every watch is told of, or throws LimitExceededError. */
  spendChange(): void {
    if (this.changes.take() === 0) return;
    throw new LimitExceededError(`changes to chats and settings per minute per connection, after a burst of ${CHANGE_BURST}`, CHANGES_PER_MINUTE);
  }

  /** How much of both budgets is spent now, each as a share of its burst: 0 when both are full again, 2 when both are empty. */
  spent(): number {
    return this.runs.spentShare() + this.changes.spentShare();
  }
}

export interface LeftRatesOptions extends RateSettings {
  /** Budgets kept at most; past it the least spent is let go. Default 4096 (the default `--max-connections`). */
  maxKept?: number;
}

/**
 * The budgets of a server's connections that closed, handed on to the connections that open after them. A connection
 * is the client's to open and close, so a budget that ended with it started full again on each new one: a client that
 * reconnected after each burst started as many runs (and changes) as it liked. A new connection takes over the most
 * spent budget a closed one left, as it stands, refilling at its rate, and gets a full one only once none is left
 * unrefilled. Connections open at the same time each have a budget of their own (as each has its runs): a backend
 * serving many people over many connections is not held to one person's pace, and what they start together stays
 * bounded by `--max-connections`.
 */
export class LeftRates {
  private readonly left = new Set<ConnectionRates>();
  private readonly maxKept: number;

  constructor(private readonly settings: LeftRatesOptions = {}) {
    this.maxKept = settings.maxKept ?? 4096;
  }

  /** The budget for a connection that opens now: the most spent one left by a closed connection, or a full one. */
  take(): ConnectionRates {
    const most = this.extreme((a, b) => a > b);
    if (most === undefined) return new ConnectionRates(this.settings);
    this.left.delete(most);
    return most;
  }

  /** A connection closed with this budget: kept for the next one unless it is full again. */
  leave(rates: ConnectionRates): void {
    if (rates.spent() === 0) return;
    this.left.add(rates);
    if (this.left.size > this.maxKept) {
      const least = this.extreme((a, b) => a < b);
      if (least !== undefined) this.left.delete(least);
    }
  }

  /** Budgets kept now (for tests of the bound). */
  get size(): number {
    return this.left.size;
  }

  /** The kept budget spent the most (or least, by `better`), letting go of those full again on the way. */
  private extreme(better: (a: number, b: number) => boolean): ConnectionRates | undefined {
    let found: ConnectionRates | undefined;
    let foundSpent = 0;
    for (const rates of this.left) {
      const spent = rates.spent();
      if (spent === 0) this.left.delete(rates);
      else if (found === undefined || better(spent, foundSpent)) {
        found = rates;
        foundSpent = spent;
      }
    }
    return found;
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
    this.refill();
    if (this.tokens < 1) return ((1 - this.tokens) / this.perMinute) * 60_000;
    this.tokens -= 1;
    return 0;
  }

  /** What is spent now, as a share of the burst (0 full, 1 empty). */
  spentShare(): number {
    this.refill();
    return (this.burst - this.tokens) / this.burst;
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 60_000) * this.perMinute);
    this.refilledAt = now;
  }
}
