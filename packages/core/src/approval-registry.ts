import type { CancelSignal } from './cancellation';
import type { AskedBecause, Decision, DecisionSource, ShownTool, ToolArguments } from './events';
import { AirlockError } from './errors';
import { randomId } from './ids';
import { reasonText } from './reason';
import { canonicalJson, deepFreeze, isPlainObject, parseUntrustedJson } from './json';
import type { PolicyVerdict } from './run-tool-loop';

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
  /** The tool as the call was put up, as its tool-start shows it; listed with the waiting call. Default none. */
  tool?: ShownTool | undefined;
  /**
   * Only a grant for these exact arguments releases it, whatever the tool's grants cover: for a call a deny rule could
   * not tell apart from one it denies. Default false.
   */
  exactGrantsOnly?: boolean;
  /** With exactGrantsOnly: the deny rule that asked, and why, as the card says it; listed with the waiting call. */
  askedBecause?: AskedBecause | undefined;
  /** Default one hour. */
  timeoutMs?: DecisionTimeout;
}

export interface DecisionOutcome {
  decision: Decision;
  source: DecisionSource;
  /** The person's own words, with a deny. */
  reason?: string;
  /** The grant that allowed it, when source is "grant". */
  grantId?: string;
  /** With a person's allow: the arguments they edited the call to. The call runs with these, not the proposed ones. */
  editedArguments?: ToolArguments;
  /** With a deny by a rule (source "rule"): the rule's verdict, as the card and the model are told it. */
  verdict?: PolicyVerdict;
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
  /**
   * The tool as the call was put up, as its tool-start shows it (what a waiting list marks names against). Absent
   * when no offered tool had the call's name, and for a call stored before it was recorded.
   */
  tool?: ShownTool;
  /**
   * True when only a grant for these exact arguments releases the call (a deny rule could not tell it apart from one
   * it denies, see ApprovalRequest.exactGrantsOnly): it is decided on its card, where it says why it is asked. Listed
   * only when true.
   */
  exactGrantsOnly?: boolean;
  /** With exactGrantsOnly: the deny rule that asked, and why (absent for a call stored before it was kept). */
  askedBecause?: AskedBecause;
}

export type ResolveResult =
  | {
      resolved: true;
      status: 'resolved';
      decision: 'allow' | 'deny';
      /** The grant made, with always. */
      grant?: VersionedGrant;
      /** The decision holds, but its "Always allow" (the rule, or the chat's grant) could not be saved: why. */
      alwaysNotSaved?: string;
    }
  | { resolved: false; status: 'not-found' }
  | { resolved: false; status: 'already-decided'; decision: Decision };

export interface ResolveOptions {
  /** The session the caller acts in; a call of another session is reported as not found. */
  sessionId: string;
  reason?: string;
  /** With allow: also grant this call's tool for the rest of the session (with `arguments`, the edited call). */
  always?: boolean;
  /**
   * With allow: the arguments the person edited the call to (the caller has checked them against the tool's schema).
   * The same arguments as proposed (as canonical JSON) are a plain allow. Ignored with deny.
   */
  arguments?: ToolArguments;
}

export interface Grant {
  grantId: string;
  sessionId: string;
  toolName: string;
  /** The exact arguments covered, for code-running tools; null when the grant covers any arguments. */
  arguments: ToolArguments | null;
  createdAt: number;
}

/** A grant with the tool fingerprint it was given for: what a store keeps to put it back after a restart. */
export interface VersionedGrant extends Grant {
  toolVersion: string;
}

/** A call that was waiting for a decision when the process stopped, put back with its own id and deadline. */
export interface RestoredApproval {
  approvalId: string;
  sessionId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  arguments: ToolArguments;
  executesCode: boolean;
  toolVersion: string;
  /** The tool as the call was put up; absent when not recorded. */
  tool?: ShownTool | undefined;
  requestedAt: number;
  /** Absolute: a deadline that passed while the process was down ends the wait as timeout at once. */
  expiresAt: number | null;
  /** See ApprovalRequest.exactGrantsOnly. Default false. */
  exactGrantsOnly?: boolean;
  /** See ApprovalRequest.askedBecause. */
  askedBecause?: AskedBecause | undefined;
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
  /** Only a grant for these exact arguments covers the call (see ApprovalRequest.exactGrantsOnly). Default false. */
  exactGrantsOnly?: boolean;
}

