/** The card of a waiting call, as the transcript renders it. */
export function approvalCardSelector(approvalId: string): string {
  return `article[data-approval-id="${CSS.escape(approvalId)}"]`;
}

/**
 * Scrolls the card of `approvalId` into view and focuses it, as soon as it is on the page (its chat may still be
 * loading). Returns a function that stops waiting.
 */
export function focusApprovalCard(approvalId: string): () => void {
  const selector = approvalCardSelector(approvalId);
  const tryFocus = () => {
    const card = document.querySelector<HTMLElement>(selector);
    if (card === null) return false;
    card.scrollIntoView({ block: 'center' });
    card.focus({ preventScroll: true });
    return true;
  };
  if (tryFocus()) return () => undefined;
  const observer = new MutationObserver(() => {
    if (tryFocus()) observer.disconnect();
  });
  observer.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-approval-id'] });
  return () => observer.disconnect();
}
