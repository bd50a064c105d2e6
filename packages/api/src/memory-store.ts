import { NotFoundError, type AskedBecause, type ChatMessage, type Decision, type LoopEvent } from '@airlock/core';
import type { Rule } from './rules';
import { RunStoppedError } from './run-stopped-error';
import { searchSessionPage } from './session-search';
import {
  MAX_AUDIT_PAGE_CHARS,
  type AirlockStore,
  type AppendEventInput,
  type AuditPage,
  type AuditQuery,
  type LedgerChange,
  type MessagePage,
  type MessagePageQuery,
  type MessageRun,
  type RunBeginning,
  type SessionChanges,
  type SessionPageQuery,
  type SessionPosition,
  type StoredGrant,
  type StoredRule,
  type StoredRun,
  type StoredSessionSummary,
  type ToolCallRecord,
  type EventPage,
} from './store';

/** A message as JSON text, with the run that wrote it (null for one of no run). */
interface StoredMessage {
  json: string;
  runId: string | null;
}

interface LedgerEntry {
  /** Start order, the audit cursor's tie-break. */
  id: number;
  record: ToolCallRecord;
}

const DEFAULT_AUDIT_LIMIT = 100;
const MAX_AUDIT_LIMIT = 1000;

/**
 * The store in plain Maps, for tests and for a server without a data folder. It behaves as the SQLite store does,
 * down to what a JSON round trip drops (messages, events and arguments are kept as JSON text), so that the one
 * contract suite holds for both; nothing a caller holds is shared with it.
 */
export class MemoryStore implements AirlockStore {
  private readonly sessions = new Map<string, StoredSessionSummary>();
  /** The sessions in listSessionPage's order, kept so as they change: the index a page is read from. */
  private readonly byActivity: StoredSessionSummary[] = [];
  private readonly messages = new Map<string, StoredMessage[]>();
  private readonly runs = new Map<string, { run: StoredRun; options: string; events: Map<number, string> }>();
  private readonly retiredRuns = new Set<string>();
  private readonly ledger: LedgerEntry[] = [];
  private readonly ledgerByCall = new Map<string, LedgerEntry>();
  private readonly grants = new Map<string, StoredGrant>();
  private readonly rules = new Map<string, StoredRule>();
  private readonly settings = new Map<string, string>();

  async listSessions(): Promise<StoredSessionSummary[]> {
    return [...this.sessions.values()]
      .sort((a, b) => b.updatedAt - a.updatedAt || b.createdAt - a.createdAt || compareText(a.sessionId, b.sessionId))
      .map((session) => ({ ...session }));
  }

  async listSessionPage(query: SessionPageQuery): Promise<StoredSessionSummary[]> {
    const { titleContains, ...page } = query;
    if (titleContains !== undefined) return searchSessionPage((batch) => this.listSessionPage(batch), { ...page, titleContains });
    const start = query.after === undefined ? 0 : this.activityIndex(query.after, true);
    return this.byActivity.slice(start, start + Math.max(0, query.limit)).map((session) => ({ ...session }));
  }

