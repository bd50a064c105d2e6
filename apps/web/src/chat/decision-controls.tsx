import type { RefusedWhy } from '@airlock/client';
import { toVisibleText } from '@airlock/core';
import { useEffect, useId, useState, type FormEvent } from 'react';
import type { Decision, ToolAnnotations } from '../lib/api-types';
import { SteadyButton, type UnsteadyReason } from '../lib/steady-button';
import { AlwaysAllowScope, CHAT_SCOPE, type AlwaysChoice } from './always-allow-scope';
import { Countdown } from './countdown';
import { grantScope } from './grant-scope';
import { VisibleTextView } from './tool-arguments';
import { heldFor } from './answer-holds';
import { decisionHeld, MAX_REASON_LENGTH, type DecisionRequest } from './send-decision';
import type { DecisionProblem, ToolCallState } from './tool-call-state';

type Undecided = Extract<ToolCallState, { status: 'awaiting-decision' | 'deciding' }>;

export interface DecisionControlsProps {
  toolName: string;
  state: Undecided;
  annotations: ToolAnnotations | undefined;
  onDecide: (request: DecisionRequest) => void;
  /** Changed (from the card's `r` key) to open the reason box. */
  reasonRequest?: number;
  /** Opens or closes the argument editor; no Edit button without it. */
  onEdit?: () => void;
  /** Whether the argument editor is open. */
  editing?: boolean;
  /**
   * The editor holds a change: Allow and Always allow, which run the model's proposal, are off until the edit is
   * allowed or cancelled. Default false.
   */
  editHeld?: boolean;
  /** A deny reason kept from before (a reload, the card shown again): the reason box opens with it. Default "". */
  reasonDraft?: string;
  /** Told the reason as it is typed, to keep as a draft. */
  onReasonChange?: (reason: string) => void;
  /**
   * Where a person's decision this tab did not make was made, as this browser knows ("in another tab"): said when the
   * call was already decided. Default "perhaps in another tab".
   */
  decidedWhere?: string;
}

const decidedAs: Record<Decision, string> = {
  allow: 'allowed',
  deny: 'denied',
  timeout: 'timed out',
  cancel: 'cancelled',
};

