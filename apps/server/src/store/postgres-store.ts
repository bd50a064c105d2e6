import {
  FencedError,
  StoreUnavailableError,
  encodeClusterMessage,
  eventMessage,
  renewalIntervalMs,
  RunStoppedError,
  searchSessionPage,
  type AirlockStore,
  type AppendEventInput,
  type AuditPage,
  type AuditQuery,
  type ChatMessage,
  type ClaimDecisionInput,
  type ClaimDecisionResult,
  type Cluster,
  type ClusterMessage,
  type Decision,
  DecisionPastDeadlineError,
  type EventPage,
  type HoldOff,
  type LedgerChange,
  type LoopEvent,
  type PendingApproval,
  type PendingApprovalRecord,
  type RenewedLeases,
  type Rule,
  type MessagePage,
  type MessagePageQuery,
  type MessageRun,
  type RunBeginning,
  type SessionChanges,
  type SessionPageQuery,
  type StoredGrant,
  type StoredRule,
  type StoredRun,
  type StoredSessionSummary,
  type ToolCallRecord,
  type UnaskedAllow,
} from '@airlock/api';
import { ConflictError, NotFoundError, PolicyChangedError, storedReasonText, type AskedBecause } from '@airlock/core';
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, DatabaseError, Pool, TypeOverrides, escapeIdentifier, types, type ClientConfig, type PoolClient, type PoolConfig, type QueryResultRow } from 'pg';
import type { Migration } from './migrations';
import { PostgresListener } from './postgres-listener';
import { migratePostgres, postgresMigrations } from './postgres-migrations';
import { loopbackPinFor, loopbackPinnedSocket, type LoopbackPin } from '../http/loopback-name';
import { inTransaction } from './postgres-migrations/migrate';
import { isPgQueryTimeout, QueryTimeoutError } from './query-timeout-error';
import { lastSeqOfPage } from './event-page';
import {
  LEDGER_BYTES,
  SESSION_COLUMNS,
  askedBecauseJson,
  auditLimit,
  callsOfPage,
  decodeCursor,
  pageEnd,
  pageMessages,
  pageToolCalls,
  readAuditPageAsync,
  readMessagePageAsync,
  ruleScopeValue,
  damagedRecordOf,
  deleteRowSql,
  storedDecision,
  storedEvent,
  storedArguments,
  storedMessage,
  storedMessages,
  toGrant,
  toPending,
  toPendingRecord,
  toRunOrUnreadable,
  toSession,
  toStoredRule,
  toToolCall,
  type GrantRow,
  type LedgerRow,
  type MessageRow,
  type RuleRow,
  type RunRow,
  type SessionRow,
  type SizedLedgerRow,
  type SizedMessageRow,
} from './rows';
import { DatabaseClock, type ClockReading } from './database-clock';
import { StoreError } from './store-error';
import { unavailableReason, withUnavailableErrors } from './database-unavailable';

export interface PostgresStoreOptions {
  /** The database, e.g. `postgres://airlock:secret@db.internal:5432/airlock`. */
  url: string;
  /** The schema holding Airlock's tables, created when missing. Default `public`. */
  schema?: string;
  /**
   * This instance's id, unique among the live instances sharing the database: opening refuses an id another live
   * process holds (a `StoreError` "instance-in-use"). An id whose lock is free but whose heartbeat is recent is taken
   * only after it stayed still for a renewal and a half. Default a random UUID.
   */
  instanceId?: string;
  /** How long a run's lease lasts without renewal, in ms. Default 30,000. */
  leaseMs?: number;
  /** Receives a line when the notification connection is lost or back, or an idle connection fails. Default `console.warn`. */
  log?: (line: string) => void;
  /** Connections in the pool (the notification connection comes on top). Default 20. */
  maxConnections?: number;
  /** How long to wait for the database to answer a new connection before failing, in ms. Default 10,000. */
  connectTimeoutMs?: number;
  /** How long a query may wait for a free pooled connection (a burst of runs) before failing, in ms. Default 60,000. */
  queueTimeoutMs?: number;
  /**
   * How long a statement may go unanswered before it fails and its connection is dropped, in ms; the database ends a
   * transaction left open that long (an instance stopped in the middle of one holds its locks). Default 30,000.
   * Schema changes at the start have none.
   */
  queryTimeoutMs?: number;
  /** The schema changes to apply; default every PostgreSQL migration of this version. Tests pass fewer or more. */
  migrations?: readonly Migration[];
  /**
   * This instance's wall clock, in epoch ms: the clock of the deadlines of waiting calls (`expiresAt`) the store is given
   * and answers. It keeps them on the database's clock, which every check of them reads, as leases are (see
   * DatabaseClock): kept as given, an instance behind the database had its calls time out early (at once, every allow
   * refused, when behind by more than the timeout), and one ahead had them wait on past their deadline once another
   * took its run over (found in review). Default `Date.now`.
   */
  now?: () => number;
}

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_QUERY_TIMEOUT_MS = 30_000;
/** How long a pooled connection stays idle before the kernel probes its path. */
const KEEPALIVE_IDLE_MS = 10_000;
const MAX_IDENTIFIER_BYTES = 63;
/** Rows of a chat read at once by loadMessages. */
export const MESSAGES_PER_READ = 256;

/** The pin of a database URL whose host is a loopback name (see LoopbackPin); none for any other, or a socket folder. */
function databaseLoopbackPin(url: string): LoopbackPin | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  // A socket folder given as `?host=` is where pg connects, whatever the URL's host says.
  return parsed.searchParams.has('host') ? undefined : loopbackPinFor(parsed);
}

/** Now, in epoch ms, by the database's clock: every instance measures leases by the same clock. */
const DB_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';
/** How far this instance's clock may be off the database's before it is said at the start (see sayIfClockOff). */
const CLOCK_OFF_WARNING_MS = 2_000;
/** A run's claim is not held off (see HoldOff): never given up as one that could not be kept, or its hold-off is over. */
const NOT_HELD_OFF = `(given_up_at IS NULL OR given_up_at + coalesce(hold_off_ms, 0) <= ${DB_NOW})`;
/**
 * Of an undecided call `t` of a going run `r`: a person can still decide it. Not once its deadline passed or its run
 * was stopped, though its owner (dead, or not yet told) has not recorded the timeout or the cancel.
 */
const STILL_DECIDABLE = `(t.expires_at IS NULL OR t.expires_at > ${DB_NOW}) AND NOT r.cancel_requested`;
/** Share-locks the run of a call (by approval id, in its chat), as a write of the run's events does. */
const RUN_OF_CALL_FOR_SHARE = 'SELECT 1 FROM runs WHERE run_id IN (SELECT run_id FROM tool_calls WHERE approval_id = $1 AND session_id = $2) ORDER BY run_id FOR SHARE';
const PG_FOREIGN_KEY_VIOLATION = '23503';
const PG_UNIQUE_VIOLATION = '23505';
/** PostgreSQL error classes that mean "cannot reach or may not use the database": 08 connection, 28 authorization, 3D no such database. */
const UNREACHABLE_CLASSES = ['08', '28', '3D'];
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);


/** bigint (epoch ms, seqs, fences, ids) as a number rather than pg's default string: every value here is far below 2^53. */
const typeParsers = new TypeOverrides();
typeParsers.setTypeParser(types.builtins.INT8, Number);

type Queryable = Pick<PoolClient, 'query'>;

const RUN_COLUMNS = 'run_id, session_id, options, started_at, ended_at, end_reason';
/** A run as read: with whether a person stopped it while no instance could hear it. */
const RUN_READ_COLUMNS = `${RUN_COLUMNS}, cancel_requested`;
const LEDGER_COLUMNS =
  'ledger_id, run_id, session_id, tool_call_id, tool_name, arguments, edited_arguments, approval_id, executes_code, tool_version, shown_tool, exact_grants_only, asked_because, requested_at, expires_at, decision, source, reason, decided_by_grant, decided_by_rule, decided_by_rule_text, decided_by_rule_from_workspace_file, decided_at, connection_id, client_label, started_at, outcome, result, cut_bytes, cut_characters, ended_at';
const GRANT_COLUMNS = 'grant_id, scope_kind, scope_value, tool_name, arguments, tool_version, created_at';

/**
 * The store for several server instances sharing one PostgreSQL database: every instance opens it with its own
 * `instanceId`. Besides the store it is the instances' `Cluster`: runs are owned under a lease measured by the
 * database's clock and every write of a run carries its fencing token, a person's decision is one conditional
 * UPDATE, and instances wake each other with NOTIFY on a channel of the schema (ids only; the rows are read back).
 *
 * A pool of connections serves the statements; one more connection stays LISTENing. An event, its ledger change
 * and its notification are one transaction.
 */
/**
 * A page of sessions (see listSessionPage), read along sessions_by_activity: its collation is named, so the order is
 * the other stores' byte order whatever the database's. Exported for the test that asks PostgreSQL how it reads them.
 */
