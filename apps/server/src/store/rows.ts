import { DamagedRecordError, MAX_AUDIT_PAGE_CHARS, ruleSchema, runOptionsSchema, type AuditPage, type DamagedRow, type LeftOutCall, type LedgerChange, type PendingApproval, type PendingApprovalRecord, type Rule, type RunOptions, type StoredGrant, type StoredRule, type StoredRun, type StoredSessionSummary, type ToolCallRecord } from '@airlock/api';
import { askedBecauseSchema, chatMessageSchema, toolArgumentsSchema, type ToolArguments, decisionSchema, decisionSourceSchema, loopEventSchema, NotFoundError, type LoopEvent, shownToolSchema, type AskedBecause, storedReason, toolOutcomeSchema, type ChatMessage, type Decision, type ResultCut, type ShownTool } from '@airlock/core';
import type { ZodType } from 'zod';
import { StoreError } from './store-error';

/**
 * The rows both stores read and how they become records. A boolean column comes back as 0/1 from SQLite and as a
 * boolean from PostgreSQL; bigint columns come back as numbers (the PostgreSQL store parses them so).
 */
export type SqlBoolean = boolean | number;

export interface SessionRow {
  session_id: string;
  title: string;
  created_at: number;
  updated_at: number;
  confirm_tool_calls: SqlBoolean;
  last_run_id: string | null;
}

export interface RunRow {
  run_id: string;
  session_id: string;
  options: string;
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
  /** PostgreSQL migration 004, SQLite migration 010 (0 or 1). */
  cancel_requested?: SqlBoolean;
}

export interface LedgerRow {
  ledger_id: number;
  run_id: string;
  session_id: string;
  tool_call_id: string;
  tool_name: string;
  arguments: string;
  edited_arguments: string | null;
  approval_id: string;
  executes_code: SqlBoolean;
  tool_version: string;
  /** The tool as the call was put up, as JSON; null in rows written before migration 009 (SQLite) or 006 (PostgreSQL). */
  shown_tool: string | null;
  /** 0 or false in rows written before migration 012 (SQLite) or 010 (PostgreSQL). */
  exact_grants_only: SqlBoolean;
  /** With exact_grants_only, as JSON; null in rows written before migration 013 (SQLite) or 011 (PostgreSQL). */
  asked_because: string | null;
  requested_at: number;
  expires_at: number | null;
  decision: ToolCallRecord['decision'];
  source: ToolCallRecord['source'];
  reason: string | null;
  decided_by_grant: string | null;
  decided_by_rule: string | null;
  /** Null in rows written before migration 006 (SQLite) or 003 (PostgreSQL). */
  decided_by_rule_text: string | null;
  /** PostgreSQL only (its migration 013): the rule of a deny claimed on the row came from the workspace's rules file. */
  decided_by_rule_from_workspace_file?: boolean;
  decided_at: number | null;
  connection_id: string | null;
  client_label: string | null;
  started_at: number | null;
  outcome: ToolCallRecord['outcome'];
  result: string | null;
  /** Null in rows written before migration 005 (SQLite) or 002 (PostgreSQL), and when nothing was left out. */
  cut_bytes: number | null;
  cut_characters: number | null;
  ended_at: number | null;
}

export interface GrantRow {
  grant_id: string;
  scope_kind: string;
  scope_value: string;
  tool_name: string;
  arguments: string | null;
  tool_version: string;
  created_at: number;
}

export interface RuleRow {
  rule_id: string;
  json: string;
  hits: number;
  last_used_at: number | null;
}

/**
 * A record's JSON as it was written; `record` names it (e.g. "an event of run r1") when the text does not read, and
 * `row` the row that holds it when the start stops on it (see DamagedRecordError).
 */
export function storedJson<T>(json: string, record: string, row?: DamagedRow): T {
  try {
    return JSON.parse(json) as T;
  } catch (error) {
    throw new DamagedRecordError(record, { cause: error, ...(row === undefined ? {} : { row }) });
  }
}

/**
 * A stored event, checked against the event schema: JSON that is no event (a field of the wrong type, a type no
 * event has) is a damaged record like text that does not read, never sent to a client or restored as it is. The event
 * comes back as written.
 */
