import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SyncedCommits } from './synced-commits';
import { tempFolder } from './test-support';

/** A database in WAL mode as the store opens it, with a table of numbers, and the size of its log. */
async function database() {
  const folder = await tempFolder();
  const file = join(folder.path, 'test.db');
  const db = new Database(file);
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (n INTEGER UNIQUE NOT NULL)');
  const insert = db.prepare<[number]>('INSERT INTO t (n) VALUES (?)');
  const stored = () => db.prepare<[], { n: number }>('SELECT n FROM t ORDER BY n').all().map(({ n }) => n);
  const log = () => statSync(`${file}-wal`).size;
  return {
    db,
    insert,
    stored,
    log,
    async [Symbol.asyncDispose]() {
      db.close();
      await folder[Symbol.asyncDispose]();
    },
  };
}

/** What SQLite throws when the sync of a commit fails. */
const failedSync = () => new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_FSYNC');

describe('SyncedCommits', () => {
  it('after a commit SQLite failed with an I/O error, writes over the log and empties it before the error is thrown', async () => {
    await using d = await database();
    const synced = new SyncedCommits(d.db);
    synced.run(() => d.insert.run(1));
    expect(d.log()).toBeGreaterThan(0);
    expect(() =>
      synced.run(() => {
        throw failedSync();
      }),
    ).toThrow('disk I/O error');
    expect(d.log()).toBe(0);
    expect(d.stored()).toStrictEqual([1]);
  });

  it('leaves the log as it is after a constraint or an error of its own: neither comes after the commit wrote anything', async () => {
    await using d = await database();
    const synced = new SyncedCommits(d.db);
    synced.run(() => d.insert.run(1));
    const log = d.log();
    expect(() => synced.run(() => d.insert.run(1))).toThrow('UNIQUE');
    expect(() =>
      synced.run(() => {
        throw new Error('refused');
      }),
    ).toThrow('refused');
    expect(d.log()).toBe(log);
  });

  it('inside a transaction only runs the commit: the transaction’s own commit is the synced one', async () => {
    await using d = await database();
    const synced = new SyncedCommits(d.db);
    synced.run(() => d.insert.run(1));
    const log = d.log();
    const together = d.db.transaction(() => {
      expect(() =>
        synced.run(() => {
          throw failedSync();
        }),
      ).toThrow('disk I/O error');
      d.insert.run(2);
    });
    together();
    expect(d.stored()).toStrictEqual([1, 2]);
    expect(d.log()).toBeGreaterThan(log);
  });

  it('while the repair fails too, refuses every write with its error, trying it again first; once it succeeds, writes go on', async () => {
    await using d = await database();
    const synced = new SyncedCommits(d.db);
    synced.run(() => d.insert.run(1));
    // The repair's write refused, as a disk that fails every write would.
    d.db.pragma('query_only = ON');
    expect(() =>
      synced.run(() => {
        throw failedSync();
      }),
    ).toThrow('disk I/O error');
    expect(() => synced.run(() => d.insert.run(2))).toThrow('readonly');
    expect(() => synced.beforeWrite()).toThrow('readonly');
    d.db.pragma('query_only = OFF');
    synced.run(() => d.insert.run(3));
    synced.beforeWrite();
    expect(d.stored()).toStrictEqual([1, 3]);
  });
});
