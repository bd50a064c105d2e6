import { randomBytes } from 'node:crypto';
import { Client, escapeIdentifier } from 'pg';

/** The PostgreSQL server the multi-instance tests use: `AIRLOCK_TEST_DATABASE_URL`, or a local one with trust auth. */
export const TEST_DATABASE_URL = process.env.AIRLOCK_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export type TestDatabaseProbe = { available: true } | { available: false; reason: string };

/**
 * Whether a PostgreSQL server answers at TEST_DATABASE_URL; tests are skipped (never passed) with `reason` when not.
 * Probed once per test file: `const postgres = await probeTestDatabase()` at module level.
 */
export async function probeTestDatabase(): Promise<TestDatabaseProbe> {
  try {
    await withClient(async (client) => {
      await client.query('SELECT 1');
    });
    return { available: true };
  } catch (error) {
    const reason = error instanceof AggregateError ? error.errors.map(String).join('; ') : error instanceof Error ? error.message || error.name : String(error);
    return { available: false, reason: `no PostgreSQL at ${redacted(TEST_DATABASE_URL)} (${reason}); set AIRLOCK_TEST_DATABASE_URL to run these tests` };
  }
}

export interface TestDatabase extends AsyncDisposable {
  url: string;
  /** A fresh schema of its own, dropped with everything in it on dispose. */
  schema: string;
}

/** A fresh schema `t_<random>` in the test database, for one test. */
export async function openTestDatabase(): Promise<TestDatabase> {
  const schema = `t_${randomBytes(8).toString('hex')}`;
  await withClient(async (client) => {
    await client.query(`CREATE SCHEMA ${escapeIdentifier(schema)}`);
  });
  return {
    url: TEST_DATABASE_URL,
    schema,
    [Symbol.asyncDispose]: () =>
      withClient(async (client) => {
        await client.query(`DROP SCHEMA IF EXISTS ${escapeIdentifier(schema)} CASCADE`);
      }),
  };
}

/** Runs `work` on a connection of its own to the test database (for a test that looks at rows directly). */
export async function withClient<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'AIRLOCK_TEST_DATABASE_URL';
  }
}

/** The backend holding the advisory lock of an instance id in `schema` (the connection PostgresStore keeps for it), if any. */
export async function instanceLockHolder(schema: string, instanceId: string): Promise<number | undefined> {
  return withClient(async (client) => {
    const { rows } = await client.query<{ pid: number }>(
      `WITH k AS (SELECT hashtextextended($1, 0) AS key)
       SELECT l.pid FROM pg_locks l, k
       WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid = ((k.key >> 32) & 4294967295)::oid AND l.objid = (k.key & 4294967295)::oid`,
      [`airlock instance ${instanceId} of ${schema}`],
    );
    return rows[0]?.pid;
  });
}

/** Ends a backend as `pg_terminate_backend` does (an administrator, an idle timeout): answers whether it was there. */
export async function terminateBackend(pid: number): Promise<boolean> {
  return withClient(async (client) => (await client.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid])).rows[0]?.ok === true);
}