export function storedEvent(json: string, record: string): LoopEvent {
  return storedOf(loopEventSchema, json, record) as LoopEvent;
}

/** A stored message of a chat, checked against the message schema as storedEvent checks an event. */
export function storedMessage(json: string, record: string): ChatMessage {
  return storedOf(chatMessageSchema, json, record) as ChatMessage;
}

/**
 * A chat's stored messages, read with storedMessage; with `leftOut`, one that does not read is left out and named to
 * it rather than failing the read (see AirlockStore.loadMessages).
 */
export function storedMessages(jsons: Iterable<string>, sessionId: string, leftOut: ((record: string) => void) | undefined, into: ChatMessage[] = []): ChatMessage[] {
  for (const json of jsons) {
    try {
      into.push(storedMessage(json, `a message of chat ${sessionId}`));
    } catch (error) {
      if (leftOut === undefined || !(error instanceof DamagedRecordError)) throw error;
      leftOut(error.message);
    }
  }
  return into;
}

/**
 * A run's stored options, checked against the options a client may start a run with: JSON that is none (enabled tools
 * as a string, whose `includes` would offer every tool whose name is in it; a call limit past its bounds) is a damaged
 * record, so the run is set aside rather than resumed with options no client could have given it.
 */
export function storedRunOptions(json: string, record: string): RunOptions {
  return storedOf(runOptionsSchema, json, record) as RunOptions;
}

/**
 * A call's or a grant's stored arguments, checked to be an object of arguments: JSON that is none (a string, a list,
 * `null`, which for a grant would read as any call of its tool) is a damaged record.
 */
export function storedArguments(json: string, record: string, row?: DamagedRow): ToolArguments {
  return storedOf(toolArgumentsSchema, json, record, row) as ToolArguments;
}

function storedOf(schema: ZodType, json: string, record: string, row?: DamagedRow): unknown {
  const value = storedJson<unknown>(json, record, row);
  const parsed = schema.safeParse(value);
  if (parsed.success) return value;
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? 'the record' : issue.path.map(String).join('.');
  throw new DamagedRecordError(record, { cause: new Error(`${where}: ${issue?.message ?? 'does not read'}`), ...(row === undefined ? {} : { row }) });
}

/**
 * A column that holds one of a few words (a decision, its source, an outcome), or null. Any other text is a damaged
 * record, never read as the nearest word: a flipped byte in a decision must not read as an allow, nor be taken for a
 * refusal the person never gave.
 */
function storedWord<Word extends string>(value: string | null, words: readonly Word[], record: string): Word | null {
  if (value === null || (words as readonly string[]).includes(value)) return value as Word | null;
  throw new DamagedRecordError(record, { cause: new Error(`${JSON.stringify(value.slice(0, 40))} is none of ${words.join(', ')}`) });
}

/** The decision recorded for a call put up with `approvalId`, as findDecision answers it (see storedWord). */
export function storedDecision(value: string | null | undefined, approvalId: string): Decision | undefined {
  return storedWord(value ?? null, decisionSchema.options, `the decision of approval ${approvalId}`) ?? undefined;
}

/** The damaged record a StoreError of asDamagedStore names, and why it does not read; undefined for any other error. */
export function damagedRecordOf(error: unknown): string | undefined {
  return error instanceof StoreError && error.problem === 'corrupt' && error.cause instanceof DamagedRecordError ? error.cause.message : undefined;
}

/**
 * A DamagedRecordError as a StoreError of the database it was read from (`location`); any other error as it is. A
 * record in a row the start stops on is said with how to delete that row (`deleting`, given the statement) and go on.
 */
export function asDamagedStore(location: string, error: unknown, deleting: (row: DamagedRow) => string): unknown {
  if (!(error instanceof DamagedRecordError)) return error;
  const remedy = error.row === undefined ? '' : `. To start without it, delete its row with ${deleting(error.row)}, then add it again if you still want it`;
  return new StoreError(location, 'corrupt', `holds a damaged record (${error.message})${remedy}`, { cause: error });
}

/** The statement that deletes `row` from its table (`table`: the table as the database names it). */
export function deleteRowSql(row: DamagedRow, table = row.table): string {
  return `DELETE FROM ${table} WHERE ${row.key} = '${row.id.replaceAll("'", "''")}'`;
}