export const SESSION_PAGE_QUERIES = {
  first: `SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, session_id COLLATE "C" DESC LIMIT $1`,
  after: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE (updated_at, session_id COLLATE "C") < ($2, $3) ORDER BY updated_at DESC, session_id COLLATE "C" DESC LIMIT $1`,
};

export class PostgresStore implements AirlockStore, Cluster {
  readonly instanceId: string;
  /** This process's token under `instanceId`, made at open: the runs it owns are owned by both. */
  readonly incarnation: string;
  readonly leaseMs: number;
  /** The schema holding the tables. */
  readonly schema: string;
  /** The channel instances notify each other on (one per schema: notifications are per database). */
  readonly channel: string;
  private closed: Promise<void> | undefined;
  /** Another process took `instanceId` (this one stalled past its lease): this one renews, claims and releases nothing more. */
  private superseded = false;
  /** A failure to end a stalled instance's notification connection was logged (see endStalledListeners). */
  private stalledListenersUnended = false;

  private constructor(
    private readonly pool: Pool,
    private readonly listener: PostgresListener,
    private readonly name: InstanceName,
    private readonly log: (line: string) => void,
    private readonly now: () => number,
    private readonly clock: DatabaseClock,
    options: { instanceId: string; incarnation: string; leaseMs: number; schema: string; channel: string },
  ) {
    this.instanceId = options.instanceId;
    this.incarnation = options.incarnation;
    this.leaseMs = options.leaseMs;
    this.schema = options.schema;
    this.channel = options.channel;
  }

  /**
   * Connects, applies pending migrations (one instance at a time) and starts listening. Rejects with a `StoreError`
   * when the database cannot be reached or is at a newer schema version.
   */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = options.schema ?? 'public';
    const instanceId = options.instanceId ?? randomUUID();
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    if (!Number.isSafeInteger(leaseMs) || leaseMs <= 0) throw new RangeError(`leaseMs must be a positive whole number of ms, not ${leaseMs}`);
    const log = options.log ?? ((line: string) => console.warn(line));
    const now = options.now ?? Date.now;
    const location = describeLocation(options.url, schema);
    const pin = databaseLoopbackPin(options.url);
    // Looked for now, before any call could hold the address (a connection made later reaches the address found).
    await pin?.address();
    const base: ClientConfig = {
      connectionString: options.url,
      // A `localhost` database is reached at the one loopback address it holds, never its twin (see LoopbackPin).
      ...(pin === undefined ? {} : { stream: () => loopbackPinnedSocket(pin) }),
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      types: typeParsers,
      application_name: `airlock ${instanceId}`.slice(0, MAX_IDENTIFIER_BYTES),
    };
    // A database that cannot be reached fails the start within connectTimeoutMs; after that, a query that waits for a
    // free connection behind a burst of others waits longer rather than failing the run it belongs to.
    await probe(base).catch((error: unknown) => {
      throw asStoreError(location, error);
    });
    const queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    if (!Number.isSafeInteger(queryTimeoutMs) || queryTimeoutMs <= 0) throw new RangeError(`queryTimeoutMs must be a positive whole number of ms, not ${queryTimeoutMs}`);
    const pooled: PoolConfig = {
      ...base,
      Client: PooledClient,
      // A connection whose path died while idle is found by the kernel's probes, not by the next statement sent on it.
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
      connectionTimeoutMillis: options.queueTimeoutMs ?? 60_000,
      options: `-c search_path=${escapeOption(escapeIdentifier(schema))}`,
    };
    const pool = new Pool({
      ...pooled,
      max: options.maxConnections ?? DEFAULT_POOL_SIZE,
      // A dead path holds a statement for as long as the kernel retries (about 15 minutes) without these.
      query_timeout: queryTimeoutMs,
      idle_in_transaction_session_timeout: queryTimeoutMs,
    });
    // An idle connection that fails emits here; without a handler the process would end. The next query reconnects.
    pool.on('error', (error) => log(`A pooled PostgreSQL connection failed while idle: ${error.message}`));
    const channel = channelName(schema);
    let listener: PostgresListener | undefined;
    let name: InstanceName | undefined;
    try {
      // Schema changes on a large database may take longer than any statement after them: their own connection, unbounded.
      const changes = new Pool({ ...pooled, max: 1 });
      changes.on('error', (error) => log(`A PostgreSQL connection of the schema's changes failed while idle: ${error.message}`));
      try {
        await migratePostgres(changes, { schema, location, migrations: options.migrations ?? postgresMigrations, now: Date.now() });
      } finally {
        await changes.end().catch(() => undefined);
      }
      const incarnation = randomUUID();
      name = await InstanceName.take({ pool, config: { ...base, keepAlive: true }, schema, location, instanceId, incarnation, leaseMs, log });
      // Named after the incarnation: another instance ends it if this one stops renewing while it holds the notification queue.
      listener = await PostgresListener.open({ config: { ...base, keepAlive: true, application_name: listenerName(incarnation) }, channel, log });
      const clock = new DatabaseClock(await readClocks(pool, now));
      sayIfClockOff(clock, log);
      const store = new PostgresStore(pool, listener, name, log, now, clock, { instanceId, incarnation, leaseMs, schema, channel });
      // The runs of this id's previous life were given up with the id's taking: the other instances may take them too.
      if (name.gaveUpRuns) await store.publish({ type: 'released', instanceId });
      // A full disk, a database going down: said as such to whoever's request it failed, not as "internal error".
      return withUnavailableErrors(store, location, (row) => `${deleteRowSql(row, `${escapeIdentifier(schema)}.${row.table}`)} (psql, in that database)`);
    } catch (error) {
      await listener?.close();
      await name?.close();
      await pool.end().catch(() => {});
      throw asStoreError(location, error);
    }
  }

  async listSessions(): Promise<StoredSessionSummary[]> {
    return (await this.rows<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, created_at DESC, session_id`)).map(toSession);
  }

  async listSessionPage(query: SessionPageQuery): Promise<StoredSessionSummary[]> {
    const { titleContains, ...page } = query;
    if (titleContains !== undefined) return searchSessionPage((batch) => this.listSessionPage(batch), { ...page, titleContains });
    const rows =
      query.after === undefined
        ? await this.rows<SessionRow>(SESSION_PAGE_QUERIES.first, [query.limit])
        : await this.rows<SessionRow>(SESSION_PAGE_QUERIES.after, [query.limit, query.after.updatedAt, query.after.sessionId]);
    return rows.map(toSession);
  }

  async getSession(sessionId: string): Promise<StoredSessionSummary | undefined> {
    const [row] = await this.rows<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE session_id = $1`, [sessionId]);
    return row === undefined ? undefined : toSession(row);
  }

  async createSession(session: StoredSessionSummary): Promise<void> {
    await this.pool.query(`INSERT INTO sessions (${SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`, [
      session.sessionId,
      session.title,
      session.createdAt,
      session.updatedAt,
      session.confirmToolCalls,
      session.lastRunId,
    ]);
  }

  async updateSession(sessionId: string, changes: SessionChanges): Promise<void> {
    await updateSessionWith(this.pool, sessionId, changes);
  }

  async deleteSession(sessionId: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      // The chat's runs first, then the chat, as a write of a run's events locks them (its run's row, then the chat's
      // as its messages or an unasked call's check refer to it): a call written at this moment either goes in first or
      // waits and finds its run gone (FencedError), and neither side fails as a deadlock.
      await client.query('SELECT 1 FROM runs WHERE session_id = $1 ORDER BY run_id FOR UPDATE', [sessionId]);
      // The chat's row before its grants and rules: a grant or chat rule being saved holds it (see saveGrant), so it
      // is in by the time they are deleted, or it finds the chat gone.
      await client.query('SELECT 1 FROM sessions WHERE session_id = $1 FOR UPDATE', [sessionId]);
      await client.query('INSERT INTO retired_runs (run_id) SELECT run_id FROM runs WHERE session_id = $1 ON CONFLICT DO NOTHING', [sessionId]);
      await client.query("DELETE FROM grants WHERE scope_kind = 'session' AND scope_value = $1", [sessionId]);
      await client.query("DELETE FROM rules WHERE scope_kind = 'chat' AND scope_value = $1", [sessionId]);
      await client.query('DELETE FROM sessions WHERE session_id = $1', [sessionId]);
    });
  }

  async appendMessage(sessionId: string, message: ChatMessage, at: number, run?: MessageRun): Promise<void> {
    const json = JSON.stringify(message);
    try {
      if (run?.fence === undefined) {
        await this.pool.query('INSERT INTO messages (session_id, json, at, run_id) VALUES ($1, $2, $3, $4)', [sessionId, json, at, run?.runId ?? null]);
        return;
      }
      // One statement: the run's row stays share-locked until the message is in, so no claim slips in between.
      const { rowCount } = await this.pool.query(
        `WITH run AS (SELECT fence FROM runs WHERE run_id = $4 FOR SHARE)
         INSERT INTO messages (session_id, json, at, run_id) SELECT $1, $2, $3, $4 FROM run WHERE run.fence = $5`,
        [sessionId, json, at, run.runId, run.fence],
      );
      if (rowCount === 0) throw new FencedError(run.runId);
    } catch (error) {
      throw foreignKeyAsNotFound(error, 'session', sessionId);
    }
  }

  /**
   * A page of rows at a time, each parsed as it comes (all the rows' JSON at once would be a second copy of the whole
   * chat before any of it is parsed), in one snapshot of the chat (REPEATABLE READ): a write meanwhile is not half seen.
   */
  async loadMessages(sessionId: string, leftOut?: (record: string) => void): Promise<ChatMessage[]> {
    return inTransaction(this.pool, async (client) => {
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const messages: ChatMessage[] = [];
      for (let after = 0; ; ) {
        const { rows } = await client.query<{ message_id: number; json: string }>(
          'SELECT message_id, json FROM messages WHERE session_id = $1 AND message_id > $2 ORDER BY message_id LIMIT $3',
          [sessionId, after, MESSAGES_PER_READ],
        );
        storedMessages(rows.map((row) => row.json), sessionId, leftOut, messages);
        if (rows.length < MESSAGES_PER_READ) return messages;
        after = rows.at(-1)!.message_id;
      }
    });
  }

  async loadMessagePage(sessionId: string, query: MessagePageQuery): Promise<MessagePage> {
    // Where the page's messages stand (numbering a chat's messages reads its index) and their size, not their text
    // (octet_length reads no TOASTed value).
    const sized = await this.rows<SizedMessageRow & { position: number }>(
      `WITH page AS (
         SELECT message_id, position FROM (SELECT message_id, row_number() OVER (ORDER BY message_id) AS position FROM messages WHERE session_id = $1) AS numbered
         WHERE position <= $2 ORDER BY position DESC LIMIT $3
       )
       SELECT page.message_id AS key, octet_length(m.json) AS bytes, page.position FROM page JOIN messages AS m USING (message_id) ORDER BY page.position DESC`,
      [sessionId, pageEnd(query.before), Math.max(0, query.limit)],
    );
    const rows = await readMessagePageAsync(sized, query.maxChars, (ids) => this.rows<MessageRow>('SELECT message_id AS key, json, run_id FROM messages WHERE message_id = ANY($1::bigint[])', [ids]));
    const { rows: read, messages } = pageMessages(rows, sessionId, query.leftOut);
    const calls = callsOfPage(read, messages);
    const ledger =
      calls.length === 0
        ? []
        : await this.ledgerRows(
            `SELECT ${LEDGER_COLUMNS} FROM tool_calls WHERE session_id = $1 AND (run_id, tool_call_id) IN (SELECT p ->> 0, p ->> 1 FROM jsonb_array_elements($2::jsonb) AS p) ORDER BY ledger_id`,
            [sessionId, JSON.stringify(calls)],
          );
    const first = rows[0] === undefined ? undefined : sized.find((row) => row.key === rows[0]!.key);
    const start = first !== undefined ? first.position - 1 : await this.messagesUpTo(sessionId, pageEnd(query.before));
    return { messages, runIds: read.map((row) => row.run_id), start, toolCalls: pageToolCalls(ledger, query.leftOut) };
  }

  async loadFirstRunMessage(sessionId: string, runId: string): Promise<ChatMessage | undefined> {
    const [row] = await this.rows<{ json: string }>('SELECT json FROM messages WHERE session_id = $1 AND run_id = $2 ORDER BY message_id LIMIT 1', [sessionId, runId]);
    return row === undefined ? undefined : storedMessage(row.json, `a message of chat ${sessionId}`);
  }

  /** How many messages the chat has, at most `before`. */
  private async messagesUpTo(sessionId: string, before: number): Promise<number> {
    const [row] = await this.rows<{ count: number }>('SELECT count(*)::integer AS count FROM messages WHERE session_id = $1', [sessionId]);
    return Math.min(before, row?.count ?? 0);
  }

  /**
   * Records a new run; with an `owner`, owned by it under a fresh lease with fencing token 1. A second unfinished
   * run in the session is refused with ConflictError "session-busy".
   */
  async createRun(run: StoredRun, owner?: string): Promise<void> {
    await this.insertRun(this.pool, run, owner);
  }

  async beginRun({ run, owner, message, session }: RunBeginning): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await this.insertRun(client, run, owner);
      await client.query('INSERT INTO messages (session_id, json, at, run_id) VALUES ($1, $2, $3, $4)', [run.sessionId, JSON.stringify(message), run.startedAt, run.runId]);
      await updateSessionWith(client, run.sessionId, session);
    });
  }

  private async insertRun(client: Queryable, run: StoredRun, owner: string | undefined): Promise<void> {
    // Owned by this process's incarnation, and only while it still holds its id (share-locked until the insert commits).
    const incarnation = owner === undefined ? null : owner === this.instanceId ? this.incarnation : '';
    try {
      const { rowCount } = await client.query(
        `INSERT INTO runs (${RUN_COLUMNS}, owner, owner_incarnation, fence, lease_until)
         SELECT $1, $2, $3, $4, $5, $6, $7::text, $9::text, CASE WHEN $7::text IS NULL THEN 0 ELSE 1 END, CASE WHEN $7::text IS NULL THEN NULL ELSE ${DB_NOW} + $8::bigint END
         WHERE $7::text IS NULL OR EXISTS (SELECT 1 FROM instances WHERE instance_id = $7::text AND incarnation = $9::text FOR SHARE)`,
        [run.runId, run.sessionId, JSON.stringify(run.options), run.startedAt, run.endedAt, run.endReason, owner ?? null, this.leaseMs, incarnation],
      );
      if (rowCount === 0) throw new FencedError(run.runId);
    } catch (error) {
      if (error instanceof DatabaseError && error.code === PG_UNIQUE_VIOLATION && error.constraint === 'runs_one_unfinished_per_session') {
        throw new ConflictError('session-busy', `session "${run.sessionId}" already has a run going`);
      }
      throw foreignKeyAsNotFound(error, 'session', run.sessionId);
    }
  }

  /** Marks a run as ended and frees it (no owner, no lease). With `fence`, only if the token is still the run's. */
  async endRun(runId: string, reason: string, endedAt: number, fence?: number): Promise<void> {
    const { rowCount } = await this.pool.query(
      'UPDATE runs SET ended_at = $2, end_reason = $3, owner = NULL, lease_until = NULL WHERE run_id = $1 AND ($4::bigint IS NULL OR fence = $4::bigint)',
      [runId, endedAt, reason, fence ?? null],
    );
    if (fence !== undefined && rowCount === 0) throw new FencedError(runId);
  }

  async hasRun(runId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM runs WHERE run_id = $1 UNION ALL SELECT 1 FROM retired_runs WHERE run_id = $1 LIMIT 1', [runId]);
    return rowCount !== null && rowCount > 0;
  }

  async getRun(runId: string): Promise<StoredRun | undefined> {
    const [row] = await this.rows<RunRow>(`SELECT ${RUN_READ_COLUMNS} FROM runs WHERE run_id = $1`, [runId]);
    return row === undefined ? undefined : toRunOrUnreadable(row);
  }

  async listUnfinishedRuns(): Promise<StoredRun[]> {
    return (await this.rows<RunRow>(`SELECT ${RUN_READ_COLUMNS} FROM runs WHERE ended_at IS NULL ORDER BY started_at, created_order`)).map(toRunOrUnreadable);
  }

  async appendEvent(input: AppendEventInput): Promise<void> {
    await this.appendEvents([input]);
  }

  /**
   * Appends the events in one transaction: checks each run's fencing token (share-locking the run's row until
   * commit, so a claim waits), inserts the events, applies their ledger changes in order, and notifies once per run
   * with its last seq; the notification goes out at commit, never for a write that did not happen.
   */
  async appendEvents(inputs: readonly AppendEventInput[]): Promise<void> {
    if (inputs.length === 0) return;
    const first = inputs[0]!;
    if (inputs.every((input) => input.runId === first.runId && input.fence === first.fence)) {
      await this.appendRunEvents(first.runId, first.fence, inputs);
      return;
    }
    await inTransaction(this.pool, async (client) => {
      const checked = new Set<string>();
      for (const { runId, fence } of inputs) {
        if (fence === undefined || checked.has(`${runId}\u0000${fence}`)) continue;
        checked.add(`${runId}\u0000${fence}`);
        const [row] = (await client.query<{ fence: number }>('SELECT fence FROM runs WHERE run_id = $1 FOR SHARE', [runId])).rows;
        if (row?.fence !== fence) throw new FencedError(runId);
      }
      for (const input of inputs) {
        if (input.unasked === undefined) continue;
        const values: unknown[] = [];
        const holds = unaskedHolds(input.sessionId, input.unasked, (value) => `$${values.push(value)}`);
        const [row] = (await client.query<{ holds: boolean }>(`SELECT ${holds.locked} AS holds`, values)).rows;
        if (row?.holds !== true) throw new PolicyChangedError(input.unasked.toolCallId);
      }
      try {
        await client.query('INSERT INTO events (run_id, seq, json, at) SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::bigint[])', [
          inputs.map((input) => input.runId),
          inputs.map((input) => input.seq),
          inputs.map((input) => JSON.stringify(input.event)),
          inputs.map((input) => input.at),
        ]);
      } catch (error) {
        throw foreignKeyAsNotFound(error, 'run', inputs[0]!.runId);
      }
      await insertMessagesOf(client, inputs);
      for (const input of inputs) if (input.ledger !== undefined) await applyLedgerChange(client, input.runId, input.sessionId, input.ledger, this.clock);
      for (const input of inputs) if (input.grant !== undefined) await saveGrantWith(client, input.grant);
      const byRun = new Map<string, AppendEventInput[]>();
      for (const input of inputs) {
        const written = byRun.get(input.runId);
        if (written === undefined) byRun.set(input.runId, [input]);
        else written.push(input);
      }
      for (const [runId, written] of byRun) await client.query('SELECT pg_notify($1, $2)', [this.channel, encodeClusterMessage(eventMessage(runId, written))]);
    });
  }

  /**
   * Events of one run in one round trip: the fence check, the insert, the conversation messages that come with them,
   * their ledger change and the notification are one statement (atomic on its own, no BEGIN/COMMIT), so a decision's
   * and a tool's end each cost one commit. Only a burst with two ledger changes or more (one statement cannot change
   * one row twice) takes a transaction.
   */
  private async appendRunEvents(runId: string, fence: number | undefined, inputs: readonly AppendEventInput[]): Promise<void> {
    const changed = inputs.filter((input) => input.ledger !== undefined);
    // A grant made with an allow is one more statement: the transaction too.
    if (changed.length > 1 || inputs.some((input) => input.grant !== undefined)) {
      await inTransaction(this.pool, async (client) => {
        await this.insertRunEvents(client, runId, fence, inputs.map((input) => ({ ...input, ledger: undefined, messages: undefined })));
        await insertMessagesOf(client, inputs);
        for (const input of changed) await applyLedgerChange(client, input.runId, input.sessionId, input.ledger!, this.clock);
        for (const input of inputs) if (input.grant !== undefined) await saveGrantWith(client, input.grant);
      });
      return;
    }
    await this.insertRunEvents(this.pool, runId, fence, inputs);
  }

  /** The one statement of appendRunEvents, for at most one ledger change among `inputs`. */
  private async insertRunEvents(client: Pool | PoolClient, runId: string, fence: number | undefined, inputs: readonly AppendEventInput[]): Promise<void> {
    const values: unknown[] = [];
    const p = (value: unknown) => `$${values.push(value)}`;
    const conditions: string[] = [];
    // Without a fence, no check: a missing run fails on the foreign key, as a plain insert would.
    const owned = fence === undefined ? undefined : `SELECT 1 FROM runs WHERE run_id = ${p(runId)} AND fence = ${p(fence)}`;
    // First, before the rows the unasked check share-locks (grant, chat, policy version): a chat's deletion takes the
    // run's row before those, and a write that took one of them first would wait for it as it waits for the write.
    if (owned !== undefined) conditions.push(`EXISTS (${owned} FOR SHARE)`);
    const withLedger = inputs.find((input) => input.ledger !== undefined);
    const change = withLedger?.ledger;
    // A call's start: only while its run's Stop is not stored (see notStopped), the run's row first too.
    if (change?.kind === 'running') conditions.push(notStopped(p(runId)));
    // A call let through unasked: only while what let it through still holds (see unaskedHolds).
    const unasked = inputs.find((input) => input.unasked !== undefined);
    const holds = unasked === undefined ? undefined : unaskedHolds(unasked.sessionId, unasked.unasked!, p);
    if (holds !== undefined) conditions.push(holds.locked);
    // A change to a call's row needs the row: without it nothing is written (NotFoundError below), as the transaction did.
    const call = change === undefined || change.kind === 'start' ? undefined : `SELECT 1 FROM tool_calls WHERE run_id = ${p(runId)} AND tool_call_id = ${p(change.toolCallId)}`;
    if (call !== undefined) conditions.push(`EXISTS (${call})`);
    const ctes = [
      `inserted AS (
        INSERT INTO events (run_id, seq, json, at)
        SELECT * FROM unnest(${p(inputs.map(() => runId))}::text[], ${p(inputs.map((input) => input.seq))}::integer[], ${p(inputs.map((input) => JSON.stringify(input.event)))}::text[], ${p(inputs.map((input) => input.at))}::bigint[])
        ${conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`}
        RETURNING seq
      )`,
    ];
    const messages = inputs.flatMap((input) => (input.messages ?? []).map((message) => ({ sessionId: input.sessionId, json: JSON.stringify(message), at: input.at })));
    if (messages.length > 0) {
      ctes.push(`added_messages AS (
        INSERT INTO messages (session_id, json, at, run_id)
        SELECT m.session_id, m.json, m.at, ${p(runId)} FROM unnest(${p(messages.map((m) => m.sessionId))}::text[], ${p(messages.map((m) => m.json))}::text[], ${p(messages.map((m) => m.at))}::bigint[]) WITH ORDINALITY AS m(session_id, json, at, n)
        WHERE EXISTS (SELECT 1 FROM inserted) ORDER BY m.n
      )`);
    }
    if (withLedger !== undefined && change !== undefined) ctes.push(`ledger AS (${ledgerStatement(runId, withLedger.sessionId, change, p, this.clock)})`);
    const text = `WITH ${ctes.join(', ')}
      SELECT count(*)::integer AS inserted, CASE WHEN count(*) > 0 THEN pg_notify(${p(this.channel)}, ${p(encodeClusterMessage(eventMessage(runId, inputs)))}) END AS notified
        ${call === undefined ? '' : `, EXISTS (${call}) AS call_exists`}${owned === undefined ? '' : `, EXISTS (${owned}) AS owned`}${holds === undefined ? '' : `, ${holds.read} AS holds`}
      FROM inserted`;
    let row: { inserted: number; call_exists?: boolean; owned?: boolean; holds?: boolean } | undefined;
    try {
      row = (await client.query<{ inserted: number; call_exists?: boolean; owned?: boolean; holds?: boolean }>(text, values)).rows[0];
    } catch (error) {
      throw error instanceof DatabaseError && error.table === 'messages' ? foreignKeyAsNotFound(error, 'session', messages[0]!.sessionId) : foreignKeyAsNotFound(error, 'run', runId);
    }
    if (row?.inserted === inputs.length) return;
    if (row?.owned !== false && row?.holds === false) throw new PolicyChangedError(unasked!.unasked!.toolCallId);
    if (row?.owned !== false && row?.call_exists === false) throw new NotFoundError('tool call', `${runId}/${change!.toolCallId}`);
    // Read again, once refused: a Stop committed while this statement waited for the run's row is not in its snapshot.
    if (row?.owned !== false && change?.kind === 'running' && (await stopStored(client, runId))) throw new RunStoppedError(runId, change.toolCallId);
    throw new FencedError(runId);
  }

  async loadEvents(runId: string, afterSeq: number, page?: EventPage): Promise<LoopEvent[]> {
    if (page === undefined) {
      const rows = await this.rows<{ json: string }>('SELECT json FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq', [runId, afterSeq]);
      return rows.map((row) => storedEvent(row.json, `an event of run ${runId}`));
    }
    // Where the page's events stand and their size first (octet_length reads no TOASTed value): only what fits is read.
    const sizes = await this.rows<{ seq: number; bytes: number }>(
      'SELECT seq, octet_length(json) AS bytes FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [runId, afterSeq, Math.max(1, page.events)],
    );
    const end = lastSeqOfPage(sizes, page);
    if (end === undefined) return [];
    const rows = await this.rows<{ json: string }>('SELECT json FROM events WHERE run_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq', [runId, afterSeq, end]);
    return rows.map((row) => storedEvent(row.json, `an event of run ${runId}`));
  }

  async lastEventSeq(runId: string): Promise<number> {
    const [row] = await this.rows<{ last: number }>('SELECT coalesce(max(seq), 0) AS last FROM events WHERE run_id = $1', [runId]);
    return row?.last ?? 0;
  }

  async loadLastEvent(runId: string): Promise<LoopEvent | undefined> {
    const [row] = await this.rows<{ json: string }>('SELECT json FROM events WHERE run_id = $1 ORDER BY seq DESC LIMIT 1', [runId]);
    return row === undefined ? undefined : storedEvent(row.json, `an event of run ${runId}`);
  }

  async listRunToolCalls(runId: string): Promise<ToolCallRecord[]> {
    return (await this.ledgerRows(`SELECT ${LEDGER_COLUMNS} FROM tool_calls WHERE run_id = $1 ORDER BY ledger_id`, [runId])).map(toToolCall);
  }

  async listSessionToolCalls(sessionId: string): Promise<ToolCallRecord[]> {
    return (await this.ledgerRows(`SELECT ${LEDGER_COLUMNS} FROM tool_calls WHERE session_id = $1 ORDER BY ledger_id`, [sessionId])).map(toToolCall);
  }

  async findDecision(sessionId: string, approvalId: string): Promise<Decision | undefined> {
    const [row] = await this.rows<Pick<LedgerRow, 'decision'>>(
      `SELECT decision FROM tool_calls WHERE approval_id = $1 AND session_id = $2 AND approval_id <> '' AND decision IS NOT NULL ORDER BY ledger_id DESC LIMIT 1`,
      [approvalId, sessionId],
    );
    return storedDecision(row?.decision, approvalId);
  }

  async requireExactGrants(runId: string, toolCallId: string, askedBecause?: AskedBecause): Promise<boolean> {
    // A row held already keeps the reason it was first held for.
    const result = await this.pool.query(
      'UPDATE tool_calls SET exact_grants_only = TRUE, asked_because = CASE WHEN exact_grants_only THEN asked_because ELSE $3 END WHERE run_id = $1 AND tool_call_id = $2 AND decision IS NULL',
      [runId, toolCallId, askedBecause === undefined ? null : JSON.stringify(askedBecause)],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async listAudit(query: AuditQuery): Promise<AuditPage> {
    const limit = auditLimit(query.limit);
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const values: unknown[] = [];
    const conditions: string[] = [];
    const parameter = (value: unknown) => {
      values.push(value);
      return `$${values.length}`;
    };
    if (query.sessionId !== undefined) conditions.push(`session_id = ${parameter(query.sessionId)}`);
    if (query.toolName !== undefined) conditions.push(`tool_name = ${parameter(query.toolName)}`);
    if (query.decision === 'none') conditions.push('decision IS NULL');
    else if (query.decision !== undefined) conditions.push(`decision = ${parameter(query.decision)}`);
    if (query.from !== undefined) conditions.push(`requested_at >= ${parameter(query.from)}`);
    if (query.to !== undefined) conditions.push(`requested_at < ${parameter(query.to)}`);
    if (cursor !== undefined) conditions.push(`(requested_at, ledger_id) < (${parameter(cursor.at)}, ${parameter(cursor.id)})`);
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    // Where each row stands and its size, not its content (octet_length reads no TOASTed value): only what fits is read.
    const sized = await this.rows<SizedLedgerRow>(
      `SELECT ledger_id, requested_at, ${LEDGER_BYTES} AS bytes FROM tool_calls ${where} ORDER BY requested_at DESC, ledger_id DESC LIMIT ${parameter(limit + 1)}`,
      values,
    );
    return readAuditPageAsync(sized, limit, (ledgerIds) => this.ledgerRows(`SELECT ${LEDGER_COLUMNS} FROM tool_calls WHERE ledger_id = ANY($1::bigint[])`, [ledgerIds]));
  }

  /**
   * Saves a grant only while its chat is there, its row share-locked until the grant is in: a grant names its chat by
   * id only, so one committed after the chat's deletion had deleted its grants outlived it, and was read back at the
   * next start for a chat made later under that name, whose calls it let through unasked (found in review).
   */
  async saveGrant(grant: StoredGrant): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await lockChatForShare(client, grant.sessionId);
      await saveGrantWith(client, grant);
    });
  }

  async deleteGrant(grantId: string): Promise<void> {
    await this.pool.query('DELETE FROM grants WHERE grant_id = $1', [grantId]);
  }

  async listGrants(): Promise<StoredGrant[]> {
    return (await this.rows<GrantRow>(`SELECT ${GRANT_COLUMNS} FROM grants WHERE scope_kind = 'session' ORDER BY created_at, created_order`)).map(toGrant);
  }

  async getGrant(grantId: string): Promise<StoredGrant | undefined> {
    const [row] = await this.rows<GrantRow>(`SELECT ${GRANT_COLUMNS} FROM grants WHERE grant_id = $1 AND scope_kind = 'session'`, [grantId]);
    return row === undefined ? undefined : toGrant(row);
  }

  async saveRule(rule: Rule): Promise<void> {
    await this.pool.query(
      `INSERT INTO rules (rule_id, scope_kind, scope_value, json, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (rule_id) DO UPDATE SET scope_kind = excluded.scope_kind, scope_value = excluded.scope_value, json = excluded.json`,
      [rule.id, rule.scope.kind, ruleScopeValue(rule), JSON.stringify(rule), Date.parse(rule.createdAt) || 0],
    );
  }

  async deleteRule(ruleId: string): Promise<void> {
    await this.pool.query('DELETE FROM rules WHERE rule_id = $1', [ruleId]);
  }

  async listRules(): Promise<StoredRule[]> {
    return (await this.rows<RuleRow>('SELECT rule_id, json, hits, last_used_at FROM rules ORDER BY created_at, created_order')).map(toStoredRule);
  }

  async recordRuleHit(ruleId: string, at: number): Promise<void> {
    await this.pool.query('UPDATE rules SET hits = hits + 1, last_used_at = $2 WHERE rule_id = $1', [ruleId, at]);
  }

  async getSetting(key: string): Promise<string | undefined> {
    const [row] = await this.rows<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
    return row?.value;
  }

  async setSetting(key: string, value: string | undefined): Promise<void> {
    if (value === undefined) await this.pool.query('DELETE FROM settings WHERE key = $1', [key]);
    else await this.pool.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  }

  async claimRun(runId: string): Promise<number | undefined> {
    if (this.superseded) return undefined;
    // Only while this process still holds its id: the id's row is share-locked until the claim commits, so a process
    // taking the id over waits for it, then gives the run up with the rest of this incarnation's.
    const [row] = await this.rows<{ fence: number }>(
      `UPDATE runs SET owner = $2, owner_incarnation = $4, fence = fence + 1, lease_until = ${DB_NOW} + $3::bigint
       WHERE run_id = $1 AND ended_at IS NULL AND (owner IS NULL OR lease_until IS NULL OR lease_until < ${DB_NOW}) AND ${NOT_HELD_OFF}
         AND EXISTS (SELECT 1 FROM instances WHERE instance_id = $2 AND incarnation = $4 FOR SHARE)
       RETURNING fence`,
      [runId, this.instanceId, this.leaseMs, this.incarnation],
    );
    return row?.fence;
  }

  /**
   * Renews this process's hold on its id and the leases of the runs it owns, in one statement. Once another process
   * holds the id (this one stalled past its lease and the id was taken), it answers no runs, and renews nothing ever
   * after: the runs are the other's.
   */
  async renewLeases(): Promise<RenewedLeases> {
    if (this.superseded) return { held: new Set(), stopped: new Set() };
    const before = this.now();
    const [row] = await this.rows<{ alive: boolean; runs: string[]; stopped: string[]; at: number }>(
      `WITH alive AS (
         UPDATE instances SET alive_until = ${DB_NOW} + $3::bigint WHERE instance_id = $1 AND incarnation = $2 RETURNING 1
       ), renewed AS (
         UPDATE runs SET lease_until = ${DB_NOW} + $3::bigint WHERE owner = $1 AND owner_incarnation = $2 AND ended_at IS NULL AND EXISTS (SELECT 1 FROM alive) RETURNING run_id, cancel_requested
       )
       SELECT EXISTS (SELECT 1 FROM alive) AS alive, coalesce((SELECT array_agg(run_id) FROM renewed), '{}') AS runs,
         coalesce((SELECT array_agg(run_id) FROM renewed WHERE cancel_requested), '{}') AS stopped, ${DB_NOW} AS at`,
      [this.instanceId, this.incarnation, this.leaseMs],
    );
    // Each renewal reads the clocks again: this instance's set right or stepped is followed within one.
    if (row !== undefined) this.clock.read({ before, at: row.at, after: this.now() });
    if (row?.alive !== true) {
      this.superseded = true;
      await this.name.giveUp();
      this.log(
        `Instance id "${this.instanceId}" was taken by another process while this one did not renew it (paused or cut off for longer than its lease): this process gives up its runs and takes no more. Stop it.`,
      );
      return { held: new Set(), stopped: new Set() };
    }
    await this.endStalledListeners();
    return { held: new Set(row.runs), stopped: new Set(row.stopped) };
  }

  /**
   * Ends the notification connection of each instance of this schema that stopped renewing its id (paused, frozen)
   * while its backend is blocked writing notifications to it. PostgreSQL keeps every notification until each listener
   * has read it, so one such listener holds the one queue of the whole database server, for every instance, until it
   * fills and every NOTIFY, and every write that sends one, fails. The instance, if it goes on, listens again and reads
   * the store again (resync). A failure (no right to end that backend) is logged once.
   */
  private async endStalledListeners(): Promise<void> {
    try {
      const [row] = await this.rows<{ ended: string[] }>(
        `SELECT coalesce(array_agg(i.instance_id) FILTER (WHERE pg_terminate_backend(a.pid)), '{}') AS ended
         FROM instances i JOIN pg_stat_activity a ON a.application_name = $1 || i.incarnation
         WHERE i.alive_until < ${DB_NOW} AND a.wait_event = 'ClientWrite' AND a.datname = current_database()`,
        [listenerName('')],
      );
      if (row !== undefined && row.ended.length > 0) {
        this.log(`Ended the notification connection of instance(s) ${row.ended.join(', ')}: they stopped renewing while holding PostgreSQL's notification queue for every instance; if they go on, they listen again.`);
      }
    } catch (error) {
      if (this.stalledListenersUnended) return;
      this.stalledListenersUnended = true;
      this.log(`Could not end the notification connection of an instance that stopped renewing (${errorText(error)}): while it holds PostgreSQL's notification queue, it fills for every instance.`);
    }
  }

  async releaseRun(runId: string, fence: number, holdOff?: HoldOff): Promise<boolean> {
    // A give-up within maxMs of the run being claimable again follows a failed one: the hold-off doubles (see HoldOff).
    const holdOffMs = `CASE WHEN $5::bigint IS NULL THEN hold_off_ms
      WHEN given_up_at + coalesce(hold_off_ms, 0) + $6::bigint > ${DB_NOW} THEN least(greatest(2 * coalesce(hold_off_ms, 0), $5::bigint), $6::bigint) ELSE 0 END`;
    const { rowCount } = await this.pool.query(
      `UPDATE runs SET owner = NULL, lease_until = NULL, hold_off_ms = ${holdOffMs}, given_up_at = CASE WHEN $5::bigint IS NULL THEN given_up_at ELSE ${DB_NOW} END
       WHERE run_id = $1 AND fence = $2 AND owner = $3 AND owner_incarnation = $4 AND ended_at IS NULL`,
      [runId, fence, this.instanceId, this.incarnation, holdOff?.firstMs ?? null, holdOff?.maxMs ?? null],
    );
    if ((rowCount ?? 0) === 0) return false;
    await this.publish({ type: 'released', instanceId: this.instanceId });
    return true;
  }

  damagedRecord(error: unknown): string | undefined {
    return damagedRecordOf(error);
  }

  /**
   * Whether the database could not take the statement for now (see unavailableReason): out of space, memory or
   * connections, shutting down, or not reached; the same write may succeed later.
   */
  isUnavailable(error: unknown): boolean {
    return error instanceof StoreUnavailableError || (error instanceof Error && unavailableReason(error) !== undefined);
  }

  async releaseRuns(): Promise<void> {
    if (this.superseded) return;
    await this.pool.query('UPDATE runs SET owner = NULL, lease_until = NULL WHERE owner = $1 AND owner_incarnation = $2 AND ended_at IS NULL', [this.instanceId, this.incarnation]);
    await this.publish({ type: 'released', instanceId: this.instanceId });
  }

  /**
   * The "cancel" message is part of the Stop's statement, as a claim's "decided" is: sent after it, an instance that
   * died or lost its connection in between left the Stop stored and its owner never told, running tools on a run the
   * person had been told was stopped.
   */
  async requestCancel(runId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `WITH stopped AS (UPDATE runs SET cancel_requested = true WHERE run_id = $1 AND ended_at IS NULL RETURNING run_id, session_id)
       SELECT pg_notify($2, json_build_object('type', 'cancel', 'runId', run_id, 'sessionId', session_id)::text) FROM stopped`,
      [runId, this.channel],
    );
    return (rowCount ?? 0) > 0;
  }

  async listClaimableRuns(): Promise<StoredRun[]> {
    const rows = await this.rows<RunRow>(
      `SELECT ${RUN_READ_COLUMNS} FROM runs WHERE ended_at IS NULL AND (owner IS NULL OR lease_until IS NULL OR lease_until < ${DB_NOW}) AND ${NOT_HELD_OFF} ORDER BY started_at, created_order`,
    );
    return rows.map(toRunOrUnreadable);
  }

  /**
   * One conditional UPDATE: the row goes from undecided to decided only if it is still undecided, belongs to the
   * session and its run goes on. Of two callers at once, the second waits on the row's lock, then finds it decided.
   *
   * A call past its deadline (by the database's clock, as leases are) takes only a timeout, and a call whose run a
   * person stopped only a cancel, past its deadline too: their owner may be dead and not have written that outcome
   * yet, and a lone instance would not take an allow then either. Such a call is answered as decided by what its
   * owner, or the instance taking it over, will record. An owner that missed the Stop's message learns of it so at its
   * call's deadline: its timeout is answered as the Stop's cancel, and any answer on a call of a stopped run says so
   * (`runStopped`), an allow decided before the Stop too.
   */
  async claimDecision(input: ClaimDecisionInput): Promise<ClaimDecisionResult> {
    const { grant, deadline } = input;
    // A grant's release checks its grant in the claim (claimRow), so its run is share-locked first too, as below. So
    // is an owner's claim (a timeout, a Stop, a rule's deny), which holds only while its fencing token does, as its
    // event writes are: a takeover's UPDATE of the run waits for it, or goes first and the claim reads the new token.
    // Unlocked, the claim's one statement could read the run as before a takeover committed while it waited on the
    // call's row, and decide a call that the taker had read undecided and put back to waiting.
    const claimed =
      grant === undefined && deadline === undefined && input.source !== 'grant' && input.fence === undefined
        ? await this.claimRow(this.pool, input)
        : // The grant only with a claim that won, in its transaction; a deadline checked once the row is claimed.
          await inTransaction(this.pool, async (client) => {
            // With a grant, the call's run is share-locked first (within the deadline), as a chat's deletion takes its
            // runs first: the deletion waits for this commit and deletes the grant with the chat, or goes first and the
            // claim finds no run. Unlocked, a grant committed after the deletion outlived the chat, for a chat of that
            // name made later (a grant has no reference to its chat).
            const row = await claimBefore(deadline, input.approvalId, client, async () => {
              if (grant !== undefined || input.source === 'grant' || input.fence !== undefined) await client.query(RUN_OF_CALL_FOR_SHARE, [input.approvalId, input.sessionId]);
              return this.claimRow(client, input);
            });
            if (row !== undefined && grant !== undefined) {
              await saveGrantWith(client, grant);
              await client.query('SELECT pg_notify($1, $2)', [this.channel, encodeClusterMessage({ type: 'grant', sessionId: grant.sessionId, grantId: grant.grantId, revoked: false })]);
            }
            return row;
          });
    if (claimed !== undefined) return { status: 'resolved', call: toPendingRecord(claimed) };
    return this.whyNotClaimed(input);
  }

  /**
   * claimDecision's conditional UPDATE: the row it decided, if it did. Every instance is told with its commit (the
   * notification is part of the statement), so the call's owner releases it even when the instance that decided it
   * stops right after.
   */
  private async claimRow(client: Queryable, input: ClaimDecisionInput): Promise<LedgerRow | undefined> {
    const { rows } = await client.query<LedgerRow>(
      `WITH claimed AS (UPDATE tool_calls AS t SET decision = $3, source = $4, reason = $5, decided_by_grant = $6, decided_at = $7, connection_id = $8, client_label = $9,
         edited_arguments = $10, decided_by_rule = $13, decided_by_rule_text = $14, decided_by_rule_from_workspace_file = $15
       FROM runs AS r
       WHERE t.approval_id = $1 AND t.session_id = $2 AND t.decision IS NULL AND t.approval_id <> '' AND r.run_id = t.run_id AND r.ended_at IS NULL
         AND ($11::bigint IS NULL OR r.fence = $11::bigint)
         AND ($3::text = 'timeout' OR t.expires_at IS NULL OR t.expires_at > ${DB_NOW})
         AND ($3::text = 'cancel' OR NOT r.cancel_requested)
         AND ($4::text <> 'grant' OR EXISTS (SELECT 1 FROM grants AS g WHERE g.grant_id = $6 FOR SHARE))
       RETURNING ${prefixed('t', LEDGER_COLUMNS)})
       SELECT ${LEDGER_COLUMNS}, pg_notify($12, json_build_object('type', 'decided', 'runId', run_id, 'approvalId', approval_id, 'sessionId', session_id)::text) FROM claimed`,
      [
        input.approvalId,
        input.sessionId,
        input.decision,
        input.source,
        input.reason ?? null,
        input.grantId ?? null,
        input.decidedAt,
        input.by?.connectionId ?? null,
        input.by?.clientLabel ?? null,
        input.editedArguments === undefined ? null : JSON.stringify(input.editedArguments),
        input.fence ?? null,
        this.channel,
        input.rule?.ruleId ?? null,
        input.rule === undefined ? null : storedReasonText(input.rule.text),
        input.rule?.fromWorkspaceFile === true,
      ],
    );
    const [row] = rows;
    return row === undefined ? undefined : this.onOwnClock(row);
  }

  /**
   * Why a claim did not win: the call was decided, timed out, stopped, or is not there. A call still undecided past its
   * deadline by the database's clock has its timeout recorded here, as its owner or the instance taking its run over
   * would record it: answered "timed out" with nothing recorded, the call stayed undecided while its owner, dead or
   * not at the deadline yet by its own timer, kept it up, refused to everyone (found in review). The claim tells
   * every instance, its owner too.
   */
  private async whyNotClaimed(input: ClaimDecisionInput, timeoutTried = false): Promise<ClaimDecisionResult> {
    const [undecided] = await this.rows<{ expired: boolean; cancel_requested: boolean }>(
      `SELECT t.expires_at IS NOT NULL AND t.expires_at <= ${DB_NOW} AS expired, r.cancel_requested FROM tool_calls AS t JOIN runs AS r ON r.run_id = t.run_id
       WHERE t.approval_id = $1 AND t.session_id = $2 AND t.decision IS NULL AND t.approval_id <> '' AND r.ended_at IS NULL AND ($3::bigint IS NULL OR r.fence = $3::bigint)
       ORDER BY t.ledger_id LIMIT 1`,
      [input.approvalId, input.sessionId, input.fence ?? null],
    );
    // A Stop first: the call of a stopped run ends cancelled with its run, whatever its deadline.
    if (undecided?.cancel_requested === true) return { status: 'already-decided', decision: 'cancel', source: 'user', reason: null, grantId: null, runStopped: true };
    if (undecided?.expired === true) {
      const timedOut = { status: 'already-decided' as const, decision: 'timeout' as const, source: 'system', reason: null, grantId: null };
      if (timeoutTried) return timedOut;
      const timeout: ClaimDecisionInput = { sessionId: input.sessionId, approvalId: input.approvalId, decision: 'timeout', source: 'system', decidedAt: input.decidedAt };
      if ((await this.claimRow(this.pool, input.fence === undefined ? timeout : { ...timeout, fence: input.fence })) !== undefined) return timedOut;
      // Decided, stopped or taken over meanwhile: read again.
      return this.whyNotClaimed(input, true);
    }
    // Still waiting, and the claim was this run's owner's: only its grant was missing.
    if (undecided !== undefined && input.source === 'grant') return { status: 'grant-gone' };
    const [decided] = await this.rows<Pick<LedgerRow, 'decision' | 'source' | 'reason' | 'decided_by_grant' | 'edited_arguments'> & { run_stopped: boolean }>(
      `SELECT t.decision, t.source, t.reason, t.decided_by_grant, t.edited_arguments, r.cancel_requested AND r.ended_at IS NULL AS run_stopped
       FROM tool_calls AS t JOIN runs AS r ON r.run_id = t.run_id
       WHERE t.approval_id = $1 AND t.session_id = $2 AND t.approval_id <> '' AND t.decision IS NOT NULL ORDER BY t.ledger_id DESC LIMIT 1`,
      [input.approvalId, input.sessionId],
    );
    if (decided?.decision == null) return { status: 'not-found' };
    const answer = {
      status: 'already-decided' as const,
      decision: decided.decision,
      source: decided.source ?? '',
      reason: decided.reason,
      grantId: decided.decided_by_grant,
      ...(decided.run_stopped ? { runStopped: true as const } : {}),
    };
    // A grant's release that lost to the person's edited allow is answered that allow as it was given: the call runs as edited.
    return decided.edited_arguments === null ? answer : { ...answer, editedArguments: storedArguments(decided.edited_arguments, `the edited arguments of approval ${input.approvalId}`) };
  }

  async listPendingApprovals(sessionId: string): Promise<PendingApproval[]> {
    const rows = await this.ledgerRows(
      `SELECT ${prefixed('t', LEDGER_COLUMNS)} FROM tool_calls AS t JOIN runs AS r ON r.run_id = t.run_id
       WHERE t.session_id = $1 AND t.approval_id <> '' AND t.decision IS NULL AND r.ended_at IS NULL AND ${STILL_DECIDABLE} ORDER BY t.ledger_id`,
      [sessionId],
    );
    return rows.map(toPending);
  }

  async getPendingApproval(sessionId: string, approvalId: string): Promise<PendingApprovalRecord | undefined> {
    const [row] = await this.ledgerRows(
      `SELECT ${prefixed('t', LEDGER_COLUMNS)} FROM tool_calls AS t JOIN runs AS r ON r.run_id = t.run_id
       WHERE t.approval_id = $1 AND t.session_id = $2 AND t.approval_id <> '' AND t.decision IS NULL AND r.ended_at IS NULL AND ${STILL_DECIDABLE} ORDER BY t.ledger_id LIMIT 1`,
      [approvalId, sessionId],
    );
    return row === undefined ? undefined : toPendingRecord(row);
  }

  async policyVersion(): Promise<number> {
    const [row] = await this.rows<{ version: number }>('SELECT version FROM policy_version');
    return row?.version ?? 0;
  }

  async publish(message: ClusterMessage): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [this.channel, encodeClusterMessage(message)]);
  }

  subscribe(listener: (message: ClusterMessage) => void): () => void {
    return this.listener.subscribe(listener);
  }

  /** Frees the instance id and ends the notification connection and the pool; runs this instance holds stay owned until their lease runs out (see releaseRuns). */
  async close(): Promise<void> {
    this.closed ??= (async () => {
      await this.listener.close();
      // The id's row goes with a closing process (ids made up at each start would pile up); one that dies leaves it.
      await this.pool.query('DELETE FROM instances WHERE instance_id = $1 AND incarnation = $2', [this.instanceId, this.incarnation]).catch(() => undefined);
      await this.name.close();
      await this.pool.end();
    })();
    return this.closed;
  }

  private async rows<Row extends QueryResultRow>(text: string, values?: unknown[]): Promise<Row[]> {
    return (await this.pool.query<Row>(text, values)).rows;
  }

  /** Ledger rows, their deadlines on this instance's clock. */
  private async ledgerRows(text: string, values?: unknown[]): Promise<LedgerRow[]> {
    return (await this.rows<LedgerRow>(text, values)).map((row) => this.onOwnClock(row));
  }

  /**
   * A ledger row as read, its deadline on this instance's clock: kept on the database's (see ledger changes' `clock`),
   * as every check of it (the waiting list, a decision, a takeover) reads it.
   */
  private onOwnClock(row: LedgerRow): LedgerRow {
    return row.expires_at === null ? row : { ...row, expires_at: this.clock.fromDatabase(row.expires_at) };
  }
}