export interface ApprovalRegistryOptions {
  /** How many decided ids are remembered to answer a late or repeated decision with "already-decided". Default 10,000. */
  rememberDecided?: number;
  /** Clock for requestedAt / expiresAt. Default Date.now. */
  now?: () => number;
  /**
   * Consulted when a waiting call settles, before its wait sees the outcome: answers the outcome that holds, or
   * undefined to keep this one. Where several instances can decide one call, it records a timeout, a cancel or a
   * grant's release with the same conditional write as a person's decision, and answers the decision that won if
   * another came first. Default none.
   */
  arbiter?: Arbiter;
}

/**
 * See ApprovalRegistryOptions.arbiter. Never rejects: a failure answers a safe outcome. It is given the call in full,
 * as restore() takes it: one whose outcome could not be recorded can be put back to waiting from it.
 */
export type Arbiter = (call: PendingApproval & RestoredApproval, outcome: DecisionOutcome) => Promise<DecisionOutcome> | undefined;

/**
 * What a host of the loop throws into it (generator.throw) at the event of a person's decision it could not store:
 * the loop puts the call back to waiting (ApprovalRegistry.reopen) and goes on waiting, rather than acting on a
 * decision nothing recorded. A host may hold an allow on the call whose turn it is (`endsAtOnce`) for one write with
 * that call's start, and throw this at the start (the status that the call runs, or waits for a place) when that
 * write fails: the tool has not run. Any other event held must be written before the next one is taken.
 */
export class DecisionNotStoredError extends AirlockError {
  readonly fault = 'system';
  override readonly name = 'DecisionNotStoredError';
  constructor(
    readonly approvalId: string,
    /** What the store said, for the person. */
    detail?: string,
  ) {
    super(`The decision could not be stored${detail === undefined ? '' : ` (${detail})`}: the call still waits for a decision.`);
  }
}

/**
 * What a host of the loop throws into it (generator.throw) at the start of a call let through without asking (a
 * grant, an allow rule, confirmation off) when its write found that what let it through no longer holds in the
 * shared store (revoked, removed or turned back on elsewhere, and not yet heard of here). The host writes that
 * call's start, decision and first status in one write and takes all of it back: nothing of the call was stored or
 * run. The loop judges the call again, with what the host has read again meanwhile: it may now be asked.
 */
export class PolicyChangedError extends AirlockError {
  readonly fault = 'system';
  override readonly name = 'PolicyChangedError';
  constructor(readonly toolCallId: string) {
    super(`What let call ${toolCallId} run unasked changed in the store: it is judged again.`);
  }
}

/** A registered, not yet decided call. The loop emits its id, then waits on it. */
export interface ApprovalTicket {
  readonly approvalId: string;
  readonly expiresAt: number | null;
  /** The tool as the call was put up to the person (`toolVersion`): a decision covers that tool, not another. */
  readonly toolVersion: string;
  /** Whether it has an outcome (decided, timed out or cancelled), even one its wait has not answered yet. */
  readonly settled: boolean;
  /** Resolves with the decision; an abort of `signal` ends the wait as cancel. Never rejects. */
  wait(signal?: CancelSignal): Promise<DecisionOutcome>;
}

/**
 * A registered, not yet decided call. It is also the ticket the loop waits on and the abort
 * listener of that wait (handleEvent): a pending call allocates no ticket object and no closures.
 */
class Slot implements ApprovalTicket {
  readonly approvalId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly arguments: ToolArguments;
  readonly executesCode: boolean;
  readonly toolVersion: string;
  readonly tool: ShownTool | undefined;
  /** Set once a rule changed while it waited has it released only by a grant for its exact arguments (requireExactGrants). */
  exactGrantsOnly: boolean;
  askedBecause: AskedBecause | undefined;
  readonly requestedAt: number;
  readonly expiresAt: number | null;
  /** The decision timeout it waits with (the key of its expiry list), or undefined when it never times out. */
  readonly delay: number | undefined;
  outcome: DecisionOutcome | undefined = undefined;
  /** When it times out on the monotonic clock (performance.now()); expiresAt is the same moment on `now`, for display. */
  readonly deadline: number;
  /** The expiry list this slot is in, and its neighbours there; see ExpiryList. */
  expiry: ExpiryList | undefined = undefined;
  prev: Slot | undefined = undefined;
  next: Slot | undefined = undefined;
  /** The signal whose abort cancels the wait (an array only if waits pass several); undefined until a wait passes one. */
  private signals: CancelSignal | CancelSignal[] | undefined = undefined;
  private resolveWait!: (outcome: DecisionOutcome) => void;
  private promise = new Promise<DecisionOutcome>((resolve) => (this.resolveWait = resolve));

