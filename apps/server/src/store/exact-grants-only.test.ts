import type { AirlockStore } from '@airlock/api';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, probeTestDatabase } from '../../test/support/postgres';
import { postgresMigrations } from './postgres-migrations';
import { PostgresStore } from './postgres-store';
import { DATABASE_FILE, SqliteStore } from './sqlite-store';
import { storeImplementations } from './store-implementations';
import { appendAll, insertOldCall, insertOldPostgresCall, openWithRun, postgresSchemaAt, postgresSchemaVersions, run, session, sqliteDatabaseAt, startChange, statusEvent, tempFolder } from './test-support';

// A waiting call a deny rule could not tell from one it denies may be released only by a grant for its exact
// arguments: the ledger keeps that, so the call restored after a restart (or by the instance taking its run over)
// keeps it too.

const quiet = { log: () => {} };
const implementations = await storeImplementations();
const postgres = await probeTestDatabase();

describe.each(implementations)('the ledger keeps which calls only an exact grant may release: $name', ({ open, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('reads back each call’s own, written one at a time or several in one write, through its decision', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    await appendAll(store, { runId: 'r', sessionId: 's' }, [{ ...startChange('call-1', 10_000), exactGrantsOnly: true }, startChange('call-2', 10_100)]);
    const starts = [startChange('call-3', 10_200), { ...startChange('call-4', 10_200), exactGrantsOnly: true }];
    await store.appendEvents(starts.map((ledger, index) => ({ runId: 'r', sessionId: 's', seq: index + 3, event: statusEvent(`event ${index + 3}`), at: 10_200, ledger })));
    await appendAll(store, { runId: 'r', sessionId: 's' }, [{ kind: 'decision', toolCallId: 'call-1', decision: 'allow', source: 'user', decidedAt: 10_500 }], 5);
    expect((await store.listRunToolCalls('r')).map((call) => [call.toolCallId, call.exactGrantsOnly, call.decision])).toStrictEqual([
      ['call-1', true, 'allow'],
      ['call-2', false, null],
      ['call-3', false, null],
      ['call-4', true, null],
    ]);
    expect((await store.listSessionToolCalls('s')).map((call) => call.exactGrantsOnly)).toStrictEqual([true, false, false, true]);
  });

  it('marks a call still undecided when a rule changed while it waited, and leaves a decided one as it was', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    await appendAll(store, { runId: 'r', sessionId: 's' }, [startChange('call-1', 10_000), startChange('call-2', 10_100)]);
    await appendAll(store, { runId: 'r', sessionId: 's' }, [{ kind: 'decision', toolCallId: 'call-2', decision: 'deny', source: 'user', decidedAt: 10_500 }], 3);
    // Each answers whether the call's row is there, undecided: one whose start is not stored yet is written again.
    expect(await store.requireExactGrants('r', 'call-1')).toBe(true);
    expect(await store.requireExactGrants('r', 'call-1')).toBe(true);
    expect(await store.requireExactGrants('r', 'call-2')).toBe(false);
    expect(await store.requireExactGrants('r', 'no-such-call')).toBe(false);
    expect((await store.listRunToolCalls('r')).map((call) => [call.toolCallId, call.exactGrantsOnly])).toStrictEqual([
      ['call-1', true],
      ['call-2', false],
    ]);
  });
});

describe.each(implementations)('the ledger keeps why a deny rule asked about a call: $name', ({ open, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('reads back the rule and its reason, put up so or marked later, and only with exactGrantsOnly', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    const asked = (ruleId: string) => ({ ruleId, reason: [{ text: 'A deny rule applies: ' }, { quote: 'keys stay private' }] });
    await appendAll(store, { runId: 'r', sessionId: 's' }, [
      { ...startChange('call-1', 10_000), exactGrantsOnly: true, askedBecause: asked('rule_a') },
      { ...startChange('call-2', 10_100), askedBecause: asked('rule_b') },
      startChange('call-3', 10_200),
    ]);
    await store.requireExactGrants('r', 'call-3', asked('rule_c'));
    await store.requireExactGrants('r', 'call-1', asked('rule_later'));
    expect((await store.listRunToolCalls('r')).map((call) => [call.toolCallId, call.exactGrantsOnly, call.askedBecause?.ruleId ?? null])).toStrictEqual([
      ['call-1', true, 'rule_a'],
      ['call-2', false, null],
      ['call-3', true, 'rule_c'],
    ]);
    expect((await store.listRunToolCalls('r'))[0]!.askedBecause).toStrictEqual(asked('rule_a'));
  });
});