/**
 * A process's hold on its instance id: a row of `instances` with its incarnation and how long it is alive without a
 * renewal (renewed with its leases), and a session advisory lock on a connection of its own, which PostgreSQL frees
 * the moment the process dies (its connection closes with it). An id is taken when no other process holds it: no row,
 * a row whose holder stopped renewing (paused, cut off) for longer than its lease, or a row whose holder's lock is
 * free and whose heartbeat then stays still for a renewal and a half (killed, crashed; a holder alive but whose lock
 * connection dropped renews within that time, and the start is refused). Taking it gives up the runs its previous
 * lives owned, with their fencing tokens raised, so nothing a previous life still has in memory can be written into
 * them. A holder whose lock connection drops takes the lock again on a new one while its row is still its own.
 */
class InstanceName {
  private lock: Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private retaking: Promise<void> | undefined;
  private closed = false;

  private constructor(
    private readonly hold: InstanceHold,
    lock: Client | undefined,
    /** Whether taking the id gave up runs a previous life of it owned. */
    readonly gaveUpRuns: boolean,
  ) {
    if (lock === undefined) this.retakeLater();
    else this.keep(lock);
  }

  static async take(hold: InstanceHold): Promise<InstanceName> {
    const { pool, location, instanceId, incarnation, leaseMs } = hold;
    const lock = await openLockConnection(hold);
    try {
      const locked = await tryLock(lock, hold);
      let seen = locked ? await heartbeatOf(pool, instanceId) : undefined;
      // The lock is free but the heartbeat recent: its holder died, or lives on with its lock connection dropped (the
      // database restarted, an idle timeout, a terminated backend). A live one renews within a renewal and a half.
      if (seen !== undefined && seen.left >= 0) {
        const waitMs = Math.min(seen.left, Math.ceil(1.5 * renewalIntervalMs(leaseMs)));
        hold.log(`Instance id "${instanceId}" is free of its lock but its holder's heartbeat is recent (good for ${seen.left} ms more): waiting up to ${waitMs} ms to see whether it still renews it.`);
        const after = await heartbeatStill(pool, instanceId, seen, waitMs);
        if (after === 'moved') {
          throw new StoreError(
            location,
            'instance-in-use',
            `instance id "${instanceId}" is held by another live Airlock process since ${new Date(seen.startedAt).toISOString()}: its lock was free (its connection to the database dropped) but it renewed its hold while this one waited`,
          );
        }
        if (after === 'gone') seen = undefined;
      }
      const gaveUp = await inTransaction(pool, async (client) => {
        const taken = await client.query(
          `INSERT INTO instances (instance_id, incarnation, started_at, alive_until) VALUES ($1, $2, ${DB_NOW}, ${DB_NOW} + $3::bigint)
           ON CONFLICT (instance_id) DO UPDATE SET incarnation = excluded.incarnation, started_at = excluded.started_at, alive_until = excluded.alive_until
           WHERE instances.alive_until < ${DB_NOW} OR ($4::boolean AND instances.incarnation = $5::text AND instances.alive_until = $6::bigint)
           RETURNING 1`,
          [instanceId, incarnation, leaseMs, locked, seen?.incarnation ?? null, seen?.aliveUntil ?? null],
        );
        if (taken.rowCount === 0) {
          const holder = await heartbeatOf(client, instanceId);
          const since = holder === undefined ? '' : ` since ${new Date(holder.startedAt).toISOString()}, its lease good for ${Math.max(0, holder.left)} ms more`;
          throw new StoreError(location, 'instance-in-use', `instance id "${instanceId}" is held by another live Airlock process${since}`);
        }
        const released = await client.query(
          'UPDATE runs SET owner = NULL, owner_incarnation = NULL, lease_until = NULL, fence = fence + 1 WHERE owner = $1 AND owner_incarnation IS DISTINCT FROM $2 AND ended_at IS NULL',
          [instanceId, incarnation],
        );
        return (released.rowCount ?? 0) > 0;
      });
      // Taken without the lock (its stalled holder still has it): taken as soon as that one lets it go.
      if (!locked) await lock.end().catch(() => {});
      return new InstanceName(hold, locked ? lock : undefined, gaveUp);
    } catch (error) {
      await lock.end().catch(() => {});
      throw error;
    }
  }

