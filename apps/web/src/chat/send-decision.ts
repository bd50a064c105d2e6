import type { ConfirmInput, ConfirmResult, PersonDecision } from '../lib/api-types';
import type { ChatAction } from './chat-reducer';
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
  if (call.state.status !== 'awaiting-decision') return undefined;
  const reason = request.decision === 'deny' ? request.reason?.trim().slice(0, MAX_REASON_LENGTH) : undefined;
  dispatch({ type: 'decision-sent', key: call.key, decision: request.decision });
  try {
    const result = await options.send({
      sessionId: options.sessionId,
      approvalId: call.state.approvalId,
      decision: request.decision,
      clientLabel: 'web',
      ...(reason ? { reason } : {}),
      ...(request.decision === 'allow' && request.always === true ? { always: true, ...(request.scope === undefined ? {} : { scope: request.scope }) } : {}),
    });
    const problem = problemOf(result);
    dispatch(
      problem === null
        ? { type: 'decision-accepted', key: call.key, ...(reason ? { reason } : {}) }
        : { type: 'decision-rejected', key: call.key, problem },
    );
    return result;
  } catch (error) {
    dispatch({ type: 'decision-rejected', key: call.key, problem: { kind: 'send-failed', message: error instanceof Error ? error.message : String(error) } });
    return undefined;
  }
}

function problemOf(result: ConfirmResult): DecisionProblem | null {
  if (result.resolved) return null;
  if (result.status === 'already-decided' && 'decision' in result && result.decision !== undefined) {
    return { kind: 'already-decided', decision: result.decision };
  }
  return { kind: 'not-found' };
}
