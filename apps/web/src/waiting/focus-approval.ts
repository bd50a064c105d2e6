import { movedByPerson } from '../lib/spot-watch';

/** The card of a waiting call, as the transcript renders it. */
export function approvalCardSelector(approvalId: string): string {
  return `article[data-approval-id="${CSS.escape(approvalId)}"]`;
}

/** How long a jump waits for its card to show up; past that, the person has moved on. */
const WAIT_FOR_CARD_MS = 1500;

/** Whether the element takes typed text: a key pressed there is the person's writing, never a decision. */
export function isTextEntry(element: Element | null): boolean {
  if (!(element instanceof HTMLElement)) return false;
  if (element.isContentEditable) return true;
  if (element instanceof HTMLTextAreaElement || element instanceof HTMLSelectElement) return true;
  if (!(element instanceof HTMLInputElement)) return false;
  return !['button', 'checkbox', 'radio', 'submit', 'reset', 'image', 'file', 'range', 'color'].includes(element.type);
}

/**
 * Scrolls the card of `approvalId` into view and focuses it, as soon as it is on the page (its chat may still be
 * loading). It never takes focus from a text field, nor from where the person put it since the jump began (a
 * keystroke meant for the message box would decide the call), and the wait ends after a moment. `asked`: the person
 * asked to go there, so a text field in focus is left first. Returns a function that stops waiting.
 */
export function focusApprovalCard(approvalId: string, { asked = false }: { asked?: boolean } = {}): () => void {
  const selector = approvalCardSelector(approvalId);
  // Asked for (a notification, the waiting list): the text field left behind keeps nothing typed until the card
  // shows, so what the person types meanwhile is lost rather than read as a decision.
  if (asked && isTextEntry(document.activeElement)) (document.activeElement as HTMLElement).blur();
  const focusedAtStart = document.activeElement;
  const tryFocus = () => {
    const card = document.querySelector<HTMLElement>(selector);
    if (card === null) return false;
    // Scrolled for the person, who looks where it goes: the card's buttons need not re-arm.
    movedByPerson();
    card.scrollIntoView({ block: 'center' });
    const moved = document.activeElement !== focusedAtStart && document.activeElement !== document.body;
    if (!moved && !isTextEntry(document.activeElement)) card.focus({ preventScroll: true });
    return true;
  };
  if (tryFocus()) return () => undefined;
  const observer = new MutationObserver(() => {
    if (tryFocus()) stop();
  });
  const timer = window.setTimeout(() => stop(), WAIT_FOR_CARD_MS);
  const stop = () => {
    observer.disconnect();
    window.clearTimeout(timer);
  };
  observer.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-approval-id'] });
  return stop;
}
