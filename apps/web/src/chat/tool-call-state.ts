import type { RefusedWhy } from '@airlock/client';
import type { ShownReason } from '@airlock/core';
import type { Decision, LoopEventOf, PersonDecision, ToolArguments, ToolOutcome } from '../lib/api-types';

/** Why a decision did not take, shown beside the buttons that stay usable. */
export type DecisionProblem =
  /**
   * No answer came (the connection went, or the deadline passed first): it may have been applied before. While the tab
   * holds the call (`answer-holds.ts`: the connection went while the server could still apply it), no other decision
   * is sent, or the first could overtake it.
   */
  | { kind: 'send-failed'; message: string }
  /** The server refused the person's edit of the arguments (its schema check); the call still waits. */
  | { kind: 'invalid-arguments'; message: string }
  /** The server refused the decision and applied nothing, for `why`; the call still waits. */
  | { kind: 'refused'; why: RefusedWhy; message: string }
  /** The server failed while taking the decision: whether it was applied, only the run's events tell. */
  | { kind: 'server-failed'; message: string }
  | { kind: 'not-found' }
  | { kind: 'already-decided'; decision: Decision };

/** Who let a call run; `not-asked` until the run says why a call that did not ask may run. */
export type Approver = 'you' | 'grant' | 'rule' | 'no-confirmation' | 'not-asked';

/** Who allowed a call that had to ask. */
export type Allower = Exclude<Approver, 'no-confirmation' | 'not-asked'>;

/**
 * The lasting rule that decided a call: its id, and how it read when it decided. After a reload only the id is
 * known (the ledger keeps no text): the card looks it up in the rule list, and either may be gone.
 */
export interface RuleRef {
  ruleId: string | null;
  /** How the rule read when it decided (a sentence in events and rows stored before reasons were typed). */
  text: ShownReason | null;
}

/** Who let a call run; a rule also says which rule. */
export type ApprovedBy<A extends Approver = Approver> = A extends 'rule' ? { approvedBy: A; rule: RuleRef } : { approvedBy: A };

/**
 * Everything a tool call can be from the UI's point of view. `result` is null until the run reports it
 * (a deny is known before the tool-end that carries the text sent back to the model).
 */
export type ToolCallState =
  | { status: 'awaiting-decision'; approvalId: string; expiresAt: number | null; problem: DecisionProblem | null }
  | { status: 'deciding'; approvalId: string; expiresAt: number | null; decision: PersonDecision }
  // Calls run one at a time in the model's order: with several up at once, a later one can be allowed
  // long before the calls before it are done. It is shown running only once they all ended.
  | ({ status: 'allowed' } & ApprovedBy<Allower>)
  | ({ status: 'running' } & ApprovedBy)
  | ({ status: 'done'; result: string } & ApprovedBy)
  | { status: 'error'; result: string }
  // `deniedByRule` only when a lasting rule denied it (nobody was asked).
  | { status: 'denied'; reason: string | null; result: string | null; deniedByRule?: RuleRef }
  | { status: 'timed-out'; result: string | null }
  | { status: 'cancelled'; result: string | null }
  | { status: 'disabled'; result: string }
  | { status: 'duplicate'; result: string }
  // It was running when the server stopped: it may have done part of its work.
  | { status: 'interrupted'; result: string }
  | { status: 'recorded'; result: string | null }
  // Its ledger row is damaged and was left out of the page: how it was decided, and whether it ran, are not known.
  | { status: 'unreadable'; result: string | null };

export type ToolCallStatus = ToolCallState['status'];

/** What the server left out of a call's result before the model saw it, as it counted it (never read from the text). */
export type ResultCut = NonNullable<LoopEventOf<'tool-end'>['cut']>;

export interface ToolCallView {
  /** Unique in the chat: tool call ids are only unique within a run. */
  key: string;
  runId: string | null;
  toolCallId: string;
  toolName: string;
  /** The id a decision on the call is sent with; absent for a call that was not put up for one. */
  approvalId?: string;
  /** As the model proposed them. */
  arguments: ToolArguments;
  /** What the person edited them to before allowing: what ran (or what a rule refused). Absent when not edited. */
  editedArguments?: ToolArguments;
  /** What the server left out of the result, from the call's tool-end or ledger row. Absent when nothing was. */
  cut?: ResultCut;
  /**
   * The tool as the call was put up (its source and hints), from the call's tool-start or ledger row: what its card
   * shows, and what an allow covers. Absent for a call whose tool-start or ledger row was stored before it was recorded.
   */
  tool?: ShownTool;
  /**
   * Why a lasting rule put the call up rather than deciding it (an allow rule that does not cover what it would do, a
   * deny rule that could not tell), from the call's tool-start, in either confirmation setting. Absent otherwise.
   */
  askedBecause?: AskedBecause;
  /**
   * A deny rule could not tell the call from one it denies, so only a grant for its exact arguments releases it (its
   * tool-start's or ledger row's `exactGrantsOnly`): it is allowed only on its card, which says why it is asked.
   */
  exactGrantsOnly?: true;
  /**
   * This tab's "Always allow" was applied as an allow, but its grant or lasting rule could not be saved: why, as the
   * server said (`alwaysNotSaved`). A call like it will be asked again.
   */
  alwaysNotSaved?: string;
  /**
   * The stored chat holds no result of this call before the next message (its result's message damaged and left out,
   * or never stored): the model was told instead that the call has no recorded result (see answerUnansweredCalls).
   */
  resultUnknownToModel?: true;
  state: ToolCallState;
}

