import { useCallback, useEffect, useRef } from 'react';
import { approvalCardSelector, focusApprovalCard, isTextEntry } from './focus-approval';
import type { WaitingApprovals, WaitingApproval } from './use-waiting-approvals';

/**
 * Takes the person to waiting decisions: once when the app opens (the oldest one), and on Alt+N (the next one
 * after the card in focus). Going there opens the chat, scrolls the card into view and focuses it.
 */
export function useWaitingNavigation(waiting: WaitingApprovals, openChat: (sessionId: string) => void) {
  const stopFocusing = useRef<() => void>(() => undefined);
  const landed = useRef(false);

  /** `asked`: the person asked to go there (default); false for the landing when the app opens. */
  const goTo = useCallback(
    (approval: Pick<WaitingApproval, 'approvalId' | 'sessionId'>, asked = true) => {
      openChat(approval.sessionId);
      stopFocusing.current();
      stopFocusing.current = focusApprovalCard(approval.approvalId, { asked });
    },
    [openChat],
  );

  useEffect(() => {
    if (landed.current || !waiting.loaded) return;
    landed.current = true;
    const oldest = waiting.all[0];
    if (oldest !== undefined) goTo(oldest, false);
  }, [waiting, goTo]);

  const latest = useRef(waiting.all);
  latest.current = waiting.all;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!event.altKey || event.ctrlKey || event.metaKey || event.code !== 'KeyN') return;
      // In a text field Alt+N may type a character (Option+N on a Mac): the next letter must stay text.
      if (isTextEntry(document.activeElement)) return;
      // Behind a modal dialog (Settings) the jump would open another chat under it, whose "Confirm tool calls" the
      // dialog would then change, and focus a card the dialog covers.
      if (document.querySelector('[aria-modal="true"]') !== null) return;
      const next = nextAfterFocused(latest.current);
      if (next === undefined) return;
      event.preventDefault();
      goTo(next);
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
      stopFocusing.current();
    };
  }, [goTo]);

  return goTo;
}

function nextAfterFocused(all: readonly WaitingApproval[]): WaitingApproval | undefined {
  const focused = document.activeElement?.closest<HTMLElement>('article[data-approval-id]');
  const index = focused ? all.findIndex((approval) => focused.matches(approvalCardSelector(approval.approvalId))) : -1;
  return all[(index + 1) % Math.max(all.length, 1)];
}
