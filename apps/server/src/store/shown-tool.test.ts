import type { AirlockStore } from '@airlock/api';
import type { ShownTool } from '@airlock/core';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, probeTestDatabase } from '../../test/support/postgres';
import { migrations } from './migrations';
import { postgresMigrations } from './postgres-migrations';
import { PostgresStore } from './postgres-store';
import { DATABASE_FILE, SqliteStore } from './sqlite-store';
import { storeImplementations } from './store-implementations';
import { appendAll, insertOldCall, insertOldPostgresCall, openWithRun, postgresSchemaAt, postgresSchemaVersions, run, session, sqliteDatabaseAt, startChange, statusEvent, tempFolder } from './test-support';

const quiet = { log: () => {} };
const implementations = await storeImplementations();
const postgres = await probeTestDatabase();

const none = { readOnly: false, destructive: false, executesCode: false, exactGrants: false, idempotent: false, openWorld: false };
/** The tool as a call to it was put up: its MCP server said destructive then, whatever it says later. */
const destructive: ShownTool = { source: 'mcp:wx', annotations: { ...none, destructive: true } };
const readOnly: ShownTool = { source: 'builtin', annotations: { ...none, readOnly: true, idempotent: true } };

describe.each(implementations)('the ledger keeps the tool as its call was put up: $name', ({ open, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('reads back each call’s shown tool wherever its row is read, and null for a call whose tool was not offered', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    await appendAll(store, { runId: 'r', sessionId: 's' }, [
      { ...startChange('call-1', 10_000, 'wx__get_weather'), tool: destructive },
      { ...startChange('call-2', 10_100, 'read_file'), tool: readOnly },
      startChange('call-3', 10_200, 'no_such_tool'),
    ]);
    await store.appendMessage(
      's',
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'call-1', name: 'wx__get_weather', arguments: { command: 'echo call-1' } },
          { id: 'call-2', name: 'read_file', arguments: { command: 'echo call-2' } },
          { id: 'call-3', name: 'no_such_tool', arguments: { command: 'echo call-3' } },
        ],
      },
      10_300,
      { runId: 'r' },
    );

    const shown = [destructive, readOnly, null];
    expect((await store.listRunToolCalls('r')).map((call) => call.tool)).toStrictEqual(shown);
    expect((await store.listSessionToolCalls('s')).map((call) => call.tool)).toStrictEqual(shown);
    expect((await store.loadMessagePage('s', { limit: 10, maxChars: 1_000_000 })).toolCalls.map((call) => call.tool)).toStrictEqual(shown);
    expect((await store.listAudit({ sessionId: 's' })).entries.map((entry) => entry.tool)).toStrictEqual(shown.toReversed());
  });

  it('keeps the shown tool through the call’s decision and end', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    await appendAll(store, { runId: 'r', sessionId: 's' }, [
      { ...startChange('call-1', 10_000, 'wx__get_weather'), tool: destructive },
      { kind: 'decision', toolCallId: 'call-1', decision: 'allow', source: 'user', decidedAt: 10_500 },
      { kind: 'end', toolCallId: 'call-1', outcome: 'executed', result: 'sunny', endedAt: 10_900, startedAt: 10_600 },
    ]);
    expect(await store.listRunToolCalls('r')).toMatchObject([{ decision: 'allow', outcome: 'executed', tool: destructive }]);
  });

  it('keeps the argument names the tool declared when put up, inner ones and levels not known, beside a row from before', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    const declaring: ShownTool = { ...destructive, declared: { names: [{ name: 'target' }, { name: 'options', inner: { names: [{ name: 'force' }, { name: 'more', inner: { unknown: 'unreadable' } }] } }] } };
    await appendAll(store, { runId: 'r', sessionId: 's' }, [
      { ...startChange('call-1', 10_000, 'fs__purge'), tool: declaring },
      { ...startChange('call-2', 10_100, 'wx__get_weather'), tool: destructive },
    ]);
    expect((await store.listRunToolCalls('r')).map((call) => call.tool)).toStrictEqual([declaring, destructive]);
  });

  it('keeps each call’s own shown tool when several calls are put up in one write', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    const starts = [
      { ...startChange('call-1', 10_000, 'wx__get_weather'), tool: destructive },
      { ...startChange('call-2', 10_000, 'read_file'), tool: readOnly },
    ];
    await store.appendEvents(starts.map((ledger, index) => ({ runId: 'r', sessionId: 's', seq: index + 1, event: statusEvent(`event ${index + 1}`), at: 10_000, ledger })));
    expect((await store.listRunToolCalls('r')).map((call) => call.tool)).toStrictEqual([destructive, readOnly]);
  });
});

/** After the migration: the row kept from before reads as not knowing its tool, and a call put up now keeps its tool. */
async function expectToolKeptFromNowOn(store: AirlockStore): Promise<void> {
  expect((await store.listRunToolCalls('r')).map((call) => [call.toolCallId, call.approvalId, call.tool])).toStrictEqual([['call-1', 'approval-call-1', null]]);
  await store.createSession(session('s'));
  await store.createRun(run('r2', 's'));
  await appendAll(store, { runId: 'r2', sessionId: 's' }, [{ ...startChange('call-1', 11_000), tool: destructive }]);
  expect((await store.listRunToolCalls('r2')).map((call) => call.tool)).toStrictEqual([destructive]);
}

describe('SQLite migration 009 (shown_tool)', () => {
  it('adds the column to a database at version 8, keeping its ledger rows, whose tool reads as not known', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    sqliteDatabaseAt(file, 8, (old) => insertOldCall(old));

    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    try {
      await expectToolKeptFromNowOn(store);
    } finally {
      await store.close();
    }

    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare<[], number>('SELECT max(version) FROM schema_migrations').pluck().get()).toBe(migrations.length);
      expect(db.prepare('SELECT run_id, shown_tool FROM tool_calls ORDER BY ledger_id').all()).toStrictEqual([
        { run_id: 'r', shown_tool: null },
        { run_id: 'r2', shown_tool: JSON.stringify(destructive) },
      ]);
    } finally {
      db.close();
    }
  });
});

describe.skipIf(!postgres.available)(postgres.available ? 'PostgreSQL migration 006 (shown_tool)' : `PostgreSQL migration 006 (skipped: ${postgres.reason})`, () => {
  it('adds the column to a schema at version 5, keeping its ledger rows, whose tool reads as not known', async () => {
    await using database = await openTestDatabase();
    await postgresSchemaAt(database, 5);
    await insertOldPostgresCall(database.schema);

    const store = await PostgresStore.open({ url: database.url, schema: database.schema, ...quiet });
    try {
      await expectToolKeptFromNowOn(store);
    } finally {
      await store.close();
    }
    expect(await postgresSchemaVersions(database.schema)).toStrictEqual(postgresMigrations.map(({ version }) => ({ version })));
  });
});