  constructor(
    approvalId: string,
    request: Omit<ApprovalRequest, 'timeoutMs'>,
    requestedAt: number,
    delay: number | undefined,
    expiresAt: number | null,
    /**
     * Called once, when the slot settles and before its wait resolves; takes it out of its expiry list too. When it
     * answers a promise, the wait resolves with what that promise answers instead. `recorded`: see settle.
     */
    private readonly onSettle: (slot: Slot, outcome: DecisionOutcome, recorded: boolean) => Promise<DecisionOutcome> | undefined,
  ) {
    this.approvalId = approvalId;
    this.sessionId = request.sessionId;
    this.runId = request.runId;
    this.toolCallId = request.toolCallId;
    this.toolName = request.toolName;
    this.arguments = request.arguments;
    this.executesCode = request.executesCode;
    this.toolVersion = request.toolVersion;
    this.tool = request.tool;
    this.exactGrantsOnly = request.exactGrantsOnly === true;
    this.askedBecause = request.exactGrantsOnly === true ? request.askedBecause : undefined;
    this.requestedAt = requestedAt;
    this.expiresAt = expiresAt;
    this.delay = delay;
    this.deadline = delay === undefined ? Infinity : performance.now() + delay;
  }

  /** Undecided again, with a new wait: see ApprovalRegistry.reopen. */
  unsettle(): void {
    this.outcome = undefined;
    this.promise = new Promise<DecisionOutcome>((resolve) => (this.resolveWait = resolve));
  }

  get settled(): boolean {
    return this.outcome !== undefined;
  }

  wait(signal?: CancelSignal): Promise<DecisionOutcome> {
    if (this.outcome || !signal) return this.promise;
    if (signal.aborted) {
      this.settle(cancelled());
    } else {
      signal.addEventListener('abort', this);
      const signals = this.signals;
      if (!signals) this.signals = signal;
      else if (Array.isArray(signals)) {
        if (!signals.includes(signal)) signals.push(signal);
      } else if (signals !== signal) this.signals = [signals, signal];
    }
    return this.promise;
  }

  /** Called by a signal passed to wait when it aborts. */
  handleEvent(): void {
    this.settle(cancelled());
  }

  /** `recorded`: the outcome is one recorded already (see ApprovalRegistry.applyRecorded), which no arbiter is asked about. */
  settle(outcome: DecisionOutcome, recorded = false): void {
    if (this.outcome) return;
    this.outcome = outcome;
    const signals = this.signals;
    this.signals = undefined;
    if (Array.isArray(signals)) for (const signal of signals) signal.removeEventListener('abort', this);
    else signals?.removeEventListener('abort', this);
    const held = this.onSettle(this, outcome, recorded);
    if (held === undefined) {
      this.resolveWait(outcome);
      return;
    }
    held.then(
      (final) => {
        this.outcome = final;
        this.resolveWait(final);
      },
      () => this.resolveWait(outcome),
    );
  }

  /** A plain copy for listPending: callers get data, not the slot. */
  toPending(): PendingApproval {
    return {
      approvalId: this.approvalId,
      sessionId: this.sessionId,
      runId: this.runId,
      toolCallId: this.toolCallId,
      toolName: this.toolName,
      arguments: this.arguments,
      requestedAt: this.requestedAt,
      expiresAt: this.expiresAt,
      ...(this.tool === undefined ? {} : { tool: this.tool }),
      ...(this.exactGrantsOnly ? { exactGrantsOnly: true as const } : {}),
      ...(this.askedBecause === undefined ? {} : { askedBecause: this.askedBecause }),
    };
  }
}

/**
 * The pending slots that share one decision timeout, in the order they were registered, which is
 * also the order they expire in. One timer per list, armed for its first slot, stands in for a
 * timer per slot (about 170 B each in Node); a slot leaves the list in O(1) when it is decided.
 */
class ExpiryList {
  head: Slot | undefined = undefined;
  tail: Slot | undefined = undefined;
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;