  /** Lets the id go for good (another process took it): frees its lock, and takes it no more. */
  async giveUp(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.retaking;
    const lock = this.lock;
    this.lock = undefined;
    await lock?.end().catch(() => {});
  }

  /** Frees the id's lock: a process started under it next takes it at once. */
  async close(): Promise<void> {
    await this.giveUp();
  }

  private keep(lock: Client): void {
    this.lock = lock;
    lock.once('end', () => {
      if (this.lock !== lock || this.closed) return;
      this.lock = undefined;
      this.hold.log(`The connection holding the lock of instance id "${this.hold.instanceId}" was lost: taking the lock again.`);
      this.retaking = this.retake();
    });
  }

  private retakeLater(): void {
    if (this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.retaking = this.retake();
    }, renewalIntervalMs(this.hold.leaseMs));
    this.retry.unref();
  }

  /**
   * Takes the id's lock again on a new connection, and keeps it only while the id's row still has this incarnation.
   * Refused (a process starting under the id holds it while it waits to see this one renew) or unreachable, it tries
   * again a renewal interval later.
   */
  private async retake(): Promise<void> {
    if (this.closed) return;
    const { pool, instanceId, incarnation, log } = this.hold;
    let lock: Client | undefined;
    try {
      lock = await openLockConnection(this.hold);
      if (await tryLock(lock, this.hold)) {
        const ours = await pool.query('SELECT 1 FROM instances WHERE instance_id = $1 AND incarnation = $2', [instanceId, incarnation]);
        if ((ours.rowCount ?? 0) === 0) {
          this.closed = true;
          log(`Instance id "${instanceId}" is no longer this process's: its lock is left to the process that holds it.`);
        } else if (!this.closed) {
          this.keep(lock);
          log(`The lock of instance id "${instanceId}" is held again.`);
          return;
        }
      }
    } catch {
      // The database cannot be reached yet: tried again below.
    }
    await lock?.end().catch(() => {});
    this.retakeLater();
  }
}