export const SESSION_COLUMNS = 'session_id, title, created_at, updated_at, confirm_tool_calls, last_run_id';

const DEFAULT_AUDIT_LIMIT = 100;
const MAX_AUDIT_LIMIT = 1000;

export function toBoolean(value: SqlBoolean): boolean {
  return value === true || value === 1;
}

export function toSession(row: SessionRow): StoredSessionSummary {
  return {
    sessionId: row.session_id,
    title: row.title,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    confirmToolCalls: toBoolean(row.confirm_tool_calls),
    lastRunId: row.last_run_id,
  };
}

/**
 * A run as `toRun` reads it, but one whose options do not read comes back with none and `unreadable` saying why: an
 * unfinished one is set aside rather than failing the read of every other, and a finished one still replays, its other
 * fields read by those that need no options (whether it ended, its chat).
 */
export function toRunOrUnreadable(row: RunRow): StoredRun {
  try {
    return toRun(row);
  } catch (error) {
    if (!(error instanceof DamagedRecordError)) throw error;
    return { ...toRun({ ...row, options: '{}' }), unreadable: error.message };
  }
}

export function toRun(row: RunRow): StoredRun {
  return {
    runId: row.run_id,
    sessionId: row.session_id,
    options: storedRunOptions(row.options, `the options of run ${row.run_id}`),
    startedAt: row.started_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    ...(row.cancel_requested !== undefined && toBoolean(row.cancel_requested) ? { cancelRequested: true } : {}),
  };
}

export function toToolCall(row: LedgerRow): ToolCallRecord {
  return {
    runId: row.run_id,
    sessionId: row.session_id,
    toolCallId: row.tool_call_id,
    toolName: row.tool_name,
    arguments: storedArguments(row.arguments, `the arguments of call ${row.tool_call_id} of run ${row.run_id}`),
    editedArguments: row.edited_arguments === null ? null : storedArguments(row.edited_arguments, `the edited arguments of call ${row.tool_call_id} of run ${row.run_id}`),
    approvalId: row.approval_id,
    executesCode: toBoolean(row.executes_code),
    toolVersion: row.tool_version,
    tool: toShownTool(row),
    exactGrantsOnly: toBoolean(row.exact_grants_only),
    askedBecause: toAskedBecause(row),
    requestedAt: row.requested_at,
    expiresAt: row.expires_at,
    decision: storedWord(row.decision, decisionSchema.options, `the decision of call ${row.tool_call_id} of run ${row.run_id}`),
    source: storedWord(row.source, decisionSourceSchema.options, `the source of the decision of call ${row.tool_call_id} of run ${row.run_id}`),
    reason: row.reason,
    decidedByGrant: row.decided_by_grant,
    decidedByRule: row.decided_by_rule,
    decidedByRuleText: row.decided_by_rule_text === null ? null : storedReason(row.decided_by_rule_text),
    ...(row.decided_by_rule_from_workspace_file === true ? { decidedByRuleFromWorkspaceFile: true as const } : {}),
    decidedAt: row.decided_at,
    connectionId: row.connection_id,
    clientLabel: row.client_label,
    startedAt: row.started_at,
    outcome: storedWord(row.outcome, toolOutcomeSchema.options, `the outcome of call ${row.tool_call_id} of run ${row.run_id}`),
    result: row.result,
    cut: toCut(row),
    endedAt: row.ended_at,
  };
}

/** The shown tool's JSON as written; one that does not read as a shown tool is not known (the card falls back to the tool list). */
function toShownTool(row: Pick<LedgerRow, 'shown_tool' | 'tool_call_id' | 'run_id'>): ShownTool | null {
  if (row.shown_tool === null) return null;
  const parsed = shownToolSchema.safeParse(storedJson(row.shown_tool, `the tool shown for call ${row.tool_call_id} of run ${row.run_id}`));
  return parsed.success ? parsed.data : null;
}

/** Why a deny rule asked about the call, as written; JSON that does not read as such is not known (the card still says it). */
function toAskedBecause(row: Pick<LedgerRow, 'asked_because' | 'exact_grants_only' | 'tool_call_id' | 'run_id'>): AskedBecause | null {
  if (row.asked_because === null || !toBoolean(row.exact_grants_only)) return null;
  const parsed = askedBecauseSchema.safeParse(storedJson(row.asked_because, `why a rule asked about call ${row.tool_call_id} of run ${row.run_id}`));
  return parsed.success ? parsed.data : null;
}

