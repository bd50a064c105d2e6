import { useEffect, useRef, useState, type ButtonHTMLAttributes, type MouseEvent, type PointerEvent } from 'react';
import { sameSpot, spotOf, watchSpot, type Spot, type SpotWatch } from './spot-watch';

/** How long a decision button ignores pointer clicks after it appears or moves: a click meant for what was there lands on nothing. */
export const ARMING_MS = 600;

export interface SteadyButtonProps extends Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'onClick'> {
  onClick: () => void;
  /** Told when a pointer click was ignored because the button had just appeared or moved. */
  onUnsteadyClick?: () => void;
}

/**
 * A button for a decision that must be the person's. A pointer click counts only once the button has stood where it
 * is for a moment (`aria-disabled` meanwhile), so one meant for what was there before — the item above in a list
 * that closed up after a decision, a link a new card pushed away — lands on nothing, however the pointer moved.
 * And it counts only where the person aimed: for a mouse, where the button was when the pointer last moved over it
 * (something that covered it and went away leaves a still pointer on it); for touch and pen, where the finger came
 * down. Keys go through unchanged: a focused button was reached on purpose.
 */
export function SteadyButton({ onClick, onUnsteadyClick, disabled, ...props }: SteadyButtonProps) {
  const button = useRef<HTMLButtonElement>(null);
  const watch = useRef<SpotWatch | null>(null);
  const aimedAt = useRef<Spot | null>(null);
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
    watch.current = watchSpot(element, arm);
    return () => {
      window.clearTimeout(timer);
      watch.current?.stop();
      watch.current = null;
    };
  }, []);

  const aim = (event: PointerEvent<HTMLButtonElement>) => {
    aimedAt.current = spotOf(event.currentTarget);
  };
  const click = (event: MouseEvent<HTMLButtonElement>) => {
    // detail 0: a key (Enter, Space) or a script, not a pointer.
    if (event.detail === 0) return onClick();
    const settledAt = watch.current?.settledAt() ?? performance.now();
    const now = spotOf(event.currentTarget);
    const aimed = aimedAt.current;
    // The next click at this spot is aimed: the person has now seen the button where it is.
    aimedAt.current = now;
    if (performance.now() - settledAt < ARMING_MS || aimed === null || !sameSpot(aimed, now)) return onUnsteadyClick?.();
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
