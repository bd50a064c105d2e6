import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { probeTestDatabase, TEST_DATABASE_URL, terminateBackend } from '../../../test/support/postgres';
import { inTransaction } from './migrate';

const postgres = await probeTestDatabase();

describe.skipIf(!postgres.available)('inTransaction', () => {
  it('fails, and the process goes on, when the connection it holds is lost in the middle (the pool does not hear it then); the next transaction gets a new connection', async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
    pool.on('error', () => {});
    try {
      const lost = inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        expect(await terminateBackend(rows[0]!.pid)).toBe(true);
        await client.query('SELECT 1');
      });
      await expect(lost).rejects.toThrow(/terminat|connection error/);
      expect(await inTransaction(pool, async (client) => (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one)).toBe(1);
    } finally {
      await pool.end();
    }
  });
});