function askedBecauseOf(row: LedgerRow): { askedBecause?: AskedBecause } {
  const askedBecause = toAskedBecause(row);
  return askedBecause === null ? {} : { askedBecause };
}

/** A start's askedBecause as a ledger row keeps it: only with exactGrantsOnly. */
export function askedBecauseJson(change: Extract<LedgerChange, { kind: 'start' }>): string | null {
  return change.exactGrantsOnly === true && change.askedBecause !== undefined ? JSON.stringify(change.askedBecause) : null;
}

/** The shown tool of a waiting call, as a field; none when not known. */
function shownToolOf(row: LedgerRow): { tool?: ShownTool } {
  const tool = toShownTool(row);
  return tool === null ? {} : { tool };
}

/** The cut as the tool-end reported it; a missing column value (an old row) is nothing left out. */
function toCut(row: Pick<LedgerRow, 'cut_bytes' | 'cut_characters'>): ResultCut | null {
  const bytes = row.cut_bytes ?? undefined;
  const characters = row.cut_characters ?? undefined;
  if (bytes === undefined && characters === undefined) return null;
  return { ...(bytes === undefined ? {} : { bytes }), ...(characters === undefined ? {} : { characters }) };
}

export function toPending(row: LedgerRow): PendingApproval {
  return {
    approvalId: row.approval_id,
    sessionId: row.session_id,
    runId: row.run_id,
    toolCallId: row.tool_call_id,
    toolName: row.tool_name,
    arguments: storedArguments(row.arguments, `the arguments of call ${row.tool_call_id} of run ${row.run_id}`),
    requestedAt: row.requested_at,
    expiresAt: row.expires_at,
    ...shownToolOf(row),
    ...(toBoolean(row.exact_grants_only) ? { exactGrantsOnly: true as const } : {}),
    ...askedBecauseOf(row),
  };
}

export function toPendingRecord(row: LedgerRow): PendingApprovalRecord {
  return { ...toPending(row), executesCode: toBoolean(row.executes_code), toolVersion: row.tool_version };
}

export function toGrant(row: GrantRow): StoredGrant {
  return {
    grantId: row.grant_id,
    scope: 'session',
    sessionId: row.scope_value,
    toolName: row.tool_name,
    arguments:
      row.arguments === null ? null : storedArguments(row.arguments, `the arguments of grant ${row.grant_id}`, { table: 'grants', key: 'grant_id', id: row.grant_id }),
    toolVersion: row.tool_version,
    createdAt: row.created_at,
  };
}

/**
 * A stored rule. One that is JSON but no rule is a damaged record unless it is an allow rule: the rule book sets such a
 * rule aside (one kept before a limit was checked), and a deny rule set aside would let through what it refuses.
 */
export function toStoredRule(row: RuleRow): StoredRule {
  const where: DamagedRow = { table: 'rules', key: 'rule_id', id: row.rule_id };
  const rule = storedJson<Rule>(row.json, `rule ${row.rule_id}`, where);
  if ((rule as { effect?: unknown } | null)?.effect !== 'allow') storedOf(ruleSchema, row.json, `rule ${row.rule_id}`, where);
  return { rule, hits: row.hits, lastUsedAt: row.last_used_at };
}

/** The `scope_value` column of a rule: the chat's session id, the workspace's path, or '' for a global rule. */
export function ruleScopeValue(rule: Rule): string {
  return rule.scope.kind === 'chat' ? rule.scope.sessionId : rule.scope.kind === 'workspace' ? rule.scope.path : '';
}

export function auditLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_AUDIT_LIMIT;
  return Math.min(MAX_AUDIT_LIMIT, Math.max(1, Math.trunc(limit)));
}

/** Where a ledger row stands in the audit's order, and the bytes of its large columns (`LEDGER_BYTES`). */
export interface SizedLedgerRow {
  ledger_id: number;
  requested_at: number;
  bytes: number;
}

