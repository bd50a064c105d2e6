import { FencedError, type AppendEventInput } from '@airlock/api';
import { Client } from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { openTestDatabase, probeTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../../test/support/postgres';
import { PostgresStore } from './postgres-store';
import { run, session, startChange, statusEvent } from './test-support';

const postgres = await probeTestDatabase();

/** A connection of its own that holds one row locked (FOR UPDATE), as a slow transaction would, until `release()`. */
async function holdRow(database: TestDatabase, table: 'sessions' | 'runs', key: string): Promise<{ pid: number; release: () => Promise<void> } & AsyncDisposable> {
  const client = new Client({ connectionString: TEST_DATABASE_URL });
  client.on('error', () => {});
  await client.connect();
  const [row] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
  await client.query('BEGIN');
  await client.query(`SELECT 1 FROM "${database.schema}".${table} WHERE ${table === 'sessions' ? 'session_id' : 'run_id'} = $1 FOR UPDATE`, [key]);
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await client.query('COMMIT');
  };
  return { pid: row!.pid, release, [Symbol.asyncDispose]: () => release().finally(() => client.end()) };
}

/** The chat's row held, as a slow transaction would. */
const holdChatRow = (database: TestDatabase, sessionId: string) => holdRow(database, 'sessions', sessionId);
/** The run's row held, as a slow transaction would. */
const holdRunRow = (database: TestDatabase, runId: string) => holdRow(database, 'runs', runId);

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
    const deleting = await blockedBy([held.pid], 'SELECT 1 FROM sessions');
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
  it('a call let through by a grant, a chat rule and confirmation off, written as its chat is deleted, takes the run first too: the write waits behind the deletion and is fenced, no deadlock', async () => {
    await using database = await openTestDatabase();
    const store = await PostgresStore.open({ url: database.url, schema: database.schema, instanceId: 'a', log: () => {} });
    await using _store = { [Symbol.asyncDispose]: () => store.close() };
    await store.createSession(session('s', 1_000, { confirmToolCalls: false }));
    await store.createRun(run('r', 's'), 'a');
    await store.saveGrant({ grantId: 'g', scope: 'session', sessionId: 's', toolName: 'terminal', arguments: null, toolVersion: 'v1', createdAt: 1_000 });
    await store.saveRule({ id: 'rule-chat', effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['ls'], exact: false }, source: 'user', scope: { kind: 'chat', sessionId: 's' }, createdAt: '2026-12-01T00:00:00.000Z' });
    const policyVersion = await store.policyVersion();
    // The deletion takes the run's row first and goes on to the grants, the chat's rules (raising the policy version)
    // and the chat, every row the call's check share-locks: had the write taken one of those before the run's, each
    // would wait for the other. Both wait here for the run's row, the deletion first in line.
    await using held = await holdRunRow(database, 'r');
    const deleted = store.deleteSession('s');
    const deleting = await blockedBy([held.pid], 'SELECT 1 FROM runs');
    const unasked = { toolCallId: 'call-1', policyVersion, grantId: 'g', confirmationOff: true };
    const base = { runId: 'r', sessionId: 's', fence: 1 };
    const burst: AppendEventInput[] = [
      { ...base, seq: 1, event: statusEvent('the call starts'), at: 1, ledger: { ...startChange('call-1', 10_000), approvalId: '', expiresAt: null } },
      { ...base, seq: 2, event: statusEvent('allowed by the grant'), at: 2, ledger: { kind: 'decision', toolCallId: 'call-1', decision: 'allow', source: 'grant', decidedByGrant: 'g', decidedAt: 2 }, unasked },
      { ...base, seq: 3, event: statusEvent('running'), at: 3, ledger: { kind: 'running', toolCallId: 'call-1', startedAt: 3 }, unasked },
    ];
    const written = store.appendEvents(burst);
    await blockedBy([held.pid, deleting], 'WITH inserted');
    await held.release();

    const [deletion, write] = await Promise.allSettled([deleted, written]);
    expect(deletion).toStrictEqual({ status: 'fulfilled', value: undefined });
    expect(write.status === 'rejected' ? write.reason : write).toBeInstanceOf(FencedError);
    expect(await store.getSession('s')).toBeUndefined();
    expect(await store.listRunToolCalls('r')).toStrictEqual([]);
    expect(await store.listGrants()).toStrictEqual([]);
  });
});
