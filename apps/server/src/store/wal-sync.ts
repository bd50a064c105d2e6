import { closeSync, fdatasync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Syncs SQLite's write-ahead log to the disk from the thread pool, through a read-only descriptor of its own, so that
 * no sync holds the event loop.
 *
 * The store commits everything without a sync of SQLite's own (synchronous = NORMAL while it commits, see
 * SqliteStore.unsynced): the log is one file, appended in order, and one `fdatasync` of it makes every commit before
 * it durable. Two uses:
 *
 * - `durable()`: a commit that lets a call run (an allow, a rule, a grant, confirmation turned off…) is followed by
 *   one, and what it allows waits for it. Commits asked for while a sync is going share the next one, so many allows
 *   at once cost one or two syncs, and none of them stops the server from answering anyone else meanwhile (a sync on
 *   the event loop took 0.3–1.3 ms here, per allow, docs/benchmarks.md, "Store").
 * - `ahead()`: a commit that leaves a call waiting for its person is written out while the person reads the card,
 *   so the allow that follows has only its own pages left.
 *
 * A failed sync is final (see `failure`): after one, the kernel may have dropped the pages it could not write and
 * marked them clean, and a later sync that succeeds says nothing of them. Every sync after it is refused, and so is
 * every write of the store (the database is read again from the disk at the next start).
 */
export class WalSync {
  /** The error of the first sync that failed, if one has. */
  failure: Error | undefined;
  private fd: number | undefined;
  private syncing = false;
  /** Asked for while one was going: one more runs after it. */
  private again = false;
  /** Waiting for the next sync to start (their commits came after the one going started). */
  private next: Waiter[] = [];
  private idle: (() => void)[] = [];
  private closed = false;

  constructor(private readonly walFile: string) {}

  /** Starts a write-out of the log, or one more after the one going. Its failure reaches the next `durable()`. */
  ahead(): void {
    if (this.closed || this.failure !== undefined) return;
    if (this.syncing) this.again = true;
    else this.start();
  }

  /**
   * Resolves once every commit made before this call is on the disk: after a sync that started after it. Rejects
   * with the sync's error, or with the first failure's when one has failed before.
   */
  durable(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error('The write-ahead log is closed'));
    return new Promise((resolve, reject) => {
      this.next.push({ resolve, reject });
      if (!this.syncing) this.start();
    });
  }

  /** Resolves once no sync is going or asked for. */
  whenIdle(): Promise<void> {
    if (!this.syncing) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /**
   * Starts no more write-outs. The syncs that commits made before are waiting for still run; the descriptor closes once
   * the last has finished.
   */
  close(): void {
    this.closed = true;
    this.again = false;
    if (!this.syncing) this.release();
  }

  private start(): void {
    const waiters = this.next.splice(0);
    let fd: number;
    try {
      fd = this.open();
    } catch (error) {
      // No log yet, or one that cannot be opened: a write-out ahead is left to the allow's sync; a commit waiting
      // for its sync cannot be said to be on the disk.
      if (waiters.length > 0) this.fail(asError(error), waiters);
      return;
    }
    this.again = false;
    this.syncing = true;
    fdatasync(fd, (error) => {
      this.syncing = false;
      if (error === null) for (const { resolve } of waiters) resolve();
      else this.fail(error, waiters);
      if (this.failure === undefined && (this.again || this.next.length > 0)) this.start();
      if (this.syncing) return;
      for (const waiter of this.next.splice(0)) waiter.reject(this.failure ?? new Error('The write-ahead log is closed'));
      if (this.closed || this.failure !== undefined) this.release();
      for (const resolve of this.idle.splice(0)) resolve();
    });
  }

  private fail(error: Error, waiters: Waiter[]): void {
    this.failure ??= error;
    for (const { reject } of waiters) reject(this.failure);
  }

  /**
   * Read-only is enough: a sync writes out the file's pages whichever descriptor asks. Opened on first use, after the
   * first commit has made the log; kept, as SQLite keeps the same file while the database is open (a checkpoint
   * writes it again from its start, it does not replace it). The folder is synced once then too: the log is a new
   * file at each open, and SQLite, which would sync its folder with its own first sync of it, makes none now.
   */
  private open(): number {
    if (this.fd === undefined) {
      const fd = openSync(this.walFile, 'r');
      try {
        syncFolder(dirname(this.walFile));
      } catch (error) {
        closeSync(fd);
        throw error;
      }
      this.fd = fd;
    }
    return this.fd;
  }

  private release(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

function syncFolder(folder: string): void {
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