interface InstanceHold {
  pool: Pool;
  config: ClientConfig;
  schema: string;
  location: string;
  instanceId: string;
  incarnation: string;
  leaseMs: number;
  log: (line: string) => void;
}

/** The id's row as last renewed: `left` is how long, by the database's clock, its holder is alive without renewing. */
interface Heartbeat {
  incarnation: string;
  startedAt: number;
  aliveUntil: number;
  left: number;
}

async function openLockConnection(hold: InstanceHold): Promise<Client> {
  const lock = new Client(hold.config);
  // A failure ends the connection: reported, and the lock taken again, on its 'end'.
  lock.on('error', () => {});
  try {
    await lock.connect();
  } catch (error) {
    await lock.end().catch(() => {});
    throw error;
  }
  return lock;
}

async function tryLock(lock: Client, hold: InstanceHold): Promise<boolean> {
  const { rows } = await lock.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [`airlock instance ${hold.instanceId} of ${hold.schema}`]);
  return rows[0]?.locked === true;
}

async function heartbeatOf(client: Queryable, instanceId: string): Promise<Heartbeat | undefined> {
  const { rows } = await client.query<{ incarnation: string; started_at: number; alive_until: number; left: number }>(
    `SELECT incarnation, started_at, alive_until, alive_until - ${DB_NOW} AS left FROM instances WHERE instance_id = $1`,
    [instanceId],
  );
  const row = rows[0];
  return row === undefined ? undefined : { incarnation: row.incarnation, startedAt: row.started_at, aliveUntil: row.alive_until, left: row.left };
}

