import Database from 'better-sqlite3';
import { join } from 'node:path';
import { escapeIdentifier } from 'pg';
import { describe, expect, it } from 'vitest';
import { openTestDatabase, probeTestDatabase, withClient } from '../../test/support/postgres';
import { PostgresStore } from './postgres-store';
import { DATABASE_FILE, SqliteStore } from './sqlite-store';
import { postgresSchemaAt, sqliteDatabaseAt, tempFolder } from './test-support';

const quiet = { log: () => {} };

/** The chat's two pages, four messages each: each finds the ledger row of its own run's call, though both ids are the same. */
async function expectEachPageFindsItsRun(store: SqliteStore | PostgresStore): Promise<void> {
  const newest = await store.loadMessagePage('s', { limit: 4, maxChars: 1_000_000 });
  expect([newest.start, newest.toolCalls.map((call) => [call.runId, call.arguments])]).toStrictEqual([5, [['r2', { command: 'echo r2' }]]]);
  const earlier = await store.loadMessagePage('s', { before: 5, limit: 4, maxChars: 1_000_000 });
  expect([earlier.start, earlier.toolCalls.map((call) => [call.runId, call.arguments])]).toStrictEqual([1, [['r1', { command: 'echo r1' }]]]);
}
const postgres = await probeTestDatabase();

/**
 * A chat as an earlier version kept it: a message from before any run, then two runs whose calls have the same id
 * (a model that numbers its calls per turn), each run's messages written from its start on.
 */
const runs = [
  { run_id: 'r1', session_id: 's', options: '{}', started_at: 2_000, ended_at: 2_900, end_reason: 'done' },
  { run_id: 'r2', session_id: 's', options: '{}', started_at: 3_000, ended_at: 3_900, end_reason: 'done' },
];
const messages = [
  { json: '{"role":"user","content":"imported"}', at: 1_000 },
  ...runs.flatMap(({ run_id: runId, started_at: at }) => [
    { json: JSON.stringify({ role: 'user', content: `go ${runId}` }), at },
    { json: JSON.stringify({ role: 'assistant', content: '', toolCalls: [{ id: 'call-1', name: 'terminal', arguments: { command: `echo ${runId}` } }] }), at: at + 1 },
    { json: JSON.stringify({ role: 'tool', toolCallId: 'call-1', toolName: 'terminal', content: runId }), at: at + 2 },
    { json: JSON.stringify({ role: 'assistant', content: `done ${runId}` }), at: at + 3 },
  ]),
];
const calls = runs.map(({ run_id: runId, started_at: at }) => ({ run_id: runId, session_id: 's', tool_call_id: 'call-1', tool_name: 'terminal', arguments: JSON.stringify({ command: `echo ${runId}` }), approval_id: `approval-${runId}`, tool_version: 'v1', requested_at: at + 1 }));

describe('SQLite migration 008 (messages.run_id)', () => {
  it('gives the calls of a chat kept at version 7 their runs, so each page finds its own ledger rows', async () => {
    await using folder = await tempFolder();
    const file = join(folder.path, DATABASE_FILE);
    sqliteDatabaseAt(file, 7, (old) => {
      old.prepare("INSERT INTO sessions (session_id, title, created_at, updated_at, confirm_tool_calls, last_run_id) VALUES ('s', 't', 1000, 3900, 1, 'r2')").run();
      for (const run of runs) old.prepare('INSERT INTO runs (run_id, session_id, options, started_at, ended_at, end_reason) VALUES (@run_id, @session_id, @options, @started_at, @ended_at, @end_reason)').run(run);
      messages.forEach((message, index) => old.prepare("INSERT INTO messages (session_id, seq, json, at) VALUES ('s', ?, ?, ?)").run(index + 1, message.json, message.at));
      for (const call of calls) {
        old
          .prepare('INSERT INTO tool_calls (run_id, session_id, tool_call_id, tool_name, arguments, approval_id, executes_code, tool_version, requested_at) VALUES (@run_id, @session_id, @tool_call_id, @tool_name, @arguments, @approval_id, 1, @tool_version, @requested_at)')
          .run(call);
      }
    });

    const store = await SqliteStore.open({ directory: folder.path, ...quiet });
    try {
      await expectEachPageFindsItsRun(store);
    } finally {
      await store.close();
    }
    const db = new Database(file, { readonly: true });
    try {
      // Only the messages that made calls were rewritten; the index used to find their runs is gone again.
      expect(db.prepare<[], number | null>('SELECT run_id FROM messages ORDER BY seq').pluck().all()).toStrictEqual([null, null, 'r1', null, null, null, 'r2', null, null]);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'runs_by_session_start'").all()).toStrictEqual([]);
    } finally {
      db.close();
    }
  });
});

describe.skipIf(!postgres.available)(postgres.available ? 'PostgreSQL migration 005 (messages.run_id)' : `PostgreSQL migration 005 (skipped: ${postgres.reason})`, () => {
  it('gives the calls of a chat kept at version 4 their runs, so each page finds its own ledger rows', async () => {
    await using database = await openTestDatabase();
    await postgresSchemaAt(database, 4);
    const schema = escapeIdentifier(database.schema);
    await withClient(async (client) => {
      await client.query(`INSERT INTO ${schema}.sessions (session_id, title, created_at, updated_at, confirm_tool_calls, last_run_id) VALUES ('s', 't', 1000, 3900, true, 'r2')`);
      for (const run of runs) {
        await client.query(`INSERT INTO ${schema}.runs (run_id, session_id, options, started_at, ended_at, end_reason) VALUES ($1, $2, $3, $4, $5, $6)`, [run.run_id, run.session_id, run.options, run.started_at, run.ended_at, run.end_reason]);
      }
      for (const message of messages) await client.query(`INSERT INTO ${schema}.messages (session_id, json, at) VALUES ('s', $1, $2)`, [message.json, message.at]);
      for (const call of calls) {
        await client.query(
          `INSERT INTO ${schema}.tool_calls (run_id, session_id, tool_call_id, tool_name, arguments, approval_id, executes_code, tool_version, requested_at) VALUES ($1, $2, $3, $4, $5, $6, true, $7, $8)`,
          [call.run_id, call.session_id, call.tool_call_id, call.tool_name, call.arguments, call.approval_id, call.tool_version, call.requested_at],
        );
      }
    });

    const store = await PostgresStore.open({ url: database.url, schema: database.schema, ...quiet });
    try {
      await expectEachPageFindsItsRun(store);
    } finally {
      await store.close();
    }
    const kept = await withClient(async (client) => (await client.query<{ run_id: string | null }>(`SELECT run_id FROM ${schema}.messages ORDER BY message_id`)).rows.map((row) => row.run_id));
    expect(kept).toStrictEqual([null, null, 'r1', null, null, null, 'r2', null, null]);
  });
});
