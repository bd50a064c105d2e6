import type { AirlockStore, AppendEventInput, LedgerChange, StoredRun, StoredSessionSummary } from '@airlock/api';
import type { LoopEvent } from '@airlock/core';
import Database from 'better-sqlite3';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { migrate } from './migrate';
import { migrations } from './migrations';
import { migratePostgres, postgresMigrations } from './postgres-migrations';

export interface TempFolder extends AsyncDisposable {
  path: string;
}

export async function tempFolder(): Promise<TempFolder> {
  const path = await realpath(await mkdtemp(join(tmpdir(), 'airlock-store-')));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}

export function session(sessionId: string, at = 1_000, changes: Partial<StoredSessionSummary> = {}): StoredSessionSummary {
  return { sessionId, title: `title of ${sessionId}`, createdAt: at, updatedAt: at, confirmToolCalls: true, lastRunId: null, ...changes };
}

export function run(runId: string, sessionId: string, startedAt = 2_000): StoredRun {
  return { runId, sessionId, options: { maxToolCalls: 5, decisionTimeoutMs: 'never', enabledTools: ['terminal'] }, startedAt, endedAt: null, endReason: null };
}

export function statusEvent(text: string): LoopEvent {
  return { type: 'status', text };
}

export function startChange(toolCallId: string, requestedAt: number, toolName = 'terminal'): Extract<LedgerChange, { kind: 'start' }> {
  return {
    kind: 'start',
    toolCallId,
    toolName,
    arguments: { command: `echo ${toolCallId}` },
    approvalId: `approval-${toolCallId}`,
    requestedAt,
    expiresAt: requestedAt + 60_000,
    executesCode: true,
    toolVersion: 'v1',
  };
}

/** Appends events 1, 2, … to a run, each with the given ledger change, and returns the next seq. */
export async function appendAll(store: AirlockStore, base: Omit<AppendEventInput, 'seq' | 'event' | 'at' | 'ledger'>, changes: (LedgerChange | undefined)[], firstSeq = 1): Promise<number> {
  let seq = firstSeq;
  for (const ledger of changes) {
    await store.appendEvent({ ...base, seq, event: statusEvent(`event ${seq}`), at: 3_000 + seq, ...(ledger === undefined ? {} : { ledger }) });
    seq += 1;
  }
  return seq;
}

/** The migrations up to `version`, which must be 1 to `version`, each once: the schema a store of that version made. */
function migrationsUpTo<M extends { version: number }>(all: readonly M[], version: number): M[] {
  const before = all.filter((migration) => migration.version <= version);
  const versions = before.map((migration) => migration.version);
  if (versions.join() !== Array.from({ length: version }, (_, at) => at + 1).join()) throw new Error(`migrations up to ${version} are ${versions.join(', ')}`);
  return before;
}

/**
 * Makes `file` a SQLite database with the schema as migration `version` left it, lets `write` put in it the rows the
 * store of that version wrote, and closes it: what a test of a later migration opens.
 */
export function sqliteDatabaseAt(file: string, version: number, write: (db: Database.Database) => void): void {
  const old = new Database(file);
  try {
    migrate(old, { file, migrations: migrationsUpTo(migrations, version), now: 1 });
    write(old);
  } finally {
    old.close();
  }
}

/** Gives the PostgreSQL `schema` at `url` the tables as migration `version` left them: what a test of a later migration opens. */
export async function postgresSchemaAt(database: { url: string; schema: string }, version: number): Promise<void> {
  const pool = new Pool({ connectionString: database.url });
  try {
    await migratePostgres(pool, { schema: database.schema, location: 'test', migrations: migrationsUpTo(postgresMigrations, version), now: 1 });
  } finally {
    await pool.end();
  }
}
