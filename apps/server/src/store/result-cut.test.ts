import type { LedgerChange } from '@airlock/api';
import type { LoopEvent, ResultCut } from '@airlock/core';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, probeTestDatabase } from '../../test/support/postgres';
import { migrations } from './migrations';
import { postgresMigrations } from './postgres-migrations';
import { PostgresStore } from './postgres-store';
import { DATABASE_FILE, SqliteStore } from './sqlite-store';
import { storeImplementations } from './store-implementations';
import { appendAll, insertOldCall, insertOldPostgresCall, openWithRun, postgresSchemaAt, postgresSchemaVersions, run, session, sqliteDatabaseAt, startChange, tempFolder } from './test-support';

const quiet = { log: () => {} };
const implementations = await storeImplementations();
const postgres = await probeTestDatabase();

const ended = (toolCallId: string, cut?: ResultCut): LedgerChange => ({
  kind: 'end',
  toolCallId,
  outcome: 'executed',
  result: `output of ${toolCallId}`,
  ...(cut === undefined ? {} : { cut }),
  endedAt: 10_900,
});

describe.each(implementations)('the ledger keeps what was cut from a result: $name', ({ open, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('reads back each call’s cut as its tool-end reported it, and null for a call whose result went whole', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    await appendAll(store, { runId: 'r', sessionId: 's' }, [
      startChange('call-1', 10_000),
      ended('call-1', { bytes: 3_000_000_000, characters: 48_213 }),
      startChange('call-2', 10_100),
      ended('call-2', { characters: 12 }),
      startChange('call-3', 10_200),
      ended('call-3'),
    ]);
    const cuts = [{ bytes: 3_000_000_000, characters: 48_213 }, { characters: 12 }, null];
    expect((await store.listRunToolCalls('r')).map((call) => call.cut)).toStrictEqual(cuts);
    expect((await store.listSessionToolCalls('s')).map((call) => call.cut)).toStrictEqual(cuts);
    expect((await store.listAudit({ sessionId: 's' })).entries.map((entry) => entry.cut)).toStrictEqual(cuts.toReversed());
  });

  it('keeps the cut on the stored tool-end event, which a reloaded run replays', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    const end: LoopEvent = { type: 'tool-end', toolCallId: 'call-1', toolName: 'terminal', outcome: 'executed', result: 'head\ntail', cut: { bytes: 9000 } };
    await appendAll(store, { runId: 'r', sessionId: 's' }, [startChange('call-1', 10_000)]);
    await store.appendEvent({ runId: 'r', sessionId: 's', seq: 2, event: end, at: 10_900, ledger: ended('call-1', { bytes: 9000 }) });
    expect(await store.loadEvents('r', 1)).toStrictEqual([end]);
    expect((await store.listRunToolCalls('r'))[0]?.cut).toStrictEqual({ bytes: 9000 });
  });
});

describe('SQLite migration 005 (cut_bytes, cut_characters)', () => {
  it('adds the columns to a database at version 4, keeping its ledger rows, which read as not cut', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    // The schema as version 4 left it, with an ended ledger row written then (its result holds a marker, as they did).
    sqliteDatabaseAt(file, 4, (old) => insertOldCall(old, { outcome: 'executed', result: 'head\n[… 9000 bytes omitted …]\ntail', ended_at: 10_900 }));

    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    expect((await store.listRunToolCalls('r')).map((call) => [call.toolCallId, call.outcome, call.cut])).toStrictEqual([['call-1', 'executed', null]]);
    await store.createSession(session('s'));
    await store.createRun(run('r2', 's'));
    await appendAll(store, { runId: 'r2', sessionId: 's' }, [startChange('call-1', 11_000), ended('call-1', { bytes: 12 })]);
    expect((await store.listRunToolCalls('r2'))[0]?.cut).toStrictEqual({ bytes: 12 });
    await store.close();

    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare<[], number>('SELECT max(version) FROM schema_migrations').pluck().get()).toBe(migrations.length);
      expect(db.prepare('SELECT run_id, cut_bytes, cut_characters FROM tool_calls ORDER BY ledger_id').all()).toStrictEqual([
        { run_id: 'r', cut_bytes: null, cut_characters: null },
        { run_id: 'r2', cut_bytes: 12, cut_characters: null },
      ]);
    } finally {
      db.close();
    }
  });
});

describe.skipIf(!postgres.available)(postgres.available ? 'PostgreSQL migration 002 (cut_bytes, cut_characters)' : `PostgreSQL migration 002 (skipped: ${postgres.reason})`, () => {
  it('adds the columns to a schema at version 1, keeping its ledger rows, which read as not cut', async () => {
    await using database = await openTestDatabase();
    await postgresSchemaAt(database, 1);
    await insertOldPostgresCall(database.schema, { outcome: 'executed', result: 'head', ended_at: 10_900 });

    const store = await PostgresStore.open({ url: database.url, schema: database.schema, ...quiet });
    try {
      expect((await store.listRunToolCalls('r')).map((call) => [call.toolCallId, call.outcome, call.cut])).toStrictEqual([['call-1', 'executed', null]]);
    } finally {
      await store.close();
    }
    expect(await postgresSchemaVersions(database.schema)).toStrictEqual(postgresMigrations.map(({ version }) => ({ version })));
  });
});
