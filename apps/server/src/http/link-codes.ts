import { createHash, randomBytes } from 'node:crypto';

export interface LinkCodesOptions {
  /** How long a code can be exchanged after it is made. Default 10 minutes. */
  lifetimeMs?: number;
  /** Codes that can be exchanged at once; making one more drops the oldest. Default 8. */
  maxLive?: number;
  /**
   * Exchanges of anything but a live code answered per window; more are refused until the window ends. A live code
   * is always taken: junk sent by anyone cannot lock the person out of their own link. Default 30 a minute.
   */
  rate?: { attempts: number; windowMs: number };
  /** The least time between two codes made again for links opened again or late (`reissue`). Default a minute. */
  reissueEveryMs?: number;
  /** The clock, in milliseconds. Default `Date.now`. */
  now?: () => number;
}

/** What an exchange gives: the token, or why not. */
export type Exchange = { kind: 'token' } | { kind: 'used' } | { kind: 'expired' } | { kind: 'unknown' } | { kind: 'too-many' };

/** A code's shape: base64url of 20 random bytes (160 bits). */
const CODE_PATTERN = /^[A-Za-z0-9_-]{27}$/;
/** Codes remembered, live, used or expired, to say which a link opened again is; the oldest is forgotten first. */
const REMEMBERED = 64;

interface Issued {
  expiresAt: number;
  used: boolean;
}

/**
 * The one-time codes of start-up links (`…/#code=<code>`): a code is exchanged once, within its lifetime, for the
 * token. The link is what a browser keeps in its history, session restore and sync; the token never is in it.
 * A used or expired code is remembered for another lifetime, to tell someone opening the link again why it fails.
 */
export class LinkCodes {
  private readonly issued = new Map<string, Issued>();
  private readonly lifetimeMs: number;
  private readonly maxLive: number;
  private readonly rate: { attempts: number; windowMs: number };
  private readonly now: () => number;
  private readonly reissueEveryMs: number;
  private window = { startedAt: Number.NEGATIVE_INFINITY, attempts: 0 };
  private reissuedAt = Number.NEGATIVE_INFINITY;
  /** The last code `reissue` made: the next one takes its place, so replays never push out other live codes. */
  private reissuedKey: string | undefined;

  constructor(options: LinkCodesOptions = {}) {
    this.lifetimeMs = options.lifetimeMs ?? 10 * 60_000;
    this.maxLive = options.maxLive ?? 8;
    this.rate = options.rate ?? { attempts: 30, windowMs: 60_000 };
    this.reissueEveryMs = options.reissueEveryMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * A new code for someone who opened a used or expired link, or undefined when one was made for that less than
   * `reissueEveryMs` ago (it is still live): replaying an old link from a synced history makes no flood of links.
   * Each takes the place of the one made before it, so however long the replays go on, they never push the
   * start-up link's code, or one made on demand, out of the live codes.
   */
  reissue(): string | undefined {
    const now = this.now();
    if (now - this.reissuedAt < this.reissueEveryMs) return undefined;
    this.reissuedAt = now;
    if (this.reissuedKey !== undefined && this.issued.get(this.reissuedKey)?.used === false) this.issued.delete(this.reissuedKey);
    const code = this.issue();
    this.reissuedKey = digest(code);
    return code;
  }

  /** A new code, valid for the lifetime. */
  issue(): string {
    this.forgetExpired();
    const code = randomBytes(20).toString('base64url');
    const now = this.now();
    this.issued.set(digest(code), { expiresAt: now + this.lifetimeMs, used: false });
    const live = [...this.issued].filter(([, entry]) => !entry.used && now < entry.expiresAt);
    for (const [key] of live.slice(0, Math.max(0, live.length - this.maxLive))) this.issued.delete(key);
    for (const key of [...this.issued.keys()].slice(0, Math.max(0, this.issued.size - REMEMBERED))) this.issued.delete(key);
    return code;
  }

  /** Uses up `code` if it is live: `token` then, once. Every other call counts towards the rate. */
  exchange(code: string): Exchange {
    const now = this.now();
    // Looked up by digest: the map's own lookup then tells nothing of how close a guess came.
    const entry = CODE_PATTERN.test(code) ? this.issued.get(digest(code)) : undefined;
    if (entry !== undefined && !entry.used && now < entry.expiresAt) {
      entry.used = true;
      return { kind: 'token' };
    }
    if (now - this.window.startedAt >= this.rate.windowMs) this.window = { startedAt: now, attempts: 0 };
    if (this.window.attempts >= this.rate.attempts) return { kind: 'too-many' };
    this.window.attempts++;
    if (entry === undefined) return { kind: 'unknown' };
    return entry.used ? { kind: 'used' } : { kind: 'expired' };
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [key, entry] of this.issued) if (now >= entry.expiresAt + this.lifetimeMs) this.issued.delete(key);
  }
}

function digest(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('base64url');
}
