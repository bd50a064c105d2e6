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
 * Watches where `element` is and calls `moved` whenever a change to the page moved it (a node added or removed, text
 * streamed in, an attribute) or the page's own scroll (scrollByPage): the spots of all watched elements are read
 * right after each. Any other scroll or a resize is the person's (their spots are read in the next frame and noted),
 * and so is a move a change made within a moment of their own wheel, key or finger. Two scrolls look like the
 * person's and are the page's: a scroller the browser pulled back because what it scrolls shrank under where it was
 * scrolled to (a box closing below, whatever closed it), and the browser scrolling an element it focused into view
 * (unless the person's own key or jump did that). One observer serves every watched element, and only while there
 * is one.
 */
export function watchSpot(element: Element, moved: () => void): SpotWatch {
  const entry: Watched = { spot: spotOf(element), scrolled: scrolledBy(element), settledAt: performance.now(), moved };
  watched.set(element, entry);
  // Only where none is noted: a pull-back in this same change is for the next read to see.
  noteScrollers(element, new Set(), null, false);
  if (watched.size === 1) startObserving();
  return {
    settledAt: () => {
      // All of them: a pull-back noticed here is told to each element it moved.
      checkAll('person');
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
 * 'page': read right after the page scrolled itself (scrollByPage), or with a scroller above the element pulled back
 * since the last read, so any move re-arms. 'focus': read right after the browser scrolled an element it focused into
 * view: a move re-arms unless within a moment of the person's own wheel, key, finger or a jump they asked for.
 */
type MovedBy = 'change' | 'person' | 'page' | 'focus';

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
  if (by === 'change' && onlyScrolled) return;
  if ((by === 'change' || by === 'focus') && performance.now() < personMovingUntil) return;
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

/**
 * Where each scrolling ancestor of a watched element (the page's root too) stood at the last read: how far it was
 * scrolled and how far it could scroll. Only those scrolled some way: one at its start cannot be pulled back.
 */
interface ScrollerState {
  scrolled: Spot;
  room: Spot;
}
const scrollers = new WeakMap<Element, ScrollerState>();

/**
 * Notes where each ancestor of `element` not in `seen` stands now (all of them when `update`, else only those not
 * noted yet), and adds to `pulled` those the browser pulled back since the last read: scrolled past the end of what
 * they now scroll, which shrank, so they stand at that end. The person cannot scroll past the end; the page's change
 * shrank it (a box closed below, a result folded), whatever did that, and moved everything above.
 */
function noteScrollers(element: Element, seen: Set<Element>, pulled: Set<Element> | null, update = true): void {
  for (let ancestor = element.parentElement; ancestor !== null && !seen.has(ancestor); ancestor = ancestor.parentElement) {
    seen.add(ancestor);
    const before = scrollers.get(ancestor);
    if (before !== undefined && !update) continue;
    const scrolled = { left: ancestor.scrollLeft, top: ancestor.scrollTop };
    if (scrolled.left === 0 && scrolled.top === 0 && before === undefined) continue;
    const room = { left: ancestor.scrollWidth - ancestor.clientWidth, top: ancestor.scrollHeight - ancestor.clientHeight };
    if (before !== undefined && pulled !== null && (pulledBack(before, scrolled, room, 'top') || pulledBack(before, scrolled, room, 'left'))) pulled.add(ancestor);
    if (scrolled.left === 0 && scrolled.top === 0) scrollers.delete(ancestor);
    else scrollers.set(ancestor, { scrolled, room });
  }
}

function pulledBack(before: ScrollerState, scrolled: Spot, room: Spot, axis: keyof Spot): boolean {
  return room[axis] < before.room[axis] - 1 && before.scrolled[axis] > room[axis] + 1 && scrolled[axis] >= room[axis] - 1;
}

/** An element focused and how far its ancestors were scrolled as it took the focus, before the browser scrolled it into view. */
let focusing: { element: Element; scrolled: Spot } | null = null;

function checkAll(by: MovedBy): void {
  const pulled = new Set<Element>();
  const seen = new Set<Element>();
  for (const element of watched.keys()) noteScrollers(element, seen, pulled);
  if (focusing !== null) {
    // Scrolled since it took the focus, within the same task: the browser brought it into view.
    if (!sameSpot(scrolledBy(focusing.element), focusing.scrolled) && by !== 'page') by = 'focus';
    focusing = null;
  }
  for (const [element, entry] of watched) recheck(element, entry, pulled.size > 0 && within(element, pulled) ? 'page' : by);
}

function within(element: Element, ancestors: Set<Element>): boolean {
  for (let ancestor = element.parentElement; ancestor !== null; ancestor = ancestor.parentElement) if (ancestors.has(ancestor)) return true;
  return false;
}

/** An element takes the focus: the browser may scroll it into view right after, which the read that follows tells. */
function focused(event: FocusEvent): void {
  if (!(event.target instanceof Element)) return;
  focusing = { element: event.target, scrolled: scrolledBy(event.target) };
  queueMicrotask(() => checkAll('person'));
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
  window.addEventListener('focusin', focused, { capture: true });
}

function stopObserving(): void {
  observer?.disconnect();
  observer = null;
  window.removeEventListener('scroll', schedule, { capture: true });
  window.removeEventListener('resize', schedule);
  for (const type of PERSON_INPUT) window.removeEventListener(type, movedByPerson, { capture: true });
  window.removeEventListener('focusin', focused, { capture: true });
  focusing = null;
}

export function spotOf(element: Element): Spot {
  const { left, top } = element.getBoundingClientRect();
  return { left, top };
}

/** Within a pixel: sub-pixel layout may round differently from one read to the next. */
export function sameSpot(a: Spot, b: Spot): boolean {
  return Math.abs(a.left - b.left) < 1 && Math.abs(a.top - b.top) < 1;
}
