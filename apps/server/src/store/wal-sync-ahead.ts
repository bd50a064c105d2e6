import { closeSync, fdatasync, openSync } from 'node:fs';

/**
 * Writes the write-ahead log out to the disk in the background while a call waits for its person, so that the allow
 * that follows, synced before its tool runs, has only its own pages left to sync.
 *
 * Commits that let nothing run are not synced (see SqliteStore.committed), so by the time a call is put up the log
 * holds every page of its run so far: its start, the model's events, the call's start. The allow's sync wrote all of
 * them out, about 45 pages for a short run (docs/benchmarks.md, "ninth session"). Syncing them here, from the thread
 * pool while the person reads the card, leaves the allow's sync one commit's pages.
 *
 * Only ever adds durability: SQLite still syncs every commit that lets a call run, through its own descriptor, and a
 * failed write-out is reported to that descriptor as well (Linux tells every open file of an inode of a write error
 * that came after it was opened), so a failure here is left to it and nothing is lost by ignoring it.
 */
export class WalSyncAhead {
  private fd: number | undefined;
  private syncing = false;
  private idle: (() => void)[] = [];
  private again = false;
  private closed = false;

  constructor(private readonly walFile: string) {}

  /** Starts a write-out of the log, or one more after the one going: at most one runs at a time. */
  request(): void {
    if (this.closed) return;
    if (this.syncing) {
      this.again = true;
      return;
    }
    this.start();
  }

  /** Resolves once no write-out is going or asked for. */
  whenIdle(): Promise<void> {
    if (!this.syncing) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** No more write-outs; the descriptor closes now, or once the one going has finished (it may still be using it). */
  close(): void {
    this.closed = true;
    if (!this.syncing) this.release();
  }

  private start(): void {
    const fd = this.open();
    if (fd === undefined) return;
    this.syncing = true;
    fdatasync(fd, () => {
      this.syncing = false;
      if (this.closed) this.release();
      else if (this.again) {
        this.again = false;
        this.start();
      }
      if (!this.syncing) for (const resolve of this.idle.splice(0)) resolve();
    });
  }

  /**
   * Read-only is enough: a sync writes out the file's pages whichever descriptor asks. Opened on first use, as the log
   * is made by the first write after the database is opened; kept, as SQLite keeps the same file while the database is
   * open (a checkpoint writes it again from its start, it does not replace it).
   */
  private open(): number | undefined {
    if (this.fd === undefined) {
      try {
        this.fd = openSync(this.walFile, 'r');
      } catch {
        // No log yet, or none that can be read: nothing to write ahead; SQLite's own sync does all of it.
      }
    }
    return this.fd;
  }

  private release(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}