/**
 * UTF-8 bytes of a ledger row's columns that grow with the call, in SQL both stores read (`octet_length` gives a
 * text's stored size without reading the text, where `length` reads it to count its characters).
 */
export const LEDGER_BYTES =
  'octet_length(arguments) + coalesce(octet_length(edited_arguments), 0) + coalesce(octet_length(result), 0) + coalesce(octet_length(reason), 0) + coalesce(octet_length(decided_by_rule_text), 0)';

/**
 * One page of the audit, from the rows that match, newest first: `sized` holds up to `limit + 1` of them (one more
 * than `limit` means there is a next page). The page ends before the row that would take it past
 * MAX_AUDIT_PAGE_CHARS (its first row always fits). Rows are read in batches of at most as many bytes as the page has
 * characters left (a character is at least one byte), each through `load`, so a page of huge rows reads little more
 * than it answers. The cursor names the last row answered: the next page starts right after it.
 */
export function readAuditPage(sized: readonly SizedLedgerRow[], limit: number, load: (ledgerIds: number[]) => readonly LedgerRow[]): AuditPage {
  const pages = auditPageSteps(sized, limit);
  for (let step = pages.next(); ; step = pages.next(load(step.value))) if (step.done === true) return step.value;
}

/** readAuditPage, for a store whose reads are asynchronous. */
export async function readAuditPageAsync(sized: readonly SizedLedgerRow[], limit: number, load: (ledgerIds: number[]) => Promise<readonly LedgerRow[]>): Promise<AuditPage> {
  const pages = auditPageSteps(sized, limit);
  for (let step = pages.next(); ; step = pages.next(await load(step.value))) if (step.done === true) return step.value;
}

/** Yields the ledger ids of each batch to read and takes their rows back; returns the page. */
function* auditPageSteps(sized: readonly SizedLedgerRow[], limit: number): Generator<number[], AuditPage, readonly LedgerRow[]> {
  const leftOut: string[] = [];
  const page = yield* auditPageRows(sized, limit, (record) => leftOut.push(record));
  return leftOut.length === 0 ? page : { ...page, leftOut };
}

/** The audit's page, as auditPageSteps answers it; a row that does not read is left out, named to `leftOut`. */
function* auditPageRows(sized: readonly SizedLedgerRow[], limit: number, leftOut: (record: string) => void): Generator<number[], AuditPage, readonly LedgerRow[]> {
  const candidates = sized.slice(0, limit);
  const entries: ToolCallRecord[] = [];
  let chars = 0;
  let last: SizedLedgerRow | undefined;
  for (let start = 0; start < candidates.length; ) {
    let end = start + 1;
    for (let bytes = candidates[start]!.bytes; end < candidates.length && bytes + candidates[end]!.bytes <= MAX_AUDIT_PAGE_CHARS - chars; end++) {
      bytes += candidates[end]!.bytes;
    }
    const batch = candidates.slice(start, end);
    const rows = new Map((yield batch.map((row) => row.ledger_id)).map((row) => [row.ledger_id, row]));
    for (const position of batch) {
      const row = rows.get(position.ledger_id);
      const [entry] = row === undefined ? [] : pageToolCalls([row], leftOut);
      if (entry !== undefined) {
        const size = JSON.stringify(entry).length;
        if (entries.length > 0 && chars + size > MAX_AUDIT_PAGE_CHARS) return { entries, nextCursor: cursorOf(last!) };
        entries.push(entry);
        chars += size;
      }
      last = position;
    }
    start = end;
  }
  return { entries, nextCursor: sized.length > limit && last !== undefined ? cursorOf(last) : null };
}

function cursorOf(row: SizedLedgerRow): string {
  return encodeCursor(row.requested_at, row.ledger_id);
}