/** Watches the id's row for `waitMs`: "moved" as soon as its holder renews it (or another takes it), "gone" once it is deleted. */
async function heartbeatStill(pool: Pool, instanceId: string, seen: Heartbeat, waitMs: number): Promise<'still' | 'moved' | 'gone'> {
  const until = performance.now() + waitMs;
  const every = Math.max(10, Math.min(250, Math.floor(waitMs / 10)));
  for (;;) {
    const now = await heartbeatOf(pool, instanceId);
    if (now === undefined) return 'gone';
    if (now.incarnation !== seen.incarnation || now.aliveUntil !== seen.aliveUntil) return 'moved';
    const left = until - performance.now();
    if (left <= 0) return 'still';
    await delay(Math.min(every, left));
  }
}

/**
 * Whether what let a call run unasked still holds in the store: the rules and settings at the version the instance
 * read them at, the grant still kept, the chat's confirmation still off. `locked` share-locks the rows it reads until
 * the write commits, so a revoke, a rule's change or confirmation turned back on either waits for the write (and was
 * answered after it) or is seen by it: the write then fails, and the call is judged again. `read` only reads.
 */
function unaskedHolds(sessionId: string, unasked: UnaskedAllow, p: (value: unknown) => string): { locked: string; read: string } {
  const checks = [`SELECT 1 FROM policy_version WHERE version = ${p(unasked.policyVersion)}::bigint`];
  if (unasked.grantId !== undefined) checks.push(`SELECT 1 FROM grants WHERE grant_id = ${p(unasked.grantId)}::text`);
  if (unasked.confirmationOff === true) checks.push(`SELECT 1 FROM sessions WHERE session_id = ${p(sessionId)}::text AND NOT confirm_tool_calls`);
  return {
    locked: checks.map((check) => `EXISTS (${check} FOR SHARE)`).join(' AND '),
    read: `(${checks.map((check) => `EXISTS (${check})`).join(' AND ')})`,
  };
}

