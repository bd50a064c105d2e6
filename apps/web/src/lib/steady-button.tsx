import { useEffect, useRef, useState, type ButtonHTMLAttributes, type MouseEvent, type PointerEvent } from 'react';

/** How long a decision button ignores pointer clicks after it appears: a click meant for what was there lands on nothing. */
export const ARMING_MS = 600;

export interface SteadyButtonProps extends Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'onClick'> {
  onClick: () => void;
  /** Told when a pointer click was ignored because the button had just appeared or moved under the pointer. */
  onUnsteadyClick?: () => void;
}

interface Spot {
  left: number;
  top: number;
}

/**
 * A button for a decision that must be the person's: a pointer click counts only once the button has been on
 * the page for a moment (`aria-disabled` meanwhile), and only where the person aimed it. For a mouse that is where
 * the button was when the pointer last moved over it; a button that slid under a still pointer (the list closed
 * up after the item above was decided, a new card pushed the page) ignores the click, and the next one counts.
 * Keys go through unchanged: a focused button was reached on purpose.
 */
export function SteadyButton({ onClick, onUnsteadyClick, disabled, ...props }: SteadyButtonProps) {
  const armed = useArmedAfter(ARMING_MS);
  const aimedAt = useRef<Spot | null>(null);
  const aim = (event: PointerEvent<HTMLButtonElement>) => {
    aimedAt.current = spotOf(event.currentTarget);
  };
  const click = (event: MouseEvent<HTMLButtonElement>) => {
    // detail 0: a key (Enter, Space) or a script, not a pointer.
    if (event.detail === 0) return onClick();
    if (!armed) return onUnsteadyClick?.();
    const now = spotOf(event.currentTarget);
    const aimed = aimedAt.current;
    // The next click at this spot is aimed: the person has now seen the button where it is.
    aimedAt.current = now;
    if (aimed === null || !sameSpot(aimed, now)) return onUnsteadyClick?.();
    onClick();
  };
  return (
    <button
      type="button"
      {...props}
      disabled={disabled}
      aria-disabled={armed ? undefined : true}
      data-arming={armed ? undefined : ''}
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

function useArmedAfter(ms: number): boolean {
  const [armed, setArmed] = useState(false);
  useEffect(() => {
    const timer = window.setTimeout(() => setArmed(true), ms);
    return () => window.clearTimeout(timer);
  }, [ms]);
  return armed;
}

function spotOf(element: Element): Spot {
  const { left, top } = element.getBoundingClientRect();
  return { left, top };
}

/** Within a pixel: sub-pixel layout may round differently from one read to the next. */
function sameSpot(a: Spot, b: Spot): boolean {
  return Math.abs(a.left - b.left) < 1 && Math.abs(a.top - b.top) < 1;
}
