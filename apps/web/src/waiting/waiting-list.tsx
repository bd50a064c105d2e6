import type { PersonDecision } from '../lib/api-types';
import { argumentPreview } from './argument-preview';
import type { WaitingApproval } from './use-waiting-approvals';

export const NEXT_WAITING_SHORTCUT = 'Alt+N';

export interface WaitingListProps {
  approvals: readonly WaitingApproval[];
  /** Approval ids whose decision is on its way. */
  sending: ReadonlySet<string>;
  onDecide: (approval: WaitingApproval, decision: PersonDecision) => void;
  onOpen: (approval: Pick<WaitingApproval, 'approvalId' | 'sessionId'>) => void;
}

/** Every call waiting for the person, across chats, oldest first: decided here or opened in its chat. */
export function WaitingList({ approvals, sending, onDecide, onOpen }: WaitingListProps) {
  if (approvals.length === 0) return null;
  return (
    <section className="waiting-list" aria-label="Waiting for you">
      <h2 className="waiting-heading" title={`${NEXT_WAITING_SHORTCUT} jumps to the next waiting decision`}>
        Waiting for you ({approvals.length})
        <kbd className="shortcut">{NEXT_WAITING_SHORTCUT}</kbd>
      </h2>
      <ul>
        {approvals.map((approval) => {
          const busy = sending.has(approval.approvalId);
          return (
            <li key={approval.approvalId} className="waiting-item" data-approval-id={approval.approvalId}>
              <button type="button" className="waiting-open" onClick={() => onOpen(approval)} title={`Open “${approval.title}”`}>
                <code className="tool-name">{approval.toolName}</code>
                <span className="waiting-chat">{approval.title}</span>
                <span className="waiting-preview">{argumentPreview(approval.toolName, approval.arguments)}</span>
              </button>
              <div className="waiting-actions">
                <button type="button" className="btn btn-small btn-allow" disabled={busy} aria-label={`Allow ${approval.toolName} in ${approval.title}`} onClick={() => onDecide(approval, 'allow')}>
                  Allow
                </button>
                <button type="button" className="btn btn-small btn-deny" disabled={busy} aria-label={`Deny ${approval.toolName} in ${approval.title}`} onClick={() => onDecide(approval, 'deny')}>
                  Deny
                </button>
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
