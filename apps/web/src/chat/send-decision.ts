import { decisionRefusal } from '@airlock/client';
import { heldFor, holdAfterUnknownAnswer } from './answer-holds';
import type { ConfirmInput, ConfirmResult, PersonDecision, ToolArguments } from '../lib/api-types';
import type { ChatAction } from './chat-reducer';
import { tabDecisions, type TabDecisionOutcome } from './tab-decisions';
import type { DecisionProblem, ToolCallView } from './tool-call-state';

/** The server's limit on a deny reason. */
export const MAX_REASON_LENGTH = 2000;

export interface DecisionRequest {
  decision: PersonDecision;
  /** With deny: the person's words, passed to the model. */
  reason?: string;
  /** With allow: also grant the call for the rest of the chat. */
  always?: boolean;
  /** With always: a grant in this chat (the default), or a lasting rule for this workspace or everywhere. */
  scope?: 'workspace' | 'global';
  /** With scope: the rule the card showed, the only one the server may save. */
  rule?: ConfirmInput['rule'];
  /** With allow: the arguments the person edited the call to (only when they differ from the proposed ones). */
  arguments?: ToolArguments;
}

export type SendConfirm = (input: ConfirmInput) => Promise<ConfirmResult>;

export interface SendDecisionOptions {
  sessionId: string;
  call: ToolCallView;
  request: DecisionRequest;
  send: SendConfirm;
  dispatch: (action: ChatAction) => void;
}

/**
 * Sends one decision. The card shows "deciding" until the server answers, then the decision it took
 * (the run's tool-decision event may come before or after that answer); a refusal or a failure puts the
 * buttons back with the reason, so the person can try again.
 */
export async function sendDecision(options: SendDecisionOptions): Promise<ConfirmResult | undefined> {
  const { call, request, dispatch } = options;
  if (call.state.status !== 'awaiting-decision' || decisionHeld(call.state.problem, call.state.approvalId)) return undefined;
  const held = heldFor(call.state.approvalId);
  if (held > 0) {
    // An earlier decision on this call, sent from Waiting for you or a notification, may still land.
    dispatch({ type: 'decision-rejected', key: call.key, problem: { kind: 'send-failed', message: 'an earlier decision on this call lost its connection' } });
    return undefined;
  }
  const reason = request.decision === 'deny' ? request.reason?.trim().slice(0, MAX_REASON_LENGTH) : undefined;
  const edited = request.decision === 'allow' ? request.arguments : undefined;
  const { approvalId } = call.state;
  dispatch({ type: 'decision-sent', key: call.key, decision: request.decision });
  // Kept for the tab, whatever the card shows by the time the answer comes: a call decided meanwhile by another
  // client says so, and says this tab's decision was not applied.
  tabDecisions.record(approvalId, request.decision, 'sent');
  try {
    const result = await options.send({
      sessionId: options.sessionId,
      approvalId,
      decision: request.decision,
      clientLabel: 'web',
      ...(reason ? { reason } : {}),
      ...(request.decision === 'allow' && request.always === true ? { always: true, ...(request.scope === undefined ? {} : { scope: request.scope, ...(request.rule === undefined ? {} : { rule: request.rule }) }) } : {}),
      ...(edited === undefined ? {} : { arguments: edited }),
    });
    const problem = problemOf(result);
    tabDecisions.record(approvalId, request.decision, problem === null ? 'accepted' : outcomeOf(problem));
    dispatch(
      problem === null
        ? {
            type: 'decision-accepted',
            key: call.key,
            ...(reason ? { reason } : {}),
            ...(edited === undefined ? {} : { editedArguments: edited }),
            ...('alwaysNotSaved' in result ? { alwaysNotSaved: result.alwaysNotSaved } : {}),
          }
        : { type: 'decision-rejected', key: call.key, problem },
    );
    return result;
  } catch (error) {
    holdAfterUnknownAnswer(approvalId, error);
    const problem = problemOfError(error, { edited: edited !== undefined });
    tabDecisions.record(approvalId, request.decision, outcomeOf(problem));
    dispatch({ type: 'decision-rejected', key: call.key, problem });
    return undefined;
  }
}

/**
 * Why a decision that threw did not take: the server refused it (by its code; a refused edit is shown in the editor),
 * the server failed on it (any other code: it may have been applied), or no answer came (no code: the connection
 * went, or the deadline passed with none).
 */
export function problemOfError(error: unknown, { edited }: { edited: boolean }): DecisionProblem {
  const message = error instanceof Error ? error.message : String(error);
  const refusal = decisionRefusal(error);
  switch (refusal.kind) {
    case 'unanswered':
      // How long it may still be applied is the tab's hold on the call (`holdAfterUnknownAnswer`).
      return { kind: 'send-failed', message };
    case 'failed':
      return { kind: 'server-failed', message };
    case 'refused':
      return refusal.why === 'invalid' && edited ? { kind: 'invalid-arguments', message } : { kind: 'refused', why: refusal.why, message };
  }
}

/**
 * Whether the card's decision, sent before and unanswered, may still be applied: the tab holds the call
 * (`answer-holds.ts`), and no other decision is sent until then.
 */
export function decisionHeld(problem: DecisionProblem | null, approvalId: string, now = Date.now()): boolean {
  return problem?.kind === 'send-failed' && heldFor(approvalId, now) > 0;
}

/** What became of this tab's decision, by why it did not take. */
export function outcomeOf(problem: DecisionProblem): TabDecisionOutcome {
  const outcomes: Record<DecisionProblem['kind'], TabDecisionOutcome> = {
    'already-decided': 'superseded',
    'not-found': 'superseded',
    // The call still waits: a decision shown later was made by someone else, or the call timed out or was stopped.
    'invalid-arguments': 'refused',
    refused: 'refused',
    'server-failed': 'failed',
    // It may have been applied before its deadline.
    'send-failed': 'unanswered',
  };
  return outcomes[problem.kind];
}

function problemOf(result: ConfirmResult): DecisionProblem | null {
  if (result.resolved) return null;
  if (result.status === 'already-decided' && 'decision' in result && result.decision !== undefined) {
    return { kind: 'already-decided', decision: result.decision };
  }
  return { kind: 'not-found' };
}
