import { createHash, randomBytes } from 'node:crypto';

export interface TabCredentialsOptions {
  /** How long after its connection closed a credential still re-opens the tab (a reload). Default 30 s. */
  graceMs?: number;
  /** Credentials of closed connections kept at once; one more drops the oldest. Default 64. */
  maxClosed?: number;
  /**
   * Presentations of anything but a credential that may be redeemed now, answered per window; more are refused
   * until the window ends. A redeemable credential is always taken, so junk cannot lock a tab out. Default 30 a minute.
   */
  rate?: { attempts: number; windowMs: number };
  /** The clock, in milliseconds. Default `Date.now`. */
  now?: () => number;
}

/** What presenting a credential gives: a session for the new connection, or why not. */
export type TabRedeem = { kind: 'redeemed' } | { kind: 'open' } | { kind: 'unknown' } | { kind: 'too-many' };

/** A credential's shape: base64url of 32 random bytes. */
const CREDENTIAL_PATTERN = /^[A-Za-z0-9_-]{43}$/;

interface Entry<Connection> {
  connection: Connection;
  /** When its connection closed; undefined while it is open. */
  closedAt?: number;
}

/**
 * The per-tab credentials a page keeps in its sessionStorage instead of the token, so the token itself is never
 * written to the browser's profile on disk. Each is bound to one connection and re-opens the tab once, only after
 * that connection closed and within `graceMs`. A copy read from disk is refused while the tab is connected, but one
 * kept and presented again as that connection closes (the tab closed, or reloading: then it races the page) is
 * worth a session, never the token, for `graceMs` at most. Only digests are kept, at most one per open connection
 * plus `maxClosed`.
 */
export class TabCredentials<Connection> {
  private readonly entries = new Map<string, Entry<Connection>>();
  private readonly byConnection = new Map<Connection, string>();
  private readonly graceMs: number;
  private readonly maxClosed: number;
  private readonly rate: { attempts: number; windowMs: number };
  private readonly now: () => number;
  private window = { startedAt: Number.NEGATIVE_INFINITY, attempts: 0 };

  constructor(options: TabCredentialsOptions = {}) {
    this.graceMs = options.graceMs ?? 30_000;
    this.maxClosed = options.maxClosed ?? 64;
    this.rate = options.rate ?? { attempts: 30, windowMs: 60_000 };
    this.now = options.now ?? Date.now;
  }

  /** How many credentials are kept (for tests of the bound). */
  get size(): number {
    return this.entries.size;
  }

  /** A new credential for the open `connection`, in place of the one it had. */
  issue(connection: Connection): string {
    this.revokeOf(connection);
    const credential = randomBytes(32).toString('base64url');
    const key = digest(credential);
    this.entries.set(key, { connection });
    this.byConnection.set(connection, key);
    return credential;
  }

  /** Starts the grace of `connection`'s credential, if it has one. */
  closed(connection: Connection): void {
    const key = this.byConnection.get(connection);
    if (key === undefined) return;
    this.byConnection.delete(connection);
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    // Moved to the end: the map's order is then the order the connections closed in, oldest first.
    this.entries.delete(key);
    this.entries.set(key, { connection, closedAt: this.now() });
    this.forgetOld();
  }

  /**
   * Uses up `credential` if its connection closed within the grace, or is closing now (`isOpen` says no: its close
   * frame came before the socket's close was seen). Every other call counts towards the rate.
   */
  redeem(credential: string, isOpen: (connection: Connection) => boolean = () => true): TabRedeem {
    this.forgetOld();
    // Looked up by digest: the map's own lookup then tells nothing of how close a guess came.
    const key = CREDENTIAL_PATTERN.test(credential) ? digest(credential) : undefined;
    let entry = key === undefined ? undefined : this.entries.get(key);
    if (entry !== undefined && entry.closedAt === undefined && !isOpen(entry.connection)) {
      this.closed(entry.connection);
      entry = this.entries.get(key!);
    }
    if (entry?.closedAt !== undefined) {
      this.entries.delete(key!);
      return { kind: 'redeemed' };
    }
    if (this.now() - this.window.startedAt >= this.rate.windowMs) this.window = { startedAt: this.now(), attempts: 0 };
    if (this.window.attempts >= this.rate.attempts) return { kind: 'too-many' };
    this.window.attempts++;
    return entry === undefined ? { kind: 'unknown' } : { kind: 'open' };
  }

  /** Drops `credential` whatever its state: its tab came back with the token, which gets it a new one. */
  revoke(credential: string): void {
    if (!CREDENTIAL_PATTERN.test(credential)) return;
    const key = digest(credential);
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    if (this.byConnection.get(entry.connection) === key) this.byConnection.delete(entry.connection);
  }

  private revokeOf(connection: Connection): void {
    const key = this.byConnection.get(connection);
    if (key === undefined) return;
    this.entries.delete(key);
    this.byConnection.delete(connection);
  }

  private forgetOld(): void {
    const now = this.now();
    let closed = 0;
    for (const entry of this.entries.values()) if (entry.closedAt !== undefined) closed++;
    for (const [key, entry] of this.entries) {
      if (entry.closedAt === undefined) continue;
      if (closed > this.maxClosed || now - entry.closedAt >= this.graceMs) {
        this.entries.delete(key);
        closed--;
      }
    }
  }
}

function digest(credential: string): string {
  return createHash('sha256').update(credential, 'utf8').digest('base64url');
}
