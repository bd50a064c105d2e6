import type { Decision, DecisionSource, ToolArguments } from './events';
import { randomId } from './ids';
import { canonicalJson } from './json';

/** How long an undecided call may wait, in ms, or "never". */
export type DecisionTimeout = number | 'never';

/** setTimeout cannot wait longer than this; longer timeouts are clamped to it (about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
export const DEFAULT_DECISION_TIMEOUT_MS = 60 * 60 * 1000;
export const MAX_REASON_LENGTH = 2000;

export interface ApprovalRequest {
  sessionId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  arguments: ToolArguments;
  /** Grants for code-running tools cover only these exact arguments. */
  executesCode: boolean;
  /** Fingerprint of the tool's description and schema; a grant covers only the version it was given for. */
  toolVersion: string;
  /** Default one hour. */
  timeoutMs?: DecisionTimeout;
}

export interface DecisionOutcome {
  decision: Decision;
  source: DecisionSource;
  /** The person's own words, with a deny. */
  reason?: string;
}

export interface PendingApproval {
  approvalId: string;
  sessionId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  arguments: ToolArguments;
  requestedAt: number;
  /** Epoch ms, or null when the wait never times out. */
  expiresAt: number | null;
}

export type ResolveResult =
  | { resolved: true; status: 'resolved'; decision: 'allow' | 'deny' }
  | { resolved: false; status: 'not-found' }
  | { resolved: false; status: 'already-decided'; decision: Decision };

export interface ResolveOptions {
  /** The session the caller acts in; a call of another session is reported as not found. */
  sessionId: string;
  reason?: string;
  /** With allow: also grant this call's tool for the rest of the session. */
  always?: boolean;
}

export interface Grant {
  grantId: string;
  sessionId: string;
  toolName: string;
  /** The exact arguments covered, for code-running tools; null when the grant covers any arguments. */
  arguments: ToolArguments | null;
  createdAt: number;
}

export interface GrantInput {
  sessionId: string;
  toolName: string;
  executesCode: boolean;
  toolVersion: string;
  /** Required when executesCode is true. */
  arguments?: ToolArguments;
}

export interface GrantQuery {
  toolName: string;
  arguments: ToolArguments;
  executesCode: boolean;
  toolVersion: string;
}

export interface ApprovalRegistryOptions {
  /** How many decided ids are remembered to answer a late or repeated decision with "already-decided". Default 10,000. */
  rememberDecided?: number;
  /** Clock for requestedAt / expiresAt. Default Date.now. */
  now?: () => number;
}

/** A registered, not yet decided call. The loop emits its id, then waits on it. */
export interface ApprovalTicket {
  readonly approvalId: string;
  readonly expiresAt: number | null;
  /** Resolves with the decision; an abort of `signal` ends the wait as cancel. Never rejects. */
  wait(signal?: AbortSignal): Promise<DecisionOutcome>;
}

interface Slot {
  readonly info: PendingApproval;
  readonly request: ApprovalRequest;
  readonly argsKey: string;
  readonly promise: Promise<DecisionOutcome>;
  settle: (outcome: DecisionOutcome) => void;
  outcome: DecisionOutcome | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface StoredGrant extends Grant {
  readonly argsKey: string | null;
  readonly toolVersion: string;
}

interface Decided {
  readonly sessionId: string;
  readonly decision: Decision;
}

/**
 * Pending tool-call approvals and "Always allow" grants, per session.
 *
 * A pending wait is a promise and a timer: no thread, no polling, so thousands can wait at once.
 * Registering is separate from waiting so the loop can register before it announces the call:
 * a decision that arrives in between is kept on the slot and returned by the wait.
 */
export class ApprovalRegistry {
  private readonly pending = new Map<string, Slot>();
  private readonly pendingBySession = new Map<string, Set<Slot>>();
  private readonly decided = new Map<string, Decided>();
  private readonly grants = new Map<string, Map<string, StoredGrant>>();
  private readonly rememberDecided: number;
  private readonly now: () => number;