/** The conversation messages that come with the events, in order, in the caller's transaction. */
async function insertMessagesOf(client: Queryable, inputs: readonly AppendEventInput[]): Promise<void> {
  const rows = inputs.flatMap((input) => (input.messages ?? []).map((message) => ({ sessionId: input.sessionId, json: JSON.stringify(message), at: input.at, runId: input.runId })));
  if (rows.length === 0) return;
  try {
    await client.query(
      'INSERT INTO messages (session_id, json, at, run_id) SELECT session_id, json, at, run_id FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) WITH ORDINALITY AS m(session_id, json, at, run_id, n) ORDER BY n',
      [rows.map((row) => row.sessionId), rows.map((row) => row.json), rows.map((row) => row.at), rows.map((row) => row.runId)],
    );
  } catch (error) {
    throw foreignKeyAsNotFound(error, 'session', rows[0]!.sessionId);
  }
}

async function applyLedgerChange(client: Queryable, runId: string, sessionId: string, change: LedgerChange, clock: DatabaseClock): Promise<void> {
  let changed: number | null;
  switch (change.kind) {
    case 'start':
      await client.query(
        `INSERT INTO tool_calls (run_id, session_id, tool_call_id, tool_name, arguments, approval_id, executes_code, tool_version, requested_at, expires_at, shown_tool, exact_grants_only, asked_because)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [runId, sessionId, change.toolCallId, change.toolName, JSON.stringify(change.arguments), change.approvalId, change.executesCode, change.toolVersion, change.requestedAt, clock.toDatabase(change.expiresAt), shownToolJson(change), change.exactGrantsOnly === true, askedBecauseJson(change)],
      );
      return;
    case 'decision':
      // Only an undecided call: a decision claimed earlier (claimDecision, from any instance) stays as claimed, but
      // for a claimed allow that a deny rule then refused (the rules changed while the call waited): that is the
      // call's decision, and the ledger says so, as a single instance's does.
      changed = (
        await client.query(
          `UPDATE tool_calls SET decision = $3, source = $4, reason = $5, decided_by_grant = $6, decided_by_rule = $7, decided_at = $8, connection_id = $9, client_label = $10,
             edited_arguments = $11, decided_by_rule_text = $12
           WHERE run_id = $1 AND tool_call_id = $2 AND (decision IS NULL OR (decision = 'allow' AND $3::text = 'deny' AND $4::text = 'rule'))`,
          [
            runId,
            change.toolCallId,
            change.decision,
            change.source,
            change.reason ?? null,
            change.decidedByGrant ?? null,
            change.decidedByRule ?? null,
            change.decidedAt,
            change.by?.connectionId ?? null,
            change.by?.clientLabel ?? null,
            change.editedArguments === undefined ? null : JSON.stringify(change.editedArguments),
            change.decidedByRuleText === undefined ? null : storedReasonText(change.decidedByRuleText),
          ],
        )
      ).rowCount;
      if (changed === 0) changed = (await client.query('SELECT 1 FROM tool_calls WHERE run_id = $1 AND tool_call_id = $2', [runId, change.toolCallId])).rowCount;
      break;
    case 'running':
      changed = (await client.query(`UPDATE tool_calls SET started_at = $3 WHERE run_id = $1 AND tool_call_id = $2 AND ${notStopped('$1')}`, [runId, change.toolCallId, change.startedAt])).rowCount;
      if (changed === 0 && (await stopStored(client, runId))) throw new RunStoppedError(runId, change.toolCallId);
      break;
    case 'end':
      changed = (
        await client.query(
          'UPDATE tool_calls SET outcome = $3, result = $4, cut_bytes = $5, cut_characters = $6, ended_at = $7, started_at = CASE WHEN $9::boolean THEN $8::bigint ELSE started_at END WHERE run_id = $1 AND tool_call_id = $2',
          [runId, change.toolCallId, change.outcome, change.result, change.cut?.bytes ?? null, change.cut?.characters ?? null, change.endedAt, change.startedAt ?? null, change.startedAt !== undefined],
        )
      ).rowCount;
      break;
  }
  if (changed === 0) throw new NotFoundError('tool call', `${runId}/${change.toolCallId}`);
}

/** This instance's clock and the database's, read around one statement. */
async function readClocks(client: Queryable, now: () => number): Promise<ClockReading> {
  const before = now();
  const { rows } = await client.query<{ at: number }>(`SELECT ${DB_NOW} AS at`);
  return { before, at: rows[0]!.at, after: now() };
}

/**
 * Says at the start when this instance's clock is off the database's by more than CLOCK_OFF_WARNING_MS. Leases and
 * the deadlines of waiting calls hold whatever it is; the times this instance records (a call put up, decided, run)
 * are on its own.
 */
function sayIfClockOff(clock: DatabaseClock, log: (line: string) => void): void {
  const off = Math.abs(clock.aheadMs);
  if (off <= CLOCK_OFF_WARNING_MS) return;
  log(
    `This instance's clock is ${(off / 1000).toFixed(1)} s ${clock.aheadMs > 0 ? 'behind' : 'ahead of'} the database's: leases and the deadlines of waiting calls follow the database's clock, but the times it records (a call put up, decided, run) are its own, out of step with other instances'. Set its clock right (NTP).`,
  );
}

function shownToolJson(change: Extract<LedgerChange, { kind: 'start' }>): string | null {
  return change.tool === undefined ? null : JSON.stringify(change.tool);
}

/**
 * The condition of a write that marks a call of the run (`runId`, a parameter) running: its Stop is not stored. The
 * run's row is share-locked, so a Stop under way is waited for and read as committed (a plain read takes the
 * statement's snapshot, which misses it), and a Stop that comes after waits for the write's commit: either the call
 * is marked running before the Stop is stored, and the Stop stops its tool, or it never starts.
 */
function notStopped(runId: string): string {
  return `EXISTS (SELECT 1 FROM runs WHERE run_id = ${runId} AND NOT cancel_requested FOR SHARE)`;
}

/** Whether the run's Stop is stored: read to say why a write that marks a call running was refused. */
async function stopStored(client: Queryable, runId: string): Promise<boolean> {
  return ((await client.query('SELECT 1 FROM runs WHERE run_id = $1 AND cancel_requested', [runId])).rowCount ?? 0) > 0;
}

/**
 * A ledger change as a data-modifying CTE of the event's statement: applied only when the event was inserted (the
 * `inserted` CTE). A decision changes only an undecided call: one claimed earlier (claimDecision) stays as claimed.
 * A start's deadline is written on the database's clock (`clock`), as applyLedgerChange writes it.
 */
function ledgerStatement(runId: string, sessionId: string, change: LedgerChange, p: (value: unknown) => string, clock: DatabaseClock): string {
  const inserted = 'EXISTS (SELECT 1 FROM inserted)';
  switch (change.kind) {
    case 'start':
      return `INSERT INTO tool_calls (run_id, session_id, tool_call_id, tool_name, arguments, approval_id, executes_code, tool_version, requested_at, expires_at, shown_tool, exact_grants_only, asked_because)
        SELECT ${p(runId)}::text, ${p(sessionId)}::text, ${p(change.toolCallId)}::text, ${p(change.toolName)}::text, ${p(JSON.stringify(change.arguments))}::text, ${p(change.approvalId)}::text,
          ${p(change.executesCode)}::boolean, ${p(change.toolVersion)}::text, ${p(change.requestedAt)}::bigint, ${p(clock.toDatabase(change.expiresAt))}::bigint, ${p(shownToolJson(change))}::text, ${p(change.exactGrantsOnly === true)}::boolean,
          ${p(askedBecauseJson(change))}::text
        WHERE ${inserted}`;
    case 'decision':
      return `UPDATE tool_calls SET decision = ${p(change.decision)}, source = ${p(change.source)}, reason = ${p(change.reason ?? null)}, decided_by_grant = ${p(change.decidedByGrant ?? null)},
          decided_by_rule = ${p(change.decidedByRule ?? null)}, decided_by_rule_text = ${p(change.decidedByRuleText === undefined ? null : storedReasonText(change.decidedByRuleText))}, decided_at = ${p(change.decidedAt)}, connection_id = ${p(change.by?.connectionId ?? null)}, client_label = ${p(change.by?.clientLabel ?? null)},
          edited_arguments = ${p(change.editedArguments === undefined ? null : JSON.stringify(change.editedArguments))}
        WHERE run_id = ${p(runId)} AND tool_call_id = ${p(change.toolCallId)} AND ${inserted}
          AND (decision IS NULL OR (decision = 'allow' AND ${p(change.decision)}::text = 'deny' AND ${p(change.source)}::text = 'rule'))`;
    case 'running':
      return `UPDATE tool_calls SET started_at = ${p(change.startedAt)} WHERE run_id = ${p(runId)} AND tool_call_id = ${p(change.toolCallId)} AND ${inserted}`;
    case 'end':
      return `UPDATE tool_calls SET outcome = ${p(change.outcome)}, result = ${p(change.result)}, cut_bytes = ${p(change.cut?.bytes ?? null)}::bigint,
          cut_characters = ${p(change.cut?.characters ?? null)}::bigint, ended_at = ${p(change.endedAt)}, started_at = CASE WHEN ${p(change.startedAt !== undefined)}::boolean THEN ${p(change.startedAt ?? null)}::bigint ELSE started_at END
        WHERE run_id = ${p(runId)} AND tool_call_id = ${p(change.toolCallId)} AND ${inserted}`;
  }
}

/**
 * The notification channel of a schema. Notifications are per database, so the schema is in the name; a name that
 * would pass PostgreSQL's 63 bytes is shortened with a hash of the schema.
 */
/** The application name of an instance's notification connection: how another instance finds it (endStalledListeners). */
function listenerName(incarnation: string): string {
  return `airlock listener ${incarnation}`;
}

export function channelName(schema: string): string {
  const channel = `airlock_events__${schema}`;
  if (Buffer.byteLength(channel) <= MAX_IDENTIFIER_BYTES) return channel;
  return `airlock_events__${createHash('sha256').update(schema).digest('hex').slice(0, 40)}`;
}

/**
 * Runs `claim` in the open transaction of `client` so that it ends before `deadline` (this process's
 * `performance.now()`), or throws DecisionPastDeadlineError and the transaction is rolled back: no lock is waited on
 * past the deadline (`lock_timeout`, `statement_timeout`), and the deadline is checked again once the row is claimed,
 * which leaves only the COMMIT after it. A process frozen between the service's own check and the claim, or a claim
 * waiting on a row lock, would otherwise apply a decision its client had reported as failed.
 */
async function claimBefore<T>(deadline: number | undefined, approvalId: string, client: Queryable, claim: () => Promise<T>): Promise<T> {
  if (deadline === undefined) return claim();
  const late = () => new DecisionPastDeadlineError(approvalId, Math.max(0, performance.now() - deadline));
  const remaining = Math.floor(deadline - performance.now());
  if (remaining <= 0) throw late();
  await client.query(`SELECT set_config('lock_timeout', $1, true), set_config('statement_timeout', $1, true)`, [`${remaining}ms`]);
  let row: T;
  try {
    row = await claim();
  } catch (error) {
    // 55P03 lock_not_available (lock_timeout), 57014 query_canceled (statement_timeout).
    const code = (error as { code?: unknown }).code;
    if (code === '55P03' || code === '57014') throw late();
    throw error;
  }
  if (performance.now() > deadline) throw late();
  return row;
}

/**
 * The URL without its password or parameters, and the schema: how errors name the database, to the person and in the
 * log. The driver takes any parameter (`?password=`, `?sslpassword=`) as a setting, so none is kept.
 */
export function describeLocation(url: string, schema: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return `${parsed.toString()} (schema ${schema})`;
  } catch {
    return `the PostgreSQL database (schema ${schema})`;
  }
}

/**
 * The pool's connection. PostgreSQL text cannot hold U+0000, which a tool's result can (`printf 'a\0b'`, a binary
 * file, a page), and a write with one fails: the run stopped and the ledger kept an allowed call with no outcome.
 * Every string parameter has it replaced with U+FFFD, so the write goes through and the ledger keeps what ran, that
 * one character shown as a replacement. JSON kept as text is not touched: JSON writes it as `\u0000`.
 *
 * A statement not answered within its `query_timeout` ends the connection: left open, the next statement on it (a
 * transaction's ROLLBACK) would wait behind the first, on a path that may have died.
 */
export class PooledClient extends Client {
  private readonly queryTimeoutMs: number;

  constructor(config?: ClientConfig) {
    super(config);
    this.queryTimeoutMs = config?.query_timeout ?? 0;
  }

  override query(...args: unknown[]): never {
    const run = super.query.bind(this) as (...given: unknown[]) => unknown;
    const given = withoutNulParameters(args);
    const last = given.at(-1);
    if (typeof last === 'function') {
      const callback = last as (error: unknown, result: unknown) => void;
      given[given.length - 1] = (error: unknown, result: unknown) => callback(this.timedOut(error), result);
      return run(...given) as never;
    }
    const answer = run(...given);
    if (!(answer instanceof Promise)) return answer as never;
    return answer.catch((error: unknown) => {
      throw this.timedOut(error);
    }) as never;
  }

  private timedOut(error: unknown): unknown {
    if (!isPgQueryTimeout(error)) return error;
    // With its statement still unanswered, end() drops the socket at once.
    this.end().catch(() => undefined);
    return new QueryTimeoutError(this.queryTimeoutMs, { cause: error });
  }
}

function withoutNulParameters(args: readonly unknown[]): unknown[] {
  const [first, second, ...rest] = args;
  if (Array.isArray(second)) return [first, second.map(withoutNul), ...rest];
  if (typeof first === 'object' && first !== null && Array.isArray((first as { values?: unknown }).values)) {
    const config = first as { values: unknown[] };
    return [{ ...config, values: config.values.map(withoutNul) }, second, ...rest];
  }
  return [...args];
}

function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
  if (Array.isArray(value)) return value.map(withoutNul);
  return value;
}

/** A value inside libpq's `options` parameter: spaces and backslashes are escaped with a backslash. */
function escapeOption(value: string): string {
  return value.replace(/[\\ ]/g, (character) => `\\${character}`);
}

function asStoreError(location: string, error: unknown): unknown {
  if (error instanceof StoreError || !isUnreachable(error)) return error;
  return new StoreError(location, 'unreachable', `cannot be reached (${errorText(error)})`, { cause: error });
}

function isUnreachable(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isUnreachable);
  if (error instanceof DatabaseError) return UNREACHABLE_CLASSES.some((prefix) => error.code?.startsWith(prefix) === true);
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return (code !== undefined && UNREACHABLE_CODES.has(code)) || /timeout|terminated/i.test(error.message);
}

function errorText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(errorText).join('; ');
  return error instanceof Error ? error.message || error.name : String(error);
}

function foreignKeyAsNotFound(error: unknown, what: string, id: string): unknown {
  return error instanceof DatabaseError && error.code === PG_FOREIGN_KEY_VIOLATION ? new NotFoundError(what, id) : error;
}

function prefixed(alias: string, columns: string): string {
  return columns
    .split(', ')
    .map((column) => `${alias}.${column}`)
    .join(', ');
}

export const DEFAULT_POOL_SIZE = 20;

/** One connection made and closed: whether the database answers at all, within the connect timeout. */
async function probe(config: ClientConfig): Promise<void> {
  const client = new Client(config);
  client.on('error', () => {});
  await client.connect();
  await client.end();
}

async function updateSessionWith(client: Queryable, sessionId: string, changes: SessionChanges): Promise<void> {
  await client.query(
    `UPDATE sessions SET title = coalesce($2, title), updated_at = coalesce($3, updated_at), confirm_tool_calls = coalesce($4, confirm_tool_calls),
       last_run_id = CASE WHEN $5 THEN $6 ELSE last_run_id END
     WHERE session_id = $1`,
    [sessionId, changes.title ?? null, changes.updatedAt ?? null, changes.confirmToolCalls ?? null, changes.lastRunId !== undefined, changes.lastRunId ?? null],
  );
}

/** Share-locks a chat's row for the transaction, as what is saved for it must not outlive it; NotFoundError when it is gone. */
async function lockChatForShare(client: Queryable, sessionId: string): Promise<void> {
  const { rowCount } = await client.query('SELECT 1 FROM sessions WHERE session_id = $1 FOR SHARE', [sessionId]);
  if (rowCount === 0) throw new NotFoundError('session', sessionId);
}

async function saveGrantWith(client: Queryable, grant: StoredGrant): Promise<void> {
  await client.query(
    `INSERT INTO grants (${GRANT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (grant_id) DO UPDATE SET scope_kind = excluded.scope_kind, scope_value = excluded.scope_value, tool_name = excluded.tool_name,
       arguments = excluded.arguments, tool_version = excluded.tool_version, created_at = excluded.created_at`,
    [grant.grantId, grant.scope, grant.sessionId, grant.toolName, grant.arguments === null ? null : JSON.stringify(grant.arguments), grant.toolVersion, grant.createdAt],
  );
}
