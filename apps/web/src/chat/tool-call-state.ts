import type { Decision, LoopEventOf, PersonDecision, ToolArguments, ToolOutcome } from '../lib/api-types';

/** Why a decision did not take, shown beside the buttons that stay usable. */
export type DecisionProblem =
  | { kind: 'send-failed'; message: string }
  | { kind: 'not-found' }
  | { kind: 'already-decided'; decision: Decision };

/** Who let a call run. */
export type Approver = 'you' | 'grant' | 'no-confirmation';

/**
 * Everything a tool call can be from the UI's point of view. `result` is null until the run reports it
 * (a deny is known before the tool-end that carries the text sent back to the model).
 */
export type ToolCallState =
  | { status: 'awaiting-decision'; approvalId: string; expiresAt: number | null; problem: DecisionProblem | null }
  | { status: 'deciding'; approvalId: string; expiresAt: number | null; decision: PersonDecision }
  // The server took the decision, but the run applies it only when the call's turn comes: with several calls
  // up at once, a later one can be decided long before the calls before it are done.
  | { status: 'decided'; decision: PersonDecision }
  | { status: 'running'; approvedBy: Approver }
  | { status: 'done'; approvedBy: Approver; result: string }
  | { status: 'error'; result: string }
  | { status: 'denied'; reason: string | null; result: string | null }
  | { status: 'timed-out'; result: string | null }
  | { status: 'cancelled'; result: string | null }
  | { status: 'disabled'; result: string }
  | { status: 'duplicate'; result: string }
  | { status: 'recorded'; result: string | null };

export type ToolCallStatus = ToolCallState['status'];

export interface ToolCallView {
  /** Unique in the chat: tool call ids are only unique within a run. */
  key: string;
  runId: string | null;
  toolCallId: string;
  toolName: string;
  arguments: ToolArguments;
  state: ToolCallState;
}

export function stateAfterStart(event: LoopEventOf<'tool-start'>): ToolCallState {
  if (event.awaitingConfirmation) {
    return { status: 'awaiting-decision', approvalId: event.approvalId, expiresAt: event.expiresAt ?? null, problem: null };
  }
  return { status: 'running', approvedBy: 'no-confirmation' };
}

export function stateAfterDecision(event: LoopEventOf<'tool-decision'>): ToolCallState {
  const byDecision: Record<Decision, () => ToolCallState> = {
    allow: () => ({ status: 'running', approvedBy: event.source === 'grant' ? 'grant' : 'you' }),
    deny: () => ({ status: 'denied', reason: event.reason ?? null, result: null }),
    timeout: () => ({ status: 'timed-out', result: null }),
    cancel: () => ({ status: 'cancelled', result: null }),
  };
  return byDecision[event.decision]();
}

export function stateAfterEnd(previous: ToolCallState, event: LoopEventOf<'tool-end'>): ToolCallState {
  const result = event.result;
  const approvedBy: Approver = previous.status === 'running' || previous.status === 'done' ? previous.approvedBy : 'no-confirmation';
  const byOutcome: Record<ToolOutcome, () => ToolCallState> = {
    executed: () => ({ status: 'done', approvedBy, result }),
    error: () => ({ status: 'error', result }),
    denied: () => ({ status: 'denied', reason: previous.status === 'denied' ? previous.reason : null, result }),
    'timed-out': () => ({ status: 'timed-out', result }),
    cancelled: () => ({ status: 'cancelled', result }),
    disabled: () => ({ status: 'disabled', result }),
    duplicate: () => ({ status: 'duplicate', result }),
  };
  return byOutcome[event.outcome]();
}

/** True while the person can still decide: the buttons are shown. */
export function isUndecided(state: ToolCallState): state is Extract<ToolCallState, { status: 'awaiting-decision' | 'deciding' }> {
  return state.status === 'awaiting-decision' || state.status === 'deciding';
}
