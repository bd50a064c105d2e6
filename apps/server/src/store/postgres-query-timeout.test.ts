import { StoreUnavailableError } from '@airlock/api';
import { describe, expect, it } from 'vitest';
import { openTestDatabase, probeTestDatabase, TEST_DATABASE_URL } from '../../test/support/postgres';
import { startStallingProxy } from '../../test/support/stalling-proxy';
import { PostgresStore } from './postgres-store';
import { session } from './test-support';

const postgres = await probeTestDatabase();

describe.skipIf(!postgres.available)('PostgresStore on a network path that dies without closing', { timeout: 30_000 }, () => {
  it('fails a query the database no longer answers within the query timeout, as a lost connection, and the next query goes through a new connection', async () => {
    await using database = await openTestDatabase();
    await using proxy = await startStallingProxy();
    const target = new URL(TEST_DATABASE_URL);
    proxy.forwardTo(`http://${target.hostname}:${target.port || '5432'}`);
    const throughProxy = new URL(TEST_DATABASE_URL);
    throughProxy.hostname = '127.0.0.1';
    throughProxy.port = String(proxy.port);
    const store = await PostgresStore.open({ url: throughProxy.href, schema: database.schema, instanceId: 'a', log: () => {}, queryTimeoutMs: 1_000, maxConnections: 1 });
    try {
      await store.createSession(session('before'));

      proxy.stall();
      const failed = await store.listSessions().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failed).toBeInstanceOf(StoreUnavailableError);
      expect((failed as StoreUnavailableError).reason).toBe('connection-lost');
      expect((failed as Error).message).toContain('did not answer within 1000 ms');

      await store.createSession(session('after'));
      expect((await store.listSessions()).map((s) => s.sessionId).sort()).toStrictEqual(['after', 'before']);

      // A transaction's statement: its ROLLBACK does not wait behind it on the dead path, and the one connection is free again.
      proxy.stall();
      await expect(store.deleteSession('after')).rejects.toThrow(/^Airlock lost its connection to the database .*did not answer within 1000 ms/);
      expect((await store.listSessions()).map((s) => s.sessionId).sort()).toStrictEqual(['after', 'before']);
    } finally {
      proxy.release();
      await store.close();
    }
  });
});
