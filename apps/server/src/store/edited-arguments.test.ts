import type { LedgerChange } from '@airlock/api';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { migrations } from './migrations';
import { DATABASE_FILE, SqliteStore } from './sqlite-store';
import { storeImplementations } from './store-implementations';
import { appendAll, insertOldCall, openWithRun, run, session, sqliteDatabaseAt, startChange, tempFolder } from './test-support';

const quiet = { log: () => {} };
const implementations = await storeImplementations();

const edited = (toolCallId: string, command: string): LedgerChange => ({
  kind: 'decision',
  toolCallId,
  decision: 'allow',
  source: 'user',
  decidedAt: 10_500,
  by: { connectionId: 'conn-1', clientLabel: 'web' },
  editedArguments: { command, env: { DEBUG: '1' } },
});

describe.each(implementations)('the ledger keeps both versions of an edited call: $name', ({ open, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('keeps the proposed arguments and the edited ones, and null for a call allowed as proposed', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    await appendAll(store, { runId: 'r', sessionId: 's' }, [
      startChange('call-1', 10_000),
      edited('call-1', 'echo edited'),
      startChange('call-2', 10_100),
      { kind: 'decision', toolCallId: 'call-2', decision: 'allow', source: 'user', decidedAt: 10_600 },
    ]);
    const calls = await store.listRunToolCalls('r');
    expect(calls.map((call) => [call.arguments, call.editedArguments])).toStrictEqual([
      [{ command: 'echo call-1' }, { command: 'echo edited', env: { DEBUG: '1' } }],
      [{ command: 'echo call-2' }, null],
    ]);
    expect((await store.listSessionToolCalls('s'))[0]?.editedArguments).toStrictEqual({ command: 'echo edited', env: { DEBUG: '1' } });
    expect((await store.listAudit({ sessionId: 's' })).entries.map((entry) => entry.editedArguments)).toStrictEqual([null, { command: 'echo edited', env: { DEBUG: '1' } }]);
  });

  it('hands out copies: changing a record read back changes nothing stored', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    await appendAll(store, { runId: 'r', sessionId: 's' }, [startChange('call-1', 10_000), edited('call-1', 'echo edited')]);
    const [first] = await store.listRunToolCalls('r');
    (first!.editedArguments as Record<string, unknown>).command = 'rm -rf /';
    expect((await store.listRunToolCalls('r'))[0]?.editedArguments).toMatchObject({ command: 'echo edited' });
  });
});

describe('SQLite migration 004 (edited_arguments)', () => {
  it('adds the column to a database at version 3, keeping its ledger rows, which read as not edited', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    // The schema as version 3 left it, with a ledger row written then (the store of that version wrote these columns).
    sqliteDatabaseAt(file, 3, (old) => insertOldCall(old));

    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    expect((await store.listRunToolCalls('r')).map((call) => [call.toolCallId, call.arguments, call.editedArguments])).toStrictEqual([
      ['call-1', { command: 'echo call-1' }, null],
    ]);
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    await appendAll(store, { runId: 'r', sessionId: 's' }, [edited('call-1', 'echo edited')]);
    expect((await store.listRunToolCalls('r'))[0]?.editedArguments).toStrictEqual({ command: 'echo edited', env: { DEBUG: '1' } });
    await store.close();

    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare<[], number>('SELECT max(version) FROM schema_migrations').pluck().get()).toBe(migrations.length);
      expect(db.prepare<[], string>('SELECT edited_arguments FROM tool_calls').pluck().all()).toStrictEqual(['{"command":"echo edited","env":{"DEBUG":"1"}}']);
    } finally {
      db.close();
    }
  });
});