  /** Where `position` stands in byActivity: its own index, or with `past` the index of the first session after it. */
  private activityIndex(position: SessionPosition, past: boolean): number {
    let low = 0;
    let high = this.byActivity.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const order = compareActivity(this.byActivity[middle]!, position);
      if (order < 0 || (past && order === 0)) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  async getSession(sessionId: string): Promise<StoredSessionSummary | undefined> {
    const session = this.sessions.get(sessionId);
    return session === undefined ? undefined : { ...session };
  }

  async createSession(session: StoredSessionSummary): Promise<void> {
    if (this.sessions.has(session.sessionId)) throw new Error(`session "${session.sessionId}" already exists`);
    const kept = { ...session };
    this.sessions.set(session.sessionId, kept);
    this.byActivity.splice(this.activityIndex(kept, false), 0, kept);
    this.messages.set(session.sessionId, []);
  }

  async updateSession(sessionId: string, changes: SessionChanges): Promise<void> {
    this.changeSession(sessionId, changes);
  }

  private changeSession(sessionId: string, changes: SessionChanges): void {
    const session = this.sessions.get(sessionId);
    if (session === undefined) return;
    if (changes.title !== undefined) session.title = changes.title;
    if (changes.updatedAt !== undefined && changes.updatedAt !== session.updatedAt) {
      this.byActivity.splice(this.activityIndex(session, false), 1);
      session.updatedAt = changes.updatedAt;
      this.byActivity.splice(this.activityIndex(session, false), 0, session);
    }
    if (changes.confirmToolCalls !== undefined) session.confirmToolCalls = changes.confirmToolCalls;
    if (changes.lastRunId !== undefined) session.lastRunId = changes.lastRunId;
  }

  async deleteSession(sessionId: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (session === undefined) return;
    this.sessions.delete(sessionId);
    this.byActivity.splice(this.activityIndex(session, false), 1);
    this.messages.delete(sessionId);
    for (const [runId, { run }] of this.runs) {
      if (run.sessionId !== sessionId) continue;
      this.runs.delete(runId);
      this.retiredRuns.add(runId);
    }
    for (const [grantId, grant] of this.grants) if (grant.sessionId === sessionId) this.grants.delete(grantId);
    for (const [ruleId, { rule }] of this.rules) if (rule.scope.kind === 'chat' && rule.scope.sessionId === sessionId) this.rules.delete(ruleId);
  }

  async appendMessage(sessionId: string, message: ChatMessage, _at: number, run?: MessageRun): Promise<void> {
    this.messagesOf(sessionId).push({ json: JSON.stringify(message), runId: run?.runId ?? null });
  }

  async loadMessages(sessionId: string): Promise<ChatMessage[]> {
    return (this.messages.get(sessionId) ?? []).map(({ json }) => JSON.parse(json) as ChatMessage);
  }

  async loadMessagePage(sessionId: string, query: MessagePageQuery): Promise<MessagePage> {
    const stored = this.messages.get(sessionId) ?? [];
    const end = Math.max(0, Math.min(Math.floor(query.before ?? stored.length), stored.length));
    let start = end;
    for (let chars = 0; start > 0 && end - start < query.limit; start--) {
      chars += stored[start - 1]!.json.length;
      if (chars > query.maxChars && start < end) break;
    }
    const page = stored.slice(start, end);
    const messages = page.map(({ json }) => JSON.parse(json) as ChatMessage);
    const toolCalls = messages
      .flatMap((message, index) => {
        const { runId } = page[index]!;
        if (runId === null || message.role !== 'assistant') return [];
        return (message.toolCalls ?? []).flatMap((call) => this.ledgerByCall.get(`${runId}\u0000${call.id}`) ?? []);
      })
      .filter((entry) => entry.record.sessionId === sessionId)
      .sort((a, b) => a.id - b.id)
      .map(copyRecord);
    return { messages, runIds: page.map(({ runId }) => runId), start, toolCalls };
  }

  async loadFirstRunMessage(sessionId: string, runId: string): Promise<ChatMessage | undefined> {
    const first = this.messages.get(sessionId)?.find((message) => message.runId === runId);
    return first === undefined ? undefined : (JSON.parse(first.json) as ChatMessage);
  }

  async createRun(run: StoredRun): Promise<void> {
    this.addRun(run);
  }

  private addRun(run: StoredRun): void {
    if (!this.sessions.has(run.sessionId)) throw new NotFoundError('session', run.sessionId);
    if (this.runs.has(run.runId)) throw new Error(`run "${run.runId}" already exists`);
    const options = JSON.stringify(run.options);
    this.runs.set(run.runId, { run: { ...run, options: {} }, options, events: new Map() });
  }

  async beginRun({ run, message, session }: RunBeginning): Promise<void> {
    // Not through the methods a test may replace: checked before anything is written, nothing after can fail.
    this.addRun(run);
    this.messagesOf(run.sessionId).push({ json: JSON.stringify(message), runId: run.runId });
    this.changeSession(run.sessionId, session);
  }

  async endRun(runId: string, reason: string, endedAt: number): Promise<void> {
    const entry = this.runs.get(runId);
    if (entry === undefined) return;
    entry.run.endedAt = endedAt;
    entry.run.endReason = reason;
  }

  async requestCancel(runId: string): Promise<boolean> {
    const entry = this.runs.get(runId);
    if (entry === undefined || entry.run.endedAt !== null) return false;
    entry.run.cancelRequested = true;
    return true;
  }

  async hasRun(runId: string): Promise<boolean> {
    return this.runs.has(runId) || this.retiredRuns.has(runId);
  }

  async getRun(runId: string): Promise<StoredRun | undefined> {
    const entry = this.runs.get(runId);
    return entry === undefined ? undefined : { ...entry.run, options: JSON.parse(entry.options) as StoredRun['options'] };
  }

  async listUnfinishedRuns(): Promise<StoredRun[]> {
    return [...this.runs.values()]
      .filter((entry) => entry.run.endedAt === null)
      .sort((a, b) => a.run.startedAt - b.run.startedAt)
      .map((entry) => ({ ...entry.run, options: JSON.parse(entry.options) as StoredRun['options'] }));
  }

  async appendEvent(input: AppendEventInput): Promise<void> {
    const entry = this.runs.get(input.runId);
    if (entry === undefined) throw new NotFoundError('run', input.runId);
    if (entry.events.has(input.seq)) throw new Error(`run "${input.runId}" already has an event ${input.seq}`);
    // Everything that can fail is checked before anything changes: the event and its ledger change land together.
    const applyLedger = input.ledger === undefined ? undefined : this.ledgerChange(input.runId, input.sessionId, input.ledger);
    const messages = input.messages === undefined || input.messages.length === 0 ? undefined : this.messagesOf(input.sessionId);
    messages?.push(...input.messages!.map((message) => ({ json: JSON.stringify(message), runId: input.runId })));
    entry.events.set(input.seq, JSON.stringify(input.event));
    applyLedger?.();
    if (input.grant !== undefined) this.grants.set(input.grant.grantId, roundTrip(input.grant));
  }

  async appendEvents(inputs: readonly AppendEventInput[]): Promise<void> {
    // Checked as a whole first, so a batch lands whole or not at all.
    const seen = new Set<string>();
    for (const input of inputs) {
      const entry = this.runs.get(input.runId);
      if (entry === undefined) throw new NotFoundError('run', input.runId);
      const key = `${input.runId}:${input.seq}`;
      if (entry.events.has(input.seq) || seen.has(key)) throw new Error(`run "${input.runId}" already has an event ${input.seq}`);
      if (input.ledger?.kind === 'running' && entry.run.cancelRequested === true) throw new RunStoppedError(input.runId, input.ledger.toolCallId);
      seen.add(key);
    }
    // Applied in one go, with no await between them: a Stop (or any write) of another task cannot land in the middle
    // and leave half the batch applied (appendEvent's body runs to its end when called).
    await Promise.all(inputs.map((input) => this.appendEvent(input)));
  }

  async loadEvents(runId: string, afterSeq: number, page?: EventPage): Promise<LoopEvent[]> {
    const events = this.runs.get(runId)?.events;
    if (events === undefined) return [];
    const after = [...events].filter(([seq]) => seq > afterSeq).sort(([a], [b]) => a - b);
    let end = after.length;
    if (page !== undefined) {
      end = Math.min(end, Math.max(1, page.events));
      let chars = after[0]?.[1].length ?? 0;
      for (let index = 1; index < end; index++) {
        chars += after[index]![1].length;
        if (chars > page.chars) end = index;
      }
    }
    return after.slice(0, end).map(([, json]) => JSON.parse(json) as LoopEvent);
  }

  async lastEventSeq(runId: string): Promise<number> {
    let last = 0;
    for (const seq of this.runs.get(runId)?.events.keys() ?? []) last = Math.max(last, seq);
    return last;
  }

  async loadLastEvent(runId: string): Promise<LoopEvent | undefined> {
    const events = this.runs.get(runId)?.events;
    let last: number | undefined;
    for (const seq of events?.keys() ?? []) if (last === undefined || seq > last) last = seq;
    return last === undefined ? undefined : (JSON.parse(events!.get(last)!) as LoopEvent);
  }

  async listRunToolCalls(runId: string): Promise<ToolCallRecord[]> {
    return this.ledger.filter((entry) => entry.record.runId === runId).map(copyRecord);
  }

  async listSessionToolCalls(sessionId: string): Promise<ToolCallRecord[]> {
    return this.ledger.filter((entry) => entry.record.sessionId === sessionId).map(copyRecord);
  }

  async findDecision(sessionId: string, approvalId: string): Promise<Decision | undefined> {
    if (approvalId === '') return undefined;
    const found = this.ledger.findLast(({ record }) => record.approvalId === approvalId && record.sessionId === sessionId && record.decision !== null);
    return found?.record.decision ?? undefined;
  }

  async requireExactGrants(runId: string, toolCallId: string, askedBecause?: AskedBecause): Promise<boolean> {
    const entry = this.ledgerByCall.get(`${runId}\u0000${toolCallId}`);
    if (entry === undefined || entry.record.decision !== null) return false;
    if (!entry.record.exactGrantsOnly) {
      entry.record.exactGrantsOnly = true;
      entry.record.askedBecause = askedBecause === undefined ? null : roundTrip(askedBecause);
    }
    return true;
  }

  async listAudit(query: AuditQuery): Promise<AuditPage> {
    const limit = auditLimit(query.limit);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const matching = this.ledger
      .filter(({ id, record }) => {
        if (query.sessionId !== undefined && record.sessionId !== query.sessionId) return false;
        if (query.toolName !== undefined && record.toolName !== query.toolName) return false;
        if (query.decision === 'none' ? record.decision !== null : query.decision !== undefined && record.decision !== query.decision) return false;
        if (query.from !== undefined && record.requestedAt < query.from) return false;
        if (query.to !== undefined && record.requestedAt >= query.to) return false;
        return after === undefined || record.requestedAt < after.at || (record.requestedAt === after.at && id < after.id);
      })
      .sort((a, b) => b.record.requestedAt - a.record.requestedAt || b.id - a.id);
    const page: LedgerEntry[] = [];
    let chars = 0;
    for (const entry of matching.slice(0, limit)) {
      chars += JSON.stringify(entry.record).length;
      if (chars > MAX_AUDIT_PAGE_CHARS && page.length > 0) break;
      page.push(entry);
    }
    const last = page.at(-1);
    return { entries: page.map(copyRecord), nextCursor: matching.length > page.length && last !== undefined ? encodeCursor(last.record.requestedAt, last.id) : null };
  }

  async saveGrant(grant: StoredGrant): Promise<void> {
    if (!this.sessions.has(grant.sessionId)) throw new NotFoundError('session', grant.sessionId);
    this.grants.set(grant.grantId, roundTrip(grant));
  }

  async deleteGrant(grantId: string): Promise<void> {
    this.grants.delete(grantId);
  }

  async saveRule(rule: Rule): Promise<void> {
    const kept = this.rules.get(rule.id);
    this.rules.set(rule.id, { rule: roundTrip(rule), hits: kept?.hits ?? 0, lastUsedAt: kept?.lastUsedAt ?? null });
  }

  async deleteRule(ruleId: string): Promise<void> {
    this.rules.delete(ruleId);
  }

  async listRules(): Promise<StoredRule[]> {
    return [...this.rules.values()].map((stored) => roundTrip(stored));
  }

  async recordRuleHit(ruleId: string, at: number): Promise<void> {
    const stored = this.rules.get(ruleId);
    if (stored) this.rules.set(ruleId, { ...stored, hits: stored.hits + 1, lastUsedAt: at });
  }

  async getSetting(key: string): Promise<string | undefined> {
    return this.settings.get(key);
  }

  async setSetting(key: string, value: string | undefined): Promise<void> {
    if (value === undefined) this.settings.delete(key);
    else this.settings.set(key, value);
  }

  async listGrants(): Promise<StoredGrant[]> {
    return [...this.grants.values()].sort((a, b) => a.createdAt - b.createdAt).map((grant) => roundTrip(grant));
  }

  async close(): Promise<void> {}

  private messagesOf(sessionId: string): StoredMessage[] {
    const messages = this.messages.get(sessionId);
    if (messages === undefined) throw new NotFoundError('session', sessionId);
    return messages;
  }

  /** Checks a ledger change and returns the function that applies it; throws, changing nothing, if it cannot apply. */
  private ledgerChange(runId: string, sessionId: string, change: LedgerChange): () => void {
    const key = `${runId}\u0000${change.toolCallId}`;
    const existing = this.ledgerByCall.get(key);
    if (change.kind === 'start') {
      if (existing !== undefined) throw new Error(`tool call "${change.toolCallId}" of run "${runId}" was already started`);
      const entry: LedgerEntry = { id: this.ledger.length + 1, record: startRecord(runId, sessionId, change) };
      return () => {
        this.ledger.push(entry);
        this.ledgerByCall.set(key, entry);
      };
    }
    if (existing === undefined) throw new NotFoundError('tool call', `${runId}/${change.toolCallId}`);
    const record = existing.record;
    switch (change.kind) {
      case 'decision':
        return () => {
          record.decision = change.decision;
          record.source = change.source;
          record.reason = change.reason ?? null;
          record.decidedByGrant = change.decidedByGrant ?? null;
          record.decidedByRule = change.decidedByRule ?? null;
          record.decidedByRuleText = change.decidedByRuleText ?? null;
          record.decidedAt = change.decidedAt;
          record.connectionId = change.by?.connectionId ?? null;
          record.clientLabel = change.by?.clientLabel ?? null;
          record.editedArguments = change.editedArguments === undefined ? null : roundTrip(change.editedArguments);
        };
      case 'running':
        if (this.runs.get(runId)?.run.cancelRequested === true) throw new RunStoppedError(runId, change.toolCallId);
        return () => {
          record.startedAt = change.startedAt;
        };
      case 'end':
        return () => {
          record.outcome = change.outcome;
          record.result = change.result;
          record.cut = change.cut === undefined ? null : { ...change.cut };
          record.endedAt = change.endedAt;
          if (change.startedAt !== undefined) record.startedAt = change.startedAt;
        };
    }
  }
}

function startRecord(runId: string, sessionId: string, change: Extract<LedgerChange, { kind: 'start' }>): ToolCallRecord {
  return {
    runId,
    sessionId,
    toolCallId: change.toolCallId,
    toolName: change.toolName,
    arguments: roundTrip(change.arguments),
    editedArguments: null,
    approvalId: change.approvalId,
    executesCode: change.executesCode,
    toolVersion: change.toolVersion,
    tool: change.tool === undefined ? null : roundTrip(change.tool),
    exactGrantsOnly: change.exactGrantsOnly === true,
    askedBecause: change.exactGrantsOnly === true && change.askedBecause !== undefined ? roundTrip(change.askedBecause) : null,
    requestedAt: change.requestedAt,
    expiresAt: change.expiresAt,
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

function copyRecord(entry: LedgerEntry): ToolCallRecord {
  const { record } = entry;
  return {
    ...record,
    arguments: roundTrip(record.arguments),
    editedArguments: record.editedArguments === null ? null : roundTrip(record.editedArguments),
    tool: record.tool === null ? null : roundTrip(record.tool),
    askedBecause: record.askedBecause === null ? null : roundTrip(record.askedBecause),
    cut: record.cut === null ? null : { ...record.cut },
  };
}

function roundTrip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** listSessionPage's order: the more recently active first, then the greater id first. */
function compareActivity(a: SessionPosition, b: SessionPosition): number {
  return b.updatedAt - a.updatedAt || compareText(b.sessionId, a.sessionId);
}

function auditLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_AUDIT_LIMIT;
  return Math.min(MAX_AUDIT_LIMIT, Math.max(1, Math.trunc(limit)));
}

function encodeCursor(at: number, id: number): string {
  return `${at}:${id}`;
}

function decodeCursor(cursor: string): { at: number; id: number } {
  const [at, id, ...rest] = cursor.split(':').map(Number);
  if (at === undefined || id === undefined || rest.length > 0 || !Number.isFinite(at) || !Number.isSafeInteger(id)) throw new NotFoundError('audit cursor', cursor);
  return { at, id };
}
