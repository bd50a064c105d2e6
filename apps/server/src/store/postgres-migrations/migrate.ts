import { DatabaseError, escapeIdentifier, type Pool, type PoolClient } from 'pg';
import type { Migration } from '../migrations';
import { schemaMismatch, StoreError } from '../store-error';

export interface MigratePostgresOptions {
  /** The schema to bring up to date, created when missing. */
  schema: string;
  /** Where the database is, named in errors. */
  location: string;
  /** Every migration this code knows, oldest first. */
  migrations: readonly Migration[];
  /** Recorded as each migration's `applied_at`. */
  now: number;
}

/**
 * Brings `schema` up to the last of `migrations`, all pending ones in one transaction, each recorded in
 * `schema_migrations`. The transaction holds an advisory lock named after the schema, so instances starting together
 * apply them once, one after the other. A schema at a version this code does not know is refused untouched.
 */
export async function migratePostgres(pool: Pool, { schema, location, migrations, now }: MigratePostgresOptions): Promise<void> {
  const latest = migrations.at(-1)?.version ?? 0;
  const quoted = escapeIdentifier(schema);
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`airlock migrations of ${schema}`]);
    // Looked up first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege on the database even when it exists.
    const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (rowCount === 0) await client.query(`CREATE SCHEMA ${quoted}`);
    await client.query(`SET LOCAL search_path TO ${quoted}`);
    const tables = await client.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name", [schema]);
    if (tables.rows.length > 0 && !tables.rows.some((table) => table.name === 'schema_migrations')) {
      const named = tables.rows.slice(0, 3).map((table) => JSON.stringify(table.name)).join(', ');
      throw new StoreError(location, 'not-airlock', `schema ${schema} is not Airlock's: it holds tables (${named}) and no record of Airlock's schema`);
    }
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)');
    const { rows } = await client.query<{ current: number | null }>('SELECT max(version) AS current FROM schema_migrations');
    const at = rows[0]?.current ?? 0;
    if (at > latest) throw new StoreError(location, 'newer-schema', `its schema is at version ${at}, this Airlock knows versions up to ${latest}`);
    for (const migration of migrations) {
      if (migration.version <= at) continue;
      try {
        await client.query(migration.sql);
      } catch (error) {
        // Class 42, syntax error or access rule violation: a column or table there already (42701, 42P07), one missing (42703, 42P01).
        throw error instanceof DatabaseError && error.code?.startsWith('42') === true ? schemaMismatch(location, migration, error) : error;
      }
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, now]);
    }
  });
}

/**
 * Runs `work` on one pooled connection between BEGIN and COMMIT; a throw rolls it back and rethrows. A connection
 * whose ROLLBACK fails too is dropped from the pool rather than handed to the next caller mid-transaction. A
 * connection lost while checked out fails its query in flight, and emits 'error' on the client too, which the pool
 * listens for only while the client is idle: unheard, that event ended the process (a server whose database went
 * out of reach during a transaction crashed). It is heard here, and the connection dropped.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  const lost = () => {
    broken = true;
  };
  client.on('error', lost);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.off('error', lost);
    client.release(broken);
  }
}
