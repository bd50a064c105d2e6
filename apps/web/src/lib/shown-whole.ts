/**
 * Whether all of `element`'s height is on screen: inside the window and inside every box around it that clips (the
 * transcript, the waiting list). A key on a decision is taken only then: an element keeps the focus when the person
 * scrolls away from it, and a key read as its own would decide what they cannot see.
 */
export function shownWhole(element: HTMLElement): boolean {
  const { top, bottom } = element.getBoundingClientRect();
  let from = 0;
  let to = window.innerHeight;
  for (let around = element.parentElement; around !== null; around = around.parentElement) {
    if (getComputedStyle(around).overflowY === 'visible') continue;
    const box = around.getBoundingClientRect();
    from = Math.max(from, box.top);
    to = Math.min(to, box.bottom);
  }
  return top >= from && bottom <= to;
}
