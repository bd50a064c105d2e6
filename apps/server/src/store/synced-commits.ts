import Database from 'better-sqlite3';

/**
 * Makes the store's synced commits, and keeps one that SQLite failed from coming back after a crash.
 *
 * SQLite writes a commit's frames to the write-ahead log, then syncs the log; when the sync fails (EIO from fdatasync)
 * it fails the commit and leaves the frames where they are, uncounted: this process does not read them, and its next
 * commit is written over them. But SQLite's recovery at the next open counts every frame that chains on from the one
 * before, up to the last that ends a commit, and the failed commit's frames do. A crash before the next write brought
 * the commit back: an allow the person was told could not be stored read as stored and started, the call reported
 * interrupted, and a rule or grant refused so would have let calls run unasked.
 *
 * So a synced commit that SQLite fails is followed at once, before it answers, by a repair (see `repair`). While the
 * repair has not succeeded (the disk fails it too), every write first tries it again and is refused with its error:
 * the store takes writes again once the disk does.
 */
export class SyncedCommits {
  private unrepaired = false;

  constructor(private readonly db: Database.Database) {}

  /**
   * Makes `commit`, one synced transaction or statement (the connection's `synchronous = FULL`), and throws what it
   * throws. Inside a transaction (a savepoint of a group's) it is only run: the group's commit is the synced one.
   */
  run<T>(commit: () => T): T {
    if (this.db.inTransaction) return commit();
    this.beforeWrite();
    try {
      return commit();
    } catch (error) {
      if (mayHaveWrittenItsFrames(error)) {
        try {
          this.repair();
        } catch {
          // The next write tries again (beforeWrite); the commit's own error is the answer.
        }
      }
      throw error;
    }
  }

  /** Before any write: throws while the repair of a failed commit has not succeeded, after trying it once more. */
  beforeWrite(): void {
    if (this.unrepaired) this.repair();
  }

  /**
   * First a commit that changes nothing (the database's user_version, which the store does not use, set to what it
   * is), synced. SQLite writes a commit from the end of the last one that succeeded, so its frame replaces the failed
   * commit's first, and the failed commit's other frames no longer chain on (each frame's checksum runs on from the one
   * before it): recovery stops at this one, which changes nothing. Its write is what keeps a crash of this process
   * from bringing the failed commit back. It is made without a sync (`synchronous = OFF`): a log SQLite started over
   * after a checkpoint keeps its salts for the commit after, and under FULL that commit syncs the log's header before
   * it writes its frame, so a sync that failed there too left the failed commit's frames whole (found in review). Its
   * write alone is what counts; the checkpoint after syncs the log. A write the disk refuses leaves the failed frames
   * in place: nothing written can help then, and the store refuses writes until the repair succeeds.
   *
   * Then the log is copied into the database file and emptied (`wal_checkpoint(TRUNCATE)`): the failed write-out may
   * have been of earlier commits' frames too, those not synced on their own, and Linux (on most file systems) reports
   * a failed write-out once and does not try those pages again, so a later sync that succeeds would not write them,
   * and the log on the disk would break off before every commit after them, synced ones included. The checkpoint
   * writes every commit's pages into the database file, and syncs it. The checkpoint alone would not do: its first
   * step syncs the log, and when that fails it stops, the failed frames still in place.
   */
  private repair(): void {
    this.unrepaired = true;
    const version = Number(this.db.pragma('user_version', { simple: true }));
    this.db.exec('PRAGMA synchronous = OFF');
    try {
      this.db.exec(`PRAGMA user_version = ${version}`);
    } finally {
      this.db.exec('PRAGMA synchronous = FULL');
    }
    const [checkpoint] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    // Not with this store's one connection: a read in progress would hold the log.
    if (checkpoint?.busy !== 0) throw new Error('the write-ahead log could not be checkpointed: a read holds it');
    this.unrepaired = false;
  }
}

/**
 * Whether the commit may have left a whole commit's frames in the log: SQLite failed it with an I/O error (the sync's
 * own is SQLITE_IOERR_FSYNC), or ran out of memory once they were written. A full disk fails the write of a frame, so
 * the commit's last frame, which marks it whole, is not all there; a constraint, or an error of the store's own, comes
 * before the commit writes anything.
 */
function mayHaveWrittenItsFrames(error: unknown): boolean {
  if (!(error instanceof Database.SqliteError)) return false;
  return error.code.startsWith('SQLITE_IOERR') || error.code === 'SQLITE_NOMEM';
}
