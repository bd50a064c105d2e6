import SQLite, { type Database } from 'better-sqlite3';
import type { Migration } from './migrations';
import { schemaMismatch, StoreError } from './store-error';

/**
 * Brings the schema up to the last of `migrations`, all pending ones in one transaction, each recorded in
 * `schema_migrations`. A database at a version this code does not know is refused untouched.
 */
export interface MigrateOptions {
  /** The database's path, named in errors. */
  file: string;
  /** Every migration this code knows, oldest first. */
  migrations: readonly Migration[];
  /** Recorded as each migration's `applied_at`. */
  now: number;
}

export function migrate(db: Database, { file, migrations, now }: MigrateOptions): void {
  const latest = migrations.at(-1)?.version ?? 0;
  db.transaction(() => {
    // Tables and no record of migrations: another program's database (or a WAL from one), not a new one to set up.
    const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all();
    if (tables.length > 0 && !tables.some((table) => table.name === 'schema_migrations')) {
      throw new StoreError(file, 'not-airlock', `is not an Airlock database: it holds tables (${tables.slice(0, 3).map((table) => JSON.stringify(table.name)).join(', ')}) and no record of Airlock's schema`);
    }
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
    const { current } = db.prepare<[], { current: number | null }>('SELECT max(version) AS current FROM schema_migrations').get() ?? { current: null };
    const at = current ?? 0;
    if (at > latest) throw new StoreError(file, 'newer-schema', `its schema is at version ${at}, this Airlock knows versions up to ${latest}`);
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of migrations) {
      if (migration.version <= at) continue;
      try {
        db.exec(migration.sql);
      } catch (error) {
        throw migrationFailure(file, migration, error);
      }
      record.run(migration.version, migration.name, now);
    }
  }).immediate();
}

/** A migration SQLite refused with an SQL error is a schema that does not match its record (schemaMismatch); any other error (the disk's, a lock) is left to the caller. */
function migrationFailure(file: string, migration: Migration, error: unknown): unknown {
  return error instanceof SQLite.SqliteError && error.code === 'SQLITE_ERROR' ? schemaMismatch(file, migration, error) : error;
}
