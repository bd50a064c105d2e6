import {
  Cancellation,
  ConflictError,
  NotFoundError,
  randomId,
  runToolLoop,
  type AnyTool,
  type ApprovalRegistry,
  type ChatMessage,
  type ChatModel,
  type DecisionTimeout,
  type LoopEvent,
  type PendingApproval,
  type ResolveResult,
} from '@airlock/core';
import type { SessionStore, StoredSession } from './session-store';
import { EventLog, parseEventId, type LogFollower } from './event-log';

export interface RunOptions {
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
  /** The run still going in this session, if any: a client re-attaches to it. */
  activeRunId: string | null;
  /** The session's latest run since this server started, going or not: a client that did not follow it reloads the history. */
  lastRunId: string | null;
}

export interface SessionDetail extends SessionSummary {
  messages: ChatMessage[];
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
  /** How long a finished run stays replayable for a client that reconnects. Default 10 minutes. */
  finishedRunTtlMs?: number;
  /** Keeps sessions across restarts. Default none: sessions live only in memory. */
  store?: SessionStore;
  /** Default 20,000. The oldest idle session is dropped beyond it. */
  maxSessions?: number;
}

interface Run {
  runId: string;
  sessionId: string;
  log: EventLog;
  /** Not an AbortController: a run waiting on a decision should not hold a kilobyte-sized AbortSignal. */
  cancellation: Cancellation;
  done: Promise<void>;
}

interface Session {
  sessionId: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  messages: ChatMessage[];
  activeRun: Run | undefined;
  lastRunId: string | null;
}

export interface StartRunInput {
  sessionId: string;
  runId?: string;
  message: string;
  options?: RunOptions;
}

/**
 * Sessions and their runs. A run belongs to the server, not to a connection: it goes on when
 * its client drops, and any client of the session can re-attach and replay what it missed.
 */
export class ChatService {
  private readonly sessions = new Map<string, Session>();
  private readonly runs = new Map<string, Run>();
  /** Ids of runs no longer kept, so a client re-sending an old run's input cannot start it again. Bounded. */
  private readonly forgottenRunIds = new Set<string>();
  private readonly finishedRunTtlMs: number;
  private readonly maxSessions: number;
  private readonly watchers = new Set<(change: SessionChange) => void>();

  constructor(private readonly options: ChatServiceOptions) {
    this.finishedRunTtlMs = options.finishedRunTtlMs ?? 10 * 60 * 1000;
    this.maxSessions = options.maxSessions ?? 20_000;
  }

  get registry(): ApprovalRegistry {
    return this.options.registry;
  }

