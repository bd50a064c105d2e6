import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { GroupedCommits } from './grouped-commits';

/** A database of one table of unique numbers, with the group's transactions counted. */
function numbers() {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (n INTEGER UNIQUE NOT NULL)');
  const insert = db.prepare<[number]>('INSERT INTO t (n) VALUES (?)');
  // As the store's commits are: each its own transaction, a savepoint inside the group's.
  const add = db.transaction((n: number) => insert.run(n));
  const together = db.transaction((body: () => void) => body());
  const transactions = { count: 0, failCommit: false };
  const grouped = new GroupedCommits({
    inOneTransaction: (body) => {
      transactions.count += 1;
      together.immediate(() => {
        body();
        // A COMMIT that fails (as one whose sync fails does) rolls the whole transaction back.
        if (transactions.failCommit) throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_FSYNC' });
      });
    },
    inTransaction: () => db.inTransaction,
  });
  const stored = () => db.prepare<[], { n: number }>('SELECT n FROM t ORDER BY rowid').all().map(({ n }) => n);
  return { db, insert, add, grouped, transactions, stored };
}

/** What each promise came to: 'stored', or its error's message. */
const outcomes = (promises: Promise<void>[]) => Promise.all(promises.map((promise) => promise.then(() => 'stored', (error: Error) => error.message)));

describe('GroupedCommits', () => {
  it('makes the commits asked for in one turn of the event loop at its end, in one transaction, in the order asked', async () => {
    const { add, grouped, transactions, stored } = numbers();
    const asked = [3, 1, 2].map((n) => grouped.add(() => add.immediate(n)));
    expect(stored()).toStrictEqual([]);
    expect(await outcomes(asked)).toStrictEqual(['stored', 'stored', 'stored']);
    expect(stored()).toStrictEqual([3, 1, 2]);
    expect(transactions.count).toBe(1);
    // The next turn's: a transaction of their own.
    await Promise.all([4, 5].map((n) => grouped.add(() => add.immediate(n))));
    expect(transactions.count).toBe(2);
  });

  it('makes one asked for alone as its own transaction, not inside another', async () => {
    const { add, grouped, transactions, stored } = numbers();
    await grouped.add(() => add.immediate(7));
    expect(stored()).toStrictEqual([7]);
    expect(transactions.count).toBe(0);
  });

  it('rejects a commit that fails, alone: it is rolled back, and the others are stored', async () => {
    const { add, grouped, stored } = numbers();
    const asked = [1, 2, 1, 3].map((n) => grouped.add(() => add.immediate(n)));
    expect(await outcomes(asked)).toStrictEqual(['stored', 'stored', 'UNIQUE constraint failed: t.n', 'stored']);
    expect(stored()).toStrictEqual([1, 2, 3]);
  });

  it('rejects every commit when the transaction fails to commit (its sync failed): none is stored', async () => {
    const { add, grouped, transactions, stored } = numbers();
    transactions.failCommit = true;
    const asked = [1, 2, 2].map((n) => grouped.add(() => add.immediate(n)));
    // The one that failed by itself keeps its own error.
    expect(await outcomes(asked)).toStrictEqual(['disk I/O error', 'disk I/O error', 'UNIQUE constraint failed: t.n']);
    expect(stored()).toStrictEqual([]);
  });

  it('stops at a commit whose failure rolled the whole transaction back: those before it are undone, those after it never run alone', async () => {
    const { db, add, grouped, stored } = numbers();
    const ended = () => {
      add.immediate(2);
      // As SQLite does by itself on a full disk or an I/O error.
      db.exec('ROLLBACK');
      throw new Error('database or disk is full');
    };
    const asked = [grouped.add(() => add.immediate(1)), grouped.add(ended), grouped.add(() => add.immediate(3))];
    expect(await outcomes(asked)).toStrictEqual(['database or disk is full', 'database or disk is full', 'database or disk is full']);
    expect(stored()).toStrictEqual([]);
    expect(db.inTransaction).toBe(false);
  });

  it('flush() makes the commits asked for so far at once (the store closes), and the turn\'s end finds nothing more', async () => {
    const { add, grouped, stored, transactions } = numbers();
    const asked = [1, 2].map((n) => grouped.add(() => add.immediate(n)));
    grouped.flush();
    expect(stored()).toStrictEqual([1, 2]);
    expect(await outcomes(asked)).toStrictEqual(['stored', 'stored']);
    expect(transactions.count).toBe(1);
  });
});