  /** Deadlines are on the monotonic clock: a wall clock set back or forward moves no expiry. */
  constructor(
    /** Called when the list empties, so the registry can drop it. */
    private readonly onEmpty: (list: ExpiryList) => void,
  ) {}

  add(slot: Slot): void {
    slot.expiry = this;
    // A slot put back (reopened) may be due before slots added after it: it goes in its place by deadline.
    let after = this.tail;
    while (after && after.deadline > slot.deadline) after = after.prev;
    slot.prev = after;
    slot.next = after ? after.next : this.head;
    if (slot.next) slot.next.prev = slot;
    else this.tail = slot;
    if (after) after.next = slot;
    else this.head = slot;
    if (this.head !== slot && this.timer) return;
    clearTimeout(this.timer);
    this.arm();
  }

  remove(slot: Slot): void {
    if (slot.prev) slot.prev.next = slot.next;
    else this.head = slot.next;
    if (slot.next) slot.next.prev = slot.prev;
    else this.tail = slot.prev;
    slot.expiry = slot.prev = slot.next = undefined;
    if (this.head) return;
    // An emptied list stops its timer; a removed head otherwise just leaves the timer to fire early and re-arm.
    clearTimeout(this.timer);
    this.timer = undefined;
    this.onEmpty(this);
  }

  private arm(): void {
    const delay = Math.max(0, this.head!.deadline - performance.now());
    this.timer = setTimeout(() => this.expireDue(), Math.min(delay, MAX_TIMER_MS));
    unrefTimer(this.timer);
  }

  private expireDue(): void {
    this.timer = undefined;
    const now = performance.now();
    // settle() takes each slot out of this list (through the registry), so the head moves on.
    while (this.head && this.head.deadline <= now) this.head.settle({ decision: 'timeout', source: 'system' });
    if (this.head) this.arm();
  }
}

