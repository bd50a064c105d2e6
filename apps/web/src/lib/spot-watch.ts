/** Where an element is on the screen. */
export interface Spot {
  left: number;
  top: number;
}

export interface SpotWatch {
  /** When the element came to the spot it is at now (performance.now() time); checks the spot first. */
  settledAt(): number;
  stop(): void;
}

interface Watched {
  spot: Spot;
  settledAt: number;
  moved: () => void;
}

const watched = new Map<Element, Watched>();
let observer: MutationObserver | null = null;
let pending = false;
/** Until when a move is the person's own doing (a wheel, a key, a finger, a jump they asked for): not a surprise. */
let personMovingUntil = 0;
const PERSON_MOVE_MS = 300;

/** Layout is about to move because the person asked (scrolling to a card they chose): moves now re-arm nothing. */
export function movedByPerson(): void {
  personMovingUntil = performance.now() + PERSON_MOVE_MS;
}

/**
 * Watches where `element` is and calls `moved` whenever the page moved it: after any change to the page (a node added
 * or removed, text streamed in, an attribute), a scroll or a resize, the spots of all watched elements are read once,
 * in the next frame. A move within a moment of the person's own input (a wheel, a key, a finger) is theirs and is
 * only noted. One observer serves every watched element, and only while there is one.
 */
export function watchSpot(element: Element, moved: () => void): SpotWatch {
  const entry: Watched = { spot: spotOf(element), settledAt: performance.now(), moved };
  watched.set(element, entry);
  if (watched.size === 1) startObserving();
  return {
    settledAt: () => {
      recheck(element, entry);
      return entry.settledAt;
    },
    stop: () => {
      if (watched.get(element) !== entry) return;
      watched.delete(element);
      if (watched.size === 0) stopObserving();
    },
  };
}

function recheck(element: Element, entry: Watched): void {
  const spot = spotOf(element);
  if (sameSpot(spot, entry.spot)) return;
  entry.spot = spot;
  // The person scrolling sees where things go; a move the page made on its own is a surprise.
  if (performance.now() < personMovingUntil) return;
  entry.settledAt = performance.now();
  entry.moved();
}

function checkAll(): void {
  pending = false;
  for (const [element, entry] of watched) recheck(element, entry);
}

function schedule(): void {
  if (pending) return;
  pending = true;
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(checkAll);
  else setTimeout(checkAll, 16);
}

const PERSON_INPUT = ['wheel', 'touchmove', 'keydown'] as const;

function startObserving(): void {
  observer = new MutationObserver(schedule);
  observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  window.addEventListener('scroll', schedule, { capture: true, passive: true });
  window.addEventListener('resize', schedule, { passive: true });
  for (const type of PERSON_INPUT) window.addEventListener(type, movedByPerson, { capture: true, passive: true });
}

function stopObserving(): void {
  observer?.disconnect();
  observer = null;
  window.removeEventListener('scroll', schedule, { capture: true });
  window.removeEventListener('resize', schedule);
  for (const type of PERSON_INPUT) window.removeEventListener(type, movedByPerson, { capture: true });
}

export function spotOf(element: Element): Spot {
  const { left, top } = element.getBoundingClientRect();
  return { left, top };
}

/** Within a pixel: sub-pixel layout may round differently from one read to the next. */
export function sameSpot(a: Spot, b: Spot): boolean {
  return Math.abs(a.left - b.left) < 1 && Math.abs(a.top - b.top) < 1;
}