/** The tool a tool-start says its call was put up with. */
export type ShownTool = NonNullable<LoopEventOf<'tool-start'>['tool']>;

/** The rule a tool-start says put its call up, and why. */
export type AskedBecause = NonNullable<LoopEventOf<'tool-start'>['askedBecause']>;

export function stateAfterStart(event: LoopEventOf<'tool-start'>): ToolCallState {
  if (event.awaitingConfirmation) {
    return { status: 'awaiting-decision', approvalId: event.approvalId, expiresAt: event.expiresAt ?? null, problem: null };
  }
  return { status: 'running', approvedBy: 'not-asked' };
}

function ruleOf(event: LoopEventOf<'tool-decision'>): RuleRef {
  return { ruleId: event.ruleId ?? null, text: event.rule ?? null };
}

function allowerOf(event: LoopEventOf<'tool-decision'>): ApprovedBy<Allower> {
  if (event.source === 'rule') return { approvedBy: 'rule', rule: ruleOf(event) };
  return { approvedBy: event.source === 'grant' ? 'grant' : 'you' };
}

/** Who let a call run, kept as it moves from allowed to running to done. */
function approvalOf(state: ToolCallState): ApprovedBy {
  if (state.status !== 'running' && state.status !== 'done' && state.status !== 'allowed') return { approvedBy: 'not-asked' };
  return state.approvedBy === 'rule' ? { approvedBy: 'rule', rule: state.rule } : { approvedBy: state.approvedBy };
}

export function stateAfterDecision(event: LoopEventOf<'tool-decision'>): ToolCallState {
  const byDecision: Record<Decision, () => ToolCallState> = {
    // Nobody was asked: the call starts at its own turn, now.
    allow: () => (event.source === 'confirmation-off' ? { status: 'running', approvedBy: 'no-confirmation' } : { status: 'allowed', ...allowerOf(event) }),
    deny: () =>
      event.source === 'rule'
        ? { status: 'denied', reason: event.reason ?? null, result: null, deniedByRule: ruleOf(event) }
        : { status: 'denied', reason: event.reason ?? null, result: null },
    timeout: () => ({ status: 'timed-out', result: null }),
    cancel: () => ({ status: 'cancelled', result: null }),
  };
  return byDecision[event.decision]();
}

export function stateAfterEnd(previous: ToolCallState, event: LoopEventOf<'tool-end'>): ToolCallState {
  const result = event.result;
  const byOutcome: Record<ToolOutcome, () => ToolCallState> = {
    executed: () => ({ status: 'done', ...approvalOf(previous), result }),
    error: () => ({ status: 'error', result }),
    denied: () => (previous.status === 'denied' ? { ...previous, result } : { status: 'denied', reason: null, result }),
    'timed-out': () => ({ status: 'timed-out', result }),
    cancelled: () => ({ status: 'cancelled', result }),
    disabled: () => ({ status: 'disabled', result }),
    duplicate: () => ({ status: 'duplicate', result }),
    interrupted: () => ({ status: 'interrupted', result }),
  };
  return byOutcome[event.outcome]();
}

/**
 * The state once the server took the person's decision, for when its answer comes before the run's
 * tool-decision event (the run reports decisions only while it waits on one, not while a tool runs).
 */
export function stateAfterAccepted(decision: PersonDecision, reason: string | undefined): ToolCallState {
  const byDecision: Record<PersonDecision, () => ToolCallState> = {
    allow: () => ({ status: 'allowed', approvedBy: 'you' }),
    deny: () => ({ status: 'denied', reason: reason ?? null, result: null }),
  };
  return byDecision[decision]();
}

/**
 * An allowed call runs only when it is the run's current call; anything else allowed waits its turn.
 * A call that needed no confirmation starts at its turn and is left as it is.
 */
export function stateForTurn(state: ToolCallState, isItsTurn: boolean): ToolCallState {
  if (state.status === 'allowed' && isItsTurn) return { ...state, status: 'running' };
  if (state.status === 'running' && !isItsTurn) {
    if (state.approvedBy === 'rule') return { status: 'allowed', approvedBy: 'rule', rule: state.rule };
    if (state.approvedBy === 'you' || state.approvedBy === 'grant') return { status: 'allowed', approvedBy: state.approvedBy };
  }
  return state;
}

/** True once the call's tool-end came: a decision alone (a deny before its turn) leaves `result` null. */
export function hasEnded(state: ToolCallState): boolean {
  switch (state.status) {
    case 'awaiting-decision':
    case 'deciding':
    case 'allowed':
    case 'running':
      return false;
    case 'denied':
    case 'timed-out':
    case 'cancelled':
      return state.result !== null;
    case 'done':
    case 'error':
    case 'disabled':
    case 'duplicate':
    case 'interrupted':
    case 'recorded':
    case 'unreadable':
      return true;
  }
}

/** True while the person can still decide: the buttons are shown. */
export function isUndecided(state: ToolCallState): state is Extract<ToolCallState, { status: 'awaiting-decision' | 'deciding' }> {
  return state.status === 'awaiting-decision' || state.status === 'deciding';
}
