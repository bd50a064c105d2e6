import type { ToolSlots } from './run-tool-loop';

/** A waiter for a place: let in by `enter`; `seq` orders waiters by when they asked. */
interface Waiter {
  readonly enter: () => void;
  readonly seq: number;
}

/** One holder's places held and turns waiting, first come first served. */
interface Share {
  held: number;
  /** When it was last let in (a count of places taken); -1 never. */
  lastIn: number;
  readonly line: Waiter[];
}

/** The holder of the places taken and asked for without naming one. */
const ANYONE = '';

/**
 * At most `max` places held at once; the others wait their turn. Each place is held for a holder (a name: for a
 * model's requests, the connection whose run asks): a freed place goes to the waiting holder that holds the fewest
 * places now, between holders holding as many to the one let in least recently (then the one whose turn has waited
 * longest), and within a holder first come first served. So one holder queuing many turns cannot keep another waiting behind all of them: a holder with
 * none gets the next free place. Without names (one holder) it is first come first served. A waiter whose signal
 * aborts leaves the line without taking a place. A host's model requests are held to one, its running tool calls to
 * another (as `ToolSlots`).
 */
export class ConcurrencyLimit implements ToolSlots {
  private active = 0;
  private queued = 0;
  private asked = 0;
  private taken = 0;
  /** Holders holding a place or waiting for one; a holder with neither is forgotten. */
  private readonly shares = new Map<string, Share>();
  /** The holders with a turn waiting. */
  private readonly waitingShares = new Set<Share>();

  constructor(readonly max: number) {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be a whole number of at least 1, got ${max}`);
  }

  /** Holders now. */
  get size(): number {
    return this.active;
  }

  /** Waiting for a place. */
  get waiting(): number {
    return this.queued;
  }

  /**
   * How many waiting turns a turn of `holder` asking now would have ahead of it, if no place were given back
   * meanwhile: its holder's own turns in line, and of every other holder's those let in before it as it holds fewer.
   */
  aheadOf(holder: string = ANYONE): number {
    const own = this.shares.get(holder);
    const before = own === undefined ? 0 : own.line.length;
    // The turn is let in once its holder has been let in `before` times, holding then `held + before`; until then
    // another holder is let in while it holds fewer, or as many (as it may have been let in less recently).
    const reached = (own?.held ?? 0) + before;
    let ahead = before;
    for (const share of this.waitingShares) {
      if (share !== own) ahead += Math.min(share.line.length, Math.max(0, reached - share.held + 1));
    }
    return ahead;
  }

  /** Takes a place if one is free and nobody waits for one; answers the function that gives it back, else undefined. */
  tryAcquire(holder: string = ANYONE): (() => void) | undefined {
    if (this.active >= this.max || this.queued > 0) return undefined;
    this.active++;
    const share = this.share(holder);
    share.held++;
    share.lastIn = this.taken++;
    return this.releaser(holder, share);
  }

  /**
   * Takes a place for `holder`, waiting for one if need be. Answers the function that gives it back (once; later
   * calls do nothing), or undefined when `signal` aborted first.
   */
  async acquire(signal?: AbortSignal, holder: string = ANYONE): Promise<(() => void) | undefined> {
    if (signal?.aborted) return undefined;
    const now = this.tryAcquire(holder);
    if (now !== undefined) return now;
    const share = this.share(holder);
    const admitted = await new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        enter: () => {
          signal?.removeEventListener('abort', leave);
          resolve(true);
        },
        seq: this.asked++,
      };
      const leave = () => {
        const at = share.line.indexOf(waiter);
        if (at >= 0) {
          share.line.splice(at, 1);
          this.queued--;
          if (share.line.length === 0) this.waitingShares.delete(share);
          this.forgetIfIdle(holder, share);
        }
        resolve(false);
      };
      share.line.push(waiter);
      this.queued++;
      this.waitingShares.add(share);
      signal?.addEventListener('abort', leave, { once: true });
    });
    // A place handed over by release() is already counted as taken, and as held by the holder.
    return admitted ? this.releaser(holder, share) : undefined;
  }

  private share(holder: string): Share {
    let share = this.shares.get(holder);
    if (share === undefined) {
      share = { held: 0, lastIn: -1, line: [] };
      this.shares.set(holder, share);
    }
    return share;
  }

  private forgetIfIdle(holder: string, share: Share): void {
    if (share.held === 0 && share.line.length === 0 && this.shares.get(holder) === share) this.shares.delete(holder);
  }

  /** The waiting holder the next free place goes to: the fewest held, then the one let in least recently, then the turn that asked first. */
  private nextShare(): Share | undefined {
    let best: Share | undefined;
    for (const share of this.waitingShares) {
      if (best === undefined || before(share, best)) best = share;
    }
    return best;
  }

  private releaser(holder: string, share: Share): () => void {
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      share.held--;
      this.forgetIfIdle(holder, share);
      const next = this.nextShare();
      if (next === undefined) {
        this.active--;
        return;
      }
      // The place passes straight to the next in line, so nobody arriving meanwhile can take it first.
      const waiter = next.line.shift()!;
      this.queued--;
      next.held++;
      next.lastIn = this.taken++;
      if (next.line.length === 0) this.waitingShares.delete(next);
      waiter.enter();
    };
  }
}

function before(share: Share, other: Share): boolean {
  if (share.held !== other.held) return share.held < other.held;
  if (share.lastIn !== other.lastIn) return share.lastIn < other.lastIn;
  return share.line[0]!.seq < other.line[0]!.seq;
}