  /** Starts a run for a new user message. A session whose run is still going refuses a second one. */
  startRun(input: StartRunInput): { runId: string } {
    const session = this.sessions.get(input.sessionId) ?? this.createSession(input.sessionId, input.message);
    if (session.activeRun) {
      throw new ConflictError('session-busy', `session "${input.sessionId}" is still running ${session.activeRun.runId}; cancel it or wait for it to end`);
    }
    const runId = input.runId ?? randomId('run', 12);
    if (this.runs.has(runId)) throw new ConflictError('run-exists', `run "${runId}" already exists`);
    if (this.forgottenRunIds.has(runId)) throw new ConflictError('run-finished', `run "${runId}" has finished; start a new run with a new runId`);
    const cancellation = new Cancellation();
    const log = new EventLog(runId);
    // concat sizes the array exactly; a spread literal would reserve spare slots for the session's lifetime.
    session.messages = session.messages.concat({ role: 'user', content: input.message });
    this.persist(session);
    session.updatedAt = Date.now();
    const system: ChatMessage[] = this.options.systemPrompt ? [{ role: 'system', content: this.options.systemPrompt }] : [];
    const options = input.options ?? {};
    const generator = runToolLoop({
      model: this.options.model(),
      // session.messages is replaced, never changed in place: without a system prompt the loop can read it as is.
      messages: system.length === 0 ? session.messages : [...system, ...session.messages],
      tools: this.options.tools(),
      registry: this.options.registry,
      sessionId: session.sessionId,
      runId,
      signal: cancellation,
      ...(options.confirmToolCalls === undefined ? {} : { confirmToolCalls: options.confirmToolCalls }),
      ...(options.enabledTools === undefined ? {} : { enabledTools: options.enabledTools }),
      ...(options.maxToolCalls === undefined ? {} : { maxToolCalls: options.maxToolCalls }),
      ...(options.toolCallTimeoutMs === undefined ? {} : { toolCallTimeoutMs: options.toolCallTimeoutMs }),
      ...(options.decisionTimeoutMs === undefined ? {} : { decisionTimeoutMs: options.decisionTimeoutMs }),
    });
    const run: Run = { runId, sessionId: session.sessionId, log, cancellation, done: Promise.resolve() };
    session.activeRun = run;
    session.lastRunId = runId;
    this.runs.set(runId, run);
    run.done = this.drive(session, run, generator, system.length);
    this.notify({ type: 'session-changed', session: summary(session) });
    return { runId };
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
   * The caller must belong to the run's session.
   */
  follow<T>(sessionId: string, runId: string, afterSeq: number, wrap: (id: string, event: LoopEvent) => T, signal?: AbortSignal): LogFollower<T> {
    const run = this.runs.get(runId);
    if (!run || run.sessionId !== sessionId) throw new NotFoundError('run', runId);
    return run.log.follow(afterSeq, wrap, signal);
  }

  isRunActive(runId: string): boolean {
    const run = this.runs.get(runId);
    return run !== undefined && !run.log.isClosed;
  }

  hasRun(sessionId: string, runId: string): boolean {
    return this.runs.get(runId)?.sessionId === sessionId;
  }

  /** Cancels the session's active run (only `runId`, when given). Answers how many runs were cancelled. */
  cancel(sessionId: string, runId?: string): number {
    const run = this.sessions.get(sessionId)?.activeRun;
    if (!run || (runId !== undefined && run.runId !== runId) || run.cancellation.aborted) return 0;
    run.cancellation.cancel();
    return 1;
  }

  confirm(input: { sessionId: string; approvalId: string; decision: 'allow' | 'deny'; reason?: string; always?: boolean }): ResolveResult {
    return this.options.registry.resolve(input.approvalId, input.decision, {
      sessionId: input.sessionId,
      ...(input.reason === undefined ? {} : { reason: input.reason }),
      ...(input.always === undefined ? {} : { always: input.always }),
    });
  }

  pending(sessionId: string): PendingApproval[] {
    return this.options.registry.listPending(sessionId);
  }

  listSessions(): SessionSummary[] {
    return [...this.sessions.values()].sort((a, b) => b.updatedAt - a.updatedAt).map(summary);
  }

  getSession(sessionId: string): SessionDetail {
    const session = this.sessions.get(sessionId);
    if (!session) throw new NotFoundError('session', sessionId);
    return { ...summary(session), messages: session.messages };
  }

  /** Deletes a session: its run is cancelled, its pending calls end as cancel, its grants go. */
  async deleteSession(sessionId: string): Promise<boolean> {
    const session = this.sessions.get(sessionId);
    if (!session) return false;
    const run = session.activeRun;
    if (run) {
      run.cancellation.cancel();
      await run.done;
    }
    this.options.registry.clearSession(sessionId);
    this.sessions.delete(sessionId);
    this.options.store?.remove(sessionId);
    this.notify({ type: 'session-deleted', sessionId });
    return true;
  }

  /** Cancels every run and waits for them to end (tools aborted, tool-end and run-end emitted). */
  async shutdown(): Promise<void> {
    const active = [...this.sessions.values()].flatMap((session) => (session.activeRun ? [session.activeRun] : []));
    for (const run of active) run.cancellation.cancel();
    await Promise.all(active.map((run) => run.done));
  }

  get activeRunCount(): number {
    let count = 0;
    for (const session of this.sessions.values()) if (session.activeRun) count++;
    return count;
  }

  private createSession(sessionId: string, firstMessage: string): Session {
    if (this.sessions.size >= this.maxSessions) this.evictIdleSession();
    const now = Date.now();
    const title = firstMessage.replace(/\s+/g, ' ').trim().slice(0, 60) || 'New chat';
    const session: Session = { sessionId, title, createdAt: now, updatedAt: now, messages: [], activeRun: undefined, lastRunId: null };
    this.sessions.set(sessionId, session);
    return session;
  }

  private evictIdleSession(): void {
    let oldest: Session | undefined;
    for (const session of this.sessions.values()) {
      if (!session.activeRun && (!oldest || session.updatedAt < oldest.updatedAt)) oldest = session;
    }
    if (!oldest) throw new ConflictError('too-many-sessions', `all ${this.maxSessions} sessions are running`);
    this.options.registry.clearSession(oldest.sessionId);
    this.sessions.delete(oldest.sessionId);
    this.options.store?.remove(oldest.sessionId);
    this.notify({ type: 'session-deleted', sessionId: oldest.sessionId });
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

  /** Puts back sessions kept by a SessionStore (at start-up): their conversations continue with the next message. */
  restore(sessions: readonly StoredSession[]): void {
    for (const stored of sessions) {
      if (this.sessions.has(stored.sessionId)) continue;
      if (this.sessions.size >= this.maxSessions) break;
      this.sessions.set(stored.sessionId, { ...stored, messages: [...stored.messages], activeRun: undefined, lastRunId: null });
    }
  }

  private persist(session: Session): void {
    this.options.store?.save({
      sessionId: session.sessionId,
      title: session.title,
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
      messages: session.messages,
    });
  }

  private forgetRun(runId: string): void {
    this.runs.delete(runId);
    this.forgottenRunIds.add(runId);
    if (this.forgottenRunIds.size > 100_000) {
      const oldest = this.forgottenRunIds.values().next();
      if (!oldest.done) this.forgottenRunIds.delete(oldest.value);
    }
  }

  private async drive(session: Session, run: Run, generator: ReturnType<typeof runToolLoop>, systemCount: number): Promise<void> {
    try {
      for (;;) {
        const next = await generator.next();
        if (next.done) {
          session.messages = next.value.messages.slice(systemCount);
          break;
        }
        run.log.append(next.value);
      }
    } catch (error) {
      run.log.append({ type: 'run-end', runId: run.runId, reason: 'error', error: error instanceof Error ? error.message : String(error) });
    } finally {
      session.activeRun = undefined;
      session.updatedAt = Date.now();
      if (this.sessions.get(session.sessionId) === session) {
        this.persist(session);
        this.notify({ type: 'session-changed', session: summary(session) });
      }
      run.log.close();
      const timer = setTimeout(() => this.forgetRun(run.runId), this.finishedRunTtlMs);
      timer.unref();
    }
  }
}

function summary(session: Session): SessionSummary {
  return {
    sessionId: session.sessionId,
    title: session.title,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
    activeRunId: session.activeRun?.runId ?? null,
    lastRunId: session.lastRunId,
  };
}

export { parseEventId };