describe.skipIf(!postgres.available)(postgres.available ? 'PostgreSQL: the waiting list of every instance' : `PostgreSQL: the waiting list of every instance (skipped: ${postgres.reason})`, () => {
  it('marks the calls only an exact grant may release, so a list on any instance decides them only on their cards', async () => {
    await using database = await openTestDatabase();
    const store = await PostgresStore.open({ url: database.url, schema: database.schema, instanceId: 'a', ...quiet });
    try {
      await store.createSession(session('s'));
      await store.createRun(run('r', 's'), 'a');
      const waiting = (toolCallId: string, requestedAt: number) => ({ ...startChange(toolCallId, requestedAt), expiresAt: null });
      await appendAll(store, { runId: 'r', sessionId: 's', fence: 1 }, [{ ...waiting('call-1', 10_000), exactGrantsOnly: true }, waiting('call-2', 10_100)]);
      expect((await store.listPendingApprovals('s')).map((call) => [call.approvalId, call.exactGrantsOnly])).toStrictEqual([
        ['approval-call-1', true],
        ['approval-call-2', undefined],
      ]);
      expect((await store.getPendingApproval('s', 'approval-call-1'))?.exactGrantsOnly).toBe(true);
    } finally {
      await store.close();
    }
  });
});

/** After the migration: the row kept from before reads as any grant's, and a call put up now keeps its own. */
async function expectKeptFromNowOn(store: AirlockStore): Promise<void> {
  expect((await store.listRunToolCalls('r')).map((call) => [call.toolCallId, call.exactGrantsOnly])).toStrictEqual([['call-1', false]]);
  await store.createSession(session('s'));
  await store.createRun(run('r2', 's'));
  await appendAll(store, { runId: 'r2', sessionId: 's' }, [{ ...startChange('call-1', 11_000), exactGrantsOnly: true }]);
  expect((await store.listRunToolCalls('r2')).map((call) => call.exactGrantsOnly)).toStrictEqual([true]);
}

describe('SQLite migration 012 (exact_grants_only)', () => {
  it('adds the column to a database at version 11, keeping its ledger rows', async () => {
    await using folder = await tempFolder();
    sqliteDatabaseAt(join(folder.path, DATABASE_FILE), 11, (old) => insertOldCall(old));
    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    try {
      await expectKeptFromNowOn(store);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite migration 013 (asked_because)', () => {
  it('adds the column to a database at version 12, keeping its ledger rows', async () => {
    await using folder = await tempFolder();
    sqliteDatabaseAt(join(folder.path, DATABASE_FILE), 12, (old) => insertOldCall(old, { exact_grants_only: 1 }));
    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    try {
      expect((await store.listRunToolCalls('r')).map((call) => [call.toolCallId, call.exactGrantsOnly, call.askedBecause])).toStrictEqual([['call-1', true, null]]);
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(!postgres.available)(postgres.available ? 'PostgreSQL migration 010 (exact_grants_only)' : `PostgreSQL migration 010 (skipped: ${postgres.reason})`, () => {
  it('adds the column to a schema at version 9, keeping its ledger rows', async () => {
    await using database = await openTestDatabase();
    await postgresSchemaAt(database, 9);
    await insertOldPostgresCall(database.schema);
    const store = await PostgresStore.open({ url: database.url, schema: database.schema, ...quiet });
    try {
      await expectKeptFromNowOn(store);
    } finally {
      await store.close();
    }
    expect(await postgresSchemaVersions(database.schema)).toStrictEqual(postgresMigrations.map(({ version }) => ({ version })));
  });
});
