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
  /** How far what it scrolls with was scrolled when `spot` was read (see scrolledBy). */
  scrolled: Spot;
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
 * Scrolls `scroller` to `top` for the page's own reasons (following new output to the bottom). Unlike the person's
 * scroll, which they watch, this slides what is under a still pointer or finger, so each watched element it moved
 * is told, whatever the person did a moment before. Spots are read before the scroll as well, so a move before it is
 * taken for what it was (a scroll of the person's not yet read is only noted), and right after it, before anything
 * can click.
 */
export function scrollByPage(scroller: Element, top: number): void {
  if (watched.size === 0) {
    scroller.scrollTop = top;
    return;
  }
  // A change not yet delivered to the observer is read as one here.
  checkAll((observer?.takeRecords().length ?? 0) > 0 ? 'change' : 'person');
  scroller.scrollTop = top;
  checkAll('page');
}

/**
 * The page has just moved things by its own doing in a way the observer takes for a scroll (a scroller the browser
 * pulled back when what it scrolls shrank): each watched element that moved since its spot was last read is told.
 */
export function movedByPage(): void {
  checkAll('page');
}

/**
 * Watches where `element` is and calls `moved` whenever a change to the page moved it (a node added or removed, text
 * streamed in, an attribute) or the page's own scroll (scrollByPage): the spots of all watched elements are read
 * right after each. Any other scroll or a resize is the person's (their spots are read in the next frame and noted),
 * and so is a move a change made within a moment of their own wheel, key or finger. One observer serves every watched element, and only while there is one.
 */
export function watchSpot(element: Element, moved: () => void): SpotWatch {
  const entry: Watched = { spot: spotOf(element), scrolled: scrolledBy(element), settledAt: performance.now(), moved };
  watched.set(element, entry);
  if (watched.size === 1) startObserving();
  return {
    settledAt: () => {
      recheck(element, entry, 'person');
      return entry.settledAt;
    },
    stop: () => {
      if (watched.get(element) !== entry) return;
      watched.delete(element);
      if (watched.size === 0) stopObserving();
    },
  };
}

/**
 * What a move seen in a read is taken for. 'change': read right after a change to the page, so a move is the page's
 * doing and re-arms. 'person': read after a scroll or a resize, or at a click, a move is only noted: what is left is
 * the person scrolling, who sees where things go (the click's own check of where the pointer aimed still applies).
 * 'page': read right after the page scrolled itself (scrollByPage), so any move re-arms.
 */
type MovedBy = 'change' | 'person' | 'page';

/**
 * Reads the element's spot and tells it when the move is not the person's (see MovedBy). After a change, a scroll is
 * told apart by where the element stands in what it scrolls with, not by its scroll event: that comes a frame later,
 * and a change in between (a countdown ticking, another button arming) read the scroll as the page's move and
 * re-armed the button.
 */
function recheck(element: Element, entry: Watched, by: MovedBy): void {
  const spot = spotOf(element);
  const scrolled = scrolledBy(element);
  const before = { spot: entry.spot, scrolled: entry.scrolled };
  entry.spot = spot;
  entry.scrolled = scrolled;
  if (sameSpot(spot, before.spot)) return;
  const onlyScrolled = sameSpot(inContent(spot, scrolled), inContent(before.spot, before.scrolled));
  if (by === 'person') return;
  if (by === 'change' && (onlyScrolled || performance.now() < personMovingUntil)) return;
  entry.settledAt = performance.now();
  entry.moved();
}

/** Where a spot read with its scrolling ancestors scrolled by `scrolled` stands in the content they scroll. */
function inContent(spot: Spot, scrolled: Spot): Spot {
  return { left: spot.left + scrolled.left, top: spot.top + scrolled.top };
}

/** How far the element's ancestors (the page's root too) are scrolled, summed: a scroll moves it by as much. */
function scrolledBy(element: Element): Spot {
  const scrolled = { left: 0, top: 0 };
  for (let ancestor = element.parentElement; ancestor !== null; ancestor = ancestor.parentElement) {
    scrolled.left += ancestor.scrollLeft;
    scrolled.top += ancestor.scrollTop;
  }
  return scrolled;
}

function checkAll(by: MovedBy): void {
  for (const [element, entry] of watched) recheck(element, entry, by);
}

function afterChange(): void {
  checkAll('change');
}

function afterScroll(): void {
  pending = false;
  checkAll('person');
}

function schedule(): void {
  if (pending) return;
  pending = true;
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(afterScroll);
  else setTimeout(afterScroll, 16);
}

const PERSON_INPUT = ['wheel', 'touchmove', 'keydown'] as const;

function startObserving(): void {
  // Read at once after a change (the microtask after it): a button the change moved is disarmed before anything can
  // click it, not a frame later. Scrolls and resizes, many a frame, wait for the next one.
  observer = new MutationObserver(afterChange);
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
