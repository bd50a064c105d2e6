import {
  Cancellation,
  ConflictError,
  grantsNeedExactArguments,
  NotFoundError,
  randomId,
  runToolLoop,
  toolResultText,
  toolVersion,
  type AnyTool,
  type ApprovalRegistry,
  type ChatMessage,
  type ChatModel,
  type Decision,
  type DecisionTimeout,
  type Grant,
  type LoopEvent,
  type PendingApproval,
  type PolicyVerdict,
  type ResolveResult,
  type ResumedCall,
  type ResumeState,
  type ToolCall,
  type ToolOutcome,
} from '@airlock/core';
import type { RuleService } from './context';
import { EventLog, parseEventId, type LogFollower } from './event-log';
import { MemoryStore } from './memory-store';
import type { AirlockStore, AuditPage, AuditQuery, DecidedBy, LedgerChange, StoredRun, StoredSessionSummary, ToolCallRecord } from './store';

export interface RunOptions {
  /** Also changes the session's own setting, which every later run of the session keeps. */
  confirmToolCalls?: boolean;
  enabledTools?: string[];
  maxToolCalls?: number;
  toolCallTimeoutMs?: number;
  decisionTimeoutMs?: DecisionTimeout;
}

export interface SessionSummary {
  sessionId: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  /** Whether this session's calls stop for a decision. When false, every call runs unasked (and the ledger says so). */
  confirmToolCalls: boolean;
  /** The run still going in this session, if any: a client re-attaches to it. */
  activeRunId: string | null;
  /** The session's latest run, going or not: a client that did not follow it reloads the history. */
  lastRunId: string | null;
}

export interface SessionDetail extends SessionSummary {
  messages: ChatMessage[];
  /** Every tool call of the session with how it was decided and how it ended, so history tells the truth after a reload. */
  toolCalls: ToolCallRecord[];
}

/** What changed in the list of sessions: a session's title, activity or run, or its deletion. */
export type SessionChange = { type: 'session-changed'; session: SessionSummary } | { type: 'session-deleted'; sessionId: string };

export interface ChatServiceOptions {
  registry: ApprovalRegistry;
  /** The model for new runs, looked up at each run start. */
  model: () => ChatModel;
  /** The tools for new runs (built-ins and MCP), looked up at each run start. */
  tools: () => readonly AnyTool[];
  /** Prepended to every model request; not stored in the conversation. */
  systemPrompt?: string;
  /** How long a finished run stays in memory for a client that reconnects (after that it is read from the store). Default 10 minutes. */
  finishedRunTtlMs?: number;
  /** Keeps sessions, runs, events, the ledger and grants. Default a MemoryStore: nothing outlives the process. */
  store?: AirlockStore;
  /**
   * On shutdown, leave runs as they are in the store (waiting calls stay waiting, a running call becomes
   * interrupted) so the next start resumes them; otherwise runs are cancelled and end. Default false.
   */
  suspendRunsOnShutdown?: boolean;
  /** Default 100,000. A new session beyond it is refused. */
  maxSessions?: number;
  /** Sessions whose conversations are kept in memory at once; older idle ones are read again when needed. Default 200. */
  maxLoadedSessions?: number;
  /** Receives a line for each failure that cannot be sent to a client (a write that failed). Default console.warn. */
  log?: (line: string) => void;
  /** Lasting rules, asked before grants and the person. Default none. */
  rules?: RuleService;
}

interface Run {
  runId: string;
  sessionId: string;
  log: EventLog;
  /** Not an AbortController: a run waiting on a decision should not hold a kilobyte-sized AbortSignal. */
  cancellation: Cancellation;
  done: Promise<void>;
  /** The tools the run was started with, to fingerprint its calls in the ledger. */
  tools: readonly AnyTool[];
  /** Messages the loop added that are not stored yet. */
  unsaved: ChatMessage[];
  /** Set on a suspending shutdown: nothing more is written, so the stored run is left as it was. */
  suspended: boolean;
}

interface Session {
  summary: StoredSessionSummary;
  /** Read from the store when first needed. */
  messages: ChatMessage[] | undefined;
  activeRun: Run | undefined;
}

