import Database from 'better-sqlite3';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrations, type Migration } from './migrations';
import { DATABASE_FILE, SqliteStore } from './sqlite-store';
import { StoreError } from './store-error';
import { appendAll, run, session, sqliteDatabaseAt, startChange, tempFolder } from './test-support';

const quiet = { log: () => {} };

/** A later schema change of the kind migrations make: a column with a default, and an index on it. */
const pinned: Migration = {
  version: migrations.length + 1,
  name: 'pinned-sessions',
  sql: 'ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0; CREATE INDEX sessions_pinned ON sessions (pinned);',
};

function versions(file: string): number[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare<[], number>('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
  } finally {
    db.close();
  }
}

/** A store at the current schema with a session, a message, a run, its events and a ledger row; then closed. */
async function databaseWithData(directory: string): Promise<void> {
  const store = await SqliteStore.open({ directory, ...quiet });
  await store.createSession(session('s'));
  await store.appendMessage('s', { role: 'user', content: 'hello' }, 1);
  await store.createRun(run('r', 's'));
  await appendAll(store, { runId: 'r', sessionId: 's' }, [startChange('call-1', 5_000)]);
  await store.close();
}

describe('migrations', () => {
  it('are numbered 1, 2, 3… in order', () => {
    expect(migrations.map((migration) => migration.version)).toStrictEqual(migrations.map((_, index) => index + 1));
  });

  it('record every version applied to a new database', async () => {
    await using folder = await tempFolder();
    await (await SqliteStore.open({ directory: folder.path, ...quiet })).close();
    expect(versions(join(folder.path, DATABASE_FILE))).toStrictEqual(migrations.map((migration) => migration.version));
  });

  it('apply the next migration to a copy of the schema before it, keeping the data in it', async () => {
    await using folder = await tempFolder();
    const original = join(folder.path, 'original');
    const copy = join(folder.path, 'copy');
    await databaseWithData(original);
    await mkdir(copy);
    await copyFile(join(original, DATABASE_FILE), join(copy, DATABASE_FILE));

    const store = await SqliteStore.open({ directory: copy, migrations: [...migrations, pinned], ...quiet });
    expect(await store.listSessions()).toStrictEqual([session('s')]);
    expect(await store.loadMessages('s')).toStrictEqual([{ role: 'user', content: 'hello' }]);
    expect(await store.loadEvents('r', 0)).toHaveLength(1);
    expect((await store.listRunToolCalls('r')).map((call) => call.toolCallId)).toStrictEqual(['call-1']);
    await store.close();

    expect(versions(join(copy, DATABASE_FILE))).toStrictEqual([...migrations, pinned].map((migration) => migration.version));
    const db = new Database(join(copy, DATABASE_FILE), { readonly: true });
    expect(db.prepare('SELECT session_id, pinned FROM sessions').all()).toStrictEqual([{ session_id: 's', pinned: 0 }]);
    db.close();
    expect(versions(join(original, DATABASE_FILE))).toStrictEqual(migrations.map((migration) => migration.version));
  });

  it('leave the database as it was when a migration fails', async () => {
    await using folder = await tempFolder();
    await databaseWithData(folder.path);
    const broken: Migration = { version: migrations.length + 1, name: 'broken', sql: 'CREATE TABLE half_done (x); ALTER TABLE no_such_table ADD COLUMN y;' };

    await expect(SqliteStore.open({ directory: folder.path, migrations: [...migrations, broken], ...quiet })).rejects.toThrow(/no_such_table/);

    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    expect(await store.loadMessages('s')).toStrictEqual([{ role: 'user', content: 'hello' }]);
    await store.close();
    const db = new Database(join(folder.path, DATABASE_FILE), { readonly: true });
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half_done'").all()).toStrictEqual([]);
    db.close();
    expect(versions(join(folder.path, DATABASE_FILE))).toStrictEqual(migrations.map((migration) => migration.version));
  });

  it('refuse a database whose record of migrations does not match its tables, naming the file and the migration, as damaged', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    await databaseWithData(folder.path);
    // The newest migration's tables are there, its record gone: applied again, it fails on what it made.
    const last = migrations.at(-1)!;
    const db = new Database(file);
    db.prepare('DELETE FROM schema_migrations WHERE version = ?').run(last.version);
    db.close();
    const before = await readFile(file);

    const error = await SqliteStore.open({ directory: folder.path, ...quiet }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ problem: 'corrupt', file });
    expect((error as StoreError).message).toContain(`its schema does not match its record of migrations: migration ${last.version} (${last.name}) failed on it (`);
    expect((await readFile(file)).equals(before)).toBe(true);
  });

  it('refuse a database newer than this code, naming the file, and leave it as it was', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    await databaseWithData(folder.path);
    await (await SqliteStore.open({ directory: folder.path, migrations: [...migrations, pinned], ...quiet })).close();
    const before = await readFile(file);

    const error = await SqliteStore.open({ directory: folder.path, ...quiet }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ problem: 'newer-schema', file });
    expect((error as StoreError).message).toContain(`schema is at version ${pinned.version}, this Airlock knows versions up to ${migrations.length}`);
    expect((await readFile(file)).equals(before)).toBe(true);
  });
});

describe('SQLite migration 007 (tool_calls_by_approval)', () => {
  it('indexes the ledger rows of a database at version 6 by approval id, so a decision is found without reading the session’s ledger', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    sqliteDatabaseAt(file, 6, (old) => {
      old
        .prepare(
          `INSERT INTO tool_calls (run_id, session_id, tool_call_id, tool_name, arguments, approval_id, executes_code, tool_version, requested_at, expires_at, decision, source, decided_at)
           VALUES ('r', 's', 'call-1', 'terminal', '{"command":"echo call-1"}', 'approval-call-1', 1, 'v1', 10000, 70000, 'deny', 'user', 10100)`,
        )
        .run();
    });

    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    expect(await store.findDecision('s', 'approval-call-1')).toBe('deny');
    await store.close();
    const db = new Database(file, { readonly: true });
    try {
      const plan = db
        .prepare<[], { detail: string }>("EXPLAIN QUERY PLAN SELECT decision FROM tool_calls WHERE approval_id = 'a' AND session_id = 's' AND approval_id <> '' AND decision IS NOT NULL ORDER BY ledger_id DESC LIMIT 1")
        .all();
      expect(plan.map((step) => step.detail).join('\n')).toContain('USING INDEX tool_calls_by_approval');
    } finally {
      db.close();
    }
  });
});

describe('SQLite migration 010 (cancel_requested)', () => {
  it('gives the runs of a database at version 9 no stop asked for, and lets a stop be kept for one not ended', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    sqliteDatabaseAt(file, 9, (old) => {
      old.prepare("INSERT INTO sessions (session_id, title, created_at, updated_at, confirm_tool_calls, last_run_id) VALUES ('s', 'chat', 1, 1, 1, 'open')").run();
      const insertRun = old.prepare('INSERT INTO runs (run_id, session_id, options, started_at, ended_at, end_reason) VALUES (?, ?, ?, ?, ?, ?)');
      insertRun.run('ended', 's', '{}', 1, 2, 'done');
      insertRun.run('open', 's', '{}', 3, null, null);
    });

    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    expect((await store.getRun('open'))?.cancelRequested).toBeUndefined();
    expect(await store.requestCancel('ended')).toBe(false);
    expect(await store.requestCancel('open')).toBe(true);
    expect((await store.getRun('open'))?.cancelRequested).toBe(true);
    expect((await store.getRun('ended'))?.cancelRequested).toBeUndefined();
    await store.close();
  });
});
