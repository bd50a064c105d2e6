import Database from 'better-sqlite3';
import { join } from 'node:path';
import { DATABASE_FILE } from '../../src/store/sqlite-store';

/** Runs `sql` on the database in a server's data folder, as a test that damages a stored row does; the rows it changed. */
export function writeDatabase(dataDir: string, sql: string): number {
  const db = new Database(join(dataDir, DATABASE_FILE));
  try {
    return db.prepare(sql).run().changes;
  } finally {
    db.close();
  }
}
