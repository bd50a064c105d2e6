/**
 * Whether a modal dialog (Settings) is open that `element` is not in. The page behind it is inert, and what is behind
 * it decides nothing on a key or a click all the same: a call the dialog covers is not one the person is looking at.
 */
export function behindModal(element: Element): boolean {
  return [...document.querySelectorAll('[aria-modal="true"]')].some((modal) => !modal.contains(element));
}
