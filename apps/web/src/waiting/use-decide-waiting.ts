import { useCallback, useState } from 'react';
import type { ConfirmResult, PersonDecision } from '../lib/api-types';
import { outcomeOf, problemOfError } from '../chat/send-decision';
import { tabDecisions } from '../chat/tab-decisions';
import { trpc } from '../lib/trpc';

export interface WaitingDecision {
  sessionId: string;
  approvalId: string;
  decision: PersonDecision;
}

/**
 * Decides one waiting call by its approval id, from outside its chat (the waiting list, a notification). The
 * chat showing the call learns of it from its run, and every list is read again.
 */
export function useDecideWaiting() {
  const utils = trpc.useUtils();
  const [sending, setSending] = useState<ReadonlySet<string>>(new Set());
  const decide = useCallback(
    async ({ sessionId, approvalId, decision }: WaitingDecision): Promise<ConfirmResult | undefined> => {
      setSending((current) => new Set(current).add(approvalId));
      tabDecisions.record(approvalId, decision, 'sent');
      try {
        const result = await utils.client.chat.confirmTool.mutate({ sessionId, approvalId, decision, clientLabel: 'web' });
        tabDecisions.record(approvalId, decision, result.resolved ? 'accepted' : 'superseded');
        return result;
      } catch (error) {
        // Refused (the call still waits), failed on the server, or no answer came: the card says which.
        tabDecisions.record(approvalId, decision, outcomeOf(problemOfError(error, { edited: false })));
        return undefined;
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
