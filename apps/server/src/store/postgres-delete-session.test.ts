import { FencedError } from '@airlock/api';
import { Client } from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { openTestDatabase, probeTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../../test/support/postgres';
import { PostgresStore } from './postgres-store';
import { run, session, startChange, statusEvent } from './test-support';

const postgres = await probeTestDatabase();

/** A connection of its own that holds the chat's row locked, as a slow transaction would, until `release()`. */
async function holdChatRow(database: TestDatabase, sessionId: string): Promise<{ pid: number; release: () => Promise<void> } & AsyncDisposable> {
  const client = new Client({ connectionString: TEST_DATABASE_URL });
  client.on('error', () => {});
  await client.connect();
  const [row] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
  await client.query('BEGIN');
  await client.query(`SELECT 1 FROM "${database.schema}".sessions WHERE session_id = $1 FOR UPDATE`, [sessionId]);
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await client.query('COMMIT');
  };
  return { pid: row!.pid, release, [Symbol.asyncDispose]: () => release().finally(() => client.end()) };
}

/** The backend whose statement starts with `start` once it waits for a lock that one of `pids` holds or waits for first. */
async function blockedBy(pids: readonly number[], start: string): Promise<number> {
  const observer = new Client({ connectionString: TEST_DATABASE_URL });
  await observer.connect();
  try {
    return await vi.waitFor(
      async () => {
        const { rows } = await observer.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE ltrim(query) LIKE $1 AND pg_blocking_pids(pid) && $2::integer[]',
          [`${start}%`, pids],
        );
        expect(rows).toHaveLength(1);
        return rows[0]!.pid;
      },
      { timeout: 15_000, interval: 20 },
    );
  } finally {
    await observer.end();
  }
}

describe.skipIf(!postgres.available)('a chat deleted while a call of its run is written', () => {
  it('takes its locks in the order the write does (the run, then the chat): the write waits and is fenced, and neither fails as a deadlock', async () => {
    await using database = await openTestDatabase();
    const store = await PostgresStore.open({ url: database.url, schema: database.schema, instanceId: 'a', log: () => {} });
    await using _store = { [Symbol.asyncDispose]: () => store.close() };
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'), 'a');
    await using held = await holdChatRow(database, 's');

    // The deletion is first in line for the chat's row; the call's write (its start, with the model's message that
    // asked for it) then comes, as at the same moment on another instance.
    const deleted = store.deleteSession('s');
    const deleting = await blockedBy([held.pid], 'DELETE FROM sessions');
    const written = store.appendEvent({
      runId: 'r',
      sessionId: 's',
      seq: 1,
      event: statusEvent('the call starts'),
      at: 1,
      ledger: startChange('call-1', 10_000),
      messages: [{ role: 'assistant', content: '', toolCalls: [{ id: 'call-1', name: 'terminal', arguments: { command: 'echo call-1' } }] }],
      fence: 1,
    });
    await blockedBy([held.pid, deleting], 'WITH inserted');
    await held.release();

    const [deletion, write] = await Promise.allSettled([deleted, written]);
    expect(deletion).toStrictEqual({ status: 'fulfilled', value: undefined });
    expect(write.status === 'rejected' ? write.reason : write).toBeInstanceOf(FencedError);
    expect(await store.getSession('s')).toBeUndefined();
    expect(await store.listRunToolCalls('r')).toStrictEqual([]);
  });
});