export interface StartRunInput {
  sessionId: string;
  runId?: string;
  message: string;
  options?: RunOptions;
}

export interface ConfirmInput {
  sessionId: string;
  approvalId: string;
  decision: 'allow' | 'deny';
  reason?: string;
  always?: boolean;
  /**
   * With always: what it covers. "chat" (the default) grants it in this chat; "workspace" and "global" save a rule
   * (the one `RuleService.propose` previews) that covers later calls in other chats too.
   */
  scope?: 'chat' | 'workspace' | 'global';
  /** Who decided, for the ledger. */
  by?: DecidedBy;
}

/**
 * Sessions and their runs. A run belongs to the server, not to a connection: it goes on when its client drops, and
 * any client of the session can re-attach and replay what it missed. Everything is written to the store as it
 * happens, before clients see it: a run waiting on a decision when the process stops is resumed at the next start.
 */
export class ChatService {
  private readonly sessions = new Map<string, Session>();
  private readonly runs = new Map<string, Run>();
  private readonly finishedRunTtlMs: number;
  private readonly maxSessions: number;
  private readonly maxLoadedSessions: number;
  private readonly watchers = new Set<(change: SessionChange) => void>();
  private readonly store: AirlockStore;
  private readonly log: (line: string) => void;
  /** Who is deciding each approval, kept from the confirm call until its decision is written. */
  private readonly deciders = new Map<string, DecidedBy>();
  /** Session ids whose conversation is in memory, least recently used first. */
  private readonly loaded = new Set<string>();
  /** Serialises what changes the set of sessions and runs, so no check is made stale by a write in between. */
  private admission: Promise<unknown> = Promise.resolve();
  private closing = false;

  constructor(private readonly options: ChatServiceOptions) {
    this.finishedRunTtlMs = options.finishedRunTtlMs ?? 10 * 60 * 1000;
    this.maxSessions = options.maxSessions ?? 100_000;
    this.maxLoadedSessions = options.maxLoadedSessions ?? 200;
    this.store = options.store ?? new MemoryStore();
    this.log = options.log ?? ((line) => console.warn(line));
  }

  /**
   * Reads what the store kept: sessions, grants, and runs that were going when the process stopped. A run that
   * waited on decisions goes on waiting (same approval ids, same deadlines); a call that was running is recorded
   * as interrupted and never re-run; any other unfinished run ends.
   */
  async open(): Promise<{ sessions: number; resumedRuns: number }> {
    for (const summary of await this.store.listSessions()) {
      this.sessions.set(summary.sessionId, { summary, messages: undefined, activeRun: undefined });
    }
    for (const grant of await this.store.listGrants()) {
      if (this.sessions.has(grant.sessionId)) this.registry.restoreGrant(grant);
    }
    let resumedRuns = 0;
    for (const run of await this.store.listUnfinishedRuns()) {
      if (await this.resumeRun(run)) resumedRuns++;
    }
    return { sessions: this.sessions.size, resumedRuns };
  }

  get registry(): ApprovalRegistry {
    return this.options.registry;
  }

