import { useId, useMemo, useState } from 'react';
import { proseText } from '../chat/prose-text';
import { toVisibleText } from '@airlock/core';
import { UnsteadyClickHint } from '../chat/decision-controls';
import { useHeldEdits } from '../chat/held-edits';
import { VisibleTextView } from '../chat/tool-arguments';
import { RuleAsked } from '../rules/rule-asked';
import type { PersonDecision } from '../lib/api-types';
import { SteadyButton, type UnsteadyReason } from '../lib/steady-button';
import { callPreview, namePreview } from './argument-preview';
import type { WaitingApproval } from './use-waiting-approvals';

export const NEXT_WAITING_SHORTCUT = 'Alt+N';

export interface WaitingListProps {
  approvals: readonly WaitingApproval[];
  /** Approval ids whose decision is on its way. */
  sending: ReadonlySet<string>;
  onDecide: (approval: WaitingApproval, decision: PersonDecision) => void;
  onOpen: (approval: Pick<WaitingApproval, 'approvalId' | 'sessionId'>) => void;
}

/**
 * Every call waiting for the person, across chats, oldest first: decided here or opened in its chat. A call whose
 * arguments do not all fit in its one-line preview is allowed only from its card, where all of it is shown; so is
 * one holding an argument its tool's schema does not declare (the card marks it), one whose tool may run with defaults
 * it does not show (the card says why), one whose card holds an edit (an Allow here would run the proposal, not
 * the edit), and one a deny rule asked about (said here as on its card: "Why you are asked").
 */
export function WaitingList({ approvals, sending, onDecide, onOpen }: WaitingListProps) {
  if (approvals.length === 0) return null;
  return (
    <section className="waiting-list" aria-label="Waiting for you">
      <h2 className="waiting-heading" title={`${NEXT_WAITING_SHORTCUT} jumps to the next waiting decision`}>
        Waiting for you ({approvals.length})
        <kbd className="shortcut">{NEXT_WAITING_SHORTCUT}</kbd>
      </h2>
      <ul>
        {approvals.map((approval) => (
          <WaitingItem key={approval.approvalId} approval={approval} busy={sending.has(approval.approvalId)} onDecide={onDecide} onOpen={onOpen} />
        ))}
      </ul>
    </section>
  );
}

interface WaitingItemProps extends Pick<WaitingListProps, 'onDecide' | 'onOpen'> {
  approval: WaitingApproval;
  busy: boolean;
}

function WaitingItem({ approval, busy, onDecide, onOpen }: WaitingItemProps) {
  const [ignoredClick, setIgnoredClick] = useState<UnsteadyReason | null>(null);
  const edited = useHeldEdits().has(approval.approvalId);
  const askedByDenyRule = approval.exactGrantsOnly === true;
  // A waiting call's arguments never change under its id, and the list renders again with every change of the app.
  const preview = useMemo(() => callPreview(approval.toolName, approval.arguments, { declared: approval.tool?.declared, schema: approval.inputSchema, unshownDefaults: approval.tool?.unshownDefaults }), [approval.approvalId, approval.inputSchema]);
  const toolName = useMemo(() => toVisibleText(approval.toolName, { singleLine: true }), [approval.toolName]);
  // Two MCP servers may give tools one name: the entry names the server, as the card's badge does.
  const server = approval.tool?.source.startsWith('mcp:') === true ? approval.tool.source.slice('mcp:'.length) : undefined;
  const serverText = useMemo(() => (server === undefined ? undefined : toVisibleText(server, { singleLine: true })), [server]);
  const decide = (decision: PersonDecision) => {
    setIgnoredClick(null);
    onDecide(approval, decision);
  };
  // Several calls of one tool in one chat are told apart by name: each button names its own call, its preview cut
  // short, and is described by the whole preview, which a screen reader reads after it.
  const where = `${approval.toolName} “${namePreview(preview.text)}”${server === undefined ? '' : ` of the MCP server ${server}`} in ${proseText(approval.title)}`;
  const previewId = useId();
  return (
    <li className="waiting-item" data-approval-id={approval.approvalId}>
      <button type="button" className="waiting-open" onClick={() => onOpen(approval)} title={`Open “${proseText(approval.title)}”`}>
        <code className="tool-name">
          <VisibleTextView text={toolName} />
        </code>
        {serverText !== undefined && (
          <span className="badge badge-source" title="The MCP server this tool belongs to">
            MCP · <VisibleTextView text={serverText} />
          </span>
        )}
        <span className="waiting-chat">{proseText(approval.title)}</span>
        <span className="waiting-preview" id={previewId}>
          {preview.text}
        </span>
      </button>
      <div className="waiting-actions">
        {preview.whole && !edited && !askedByDenyRule ? (
          <SteadyButton className="btn btn-small btn-allow" disabled={busy} aria-label={`Allow ${where}`} aria-describedby={previewId} onClick={() => decide('allow')} onUnsteadyClick={setIgnoredClick}>
            Allow
          </SteadyButton>
        ) : (
          <button
            type="button"
            className="btn btn-small"
            aria-label={`Review ${where}`}
            aria-describedby={previewId}
            title={reviewReason(edited, askedByDenyRule)}
            onClick={() => onOpen(approval)}
          >
            Review…
          </button>
        )}
        <SteadyButton className="btn btn-small btn-deny" disabled={busy} aria-label={`Deny ${where}`} aria-describedby={previewId} onClick={() => decide('deny')} onUnsteadyClick={setIgnoredClick}>
          Deny
        </SteadyButton>
      </div>
      {askedByDenyRule && approval.askedBecause !== undefined && <RuleAsked asked={approval.askedBecause} />}
      {ignoredClick !== null && !busy && <UnsteadyClickHint reason={ignoredClick} />}
    </li>
  );
}

/** Why a waiting call offers Review, not Allow: the most pressing reason, as its button's title. */
function reviewReason(edited: boolean, askedByDenyRule: boolean): string {
  if (askedByDenyRule) return 'A deny rule asked about this call: read why on its card and decide there';
  if (edited) return 'You are editing this call on its card: allow your edit there';
  return 'Not all of this call fits here: allow it from its card';
}
