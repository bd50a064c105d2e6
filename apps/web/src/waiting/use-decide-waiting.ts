import { useCallback, useState } from 'react';
import { heldFor, heldText, holdAfterUnknownAnswer } from '../chat/answer-holds';
import type { ConfirmResult, PersonDecision } from '../lib/api-types';
import { outcomeOf, problemOfError } from '../chat/send-decision';
import { tabDecisions } from '../chat/tab-decisions';
import { trpc } from '../lib/trpc';

export interface WaitingDecision {
  sessionId: string;
  approvalId: string;
  decision: PersonDecision;
}

/** What became of a decision sent from outside its chat: taken, or why not, in words to show the person. */
export type WaitingDecisionAnswer = { taken: true } | { taken: false; why: string };

/**
 * Decides one waiting call by its approval id, from outside its chat (the waiting list, a notification). The
 * chat showing the call learns of it from its run, and every list is read again.
 */
export function useDecideWaiting() {
  const utils = trpc.useUtils();
  const [sending, setSending] = useState<ReadonlySet<string>>(new Set());
  const decide = useCallback(
    async ({ sessionId, approvalId, decision }: WaitingDecision): Promise<WaitingDecisionAnswer> => {
      const held = heldFor(approvalId);
      if (held > 0) return { taken: false, why: heldText(held) };
      setSending((current) => new Set(current).add(approvalId));
      tabDecisions.record(approvalId, decision, 'sent');
      try {
        const result = await utils.client.chat.confirmTool.mutate({ sessionId, approvalId, decision, clientLabel: 'web' });
        tabDecisions.record(approvalId, decision, result.resolved ? 'accepted' : 'superseded');
        return result.resolved ? { taken: true } : { taken: false, why: whyNotTaken(result) };
      } catch (error) {
        // Refused (the call still waits), failed on the server, or no answer came: the card says which.
        holdAfterUnknownAnswer(approvalId, error);
        tabDecisions.record(approvalId, decision, outcomeOf(problemOfError(error, { edited: false })));
        return { taken: false, why: error instanceof Error ? error.message : String(error) };
      } finally {
        setSending((current) => {
          const next = new Set(current);
          next.delete(approvalId);
          return next;
        });
        void utils.chat.pending.invalidate({ sessionId });
        void utils.sessions.get.invalidate({ sessionId });
      }
    },
    [utils],
  );
  return { decide, sending };
}

function whyNotTaken(result: ConfirmResult): string {
  if (result.status === 'already-decided' && 'decision' in result && result.decision !== undefined) {
    return `it was decided already elsewhere (${result.decision === 'deny' ? 'denied' : 'allowed'})`;
  }
  return 'the call waits no more: it was decided, stopped or ended, or this server does not know it';
}
