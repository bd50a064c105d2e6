import type { AirlockStore, AppendEventInput, LedgerChange, StoredRun, StoredSessionSummary, ToolCallRecord } from '@airlock/api';
import type { LoopEvent } from '@airlock/core';
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { escapeIdentifier, Pool } from 'pg';
import { withClient } from '../../test/support/postgres';
import { migrate } from './migrate';
import { migrations } from './migrations';
import { migratePostgres, postgresMigrations } from './postgres-migrations';
import type { OpenedStore } from './store-implementations';

/**
 * Whether strace is installed and may trace a child here (the tests' test command installs it; a container may forbid
 * ptrace): the tests that fail a sync through it are skipped where it cannot, rather than failing on the machine.
 */
export const straceTraces = spawnSync('strace', ['-qq', '-o', '/dev/null', 'true'], { stdio: 'ignore' }).status === 0;

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

/** The ledger's row of a call just put up: its start, nothing decided or run yet. */
export function undecidedRecord(runId: string, sessionId: string, start: Extract<LedgerChange, { kind: 'start' }>): ToolCallRecord {
  return {
    runId,
    sessionId,
    toolCallId: start.toolCallId,
    toolName: start.toolName,
    arguments: start.arguments,
    editedArguments: null,
    approvalId: start.approvalId,
    executesCode: start.executesCode,
    toolVersion: start.toolVersion,
    tool: start.tool ?? null,
    exactGrantsOnly: start.exactGrantsOnly === true,
    askedBecause: start.exactGrantsOnly === true && start.askedBecause !== undefined ? start.askedBecause : null,
    requestedAt: start.requestedAt,
    expiresAt: start.expiresAt,
    decision: null,
    source: null,
    reason: null,
    decidedByGrant: null,
    decidedByRule: null,
    decidedByRuleText: null,
    decidedAt: null,
    connectionId: null,
    clientLabel: null,
    startedAt: null,
    outcome: null,
    result: null,
    cut: null,
    endedAt: null,
  };
}

/** Opens a store holding session `s` and its run `r`, where a test of the ledger starts. */
export async function openWithRun(open: () => Promise<OpenedStore>): Promise<OpenedStore> {
  const opened = await open();
  try {
    await opened.store.createSession(session('s'));
    await opened.store.createRun(run('r', 's'));
    return opened;
  } catch (error) {
    await opened[Symbol.asyncDispose]();
    throw error;
  }
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

/** Call `call-1` of run `r` as every version of the ledger wrote it when the call was put up. */
const OLD_CALL = {
  run_id: 'r',
  session_id: 's',
  tool_call_id: 'call-1',
  tool_name: 'terminal',
  arguments: '{"command":"echo call-1"}',
  approval_id: 'approval-call-1',
  tool_version: 'v1',
  requested_at: 10_000,
  expires_at: 70_000,
};

/** Columns of a ledger row beyond OLD_CALL's, as an older store wrote them (an end: `outcome`, `result`, `ended_at`). */
export type OldCallColumns = Record<string, string | number>;

/** Writes OLD_CALL, with `more` columns, into the `tool_calls` of a SQLite database made by sqliteDatabaseAt. */
export function insertOldCall(db: Database.Database, more: OldCallColumns = {}): void {
  const row = { ...OLD_CALL, executes_code: 1, ...more };
  const columns = Object.keys(row);
  db.prepare(`INSERT INTO tool_calls (${columns.join(', ')}) VALUES (${columns.map((column) => `@${column}`).join(', ')})`).run(row);
}

/** Writes OLD_CALL, with `more` columns, into the `tool_calls` of a PostgreSQL `schema` made by postgresSchemaAt. */
export async function insertOldPostgresCall(schema: string, more: OldCallColumns = {}): Promise<void> {
  const row = { ...OLD_CALL, executes_code: true, ...more };
  const columns = Object.keys(row);
  await withClient((client) =>
    client.query(`INSERT INTO ${escapeIdentifier(schema)}.tool_calls (${columns.join(', ')}) VALUES (${columns.map((_, at) => `$${at + 1}`).join(', ')})`, Object.values(row)),
  );
}

/** The migrations applied to the PostgreSQL `schema`, in order. */
export async function postgresSchemaVersions(schema: string): Promise<{ version: number }[]> {
  return withClient(async (client) => (await client.query<{ version: number }>(`SELECT version FROM ${escapeIdentifier(schema)}.schema_migrations ORDER BY version`)).rows);
}