  /** Starts a run for a new user message. A session whose run is still going refuses a second one. */
  startRun(input: StartRunInput): Promise<{ runId: string }> {
    return this.admit(async () => {
      if (this.closing) throw new ConflictError('shutting-down', 'the server is shutting down; try again in a moment');
      const existing = this.sessions.get(input.sessionId);
      if (existing?.activeRun) {
        throw new ConflictError('session-busy', `session "${input.sessionId}" is still running ${existing.activeRun.runId}; cancel it or wait for it to end`);
      }
      const runId = input.runId ?? randomId('run', 12);
      if (this.runs.has(runId) || (await this.store.hasRun(runId))) throw new ConflictError('run-exists', `run "${runId}" already exists; start a new run with a new runId`);
      if (!existing && this.sessions.size >= this.maxSessions) throw new ConflictError('too-many-sessions', `this server keeps at most ${this.maxSessions} sessions; delete some first`);
      // Looked up before anything is written: when no model or tool list can be had, nothing is kept.
      const model = this.options.model();
      const tools = this.options.tools();
      const now = Date.now();
      const options = input.options ?? {};
      let session = existing;
      if (!session) {
        session = { summary: newSummary(input.sessionId, input.message, now), messages: [], activeRun: undefined };
        await this.store.createSession(session.summary);
        this.sessions.set(input.sessionId, session);
      }
      const messages = await this.messagesOf(session);
      const confirmToolCalls = options.confirmToolCalls ?? session.summary.confirmToolCalls;
      const stored: StoredRun = { runId, sessionId: session.summary.sessionId, options, startedAt: now, endedAt: null, endReason: null };
      await this.store.createRun(stored);
      const userMessage: ChatMessage = { role: 'user', content: input.message };
      await this.store.appendMessage(session.summary.sessionId, userMessage, now);
      messages.push(userMessage);
      session.summary = { ...session.summary, updatedAt: now, lastRunId: runId, confirmToolCalls };
      await this.store.updateSession(session.summary.sessionId, { updatedAt: now, lastRunId: runId, confirmToolCalls });
      const run = this.newRun(runId, session.summary.sessionId, tools);
      const system = this.systemMessages();
      const generator = runToolLoop({
        model,
        messages: system.length === 0 ? [...messages] : [...system, ...messages],
        tools,
        registry: this.options.registry,
        sessionId: session.summary.sessionId,
        runId,
        signal: run.cancellation,
        confirmToolCalls,
        currentTool: (name) => this.options.tools().find((tool) => tool.name === name),
        ...this.policyFor(session.summary.sessionId),
        onMessage: (message) => run.unsaved.push(message),
        ...loopOptions(options),
      });
      this.attachRun(session, run, generator);
      return { runId };
    });
  }