  constructor(options: ApprovalRegistryOptions = {}) {
    this.rememberDecided = options.rememberDecided ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  register(request: ApprovalRequest): ApprovalTicket {
    const approvalId = randomId('apv');
    const requestedAt = this.now();
    const timeout = request.timeoutMs ?? DEFAULT_DECISION_TIMEOUT_MS;
    const delay = timeout === 'never' ? undefined : Math.min(Math.max(0, timeout), MAX_TIMER_MS);
    let settle!: (outcome: DecisionOutcome) => void;
    const promise = new Promise<DecisionOutcome>((resolve) => (settle = resolve));
    const slot: Slot = {
      info: {
        approvalId,
        sessionId: request.sessionId,
        runId: request.runId,
        toolCallId: request.toolCallId,
        toolName: request.toolName,
        arguments: request.arguments,
        requestedAt,
        expiresAt: delay === undefined ? null : requestedAt + delay,
      },
      request,
      argsKey: canonicalJson(request.arguments),
      promise,
      settle,
      outcome: undefined,
      timer: undefined,
    };
    if (delay !== undefined) {
      slot.timer = setTimeout(() => this.settle(slot, { decision: 'timeout', source: 'user' }), delay);
      unrefTimer(slot.timer);
    }
    this.pending.set(approvalId, slot);
    let forSession = this.pendingBySession.get(request.sessionId);
    if (!forSession) this.pendingBySession.set(request.sessionId, (forSession = new Set()));
    forSession.add(slot);

    return {
      approvalId,
      expiresAt: slot.info.expiresAt,
      wait: (signal) => this.wait(slot, signal),
    };
  }

  /**
   * Applies a person's decision. Never throws and never applies twice: an unknown, empty or
   * other-session id is "not-found", a repeated or late one is "already-decided" with the first decision.
   */
  resolve(approvalId: string, decision: 'allow' | 'deny', options: ResolveOptions): ResolveResult {
    if (typeof approvalId !== 'string' || approvalId === '') return { resolved: false, status: 'not-found' };
    const slot = this.pending.get(approvalId);
    if (slot && slot.info.sessionId === options.sessionId) {
      const reason = decision === 'deny' ? normaliseReason(options.reason) : undefined;
      this.settle(slot, reason === undefined ? { decision, source: 'user' } : { decision, source: 'user', reason });
      if (decision === 'allow' && options.always) {
        this.grant({
          sessionId: slot.request.sessionId,
          toolName: slot.request.toolName,
          executesCode: slot.request.executesCode,
          toolVersion: slot.request.toolVersion,
          arguments: slot.request.arguments,
        });
      }
      return { resolved: true, status: 'resolved', decision };
    }
    const past = this.decided.get(approvalId);
    if (past && past.sessionId === options.sessionId) {
      return { resolved: false, status: 'already-decided', decision: past.decision };
    }
    return { resolved: false, status: 'not-found' };
  }

  listPending(sessionId: string): PendingApproval[] {
    const slots = this.pendingBySession.get(sessionId);
    return slots ? [...slots].map((slot) => slot.info) : [];
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Grants a tool for the session and releases every pending call of the session that the grant covers. */
  grant(input: GrantInput): Grant {
    if (input.executesCode && input.arguments === undefined) {
      throw new TypeError(`a grant for code-running tool "${input.toolName}" needs its exact arguments`);
    }
    const argsKey = input.executesCode ? canonicalJson(input.arguments) : null;
    let forSession = this.grants.get(input.sessionId);
    if (!forSession) this.grants.set(input.sessionId, (forSession = new Map<string, StoredGrant>()));
    for (const existing of forSession.values()) {
      if (existing.toolName === input.toolName && existing.argsKey === argsKey && existing.toolVersion === input.toolVersion) {
        return publicGrant(existing);
      }
    }
    const stored: StoredGrant = {
      grantId: randomId('grt', 12),
      sessionId: input.sessionId,
      toolName: input.toolName,
      arguments: input.executesCode ? (input.arguments ?? null) : null,
      createdAt: this.now(),
      argsKey,
      toolVersion: input.toolVersion,
    };
    forSession.set(stored.grantId, stored);
    for (const slot of [...(this.pendingBySession.get(input.sessionId) ?? [])]) {
      if (covers(stored, slot.request.toolName, slot.argsKey, slot.request.toolVersion)) {
        this.settle(slot, { decision: 'allow', source: 'grant' });
      }
    }
    return publicGrant(stored);
  }

  findGrant(sessionId: string, query: GrantQuery): Grant | undefined {
    const forSession = this.grants.get(sessionId);
    if (!forSession) return undefined;
    const argsKey = canonicalJson(query.arguments);
    for (const grant of forSession.values()) {
      if (covers(grant, query.toolName, argsKey, query.toolVersion)) return publicGrant(grant);
    }
    return undefined;
  }

  listGrants(sessionId: string): Grant[] {
    return [...(this.grants.get(sessionId)?.values() ?? [])].map(publicGrant);
  }

  revokeGrant(sessionId: string, grantId: string): boolean {
    return this.grants.get(sessionId)?.delete(grantId) ?? false;
  }

  /** Ends every pending wait of the session as cancel and forgets its grants. */
  clearSession(sessionId: string): void {
    for (const slot of [...(this.pendingBySession.get(sessionId) ?? [])]) {
      this.settle(slot, { decision: 'cancel', source: 'user' });
    }
    this.grants.delete(sessionId);
  }

  private wait(slot: Slot, signal: AbortSignal | undefined): Promise<DecisionOutcome> {
    if (slot.outcome || !signal) return slot.promise;
    if (signal.aborted) {
      this.settle(slot, { decision: 'cancel', source: 'user' });
      return slot.promise;
    }
    const onAbort = () => this.settle(slot, { decision: 'cancel', source: 'user' });
    signal.addEventListener('abort', onAbort, { once: true });
    return slot.promise.finally(() => signal.removeEventListener('abort', onAbort));
  }

  private settle(slot: Slot, outcome: DecisionOutcome): void {
    if (slot.outcome) return;
    slot.outcome = outcome;
    if (slot.timer !== undefined) clearTimeout(slot.timer);
    slot.timer = undefined;
    const { approvalId, sessionId } = slot.info;
    this.pending.delete(approvalId);
    const forSession = this.pendingBySession.get(sessionId);
    forSession?.delete(slot);
    if (forSession?.size === 0) this.pendingBySession.delete(sessionId);
    this.decided.set(approvalId, { sessionId, decision: outcome.decision });
    if (this.decided.size > this.rememberDecided) {
      const oldest = this.decided.keys().next();
      if (!oldest.done) this.decided.delete(oldest.value);
    }
    slot.settle(outcome);
  }
}

function covers(grant: StoredGrant, toolName: string, argsKey: string, toolVersion: string): boolean {
  if (grant.toolName !== toolName || grant.toolVersion !== toolVersion) return false;
  return grant.argsKey === null || grant.argsKey === argsKey;
}

function publicGrant(grant: StoredGrant): Grant {
  return {
    grantId: grant.grantId,
    sessionId: grant.sessionId,
    toolName: grant.toolName,
    arguments: grant.arguments,
    createdAt: grant.createdAt,
  };
}

function normaliseReason(reason: string | undefined): string | undefined {
  if (typeof reason !== 'string') return undefined;
  const trimmed = reason.trim().slice(0, MAX_REASON_LENGTH);
  return trimmed === '' ? undefined : trimmed;
}

function unrefTimer(timer: ReturnType<typeof setTimeout>): void {
  const maybe = timer as { unref?: () => void };
  maybe.unref?.();
}
