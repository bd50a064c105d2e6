import { useEffect, useLayoutEffect, useRef, useState, type ButtonHTMLAttributes, type KeyboardEvent, type MouseEvent, type PointerEvent } from 'react';
import { behindModal } from './behind-modal';
import { shownWhole } from './shown-whole';
import { sameSpot, spotOf, watchSpot, type Spot, type SpotWatch } from './spot-watch';

/** How long a decision button ignores pointer clicks after it appears or moves: a click meant for what was there lands on nothing. */
export const ARMING_MS = 600;

/**
 * Why a click was ignored: the button had just appeared or moved, what it decides had just changed, or it was a
 * space or Enter after letters typed on the button (someone typing a message who thinks a text box has the focus), or
 * a space or Enter on the button while it was off screen (it is brought into view).
 */
export type UnsteadyReason = 'moved' | 'changed' | 'typing' | 'unseen';

export interface SteadyButtonProps extends Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'onClick'> {
  onClick: () => void;
  /** Told when a click was ignored, and why. */
  onUnsteadyClick?: (reason: UnsteadyReason) => void;
  /**
   * What a click decides, as a key (the ids of the calls an "Allow all" covers). When it changes the button re-arms
   * as after a move, and for keys too: a click or an Enter meant for what was there before decides nothing. Default
   * none: the button decides one fixed thing.
   */
  decides?: string;
}

/**
 * A button for a decision that must be the person's. A pointer click counts only once the button has stood where it
 * is for a moment (`aria-disabled` meanwhile), so one meant for what was there before — the item above in a list
 * that closed up after a decision, a link a new card pushed away — lands on nothing, however the pointer moved.
 * And it counts only where the person aimed: for a mouse, where the button was when the pointer last moved over it
 * (something that covered it and went away leaves a still pointer on it); for touch and pen, where the finger came
 * down. Keys go through at once (a focused button was reached on purpose), except a space or Enter after a letter
 * typed on the button since it took the focus: that is someone typing ("no way") into what they took for a text
 * box, and it decides nothing until the focus leaves and comes back; and one on a button off screen, which is brought
 * into view (the person scrolled away from it and pressed space to scroll on). A button whose decision covers what may change
 * under it (`decides`) re-arms when that changes, for pointer and keys alike. Behind an open modal dialog it decides
 * nothing at all.
 */
export function SteadyButton({ onClick, onUnsteadyClick, decides, disabled, onKeyDown, onFocus, ...props }: SteadyButtonProps) {
  const button = useRef<HTMLButtonElement>(null);
  const watch = useRef<SpotWatch | null>(null);
  const aimedAt = useRef<Spot | null>(null);
  /** Where and when the last pointer click was ignored: a fresh click there, a moment after, is aimed (see `click`). */
  const ignoredAt = useRef<{ spot: Spot; at: number } | null>(null);
  const rearm = useRef<() => void>(() => undefined);
  const decided = useRef(decides);
  const changedAt = useRef(Number.NEGATIVE_INFINITY);
  const typedOn = useRef(false);
  const [armed, setArmed] = useState(false);

  useEffect(() => {
    const element = button.current;
    if (element === null) return;
    let timer = 0;
    const arm = () => {
      // At once, in the frame the move was seen, not at React's next render: nothing may click it meanwhile.
      element.setAttribute('aria-disabled', 'true');
      element.setAttribute('data-arming', '');
      setArmed(false);
      window.clearTimeout(timer);
      timer = window.setTimeout(() => setArmed(true), ARMING_MS);
    };
    arm();
    rearm.current = arm;
    watch.current = watchSpot(element, arm);
    return () => {
      window.clearTimeout(timer);
      rearm.current = () => undefined;
      watch.current?.stop();
      watch.current = null;
    };
  }, []);

  // In the commit that shows the new content, before anything can click it.
  useLayoutEffect(() => {
    if (decided.current === decides) return;
    decided.current = decides;
    changedAt.current = performance.now();
    rearm.current();
  }, [decides]);

  const aim = (event: PointerEvent<HTMLButtonElement>) => {
    aimedAt.current = spotOf(event.currentTarget);
  };
  const keyDown = (event: KeyboardEvent<HTMLButtonElement>) => {
    if (isTyping(event)) typedOn.current = true;
    onKeyDown?.(event);
  };
  const click = (event: MouseEvent<HTMLButtonElement>) => {
    if (behindModal(event.currentTarget)) return;
    const changed = performance.now() - changedAt.current < ARMING_MS;
    // detail 0: a key (Enter, Space) or a script, not a pointer.
    if (event.detail === 0) {
      if (typedOn.current) return onUnsteadyClick?.('typing');
      // Focus stays on a button the person scrolled away from, and space is also how a page is scrolled on.
      if (!shownWhole(event.currentTarget)) {
        event.currentTarget.scrollIntoView({ block: 'nearest' });
        return onUnsteadyClick?.('unseen');
      }
      return changed ? onUnsteadyClick?.('changed') : onClick();
    }
    const settledAt = watch.current?.settledAt() ?? performance.now();
    const now = spotOf(event.currentTarget);
    const at = performance.now();
    // An ignored click at this spot is aim for a later one only if that is a click of its own (not the second of a
    // double-click, event.detail 2), a moment after: the person has then seen the button where it is, and the note
    // that nothing was decided. Taken at once, the second click of a double-click on a card that came under a still
    // pointer allowed its call.
    const ignored = ignoredAt.current;
    const aimed = (aimedAt.current !== null && sameSpot(aimedAt.current, now)) || (ignored !== null && event.detail === 1 && at - ignored.at >= ARMING_MS && sameSpot(ignored.spot, now));
    const refuse = (reason: UnsteadyReason) => {
      ignoredAt.current = { spot: now, at };
      onUnsteadyClick?.(reason);
    };
    if (changed) return refuse('changed');
    if (at - settledAt < ARMING_MS || !aimed) return refuse('moved');
    // The next click at this spot is aimed: the person has seen the button where it is.
    aimedAt.current = now;
    onClick();
  };
  return (
    <button
      type="button"
      {...props}
      ref={button}
      disabled={disabled}
      aria-disabled={armed ? undefined : true}
      data-arming={armed ? undefined : ''}
      onKeyDown={keyDown}
      onFocus={(event) => {
        typedOn.current = false;
        onFocus?.(event);
      }}
      onPointerMove={(event) => {
        if (event.pointerType === 'mouse') aim(event);
      }}
      // Touch and pen have no hover: the spot where the finger came down is the aim.
      onPointerDown={(event) => {
        if (event.pointerType !== 'mouse') aim(event);
      }}
      onClick={click}
    />
  );
}

/** A key that writes a character other than a space: typing, not pressing a button. */
function isTyping(event: KeyboardEvent): boolean {
  return [...event.key].length === 1 && event.key !== ' ' && !event.ctrlKey && !event.metaKey && !event.altKey;
}
