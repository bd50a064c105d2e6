import {
  type AirlockStore,
  type AppendEventInput,
  type AuditPage,
  type AuditQuery,
  type ChatMessage,
  type Decision,
  type EventPage,
  type LedgerChange,
  type LoopEvent,
  type MessagePage,
  type MessagePageQuery,
  type MessageRun,
  type RunBeginning,
  type SessionChanges,
  type SessionPageQuery,
  type StoredGrant,
  type StoredRule,
  type Rule,
  type StoredRun,
  type StoredSessionSummary,
  type ToolCallRecord,
  RunStoppedError,
  searchSessionPage,
} from '@airlock/api';
import { NotFoundError, storedReasonText, type AskedBecause } from '@airlock/core';
import type { Database, Statement } from 'better-sqlite3';
import { dirname, join } from 'node:path';
import { importJsonSessions, type JsonImportReport } from './import-json-sessions';
import { migrate } from './migrate';
import { migrations as allMigrations, type Migration } from './migrations';
import { asStoreError, openDatabase } from './open-database';
import { lastSeqOfPage } from './event-page';
import { asStorageFailure, StorageFailure, withErrorsMapped } from './storage-failure';
import { GroupedCommits } from './grouped-commits';
import { SyncedCommits } from './synced-commits';
import { WalSyncAhead } from './wal-sync-ahead';
import {
  LEDGER_BYTES,
  SESSION_COLUMNS,
  askedBecauseJson,
  auditLimit,
  callsOfPage,
  asDamagedStore,
  deleteRowSql,
  damagedRecordOf,
  decodeCursor,
  pageEnd,
  pageMessages,
  pageToolCalls,
  readAuditPage,
  readMessagePage,
  ruleScopeValue,
  storedDecision,
  storedEvent,
  storedMessage,
  storedMessages,
  toGrant,
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

export interface SqliteStoreOptions {
  /** The data folder; `airlock.db` is created in it (mode 0600, the folder 0700) on first start. */
  directory: string;
  /** Receives a line for each former JSON session file imported or skipped. Default `console.warn`. */
  log?: (line: string) => void;
  /** How long to wait for a lock another process holds before failing. Default 5,000 ms. */
  busyTimeoutMs?: number;
  /** The schema changes to apply; default every migration of this version. Tests pass fewer or more. */
  migrations?: readonly Migration[];
  /** Clock for `applied_at` and import records. Default `Date.now`. */
  now?: () => number;
}

export const DATABASE_FILE = 'airlock.db';

const SESSION_ORDER = 'ORDER BY updated_at DESC, created_at DESC, session_id';
/**
 * A page of sessions (see listSessionPage): both walk sessions_by_activity backwards from where the page starts, a
 * row value comparing as the index orders. Exported for the test that asks SQLite how it reads them.
 */
export const SESSION_PAGE_QUERIES = {
  first: `SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, session_id DESC LIMIT @limit`,
  after: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE (updated_at, session_id) < (@updatedAt, @sessionId) ORDER BY updated_at DESC, session_id DESC LIMIT @limit`,
};
const AUDIT_FILTERS = ['session_id = @sessionId', 'tool_name = @toolName', 'decision = @decision', 'decision IS NULL', 'requested_at >= @from', 'requested_at < @to'];
const AUDIT_AFTER_CURSOR = '(requested_at < @cursorAt OR (requested_at = @cursorAt AND ledger_id < @cursorId))';

/**
 * The default store: one SQLite file in the data folder, in WAL mode, held by this process alone. Every statement
 * is prepared once; an event and its ledger change are written in one transaction.
 */
export class SqliteStore implements AirlockStore {
  /** What the one-time import of the former JSON session files did at this open (empty when there was nothing). */
  readonly jsonImport: JsonImportReport;
  private readonly statements;
  private readonly auditStatements = new Map<string, Statement<Record<string, unknown>, SizedLedgerRow>>();
  private readonly appendEventTransaction;
  private readonly appendEventsTransaction;
  private readonly deleteSessionTransaction;
  private readonly beginRunTransaction;
  private readonly syncAhead: WalSyncAhead;
  private readonly grouped: GroupedCommits;
  private readonly synced: SyncedCommits;
  private closed = false;

  private constructor(
    private readonly db: Database,
    readonly file: string,
    jsonImport: JsonImportReport,
  ) {
    this.jsonImport = jsonImport;
    this.syncAhead = new WalSyncAhead(`${file}-wal`);
    this.synced = new SyncedCommits(db);
    const together = db.transaction((body: () => void) => body());
    this.grouped = new GroupedCommits({ inOneTransaction: (body) => this.synced.run(() => together.immediate(body)), inTransaction: () => db.inTransaction });
    this.statements = prepareStatements(db);
    const s = this.statements;
    this.appendEventTransaction = db.transaction((input: AppendEventInput) => {
      for (const message of input.messages ?? []) s.insertMessage.run({ sessionId: input.sessionId, json: JSON.stringify(message), at: input.at, runId: input.runId });
      s.insertEvent.run(input.runId, input.seq, JSON.stringify(input.event), input.at);
      if (input.ledger !== undefined) this.applyLedgerChange(input.runId, input.sessionId, input.ledger);
      if (input.grant !== undefined) s.saveGrant.run(grantParameters(input.grant));
    });
    const appendOne = this.appendEventTransaction;
    this.appendEventsTransaction = db.transaction((inputs: readonly AppendEventInput[]) => {
      // Nested: each runs as a savepoint of this one transaction.
      for (const input of inputs) appendOne(input);
    });
    this.beginRunTransaction = db.transaction(({ run, message, session }: RunBeginning) => {
      s.insertRun.run(run.runId, run.sessionId, JSON.stringify(run.options), run.startedAt, run.endedAt, run.endReason);
      s.insertMessage.run({ sessionId: run.sessionId, json: JSON.stringify(message), at: run.startedAt, runId: run.runId });
      s.updateSession.run(sessionUpdate(run.sessionId, session));
    });
    this.deleteSessionTransaction = db.transaction((sessionId: string) => {
      s.retireRuns.run(sessionId);
      s.deleteSessionGrants.run(sessionId);
      s.deleteSessionRules.run(sessionId);
      s.deleteSession.run(sessionId);
    });
  }

  /**
   * Opens the store in `options.directory`: checks the file, applies pending migrations, imports the former JSON
   * session files once. Rejects with a `StoreError` when the file is damaged, locked, or from a newer version.
   */
  static async open(options: SqliteStoreOptions): Promise<SqliteStore> {
    const file = join(options.directory, DATABASE_FILE);
    const now = options.now ?? Date.now;
    const log = options.log ?? ((line: string) => console.warn(line));
    const db = openDatabase({ directory: options.directory, file, busyTimeoutMs: options.busyTimeoutMs ?? 5000 });
    try {
      migrate(db, { file, migrations: options.migrations ?? allMigrations, now: now() });
      const report = importJsonSessions(db, { directory: options.directory, now: now() });
      for (const { file: name, reason } of report.skipped) log(`Skipped the saved chat ${join(options.directory, name)}: ${reason}`);
      if (report.imported.length > 0) log(`Imported ${report.imported.length} saved chat(s) from ${options.directory} into ${file}; the JSON files were left in place.`);
      // A row whose text does not read fails the read that met it with the file named and what to do, here at start
      // as later: quick_check reads the pages, not the JSON in them.
      return withErrorsMapped(new SqliteStore(db, file, report), (error) => asDamagedStore(file, error, (row) => `sqlite3 ${shellQuoted(file)} "${deleteRowSql(row)}"`));
    } catch (error) {
      db.close();
      throw asStoreError(file, error);
    }
  }

  damagedRecord(error: unknown): string | undefined {
    return damagedRecordOf(error);
  }

  /**
   * Whether the data folder could not take a statement for now: it is full, failing, or read-only (see
   * asStorageFailure). The same write may succeed once space is freed or the folder fixed.
   */
  isUnavailable(error: unknown): boolean {
    return error instanceof StorageFailure || asStorageFailure(dirname(this.file), error) instanceof StorageFailure;
  }

  async listSessions(): Promise<StoredSessionSummary[]> {
    return this.statements.listSessions.all().map(toSession);
  }

  async listSessionPage(query: SessionPageQuery): Promise<StoredSessionSummary[]> {
    const { titleContains, ...page } = query;
    if (titleContains !== undefined) return searchSessionPage((batch) => this.listSessionPage(batch), { ...page, titleContains });
    const rows = query.after === undefined ? this.statements.firstSessionPage.all({ limit: query.limit }) : this.statements.sessionPageAfter.all({ ...query.after, limit: query.limit });
    return rows.map(toSession);
  }

  async getSession(sessionId: string): Promise<StoredSessionSummary | undefined> {
    const row = this.statements.getSession.get(sessionId);
    return row === undefined ? undefined : toSession(row);
  }

  async createSession(session: StoredSessionSummary): Promise<void> {
    // A chat that starts with confirmation off lets its calls run unasked: synced, as turning it off is.
    const insert = () => this.statements.insertSession.run(session.sessionId, session.title, session.createdAt, session.updatedAt, session.confirmToolCalls ? 1 : 0, session.lastRunId);
    if (session.confirmToolCalls) this.unsynced(insert);
    else this.synced.run(insert);
  }

  async updateSession(sessionId: string, changes: SessionChanges): Promise<void> {
    // Turning confirmation on or off is synced (lost, calls would run unasked, or be asked after all); a title, the
    // time of the last activity or the last run are not.
    const update = () => this.statements.updateSession.run(sessionUpdate(sessionId, changes));
    if (changes.confirmToolCalls === undefined) this.unsynced(update);
    else this.synced.run(update);
  }

  async deleteSession(sessionId: string): Promise<void> {
    this.synced.run(() => this.deleteSessionTransaction.immediate(sessionId));
  }

  async appendMessage(sessionId: string, message: ChatMessage, at: number, run?: MessageRun): Promise<void> {
    this.unsynced(() => this.statements.insertMessage.run({ sessionId, json: JSON.stringify(message), at, runId: run?.runId ?? null }));
  }

  async loadMessages(sessionId: string, leftOut?: (record: string) => void): Promise<ChatMessage[]> {
    // Row by row: all the rows' JSON at once would be a second copy of the whole chat before any of it is parsed.
    return storedMessages(this.statements.loadMessages.pluck().iterate(sessionId), sessionId, leftOut);
  }

  async loadMessagePage(sessionId: string, query: MessagePageQuery): Promise<MessagePage> {
    const s = this.statements;
    const before = pageEnd(query.before);
    const sized = s.sizeMessages.all({ sessionId, before, limit: Math.max(0, query.limit) });
    const rows = readMessagePage(sized, query.maxChars, (seqs) => s.messagesAt.all(sessionId, JSON.stringify(seqs)));
    const { rows: read, messages } = pageMessages(rows, sessionId, query.leftOut);
    const calls = callsOfPage(read, messages);
    const toolCalls = calls.length === 0 ? [] : pageToolCalls(s.toolCallsOf.all(sessionId, JSON.stringify(calls)), query.leftOut);
    // Seqs run 1, 2, 3… in a chat: the first's seq says how many come before it.
    const start = rows.length > 0 ? rows[0]!.key - 1 : Math.min(before, s.countMessages.pluck().get(sessionId) ?? 0);
    return { messages, runIds: read.map((row) => row.run_id), start, toolCalls };
  }

  async loadFirstRunMessage(sessionId: string, runId: string): Promise<ChatMessage | undefined> {
    const json = this.statements.firstRunMessage.pluck().get(sessionId, runId);
    return json === undefined ? undefined : storedMessage(json, `a message of chat ${sessionId}`);
  }

  async createRun(run: StoredRun): Promise<void> {
    this.unsynced(() => this.statements.insertRun.run(run.runId, run.sessionId, JSON.stringify(run.options), run.startedAt, run.endedAt, run.endReason));
  }

  async beginRun(beginning: RunBeginning): Promise<void> {
    // Synced as updateSession is: only when the message sets the chat's confirmation.
    const begin = () => this.beginRunTransaction.immediate(beginning);
    if (beginning.session.confirmToolCalls === undefined) this.unsynced(begin);
    else this.synced.run(begin);
  }

  async endRun(runId: string, reason: string, endedAt: number): Promise<void> {
    this.unsynced(() => this.statements.endRun.run(endedAt, reason, runId));
  }

  async requestCancel(runId: string): Promise<boolean> {
    return this.synced.run(() => this.statements.requestCancel.run(runId)).changes > 0;
  }

  async hasRun(runId: string): Promise<boolean> {
    return this.statements.hasRun.get(runId, runId) !== undefined;
  }

  async getRun(runId: string): Promise<StoredRun | undefined> {
    const row = this.statements.getRun.get(runId);
    return row === undefined ? undefined : toRunOrUnreadable(row);
  }

  async listUnfinishedRuns(): Promise<StoredRun[]> {
    return this.statements.listUnfinishedRuns.all().map(toRunOrUnreadable);
  }

  appendEvent(input: AppendEventInput): Promise<void> {
    return this.committed([input], () => this.appendEventTransaction.immediate(input));
  }

  appendEvents(inputs: readonly AppendEventInput[]): Promise<void> {
    return this.committed(inputs, () => this.appendEventsTransaction.immediate(inputs));
  }

  /**
   * A commit that lets a call run (an allow, by the person, a rule or a grant; the mark that its tool started), or
   * that changes which calls run unasked (a rule, a grant, confirmation turned on or off, a chat started with it off),
   * or that the person made to remove something (a chat deleted), is synced to the disk before it returns
   * (synchronous = FULL, the connection's setting, see openDatabase). Every other commit lets nothing run, and losing
   * it to an OS crash or a lost write-out is safe: a call whose start is lost is not asked again, one whose allow or
   * running mark is lost waits again or is reported interrupted, never run twice, a lost tool-end leaves its start so
   * the call is reported interrupted, and a lost run start, message, end or title leaves the chat as it was a moment
   * earlier. Those are written under NORMAL (see `unsynced`): a sync costs 0.3–1.3 ms of the event loop here
   * (docs/benchmarks.md, "Store"), and a run writes many such commits per call. The synced ones asked for in one
   * turn of the event loop share one sync (GroupedCommits). Every synced commit goes through SyncedCommits: one whose
   * sync fails left its frames in the log, which a crash would bring back as committed; it makes them unreadable.
   */
  private async committed(inputs: readonly AppendEventInput[], commit: () => void): Promise<void> {
    if (inputs.some(letsACallRun)) return this.grouped.add(() => this.synced.run(commit));
    this.unsynced(commit);
    if (leavesACallWaiting(inputs)) this.syncAhead.request();
  }

  /**
   * Commits without a sync of its own: the write-ahead log is one file, written in order, so the next synced commit
   * syncs this one too, and a crash of this process alone loses nothing (the operating system has the write).
   */
  private unsynced<T>(commit: () => T): T {
    this.synced.beforeWrite();
    // exec, not pragma(): pragma() makes a statement object each time (15–20 µs each here, against 3). Not a
    // statement prepared once either: SQLite applies this pragma when it compiles the statement, not when it runs it,
    // so one prepared ahead changes nothing at its first run.
    this.db.exec('PRAGMA synchronous = NORMAL');
    try {
      return commit();
    } finally {
      this.db.exec('PRAGMA synchronous = FULL');
    }
  }

  async loadEvents(runId: string, afterSeq: number, page?: EventPage): Promise<LoopEvent[]> {
    if (page === undefined) return this.statements.loadEvents.pluck().all(runId, afterSeq).map((json) => storedEvent(json, `an event of run ${runId}`));
    // Where the page's events stand and their size first, not their text: only what fits is read (and parsed).
    const end = lastSeqOfPage(this.statements.eventSizes.all(runId, afterSeq, Math.max(1, page.events)), page);
    if (end === undefined) return [];
    return this.statements.loadEventRange.pluck().all(runId, afterSeq, end).map((json) => storedEvent(json, `an event of run ${runId}`));
  }

  async lastEventSeq(runId: string): Promise<number> {
    return this.statements.lastEventSeq.pluck().get(runId) ?? 0;
  }

  async loadLastEvent(runId: string): Promise<LoopEvent | undefined> {
    const json = this.statements.loadLastEvent.pluck().get(runId);
    return json === undefined ? undefined : storedEvent(json, `an event of run ${runId}`);
  }

  async listRunToolCalls(runId: string): Promise<ToolCallRecord[]> {
    return this.statements.listRunToolCalls.all(runId).map(toToolCall);
  }

  async listSessionToolCalls(sessionId: string): Promise<ToolCallRecord[]> {
    return this.statements.listSessionToolCalls.all(sessionId).map(toToolCall);
  }

  async findDecision(sessionId: string, approvalId: string): Promise<Decision | undefined> {
    return storedDecision(this.statements.findDecision.pluck().get(approvalId, sessionId), approvalId);
  }

  async requireExactGrants(runId: string, toolCallId: string, askedBecause?: AskedBecause): Promise<boolean> {
    return this.synced.run(() => this.statements.requireExactGrants.run(askedBecause === undefined ? null : JSON.stringify(askedBecause), runId, toolCallId)).changes > 0;
  }

  async listAudit(query: AuditQuery): Promise<AuditPage> {
    const limit = auditLimit(query.limit);
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const sized = this.auditStatement(query, cursor !== undefined).all({
      sessionId: query.sessionId,
      toolName: query.toolName,
      decision: query.decision === 'none' ? undefined : query.decision,
      from: query.from,
      to: query.to,
      cursorAt: cursor?.at,
      cursorId: cursor?.id,
      limit: limit + 1,
    });
    return readAuditPage(sized, limit, (ledgerIds) => this.statements.ledgerRows.all(JSON.stringify(ledgerIds)));
  }

  async saveGrant(grant: StoredGrant): Promise<void> {
    // One synchronous step: no deletion of the chat can come between the look and the write.
    if (this.statements.getSession.get(grant.sessionId) === undefined) throw new NotFoundError('session', grant.sessionId);
    this.synced.run(() => this.statements.saveGrant.run(grantParameters(grant)));
  }

  async deleteGrant(grantId: string): Promise<void> {
    this.synced.run(() => this.statements.deleteGrant.run(grantId));
  }

  async saveRule(rule: Rule): Promise<void> {
    this.synced.run(() =>
      this.statements.saveRule.run({ ruleId: rule.id, scopeKind: rule.scope.kind, scopeValue: ruleScopeValue(rule), json: JSON.stringify(rule), createdAt: Date.parse(rule.createdAt) || 0 }),
    );
  }

  async deleteRule(ruleId: string): Promise<void> {
    this.synced.run(() => this.statements.deleteRule.run(ruleId));
  }

  async listRules(): Promise<StoredRule[]> {
    return this.statements.listRules.all().map(toStoredRule);
  }

  async recordRuleHit(ruleId: string, at: number): Promise<void> {
    this.unsynced(() => this.statements.recordRuleHit.run(at, ruleId));
  }

  async getSetting(key: string): Promise<string | undefined> {
    return this.statements.getSetting.get(key)?.value;
  }

  async setSetting(key: string, value: string | undefined): Promise<void> {
    if (value === undefined) this.synced.run(() => this.statements.deleteSetting.run(key));
    else this.synced.run(() => this.statements.setSetting.run(key, value));
  }

  async listGrants(): Promise<StoredGrant[]> {
    return this.statements.listGrants.all().map(toGrant);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Asked for before the close: made now, not lost with it.
    this.grouped.flush();
    this.syncAhead.close();
    this.db.close();
  }

  private applyLedgerChange(runId: string, sessionId: string, change: LedgerChange): void {
    const s = this.statements;
    let changed: number;
    switch (change.kind) {
      case 'start':
        s.startToolCall.run({
          runId,
          sessionId,
          toolCallId: change.toolCallId,
          toolName: change.toolName,
          arguments: JSON.stringify(change.arguments),
          approvalId: change.approvalId,
          executesCode: change.executesCode ? 1 : 0,
          toolVersion: change.toolVersion,
          shownTool: change.tool === undefined ? null : JSON.stringify(change.tool),
          exactGrantsOnly: change.exactGrantsOnly === true ? 1 : 0,
          askedBecause: askedBecauseJson(change),
          requestedAt: change.requestedAt,
          expiresAt: change.expiresAt,
        });
        return;
      case 'decision':
        changed = s.decideToolCall.run({
          runId,
          toolCallId: change.toolCallId,
          decision: change.decision,
          source: change.source,
          reason: change.reason ?? null,
          decidedByGrant: change.decidedByGrant ?? null,
          decidedByRule: change.decidedByRule ?? null,
          decidedByRuleText: change.decidedByRuleText === undefined ? null : storedReasonText(change.decidedByRuleText),
          decidedAt: change.decidedAt,
          connectionId: change.by?.connectionId ?? null,
          clientLabel: change.by?.clientLabel ?? null,
          editedArguments: change.editedArguments === undefined ? null : JSON.stringify(change.editedArguments),
        }).changes;
        break;
      case 'running':
        // No tool of a run whose Stop is stored starts (see LedgerChange): refused in the write's own transaction.
        changed = s.runToolCall.run({ startedAt: change.startedAt, runId, toolCallId: change.toolCallId }).changes;
        if (changed === 0 && s.runStopped.get(runId) !== undefined) throw new RunStoppedError(runId, change.toolCallId);
        break;
      case 'end':
        changed = s.endToolCall.run(
          change.outcome,
          change.result,
          change.cut?.bytes ?? null,
          change.cut?.characters ?? null,
          change.endedAt,
          change.startedAt === undefined ? 0 : 1,
          change.startedAt ?? null,
          runId,
          change.toolCallId,
        ).changes;
        break;
    }
    if (changed === 0) throw new NotFoundError('tool call', `${runId}/${change.toolCallId}`);
  }

  /** The rows that match, where each stands and its size, not their content: readAuditPage reads only what fits. */
  private auditStatement(query: AuditQuery, afterCursor: boolean): Statement<Record<string, unknown>, SizedLedgerRow> {
    const present = [query.sessionId, query.toolName, query.decision !== undefined && query.decision !== 'none' ? query.decision : undefined, query.decision === 'none' ? true : undefined, query.from, query.to];
    const conditions = AUDIT_FILTERS.filter((_, index) => present[index] !== undefined);
    if (afterCursor) conditions.push(AUDIT_AFTER_CURSOR);
    const key = conditions.join(' AND ');
    let statement = this.auditStatements.get(key);
    if (statement === undefined) {
      const where = conditions.length === 0 ? '' : `WHERE ${key}`;
      statement = this.db.prepare<Record<string, unknown>, SizedLedgerRow>(
        `SELECT ledger_id, requested_at, ${LEDGER_BYTES} AS bytes FROM tool_calls ${where} ORDER BY requested_at DESC, ledger_id DESC LIMIT @limit`,
      );
      this.auditStatements.set(key, statement);
    }
    return statement;
  }
}

/** The parameters of the updateSession statement for these changes (a field left out keeps its value). */
function sessionUpdate(sessionId: string, changes: SessionChanges) {
  return {
    sessionId,
    title: changes.title ?? null,
    updatedAt: changes.updatedAt ?? null,
    confirmToolCalls: changes.confirmToolCalls === undefined ? null : changes.confirmToolCalls ? 1 : 0,
    setLastRunId: changes.lastRunId === undefined ? 0 : 1,
    lastRunId: changes.lastRunId ?? null,
  };
}

function prepareStatements(db: Database) {
  return {
    listSessions: db.prepare<[], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions ${SESSION_ORDER}`),
    firstSessionPage: db.prepare<{ limit: number }, SessionRow>(SESSION_PAGE_QUERIES.first),
    sessionPageAfter: db.prepare<{ updatedAt: number; sessionId: string; limit: number }, SessionRow>(SESSION_PAGE_QUERIES.after),
    getSession: db.prepare<[string], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE session_id = ?`),
    insertSession: db.prepare<[string, string, number, number, number, string | null]>(`INSERT INTO sessions (${SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`),
    updateSession: db.prepare<{ sessionId: string; title: string | null; updatedAt: number | null; confirmToolCalls: number | null; setLastRunId: number; lastRunId: string | null }>(
      `UPDATE sessions SET title = coalesce(@title, title), updated_at = coalesce(@updatedAt, updated_at),
         confirm_tool_calls = coalesce(@confirmToolCalls, confirm_tool_calls),
         last_run_id = CASE WHEN @setLastRunId THEN @lastRunId ELSE last_run_id END
       WHERE session_id = @sessionId`,
    ),
    retireRuns: db.prepare<[string]>('INSERT OR IGNORE INTO retired_runs (run_id) SELECT run_id FROM runs WHERE session_id = ?'),
    deleteSessionGrants: db.prepare<[string]>("DELETE FROM grants WHERE scope_kind = 'session' AND scope_value = ?"),
    deleteSession: db.prepare<[string]>('DELETE FROM sessions WHERE session_id = ?'),
    // The next seq comes from the primary key's index: the cost does not grow with the conversation.
    insertMessage: db.prepare<{ sessionId: string; json: string; at: number; runId: string | null }>(
      'INSERT INTO messages (session_id, seq, json, at, run_id) SELECT @sessionId, coalesce(max(seq), 0) + 1, @json, @at, @runId FROM messages WHERE session_id = @sessionId',
    ),
    loadMessages: db.prepare<[string], string>('SELECT json FROM messages WHERE session_id = ? ORDER BY seq'),
    // Where the page's messages stand and their size, not their text (octet_length reads none).
    sizeMessages: db.prepare<{ sessionId: string; before: number; limit: number }, SizedMessageRow>(
      'SELECT seq AS key, octet_length(json) AS bytes FROM messages WHERE session_id = @sessionId AND seq <= @before ORDER BY seq DESC LIMIT @limit',
    ),
    messagesAt: db.prepare<[string, string], MessageRow>('SELECT seq AS key, json, run_id FROM messages WHERE session_id = ? AND seq IN (SELECT value FROM json_each(?))'),
    firstRunMessage: db.prepare<[string, string], string>('SELECT json FROM messages WHERE session_id = ? AND run_id = ? ORDER BY seq LIMIT 1'),
    countMessages: db.prepare<[string], number>('SELECT count(*) FROM messages WHERE session_id = ?'),
    // Found by (run, call id), the ledger's unique key; `+` keeps the planner from walking the session's rows instead.
    toolCallsOf: db.prepare<[string, string], LedgerRow>(
      'SELECT * FROM tool_calls WHERE +session_id = ? AND (run_id, tool_call_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?)) ORDER BY ledger_id',
    ),
    insertRun: db.prepare<[string, string, string, number, number | null, string | null]>(
      'INSERT INTO runs (run_id, session_id, options, started_at, ended_at, end_reason) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    endRun: db.prepare<[number, string, string]>('UPDATE runs SET ended_at = ?, end_reason = ? WHERE run_id = ?'),
    requestCancel: db.prepare<[string]>('UPDATE runs SET cancel_requested = 1 WHERE run_id = ? AND ended_at IS NULL'),
    runStopped: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM runs WHERE run_id = ? AND cancel_requested'),
    hasRun: db.prepare<[string, string], { one: number }>('SELECT 1 AS one FROM runs WHERE run_id = ? UNION ALL SELECT 1 FROM retired_runs WHERE run_id = ? LIMIT 1'),
    getRun: db.prepare<[string], RunRow>('SELECT * FROM runs WHERE run_id = ?'),
    listUnfinishedRuns: db.prepare<[], RunRow>('SELECT * FROM runs WHERE ended_at IS NULL ORDER BY started_at, rowid'),
    insertEvent: db.prepare<[string, number, string, number]>('INSERT INTO events (run_id, seq, json, at) VALUES (?, ?, ?, ?)'),
    loadEvents: db.prepare<[string, number], string>('SELECT json FROM events WHERE run_id = ? AND seq > ? ORDER BY seq'),
    eventSizes: db.prepare<[string, number, number], { seq: number; bytes: number }>(
      'SELECT seq, octet_length(json) AS bytes FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    loadEventRange: db.prepare<[string, number, number], string>('SELECT json FROM events WHERE run_id = ? AND seq > ? AND seq <= ? ORDER BY seq'),
    lastEventSeq: db.prepare<[string], number>('SELECT coalesce(max(seq), 0) FROM events WHERE run_id = ?'),
    loadLastEvent: db.prepare<[string], string>('SELECT json FROM events WHERE run_id = ? ORDER BY seq DESC LIMIT 1'),
    startToolCall: db.prepare<Record<string, unknown>>(
      `INSERT INTO tool_calls (run_id, session_id, tool_call_id, tool_name, arguments, approval_id, executes_code, tool_version, shown_tool, exact_grants_only, asked_because, requested_at, expires_at)
       VALUES (@runId, @sessionId, @toolCallId, @toolName, @arguments, @approvalId, @executesCode, @toolVersion, @shownTool, @exactGrantsOnly, @askedBecause, @requestedAt, @expiresAt)`,
    ),
    decideToolCall: db.prepare<Record<string, unknown>>(
      `UPDATE tool_calls SET decision = @decision, source = @source, reason = @reason, decided_by_grant = @decidedByGrant,
         decided_by_rule = @decidedByRule, decided_by_rule_text = @decidedByRuleText, decided_at = @decidedAt, connection_id = @connectionId, client_label = @clientLabel,
         edited_arguments = @editedArguments
       WHERE run_id = @runId AND tool_call_id = @toolCallId`,
    ),
    runToolCall: db.prepare<{ startedAt: number; runId: string; toolCallId: string }>(
      'UPDATE tool_calls SET started_at = @startedAt WHERE run_id = @runId AND tool_call_id = @toolCallId AND NOT EXISTS (SELECT 1 FROM runs WHERE run_id = @runId AND cancel_requested)',
    ),
    endToolCall: db.prepare<[string, string, number | null, number | null, number, number, number | null, string, string]>(
      'UPDATE tool_calls SET outcome = ?, result = ?, cut_bytes = ?, cut_characters = ?, ended_at = ?, started_at = CASE WHEN ? THEN ? ELSE started_at END WHERE run_id = ? AND tool_call_id = ?',
    ),
    listRunToolCalls: db.prepare<[string], LedgerRow>('SELECT * FROM tool_calls WHERE run_id = ? ORDER BY ledger_id'),
    listSessionToolCalls: db.prepare<[string], LedgerRow>('SELECT * FROM tool_calls WHERE session_id = ? ORDER BY ledger_id'),
    findDecision: db.prepare<[string, string], string>(
      "SELECT decision FROM tool_calls WHERE approval_id = ? AND session_id = ? AND approval_id <> '' AND decision IS NOT NULL ORDER BY ledger_id DESC LIMIT 1",
    ),
    requireExactGrants: db.prepare<[string | null, string, string]>(
      // A row held already keeps the reason it was first held for.
      'UPDATE tool_calls SET exact_grants_only = 1, asked_because = CASE WHEN exact_grants_only = 1 THEN asked_because ELSE ? END WHERE run_id = ? AND tool_call_id = ? AND decision IS NULL',
    ),
    ledgerRows: db.prepare<[string], LedgerRow>('SELECT * FROM tool_calls WHERE ledger_id IN (SELECT value FROM json_each(?))'),
    saveGrant: db.prepare<Record<string, unknown>>(
      `INSERT INTO grants (grant_id, scope_kind, scope_value, tool_name, arguments, tool_version, created_at)
       VALUES (@grantId, @scopeKind, @scopeValue, @toolName, @arguments, @toolVersion, @createdAt)
       ON CONFLICT (grant_id) DO UPDATE SET scope_kind = excluded.scope_kind, scope_value = excluded.scope_value, tool_name = excluded.tool_name,
         arguments = excluded.arguments, tool_version = excluded.tool_version, created_at = excluded.created_at`,
    ),
    deleteGrant: db.prepare<[string]>('DELETE FROM grants WHERE grant_id = ?'),
    saveRule: db.prepare<Record<string, unknown>>(
      `INSERT INTO rules (rule_id, scope_kind, scope_value, json, created_at) VALUES (@ruleId, @scopeKind, @scopeValue, @json, @createdAt)
       ON CONFLICT (rule_id) DO UPDATE SET scope_kind = excluded.scope_kind, scope_value = excluded.scope_value, json = excluded.json`,
    ),
    deleteRule: db.prepare<[string]>('DELETE FROM rules WHERE rule_id = ?'),
    getSetting: db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?'),
    setSetting: db.prepare<[string, string]>('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
    deleteSetting: db.prepare<[string]>('DELETE FROM settings WHERE key = ?'),
    deleteSessionRules: db.prepare<[string]>("DELETE FROM rules WHERE scope_kind = 'chat' AND scope_value = ?"),
    listRules: db.prepare<[], RuleRow>('SELECT rule_id, json, hits, last_used_at FROM rules ORDER BY created_at, rowid'),
    recordRuleHit: db.prepare<[number, string]>('UPDATE rules SET hits = hits + 1, last_used_at = ? WHERE rule_id = ?'),
    listGrants: db.prepare<[], GrantRow>("SELECT * FROM grants WHERE scope_kind = 'session' ORDER BY created_at, rowid"),
  };
}

/** Whether the commit of `input` lets a call run: an allow (by the person, a rule or a grant), or its tool's start. */
function letsACallRun(input: AppendEventInput): boolean {
  const change = input.ledger;
  return change !== undefined && ((change.kind === 'decision' && change.decision === 'allow') || change.kind === 'running');
}

/**
 * Whether the commit of `inputs` leaves a call waiting for the person, whose allow will be a synced commit (see
 * WalSyncAhead): one put up for a decision and not decided in the same commit, as a rule's deny is.
 */
function leavesACallWaiting(inputs: readonly AppendEventInput[]): boolean {
  const waiting = new Set<string>();
  for (const { ledger } of inputs) {
    if (ledger === undefined) continue;
    if (ledger.kind === 'start' && ledger.approvalId !== '') waiting.add(ledger.toolCallId);
    else waiting.delete(ledger.toolCallId);
  }
  return waiting.size > 0;
}

function grantParameters(grant: StoredGrant): Record<string, unknown> {
  return {
    grantId: grant.grantId,
    scopeKind: grant.scope,
    scopeValue: grant.sessionId,
    toolName: grant.toolName,
    arguments: grant.arguments === null ? null : JSON.stringify(grant.arguments),
    toolVersion: grant.toolVersion,
    createdAt: grant.createdAt,
  };
}

/** `text` as one word of a POSIX shell. */
function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
