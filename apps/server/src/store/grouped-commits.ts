/**
 * Commits that must be synced to the disk before they answer (an allow with its call's start), made together: those
 * asked for in one turn of the event loop are written in one transaction, at the end of that turn, so they share one
 * sync rather than take one each.
 *
 * Each is a savepoint of that transaction: one that fails (a constraint, a run refused) is rolled back and rejected
 * alone, and the others go on. The transaction's commit is SQLite's own synced commit: if its sync fails, SQLite fails
 * the commit and none of them is stored, so each is rejected, as each would have been alone (and the store's
 * SyncedCommits keeps the failed commit's frames from coming back after a crash). A sync held the event
 * loop 0.3–1.3 ms here (docs/benchmarks.md, "Store"): with many decisions arriving at once (a drain, many people),
 * that was paid once per allow.
 */
export class GroupedCommits {
  private queue: Queued[] = [];
  private scheduled = false;

  constructor(private readonly database: GroupDatabase) {}

  /** Makes `commit` at the end of this turn of the event loop, with the others asked for in it; resolves once synced. */
  add(commit: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ commit, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  /** Makes the commits asked for so far, now (the store closes). */
  flush(): void {
    this.scheduled = false;
    const group = this.queue.splice(0);
    if (group.length === 0) return;
    if (group.length === 1) {
      const [only] = group as [Queued];
      try {
        only.commit();
      } catch (error) {
        only.reject(error);
        return;
      }
      only.resolve();
      return;
    }
    const failures = new Map<Queued, unknown>();
    try {
      this.database.inOneTransaction(() => {
        for (const queued of group) {
          try {
            queued.commit();
          } catch (error) {
            // Some errors (a full disk, an I/O error) make SQLite roll the whole transaction back: the others
            // already made are undone with it, and the rest must not run outside it, each as its own transaction.
            if (!this.database.inTransaction()) throw error;
            failures.set(queued, error);
          }
        }
      });
    } catch (error) {
      for (const queued of group) queued.reject(failures.get(queued) ?? error);
      return;
    }
    for (const queued of group) {
      if (failures.has(queued)) queued.reject(failures.get(queued));
      else queued.resolve();
    }
  }
}

/** What the commits are made in. */
export interface GroupDatabase {
  /**
   * Runs `body` in one synced transaction, in which each commit given to `add` runs as a savepoint (better-sqlite3
   * makes a transaction function called inside another a savepoint).
   */
  inOneTransaction(body: () => void): void;
  /** Whether that transaction is still open (SQLite rolls it back by itself on some errors). */
  inTransaction(): boolean;
}

interface Queued {
  commit: () => void;
  resolve: () => void;
  reject: (error: unknown) => void;
}