export function DecisionControls({
  toolName,
  state,
  annotations,
  onDecide,
  reasonRequest = 0,
  onEdit,
  editing = false,
  editHeld = false,
  reasonDraft = '',
  onReasonChange,
  decidedWhere = 'perhaps in another tab',
}: DecisionControlsProps) {
  const [reasonOpen, setReasonOpen] = useState(reasonDraft !== '');
  // Opened by the person (its button, the card's r), the reason box takes the focus; open as the card shows with a
  // kept reason, it takes none: the person may be typing in the message box, and Enter there would deny the call.
  const [reasonAsked, setReasonAsked] = useState(false);
  useEffect(() => {
    if (reasonRequest === 0) return;
    setReasonAsked(true);
    setReasonOpen(true);
  }, [reasonRequest]);
  const [reason, setReason] = useState(reasonDraft);
  const [always, setAlways] = useState<AlwaysChoice>(CHAT_SCOPE);
  const scopeId = useId();
  const reasonId = useId();
  // A decision sent before may still land: no other is offered until it cannot (see DecisionProblem).
  const held = useHeld(state.status === 'awaiting-decision' ? state : null);
  const busy = state.status === 'deciding' || held;
  const [ignoredClick, setIgnoredClick] = useState<UnsteadyReason | null>(null);
  const decide = (request: DecisionRequest) => {
    setIgnoredClick(null);
    onDecide(request);
  };

  const denyWithReason = (event: FormEvent) => {
    event.preventDefault();
    if (!busy) decide({ decision: 'deny', reason });
  };

  return (
    <div className="decision" role="group" aria-label={`Decision for ${toolName}`}>
      <div className="decision-buttons">
        <SteadyButton
          className="btn btn-allow"
          disabled={busy || editHeld}
          aria-label={`Allow ${toolName}`}
          onClick={() => decide({ decision: 'allow' })}
          onUnsteadyClick={setIgnoredClick}
        >
          Allow
        </SteadyButton>
        <SteadyButton
          className="btn"
          disabled={busy || editHeld || !always.ready}
          aria-label={`Always allow ${toolName}`}
          aria-describedby={scopeId}
          // What it saves, as shown beside it: a rule read again (after the server refused a click as changed, after a
          // reconnect) re-arms it, so the second click of a double-click does not save a rule drawn as it came.
          decides={always.scope === 'chat' ? `chat:${grantScope(toolName, annotations)}` : `${always.scope}:${JSON.stringify(always.rule ?? null)}`}
          onClick={() => decide({ decision: 'allow', always: true, ...(always.scope === 'chat' ? {} : { scope: always.scope, ...(always.rule === undefined ? {} : { rule: always.rule }) }) })}
          onUnsteadyClick={setIgnoredClick}
        >
          Always allow
        </SteadyButton>
        {onEdit !== undefined && (
          <button type="button" className="btn" disabled={busy} aria-label={`Edit arguments of ${toolName}`} aria-expanded={editing} onClick={onEdit}>
            Edit…
          </button>
        )}
        <SteadyButton className="btn btn-deny" disabled={busy} aria-label={`Deny ${toolName}`} onClick={() => decide({ decision: 'deny' })} onUnsteadyClick={setIgnoredClick}>
          Deny
        </SteadyButton>
        <button
          type="button"
          className="btn btn-quiet"
          disabled={busy}
          aria-expanded={reasonOpen}
          aria-controls={reasonId}
          onClick={() => {
            setReasonAsked(true);
            setReasonOpen(!reasonOpen);
          }}
        >
          Deny with reason…
        </button>
        <Countdown expiresAt={state.expiresAt} />
      </div>
      {editHeld && (
        <p className="detail edit-held" role="note">
          Allow and Always allow are off while you edit: they would run the call as the model proposed it. Allow edited, below, runs your version;
          Cancel editing brings them back.
        </p>
      )}
      <AlwaysAllowScope id={scopeId} toolName={toolName} annotations={annotations} approvalId={state.approvalId} choice={always} onChoice={setAlways} disabled={busy} problem={state.status === 'awaiting-decision' ? state.problem : null} />
      {reasonOpen && (
        <form id={reasonId} className="deny-reason" onSubmit={denyWithReason}>
          <label>
            <span>Reason, passed to the model</span>
            <input
              type="text"
              value={reason}
              maxLength={MAX_REASON_LENGTH}
              placeholder="e.g. don't touch files outside the project"
              onChange={(event) => {
                setReason(event.target.value);
                onReasonChange?.(event.target.value);
              }}
              autoFocus={reasonAsked}
            />
          </label>
          {/* Not a submit button: a click meant for what was there before the box opened must not deny. Enter in the
              box, its one field, still does. */}
          <SteadyButton className="btn btn-deny" disabled={busy} onClick={() => !busy && decide({ decision: 'deny', reason })} onUnsteadyClick={setIgnoredClick}>
            Deny with this reason
          </SteadyButton>
          <span className="muted counter">
            {reason.length}/{MAX_REASON_LENGTH}
          </span>
        </form>
      )}
      {ignoredClick !== null && !busy && <UnsteadyClickHint reason={ignoredClick} />}
      {state.status === 'deciding' && (
        <p className="sending" aria-live="polite">
          Sending your decision ({state.decision})…
        </p>
      )}
      {/* A refused edit is shown in the editor, beside what was edited. */}
      {state.status === 'awaiting-decision' && state.problem !== null && state.problem.kind !== 'invalid-arguments' && <ProblemHint problem={state.problem} decidedWhere={decidedWhere} heldMs={held ? heldFor(state.approvalId) : 0} />}
    </div>
  );
}

const unsteadyText: Record<UnsteadyReason, string> = {
  moved: 'Nothing was decided: the button had just appeared or moved under the pointer as you clicked. Click again if you meant it.',
  changed: 'Nothing was decided: what the button decides had just changed as you clicked. Look again, then click again if you meant it.',
  typing:
    'Nothing was decided: letters were typed on the button, so its space or Enter was taken for typing. Click it, or Tab away and back, if you meant it.',
  unseen: 'Nothing was decided: the button was off screen as its key was pressed. It is in view now: press again if you meant it.',
};