function encodeCursor(at: number, id: number): string {
  return Buffer.from(`${at}:${id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): { at: number; id: number } {
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split(':').map(Number);
  if (at === undefined || id === undefined || rest.length > 0 || !Number.isFinite(at) || !Number.isSafeInteger(id)) throw new NotFoundError('audit cursor', cursor);
  return { at, id };
}

/** The place a page of messages ends before, as a whole number SQL takes: the chat's end when absent or past any. */
export function pageEnd(before: number | undefined): number {
  return before === undefined || !(before < Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Math.max(0, Math.floor(before));
}

/** Where a message stands (`key`: its seq, or its message_id in PostgreSQL) and the bytes of its JSON, read without the JSON. */
export interface SizedMessageRow {
  key: number;
  bytes: number;
}

export interface MessageRow {
  key: number;
  json: string;
  run_id: string | null;
}

/**
 * The messages of one page, oldest first, from `sized`: the newest `limit` messages before the page's end, newest
 * first. The page ends before the message that would take it past `maxChars` (its newest always fits). Messages are
 * read in batches of at most as many bytes as the page has characters left (a character is at least one byte), each
 * through `load`, and one that cannot fit (more than four bytes a character left) is not read at all.
 */
export function readMessagePage(sized: readonly SizedMessageRow[], maxChars: number, load: (keys: number[]) => readonly MessageRow[]): MessageRow[] {
  const steps = messagePageSteps(sized, maxChars);
  for (let step = steps.next(); ; step = steps.next(load(step.value))) if (step.done === true) return step.value;
}

/** readMessagePage, for a store whose reads are asynchronous. */
export async function readMessagePageAsync(sized: readonly SizedMessageRow[], maxChars: number, load: (keys: number[]) => Promise<readonly MessageRow[]>): Promise<MessageRow[]> {
  const steps = messagePageSteps(sized, maxChars);
  for (let step = steps.next(); ; step = steps.next(await load(step.value))) if (step.done === true) return step.value;
}

function* messagePageSteps(sized: readonly SizedMessageRow[], maxChars: number): Generator<number[], MessageRow[], readonly MessageRow[]> {
  const page: MessageRow[] = [];
  let chars = 0;
  for (let start = 0; start < sized.length; ) {
    const left = maxChars - chars;
    // UTF-8 (or any encoding PostgreSQL keeps text in) takes at most four bytes for a UTF-16 code unit.
    if (page.length > 0 && sized[start]!.bytes > 4 * left) break;
    let end = start + 1;
    for (let bytes = sized[start]!.bytes; end < sized.length && bytes + sized[end]!.bytes <= left; end++) bytes += sized[end]!.bytes;
    const batch = sized.slice(start, end);
    const rows = new Map((yield batch.map((row) => row.key)).map((row) => [row.key, row]));
    for (const position of batch) {
      const row = rows.get(position.key);
      // Gone since it was sized (its chat was deleted): the page ends.
      if (row === undefined) return page.reverse();
      if (page.length > 0 && chars + row.json.length > maxChars) return page.reverse();
      page.push(row);
      chars += row.json.length;
    }
    start = end;
  }
  return page.reverse();
}

/** A page's rows that read and their messages, in order; one that does not read fails the read, or goes to `leftOut`. */
export function pageMessages(rows: readonly MessageRow[], sessionId: string, leftOut: ((record: string) => void) | undefined): { rows: MessageRow[]; messages: ChatMessage[] } {
  const read: MessageRow[] = [];
  const messages: ChatMessage[] = [];
  for (const row of rows) {
    const before = messages.length;
    storedMessages([row.json], sessionId, leftOut, messages);
    if (messages.length > before) read.push(row);
  }
  return { rows: read, messages };
}

/**
 * The ledger rows of a page's calls; one that does not read fails the read, or goes to `leftOut` with the call it is
 * of (see pageMessages).
 */
export function pageToolCalls(rows: readonly LedgerRow[], leftOut: ((record: string, call: LeftOutCall) => void) | undefined): ToolCallRecord[] {
  return rows.flatMap((row) => {
    try {
      return [toToolCall(row)];
    } catch (error) {
      if (leftOut === undefined || !(error instanceof DamagedRecordError)) throw error;
      leftOut(error.message, { runId: row.run_id, toolCallId: row.tool_call_id });
      return [];
    }
  });
}

/** The calls the page's messages made, as [run, call id] pairs a ledger row is found by; a message of no run has none. */
export function callsOfPage(rows: readonly MessageRow[], messages: readonly ChatMessage[]): [string, string][] {
  return rows.flatMap((row, index) => {
    const message = messages[index]!;
    return row.run_id === null || message.role !== 'assistant' ? [] : (message.toolCalls ?? []).map((call): [string, string] => [row.run_id!, call.id]);
  });
}