function cancelled(): DecisionOutcome {
  return { decision: 'cancel', source: 'user' };
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
  /** A session rarely has more than one call pending: an array is lighter than a Set. */
  private readonly pendingBySession = new Map<string, Slot[]>();
  private readonly decided = new Map<string, Decided>();
  private readonly grants = new Map<string, Map<string, StoredGrant>>();
  private readonly rememberDecided: number;
  private readonly now: () => number;
  private readonly forget: (slot: Slot, outcome: DecisionOutcome, recorded: boolean) => Promise<DecisionOutcome> | undefined;
  private arbiter: Arbiter | undefined;
  /** One expiry list per decision timeout in use (usually one: the default). */
  private readonly expiryLists = new Map<number, ExpiryList>();

  constructor(options: ApprovalRegistryOptions = {}) {
    this.rememberDecided = options.rememberDecided ?? 10_000;
    this.now = options.now ?? Date.now;
    this.arbiter = options.arbiter;
    this.forget = (slot, outcome, recorded) => {
      this.forgetSlot(slot, outcome);
      return recorded ? undefined : this.arbiter?.(slot, outcome);
    };
  }

  /**
   * Sets the arbiter (see ApprovalRegistryOptions.arbiter) once, before any call is registered: for an owner of the
   * registry that is built after it.
   */
  setArbiter(arbiter: Arbiter): void {
    if (this.arbiter !== undefined) throw new Error('this registry has an arbiter already');
    if (this.pending.size > 0) throw new Error('an arbiter is set before any call waits');
    this.arbiter = arbiter;
  }

  register(request: ApprovalRequest): ApprovalTicket {
    const timeout = request.timeoutMs ?? DEFAULT_DECISION_TIMEOUT_MS;
    if (timeout !== 'never' && Number.isNaN(timeout)) throw new RangeError('timeoutMs must be a number of milliseconds or "never", not NaN');
    const delay = timeout === 'never' ? undefined : Math.min(Math.max(0, timeout), MAX_TIMER_MS);
    const requestedAt = this.now();
    return this.add(new Slot(randomId('apv'), request, requestedAt, delay, delay === undefined ? null : requestedAt + delay, this.forget), delay);
  }

  /**
   * Puts back a call that was waiting when the process stopped, with the same approval id (clients still hold it)
   * and the same absolute deadline. An id that is pending already is refused. `decided`: the decision it was given
   * while no process held it (recorded, not yet acted on); the ticket answers it at once.
   */
  restore(approval: RestoredApproval, decided?: DecisionOutcome): ApprovalTicket {
    if (this.pending.has(approval.approvalId)) throw new Error(`approval ${approval.approvalId} is already pending`);
    const delay = approval.expiresAt === null ? undefined : Math.min(Math.max(0, approval.expiresAt - this.now()), MAX_TIMER_MS);
    const slot = this.add(new Slot(approval.approvalId, approval, approval.requestedAt, delay, approval.expiresAt, this.forget), delay);
    if (decided) slot.settle(decided);
    return slot;
  }

  /**
   * Puts a call decided by a person back to waiting, as if the decision had never come: for a decision its host
   * could not store (the wait has answered it, but nothing was recorded). Same id, same deadline (one that passed
   * meanwhile ends the wait as timeout at once); a decision may be given again, and the first one given then wins.
   * False, and nothing changes, for a call that is waiting, was not decided by a person (allow or deny), or
   * belongs to a registry with an arbiter: there the decision was recorded before the call was released.
   */
  reopen(ticket: ApprovalTicket): boolean {
    if (!(ticket instanceof Slot) || this.arbiter !== undefined || this.pending.has(ticket.approvalId)) return false;
    const outcome = ticket.outcome;
    if (!outcome || outcome.source !== 'user' || (outcome.decision !== 'allow' && outcome.decision !== 'deny')) return false;
    ticket.unsettle();
    this.decided.delete(ticket.approvalId);
    this.add(ticket, ticket.delay);
    return true;
  }

  private add(slot: Slot, delay: number | undefined): Slot {
    // Lists are keyed by delay: within one, a slot added later never has an earlier deadline, restored ones included.
    if (delay !== undefined) this.expiryListFor(delay).add(slot);
    this.pending.set(slot.approvalId, slot);
    const forSession = this.pendingBySession.get(slot.sessionId);
    if (forSession) forSession.push(slot);
    else this.pendingBySession.set(slot.sessionId, [slot]);
    return slot;
  }

  /**
   * Applies a person's decision. Never throws and never applies twice: an unknown, empty or
   * other-session id is "not-found", a repeated or late one is "already-decided" with the first decision.
   */
  resolve(approvalId: string, decision: 'allow' | 'deny', options: ResolveOptions): ResolveResult {
    if (typeof approvalId !== 'string' || approvalId === '') return { resolved: false, status: 'not-found' };
    const slot = this.pending.get(approvalId);
    if (slot && slot.sessionId === options.sessionId) {
      const reason = decision === 'deny' ? normaliseReason(options.reason) : undefined;
      const edited = decision === 'allow' ? editedArguments(slot.arguments, options.arguments) : undefined;
      slot.settle(
        reason !== undefined
          ? { decision, source: 'user', reason }
          : edited !== undefined
            ? { decision, source: 'user', editedArguments: edited }
            : { decision, source: 'user' },
      );
      if (decision === 'allow' && options.always) {
        // Asked for on the edited call, the grant covers the edited call: never the proposal the person changed.
        const grant = this.grant({
          sessionId: slot.sessionId,
          toolName: slot.toolName,
          executesCode: slot.executesCode,
          toolVersion: slot.toolVersion,
          arguments: edited ?? slot.arguments,
        });
        return { resolved: true, status: 'resolved', decision, grant };
      }
      return { resolved: true, status: 'resolved', decision };
    }
    const past = this.decided.get(approvalId);
    if (past && past.sessionId === options.sessionId) {
      return { resolved: false, status: 'already-decided', decision: past.decision };
    }
    return { resolved: false, status: 'not-found' };
  }

  /**
   * Ends a waiting call with a decision recorded elsewhere (by another instance, in a store they share), as it was
   * made: its source, grant, reason or edit kept, so a grant's release reads as the grant's, not a person's. It won
   * already, so no arbiter is asked. False when the call does not wait here in that session.
   */
  applyRecorded(approvalId: string, sessionId: string, outcome: DecisionOutcome): boolean {
    const slot = this.pending.get(approvalId);
    if (!slot || slot.sessionId !== sessionId) return false;
    slot.settle(outcome, true);
    return true;
  }

  /**
   * From now on only a grant for its exact arguments releases this waiting call, as if it had been put up so: for a
   * call a deny rule added or changed while it waited cannot tell from one it denies. False when it does not wait here
   * in that session, or was so already.
   */
  requireExactGrants(approvalId: string, sessionId: string, askedBecause?: AskedBecause): boolean {
    const slot = this.pending.get(approvalId);
    if (!slot || slot.sessionId !== sessionId || slot.exactGrantsOnly) return false;
    slot.exactGrantsOnly = true;
    slot.askedBecause = askedBecause;
    return true;
  }

  /**
   * Denies a waiting call by a deny rule that catches it, added or changed while it waited: with the rule's message
   * as the reason. False when it does not wait here in that session.
   */
  denyByRule(approvalId: string, sessionId: string, verdict: PolicyVerdict & { effect: 'deny' }): boolean {
    const slot = this.pending.get(approvalId);
    if (!slot || slot.sessionId !== sessionId) return false;
    slot.settle({ decision: 'deny', source: 'rule', reason: verdict.message ?? reasonText(verdict.description), verdict });
    return true;
  }

  listPending(sessionId: string): PendingApproval[] {
    return (this.pendingBySession.get(sessionId) ?? []).map((slot) => slot.toPending());
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Grants a tool for the session and releases every pending call of the session that the grant covers. */
  grant(input: GrantInput): VersionedGrant {
    const { grant, held } = this.draft(input);
    if (!held) this.restoreGrant(grant);
    return grant;
  }

  /**
   * The grant `grant(input)` would answer, without making it: the one held already that is the same, or a new one
   * that covers nothing yet. For a host that stores a grant before it takes effect: restoreGrant then makes it.
   */
  draftGrant(input: GrantInput): VersionedGrant {
    return this.draft(input).grant;
  }

  /**
   * The grant an allow with always would make for this waiting call (see draftGrant): with `edited`, for the edited
   * call. Undefined when the call does not wait here in that session.
   */
  draftGrantFor(approvalId: string, sessionId: string, edited?: ToolArguments): VersionedGrant | undefined {
    const slot = this.pending.get(approvalId);
    if (!slot || slot.sessionId !== sessionId) return undefined;
    return this.draftGrant({
      sessionId,
      toolName: slot.toolName,
      executesCode: slot.executesCode,
      toolVersion: slot.toolVersion,
      arguments: editedArguments(slot.arguments, edited) ?? slot.arguments,
    });
  }

  private draft(input: GrantInput): { grant: VersionedGrant; held: boolean } {
    if (input.executesCode && input.arguments === undefined) {
      throw new TypeError(`a grant for code-running tool "${input.toolName}" needs its exact arguments`);
    }
    const argsKey = input.executesCode ? canonicalJson(input.arguments) : null;
    for (const existing of this.grants.get(input.sessionId)?.values() ?? []) {
      if (existing.toolName === input.toolName && existing.argsKey === argsKey && existing.toolVersion === input.toolVersion) {
        return { grant: versionedGrant(existing), held: true };
      }
    }
    const grant: VersionedGrant = {
      grantId: randomId('grt', 12),
      sessionId: input.sessionId,
      toolName: input.toolName,
      arguments: input.executesCode ? (input.arguments ?? null) : null,
      createdAt: this.now(),
      toolVersion: input.toolVersion,
    };
    return { grant, held: false };
  }

  private releaseCovered(grant: StoredGrant): void {
    for (const slot of [...(this.pendingBySession.get(grant.sessionId) ?? [])]) {
      // The key is computed here rather than kept on every slot: grants are rare, pending calls many.
      if (covers(grant, slot.toolName, canonicalJson(slot.arguments), slot.toolVersion, slot.exactGrantsOnly)) {
        slot.settle({ decision: 'allow', source: 'grant', grantId: grant.grantId });
      }
    }
  }

  /**
   * Puts back a grant kept in a store: after a restart, or made by another instance. Like a grant made here, it
   * releases the session's waiting calls it covers.
   */
  restoreGrant(grant: VersionedGrant): void {
    let forSession = this.grants.get(grant.sessionId);
    if (!forSession) this.grants.set(grant.sessionId, (forSession = new Map<string, StoredGrant>()));
    const argsKey = grant.arguments === null ? null : canonicalJson(grant.arguments);
    const stored: StoredGrant = { ...publicGrant({ ...grant, argsKey }), argsKey, toolVersion: grant.toolVersion };
    forSession.set(grant.grantId, stored);
    this.releaseCovered(stored);
  }

  findGrant(sessionId: string, query: GrantQuery): Grant | undefined {
    const forSession = this.grants.get(sessionId);
    if (!forSession) return undefined;
    const argsKey = canonicalJson(query.arguments);
    for (const grant of forSession.values()) {
      if (covers(grant, query.toolName, argsKey, query.toolVersion, query.exactGrantsOnly === true)) return publicGrant(grant);
    }
    return undefined;
  }

  listGrants(sessionId: string): Grant[] {
    return [...(this.grants.get(sessionId)?.values() ?? [])].map(publicGrant);
  }

  revokeGrant(sessionId: string, grantId: string): boolean {
    return this.grants.get(sessionId)?.delete(grantId) ?? false;
  }

  /**
   * Ends every pending wait of one run as cancel: for a run that stopped before its loop waited on them (one resumed
   * after a restart whose first write failed), so that no call stays listed, and decidable, with no loop to run it.
   */
  cancelRun(sessionId: string, runId: string): void {
    for (const slot of [...(this.pendingBySession.get(sessionId) ?? [])]) if (slot.runId === runId) slot.settle(cancelled());
  }

  /**
   * Takes every pending call of one run out of the registry with no decision: its wait ends as cancel, but it is not
   * remembered as decided, so a decision on it later is answered "not-found", never "already-decided". For a run
   * paused because its store cannot take writes: its calls still wait there, and are restored when it is taken up
   * again. Answers them as they were listed.
   */
  withdrawRun(sessionId: string, runId: string): PendingApproval[] {
    const withdrawn: PendingApproval[] = [];
    for (const slot of [...(this.pendingBySession.get(sessionId) ?? [])]) {
      if (slot.runId !== runId) continue;
      withdrawn.push(slot.toPending());
      slot.settle(cancelled());
      this.decided.delete(slot.approvalId);
    }
    return withdrawn;
  }

  /** Ends every pending wait of the session as cancel and forgets its grants. */
  clearSession(sessionId: string): void {
    for (const slot of [...(this.pendingBySession.get(sessionId) ?? [])]) slot.settle(cancelled());
    this.grants.delete(sessionId);
  }

  private expiryListFor(delay: number): ExpiryList {
    let list = this.expiryLists.get(delay);
    if (!list) {
      const created = new ExpiryList(() => this.expiryLists.delete(delay));
      this.expiryLists.set(delay, created);
      list = created;
    }
    return list;
  }

  private forgetSlot(slot: Slot, outcome: DecisionOutcome): void {
    const { approvalId, sessionId } = slot;
    slot.expiry?.remove(slot);
    this.pending.delete(approvalId);
    const forSession = this.pendingBySession.get(sessionId);
    if (forSession) {
      const index = forSession.indexOf(slot);
      if (index >= 0) forSession.splice(index, 1);
      if (forSession.length === 0) this.pendingBySession.delete(sessionId);
    }
    this.decided.set(approvalId, { sessionId, decision: outcome.decision });
    if (this.decided.size > this.rememberDecided) {
      const oldest = this.decided.keys().next();
      if (!oldest.done) this.decided.delete(oldest.value);
    }
  }
}

function covers(grant: StoredGrant, toolName: string, argsKey: string, toolVersion: string, exactOnly: boolean): boolean {
  if (grant.toolName !== toolName || grant.toolVersion !== toolVersion) return false;
  return grant.argsKey === null ? !exactOnly : grant.argsKey === argsKey;
}

function versionedGrant(grant: StoredGrant): VersionedGrant {
  return { ...publicGrant(grant), toolVersion: grant.toolVersion };
}

function publicGrant(grant: Omit<StoredGrant, 'toolVersion'>): Grant {
  return {
    grantId: grant.grantId,
    sessionId: grant.sessionId,
    toolName: grant.toolName,
    arguments: grant.arguments,
    createdAt: grant.createdAt,
  };
}

/**
 * The person's edit as a frozen copy, with keys that could reach a prototype dropped; undefined when there is no
 * edit or it changes nothing.
 */
function editedArguments(proposed: ToolArguments, edited: ToolArguments | undefined): ToolArguments | undefined {
  if (edited === undefined || !isPlainObject(edited)) return undefined;
  const copy = parseUntrustedJson(JSON.stringify(edited));
  if (!isPlainObject(copy) || canonicalJson(copy) === canonicalJson(proposed)) return undefined;
  return deepFreeze(copy);
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
