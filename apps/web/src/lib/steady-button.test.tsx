import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ARMING_MS, SteadyButton } from './steady-button';

afterEach(cleanup);
beforeEach(() => {
  vi.useFakeTimers();
  return () => vi.useRealTimers();
});

/** Where the button is on the page; layout is the test's to move. */
let spot = { left: 10, top: 200 };

function renderButton() {
  const decided = vi.fn();
  const ignored = vi.fn();
  render(
    <SteadyButton onClick={decided} onUnsteadyClick={ignored}>
      Allow
    </SteadyButton>,
  );
  const button = screen.getByRole('button', { name: 'Allow' });
  vi.spyOn(button, 'getBoundingClientRect').mockImplementation(() => ({ ...spot, right: spot.left + 60, bottom: spot.top + 24, width: 60, height: 24, x: spot.left, y: spot.top, toJSON: () => ({}) }));
  return { button, decided, ignored };
}

const mouseClick = (button: HTMLElement) => fireEvent.click(button, { detail: 1 });
const mouseMove = (button: HTMLElement) => fireEvent.pointerMove(button, { pointerType: 'mouse' });
const armed = () =>
  act(() => {
    vi.advanceTimersByTime(ARMING_MS);
  });

describe('SteadyButton', () => {
  beforeEach(() => {
    spot = { left: 10, top: 200 };
  });

  it('ignores a pointer click for a moment after it appears, and says so', () => {
    const { button, decided, ignored } = renderButton();
    expect(button.getAttribute('aria-disabled')).toBe('true');
    mouseMove(button);
    mouseClick(button);
    expect(decided).not.toHaveBeenCalled();
    expect(ignored).toHaveBeenCalledTimes(1);

    armed();
    expect(button.hasAttribute('aria-disabled')).toBe(false);
    mouseMove(button);
    mouseClick(button);
    expect(decided).toHaveBeenCalledTimes(1);
  });

  it('ignores a click on a button that moved under a still pointer; the next click there counts', () => {
    const { button, decided, ignored } = renderButton();
    armed();
    mouseMove(button);
    spot = { left: 10, top: 164 }; // the item above was decided and the list closed up
    mouseClick(button);
    expect(decided).not.toHaveBeenCalled();
    expect(ignored).toHaveBeenCalledTimes(1);
    mouseClick(button);
    expect(decided).toHaveBeenCalledTimes(1);
  });

  it('ignores a mouse click on a button the pointer never moved over', () => {
    const { button, decided, ignored } = renderButton();
    armed();
    mouseClick(button);
    expect(decided).not.toHaveBeenCalled();
    expect(ignored).toHaveBeenCalledTimes(1);
  });

  it('takes the spot where a finger came down as the aim', () => {
    const { button, decided } = renderButton();
    armed();
    fireEvent.pointerDown(button, { pointerType: 'touch' });
    mouseClick(button);
    expect(decided).toHaveBeenCalledTimes(1);
    fireEvent.pointerDown(button, { pointerType: 'touch' });
    spot = { left: 10, top: 120 };
    mouseClick(button);
    expect(decided).toHaveBeenCalledTimes(1);
  });

  it('lets keys through at once: a focused button was reached on purpose', () => {
    const { button, decided, ignored } = renderButton();
    fireEvent.click(button, { detail: 0 });
    expect(decided).toHaveBeenCalledTimes(1);
    expect(ignored).not.toHaveBeenCalled();
  });
});