  /**
   * Calls `listener` with every change to the list of sessions (a run starting or ending, a session
   * created or deleted) until the returned function is called. A listener that throws is dropped.
   */
  watchSessions(listener: (change: SessionChange) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  /**
   * Follows a run's events after `afterSeq`, each as `wrap(id, event)`; stop it with `return()`.
   * The caller must belong to the run's session; call `attachable` first for a run that may only be in the store.
   */
  follow<T>(sessionId: string, runId: string, afterSeq: number, wrap: (id: string, event: LoopEvent) => T, signal?: AbortSignal): LogFollower<T> {
    const run = this.runs.get(runId);
    if (!run || run.sessionId !== sessionId) throw new NotFoundError('run', runId);
    return run.log.follow(afterSeq, wrap, signal);
  }

  /**
   * Whether the session has a run of this id to re-attach to: going, or finished and kept (its events are read
   * back from the store when it is no longer in memory, so a client re-sending a run's input after a restart
   * replays it rather than starting it again).
   */
  async attachable(sessionId: string, runId: string): Promise<boolean> {
    const inMemory = this.runs.get(runId);
    if (inMemory) return inMemory.sessionId === sessionId;
    const stored = await this.store.getRun(runId);
    if (!stored || stored.sessionId !== sessionId) return false;
    if (this.runs.has(runId)) return true;
    const log = new EventLog(runId);
    for (const event of await this.store.loadEvents(runId, 0)) log.append(event);
    log.close();
    this.runs.set(runId, { ...this.newRun(runId, sessionId, []), log });
    this.forgetLater(runId);
    return true;
  }

  isRunActive(runId: string): boolean {
    const run = this.runs.get(runId);
    return run !== undefined && !run.log.isClosed;
  }

  /** Cancels the session's active run (only `runId`, when given). Answers how many runs were cancelled. */
  cancel(sessionId: string, runId?: string): number {
    const run = this.sessions.get(sessionId)?.activeRun;
    if (!run || (runId !== undefined && run.runId !== runId) || run.cancellation.aborted) return 0;
    run.cancellation.cancel();
    return 1;
  }

  async confirm(input: ConfirmInput): Promise<ResolveResult> {
    const rules = this.options.rules;
    const asRule = input.decision === 'allow' && input.always === true && input.scope !== undefined && input.scope !== 'chat' && rules !== undefined;
    const pending = asRule ? this.options.registry.listPending(input.sessionId).find((p) => p.approvalId === input.approvalId) : undefined;
    // The rule is drafted before the call is released, from the very arguments the person was shown.
    const tool = pending && this.options.tools().find((candidate) => candidate.name === pending.toolName);
    const draft = pending && rules ? await rules.propose(input.sessionId, { toolName: pending.toolName, arguments: pending.arguments }, input.scope!, tool) : undefined;
    // Kept until the decision event is written, so the ledger says who decided.
    if (input.by) this.deciders.set(input.approvalId, input.by);
    const result = this.options.registry.resolve(input.approvalId, input.decision, {
      sessionId: input.sessionId,
      ...(input.reason === undefined ? {} : { reason: input.reason }),
      ...(input.always === undefined || asRule ? {} : { always: input.always }),
    });
    if (!result.resolved) this.deciders.delete(input.approvalId);
    if (result.resolved && draft && rules) await rules.add(draft.draft);
    if (result.resolved && result.grant) {
      const { grant } = result;
      await this.store.saveGrant({ ...grant, scope: 'session' });
    }
    return result;
  }

  pending(sessionId: string): PendingApproval[] {
    return this.options.registry.listPending(sessionId);
  }

  listGrants(sessionId: string): Grant[] {
    return this.options.registry.listGrants(sessionId);
  }

  async revokeGrant(sessionId: string, grantId: string): Promise<boolean> {
    const revoked = this.options.registry.revokeGrant(sessionId, grantId);
    if (revoked) await this.store.deleteGrant(grantId);
    return revoked;
  }

  listSessions(): SessionSummary[] {
    return [...this.sessions.values()].sort((a, b) => b.summary.updatedAt - a.summary.updatedAt).map(summary);
  }

  async getSession(sessionId: string): Promise<SessionDetail> {
    const session = this.sessions.get(sessionId);
    if (!session) throw new NotFoundError('session', sessionId);
    const messages = await this.messagesOf(session);
    const toolCalls = await this.store.listSessionToolCalls(sessionId);
    return { ...summary(session), messages: [...messages], toolCalls };
  }

  /** Changes a session's own settings. */
  async updateSession(sessionId: string, changes: { confirmToolCalls?: boolean; title?: string }): Promise<SessionSummary> {
    return this.admit(async () => {
      const session = this.sessions.get(sessionId);
      if (!session) throw new NotFoundError('session', sessionId);
      const now = Date.now();
      const next = { ...session.summary, ...definedOnly(changes), updatedAt: now };
      await this.store.updateSession(sessionId, { ...definedOnly(changes), updatedAt: now });
      session.summary = next;
      this.notify({ type: 'session-changed', session: summary(session) });
      return summary(session);
    });
  }

  audit(query: AuditQuery): Promise<AuditPage> {
    return this.store.listAudit(query);
  }

  /** Deletes a session: its run is cancelled, its pending calls end as cancel, its grants go; its ledger rows stay. */
  async deleteSession(sessionId: string): Promise<boolean> {
    const session = this.sessions.get(sessionId);
    if (!session) return false;
    const run = session.activeRun;
    if (run) {
      run.cancellation.cancel();
      await run.done;
    }
    return this.admit(async () => {
      if (this.sessions.get(sessionId) !== session) return false;
      this.options.registry.clearSession(sessionId);
      await this.store.deleteSession(sessionId);
      this.options.rules?.forgetSession(sessionId);
      this.sessions.delete(sessionId);
      this.loaded.delete(sessionId);
      this.notify({ type: 'session-deleted', sessionId });
      return true;
    });
  }

  /**
   * Ends every run's work in this process and waits for it. With `suspendRunsOnShutdown`, nothing more is written:
   * waiting calls stay waiting in the store and a running call is left to be recorded as interrupted at the next
   * start. Otherwise runs are cancelled and end (tool-end and run-end emitted and stored).
   */
  async shutdown(): Promise<void> {
    this.closing = true;
    const active = [...this.sessions.values()].flatMap((session) => (session.activeRun ? [session.activeRun] : []));
    for (const run of active) {
      if (this.options.suspendRunsOnShutdown) run.suspended = true;
      run.cancellation.cancel();
    }
    await Promise.all(active.map((run) => run.done));
  }

  get activeRunCount(): number {
    let count = 0;
    for (const session of this.sessions.values()) if (session.activeRun) count++;
    return count;
  }

  private admit<T>(work: () => Promise<T>): Promise<T> {
    const result = this.admission.then(work);
    this.admission = result.catch(() => undefined);
    return result;
  }

  private policyFor(sessionId: string): { policy?: (call: ToolCall, tool: AnyTool) => Promise<PolicyVerdict | undefined> } {
    const rules = this.options.rules;
    return rules ? { policy: (call, tool) => rules.evaluate(sessionId, call, tool) } : {};
  }

  private systemMessages(): ChatMessage[] {
    return this.options.systemPrompt ? [{ role: 'system', content: this.options.systemPrompt }] : [];
  }

  private newRun(runId: string, sessionId: string, tools: readonly AnyTool[]): Run {
    return { runId, sessionId, log: new EventLog(runId), cancellation: new Cancellation(), done: Promise.resolve(), tools, unsaved: [], suspended: false };
  }

  private attachRun(session: Session, run: Run, generator: ReturnType<typeof runToolLoop>): void {
    session.activeRun = run;
    this.runs.set(run.runId, run);
    run.done = this.drive(session, run, generator);
    this.notify({ type: 'session-changed', session: summary(session) });
  }

  private async messagesOf(session: Session): Promise<ChatMessage[]> {
    const id = session.summary.sessionId;
    const messages = (session.messages ??= await this.store.loadMessages(id));
    this.loaded.delete(id);
    this.loaded.add(id);
    for (const oldest of this.loaded) {
      if (this.loaded.size <= this.maxLoadedSessions) break;
      // Never the one asked for (it is about to be used), nor one whose run is going.
      const idle = this.sessions.get(oldest);
      if (oldest === id || idle?.activeRun) continue;
      if (idle) idle.messages = undefined;
      this.loaded.delete(oldest);
    }
    return messages;
  }

  /** Puts a run that was going when the process stopped back to work, or ends it. Answers whether it resumed. */
  private async resumeRun(stored: StoredRun): Promise<boolean> {
    const session = this.sessions.get(stored.sessionId);
    if (!session) {
      await this.store.endRun(stored.runId, 'error', Date.now());
      return false;
    }
    const messages = await this.messagesOf(session);
    const records = new Map((await this.store.listRunToolCalls(stored.runId)).map((record) => [record.toolCallId, record]));
    const log = new EventLog(stored.runId);
    for (const event of await this.store.loadEvents(stored.runId, 0)) log.append(event);
    const run: Run = { ...this.newRun(stored.runId, session.summary.sessionId, this.options.tools()), log };
    const unfinished = unfinishedCalls(messages);
    if (unfinished.length === 0) {
      // It stopped while the model was answering: a model turn is not resumed half-way, the run ends and says why.
      this.runs.set(run.runId, run);
      await this.record(run, { type: 'run-end', runId: run.runId, reason: 'error', error: 'The server stopped while this run was going; send the message again to continue.' });
      await this.store.endRun(run.runId, 'error', Date.now());
      log.close();
      this.forgetLater(run.runId);
      return false;
    }
    const calls = unfinished.map((call): ResumedCall => {
      const record = records.get(call.id);
      if (!record) return { call, state: 'new' };
      if (record.outcome !== null && record.result !== null) return { call, state: 'ended', outcome: record.outcome, result: record.result };
      if (record.decision === null) {
        if (record.approvalId === '') return { call, state: 'ended', outcome: 'cancelled', result: toolResultText.notStartedBeforeRestart(call.name) };
        const ticket = this.options.registry.restore({
          approvalId: record.approvalId,
          sessionId: record.sessionId,
          runId: record.runId,
          toolCallId: record.toolCallId,
          toolName: record.toolName,
          arguments: record.arguments,
          executesCode: record.executesCode,
          toolVersion: record.toolVersion,
          requestedAt: record.requestedAt,
          expiresAt: record.expiresAt,
        });
        return { call, state: 'waiting', ticket };
      }
      if (record.decision === 'allow') return { call, state: 'ended', outcome: 'interrupted', result: toolResultText.interrupted(call.name) };
      return { call, state: 'ended', ...refusalOf(call.name, record.decision, record.reason) };
    });
    const executedCallIds = [...records.values()].filter((record) => record.outcome === 'executed').map((record) => record.toolCallId);
    const resume: ResumeState = { calls, toolCallsUsed: toolMessagesSinceLastUser(messages), executedCallIds };
    const system = this.systemMessages();
    const generator = runToolLoop({
      model: this.options.model(),
      messages: [...system, ...messages],
      tools: run.tools,
      registry: this.options.registry,
      sessionId: session.summary.sessionId,
      runId: run.runId,
      signal: run.cancellation,
      confirmToolCalls: session.summary.confirmToolCalls,
      currentTool: (name) => this.options.tools().find((tool) => tool.name === name),
      ...this.policyFor(session.summary.sessionId),
      onMessage: (message) => run.unsaved.push(message),
      resume,
      ...loopOptions(stored.options),
    });
    this.attachRun(session, run, generator);
    return true;
  }

  private async drive(session: Session, run: Run, generator: ReturnType<typeof runToolLoop>): Promise<void> {
    let reason = 'error';
    try {
      for (;;) {
        // The loop waits here until the previous event is stored: an allow is on disk before its tool starts.
        const next = await generator.next();
        await this.saveMessages(session, run);
        if (next.done) break;
        const event = next.value;
        if (event.type === 'run-end') reason = event.reason;
        await this.record(run, event);
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log(`Run ${run.runId} stopped: ${message}`);
      run.cancellation.cancel();
      // Lets the loop end its waits and tools; its last events are no longer stored.
      await generator.return({ runId: run.runId, reason: 'error', error: message, messages: [] }).catch(() => undefined);
      run.log.append({ type: 'run-end', runId: run.runId, reason: 'error', error: `The run stopped: ${message}` });
    } finally {
      session.activeRun = undefined;
      const now = Date.now();
      if (!run.suspended && this.sessions.get(session.summary.sessionId) === session) {
        session.summary = { ...session.summary, updatedAt: now };
        try {
          await this.store.endRun(run.runId, reason, now);
          await this.store.updateSession(session.summary.sessionId, { updatedAt: now });
        } catch (error) {
          this.log(`Could not record the end of run ${run.runId}: ${error instanceof Error ? error.message : String(error)}`);
        }
        this.notify({ type: 'session-changed', session: summary(session) });
      }
      run.log.close();
      this.forgetLater(run.runId);
    }
  }

  private async saveMessages(session: Session, run: Run): Promise<void> {
    if (run.unsaved.length === 0 || run.suspended) return;
    const messages = await this.messagesOf(session);
    for (const message of run.unsaved.splice(0)) {
      await this.store.appendMessage(run.sessionId, message, Date.now());
      messages.push(message);
    }
  }

  /** Stores an event with what it changes in the ledger, then lets clients see it. */
  private async record(run: Run, event: LoopEvent): Promise<void> {
    if (run.suspended) return;
    const at = Date.now();
    const ledger = this.ledgerChange(run, event, at);
    await this.store.appendEvent({ runId: run.runId, sessionId: run.sessionId, seq: run.log.size + 1, event, at, ...(ledger === undefined ? {} : { ledger }) });
    run.log.append(event);
  }

  private ledgerChange(run: Run, event: LoopEvent, at: number): LedgerChange | undefined {
    switch (event.type) {
      case 'tool-start': {
        const tool = run.tools.find((candidate) => candidate.name === event.toolName);
        return {
          kind: 'start',
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          arguments: event.arguments,
          approvalId: event.approvalId,
          requestedAt: at,
          expiresAt: event.expiresAt ?? null,
          executesCode: tool === undefined ? true : grantsNeedExactArguments(tool),
          toolVersion: tool === undefined ? '' : toolVersion(tool),
        };
      }
      case 'tool-decision': {
        const by = event.approvalId === '' ? undefined : this.deciders.get(event.approvalId);
        this.deciders.delete(event.approvalId);
        return {
          kind: 'decision',
          toolCallId: event.toolCallId,
          decision: event.decision,
          source: event.source,
          ...(event.reason === undefined ? {} : { reason: event.reason }),
          ...(event.grantId === undefined ? {} : { decidedByGrant: event.grantId }),
          ...(event.ruleId === undefined ? {} : { decidedByRule: event.ruleId }),
          decidedAt: at,
          ...(by === undefined ? {} : { by }),
        };
      }
      case 'tool-end':
        return { kind: 'end', toolCallId: event.toolCallId, outcome: event.outcome, result: event.result, endedAt: at };
      case 'run-start':
      case 'status':
      case 'text-delta':
      case 'reasoning-delta':
      case 'run-end':
        return undefined;
    }
  }

  private forgetLater(runId: string): void {
    const timer = setTimeout(() => {
      const run = this.runs.get(runId);
      if (run && run.log.isClosed) this.runs.delete(runId);
    }, this.finishedRunTtlMs);
    timer.unref?.();
  }

  private notify(change: SessionChange): void {
    for (const watcher of this.watchers) {
      try {
        watcher(change);
      } catch {
        this.watchers.delete(watcher);
      }
    }
  }
}

function newSummary(sessionId: string, firstMessage: string, now: number): StoredSessionSummary {
  return { sessionId, title: titleFrom(firstMessage), createdAt: now, updatedAt: now, confirmToolCalls: true, lastRunId: null };
}

/** The first line of the first message, trimmed; Markdown code marks dropped. */
function titleFrom(message: string): string {
  const firstLine = message.trim().split('\n', 1)[0] ?? '';
  const plain = firstLine.replace(/`+/g, '').replace(/\s+/g, ' ').trim();
  return plain.length > 60 ? `${plain.slice(0, 59)}…` : plain || 'Untitled chat';
}

function summary(session: Session): SessionSummary {
  return { ...session.summary, activeRunId: session.activeRun?.runId ?? null };
}

function loopOptions(options: RunOptions) {
  return {
    ...(options.enabledTools === undefined ? {} : { enabledTools: options.enabledTools }),
    ...(options.maxToolCalls === undefined ? {} : { maxToolCalls: options.maxToolCalls }),
    ...(options.toolCallTimeoutMs === undefined ? {} : { toolCallTimeoutMs: options.toolCallTimeoutMs }),
    ...(options.decisionTimeoutMs === undefined ? {} : { decisionTimeoutMs: options.decisionTimeoutMs }),
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The calls of the conversation's last assistant turn that have no result yet. */
function unfinishedCalls(messages: readonly ChatMessage[]): ToolCall[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'user') return [];
    if (message.role !== 'assistant') continue;
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length; j++) {
      const later = messages[j]!;
      if (later.role === 'tool') answered.add(later.toolCallId);
    }
    return (message.toolCalls ?? []).filter((call) => !answered.has(call.id));
  }
  return [];
}

function toolMessagesSinceLastUser(messages: readonly ChatMessage[]): number {
  let count = 0;
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role !== 'user'; i--) if (messages[i]!.role === 'tool') count++;
  return count;
}

function refusalOf(toolName: string, decision: Exclude<Decision, 'allow'>, reason: string | null): { outcome: ToolOutcome; result: string } {
  switch (decision) {
    case 'deny':
      return { outcome: 'denied', result: toolResultText.denied(toolName, reason ?? undefined) };
    case 'timeout':
      return { outcome: 'timed-out', result: toolResultText.timedOut(toolName) };
    case 'cancel':
      return { outcome: 'cancelled', result: toolResultText.cancelled(toolName) };
  }
}

export { parseEventId };