/** Said where a click or key on a decision button was ignored (see SteadyButton). */
export function UnsteadyClickHint({ reason }: { reason: UnsteadyReason }) {
  return (
    <p className="problem" role="status">
      {unsteadyText[reason]}
    </p>
  );
}

function ProblemHint({ problem, decidedWhere, heldMs }: { problem: DecisionProblem; decidedWhere: string; heldMs: number }) {
  return (
    <p className="problem" role="alert">
      {/* The server's words may name a tool or a chat in characters that hide or reorder text: shown as their codes. */}
      <VisibleTextView text={toVisibleText(problemText(problem, decidedWhere, heldMs))} />
    </p>
  );
}

/** Whether a decision sent before may still be applied (the tab's hold on the call); drawn again once it cannot. */
function useHeld(waiting: { problem: DecisionProblem | null; approvalId: string } | null): boolean {
  const [, setTick] = useState(0);
  const approvalId = waiting?.approvalId;
  const held = waiting !== null && decisionHeld(waiting.problem, waiting.approvalId);
  useEffect(() => {
    if (!held || approvalId === undefined) return undefined;
    const timer = setTimeout(() => setTick((tick) => tick + 1), heldFor(approvalId) + 1);
    return () => clearTimeout(timer);
  }, [held, approvalId]);
  return held;
}

/** Said after the server's reason for refusing an edit (in the editor): what became of the call, and how to try again. */
export const EDIT_REFUSED_HINT = 'Nothing was applied, and the call still waits: fix the arguments and allow again.';

/** The call still waits after a refusal: what to do about it, by why it was refused. */
const refusedHint: Record<RefusedWhy, string> = {
  'too-late': 'It reached the server after this page had stopped waiting for its answer, so it was not applied. The call still waits: try again.',
  invalid: 'Nothing was applied, and the call still waits: change what the server names, or decide otherwise, and try again.',
  conflict: 'Nothing was applied, and the call still waits: do what the server says, and try again.',
  busy: 'Nothing was applied, and the call still waits: try again in a moment.',
  'not-authorized': 'Nothing was applied: reload the page, or open Airlock’s start-up link again, then try again.',
  gone: 'Nothing was applied. If this card still shows its buttons, try again; if the run moved on, the card updates by itself.',
};

/**
 * What the card says of a decision that did not take, and how to try again; `decidedWhere`: where a person's decision
 * the server already took was made, as far as this browser knows; `heldMs`: how long the tab still holds the call.
 */
export function problemText(problem: DecisionProblem, decidedWhere: string, heldMs = 0): string {
  switch (problem.kind) {
    case 'send-failed':
      if (heldMs > 0) {
        const seconds = Math.ceil(heldMs / 1_000);
        return `The connection went before the server answered: your decision may or may not have been applied, or may still be in the next ${seconds} s, and this card shows it if it is. The buttons come back once that time has passed.`;
      }
      return `No answer came to your decision (${problem.message}). Check the connection and try again.`;
    case 'invalid-arguments':
      return `The server refused the edited arguments: ${problem.message}. ${EDIT_REFUSED_HINT}`;
    case 'refused':
      return problem.why === 'too-late' ? `The server refused your decision. ${refusedHint[problem.why]}` : `The server refused your decision (${problem.message}). ${refusedHint[problem.why]}`;
    case 'server-failed':
      return `The server failed while taking your decision (${problem.message}). If this card still shows its buttons, the call still waits: try again.`;
    case 'not-found':
      return 'The server has no such call waiting, so your decision was not applied. If this card still shows its buttons, try again; if the run moved on, it updates by itself.';
    case 'already-decided':
      // A timeout or a stop was nobody's decision.
      return `This call was already decided: ${decidedAs[problem.decision]}${problem.decision === 'allow' || problem.decision === 'deny' ? ` ${decidedWhere}` : ''}. This card updates as the run goes on.`;
  }
}
