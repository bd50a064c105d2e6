import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { scrollByPage } from './spot-watch';
import { ARMING_MS, SteadyButton } from './steady-button';

/** Where every button is on the page; layout is the test's to move. */
let spot = { left: 10, top: 200 };

beforeEach(() => {
  spot = { left: 10, top: 200 };
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'requestAnimationFrame', 'cancelAnimationFrame', 'performance', 'Date'] });
  vi.spyOn(HTMLElement.prototype, 'getBoundingClientRect').mockImplementation(() => ({ ...spot, right: spot.left + 60, bottom: spot.top + 24, width: 60, height: 24, x: spot.left, y: spot.top, toJSON: () => ({}) }));
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function renderButton() {
  const decided = vi.fn();
  const ignored = vi.fn();
  render(
    <SteadyButton onClick={decided} onUnsteadyClick={ignored}>
      Allow
    </SteadyButton>,
  );
  return { button: screen.getByRole('button', { name: 'Allow' }), decided, ignored };
}

const mouseClick = (button: HTMLElement) => fireEvent.click(button, { detail: 1 });
const mouseMove = (button: HTMLElement) => fireEvent.pointerMove(button, { pointerType: 'mouse' });
const wait = (ms: number) =>
  act(() => {
    vi.advanceTimersByTime(ms);
  });
describe('SteadyButton', () => {
  it('ignores a pointer click for a moment after it appears, and says so', () => {
    const { button, decided, ignored } = renderButton();
    expect(button.getAttribute('aria-disabled')).toBe('true');
    mouseMove(button);
    mouseClick(button);
    expect(decided).not.toHaveBeenCalled();
    expect(ignored).toHaveBeenCalledTimes(1);

    wait(ARMING_MS);
    expect(button.hasAttribute('aria-disabled')).toBe(false);
    mouseMove(button);
    mouseClick(button);
    expect(decided).toHaveBeenCalledTimes(1);
  });

  it('is disarmed when a change to the page moves it, whatever the pointer does, until it has stood still for the moment', async () => {
    const { button, decided, ignored } = renderButton();
    wait(ARMING_MS);
    mouseMove(button);
    // The item above was decided and the list closed up.
    spot = { left: 10, top: 164 };
    await act(async () => {
      document.body.append(document.createElement('div'));
      await Promise.resolve();
    });
    expect(button.getAttribute('aria-disabled')).toBe('true');
    // The second click of a double-click, the mouse jittering a pixel on the way.
    mouseMove(button);
    mouseClick(button);
    expect(decided).not.toHaveBeenCalled();
    expect(ignored).toHaveBeenCalledTimes(1);

    wait(ARMING_MS);
    expect(button.hasAttribute('aria-disabled')).toBe(false);
    mouseClick(button);
    expect(decided).toHaveBeenCalledTimes(1);
  });

  it('takes a move no change of the page made (the person scrolled) as seen: a click counts where the pointer aimed', () => {
    const { button, decided, ignored } = renderButton();
    wait(ARMING_MS);
    mouseMove(button);
    spot = { left: 10, top: 120 };
    mouseClick(button);
    expect(decided).not.toHaveBeenCalled();
    expect(ignored).toHaveBeenCalledTimes(1);
    mouseMove(button);
    mouseClick(button);
    expect(decided).toHaveBeenCalledTimes(1);
    expect(button.hasAttribute('aria-disabled')).toBe(false);
  });

  it('takes a scroll read by a change to the page before its scroll event as seen, not as the page moving it', async () => {
    const { button, decided, ignored } = renderButton();
    wait(ARMING_MS);
    // What the button scrolls with is scrolled 32 px (a scroll's event comes a frame later) and, before then, some
    // other part of the page changes (a countdown ticks, another button arms).
    const scroller = button.parentElement!;
    scroller.scrollTop = 32;
    spot = { left: 10, top: 168 };
    await act(async () => {
      document.body.append(document.createElement('div'));
      await Promise.resolve();
    });
    expect(button.hasAttribute('aria-disabled')).toBe(false);
    mouseMove(button);
    mouseClick(button);
    expect(ignored).not.toHaveBeenCalled();
    expect(decided).toHaveBeenCalledTimes(1);

    // A change that moves it within what it scrolls with, in the same moment as a scroll, still re-arms it.
    scroller.scrollTop = 0;
    spot = { left: 10, top: 236 };
    await act(async () => {
      document.body.append(document.createElement('div'));
      await Promise.resolve();
    });
    expect(button.getAttribute('aria-disabled')).toBe('true');
  });

  it('is disarmed when the page scrolls it under a still finger (following new output), unlike when the person scrolls', () => {
    const decided = vi.fn();
    const ignored = vi.fn();
    render(
      <div data-testid="transcript">
        <SteadyButton onClick={decided} onUnsteadyClick={ignored}>
          Allow
        </SteadyButton>
      </div>,
    );
    const button = screen.getByRole('button', { name: 'Allow' });
    const transcript = screen.getByTestId('transcript');
    // Scrolling the transcript moves the button up the screen by as much.
    let scrolled = 0;
    Object.defineProperty(transcript, 'scrollTop', {
      configurable: true,
      get: () => scrolled,
      set: (top: number) => {
        spot = { left: spot.left, top: spot.top - (top - scrolled) };
        scrolled = top;
      },
    });
    const tap = () => {
      fireEvent.pointerDown(button, { pointerType: 'touch' });
      fireEvent.click(button, { detail: 1 });
    };
    wait(ARMING_MS);

    // The person swipes it 40 px up and taps it where it is now: they saw it go there.
    fireEvent.touchMove(transcript);
    transcript.scrollTop = 40;
    tap();
    expect(button.hasAttribute('aria-disabled')).toBe(false);
    expect(decided).toHaveBeenCalledTimes(1);

    // Right after that swipe, new output comes in below and the transcript follows it, 36 px on: the finger coming
    // down where the button now is was not aimed at it.
    fireEvent.touchMove(transcript);
    act(() => scrollByPage(transcript, 76));
    expect(spot).toStrictEqual({ left: 10, top: 124 });
    expect(button.getAttribute('aria-disabled')).toBe('true');
    tap();
    expect(decided).toHaveBeenCalledTimes(1);
    expect(ignored.mock.calls).toStrictEqual([['moved']]);

    // A scroll of the page's own that moves nothing (it is at the bottom already) changes nothing.
    wait(ARMING_MS);
    act(() => scrollByPage(transcript, 76));
    expect(button.hasAttribute('aria-disabled')).toBe(false);
    tap();
    expect(decided).toHaveBeenCalledTimes(2);
  });

  it('ignores a mouse click where the pointer never moved over it (what covered it went away); a fresh click there a moment after counts', () => {
    const { button, decided, ignored } = renderButton();
    wait(ARMING_MS);
    mouseClick(button);
    expect(decided).not.toHaveBeenCalled();
    expect(ignored).toHaveBeenCalledTimes(1);
    wait(ARMING_MS);
    mouseClick(button);
    expect(decided).toHaveBeenCalledTimes(1);
  });

  it('takes neither the second click of a double-click nor a click soon after an ignored one as aimed (the card came under a still pointer)', () => {
    const { button, decided, ignored } = renderButton();
    wait(ARMING_MS);
    mouseClick(button);
    fireEvent.click(button, { detail: 2 });
    expect(ignored).toHaveBeenCalledTimes(2);
    wait(ARMING_MS);
    // The third click of a triple-click, however late, is no fresh click either.
    fireEvent.click(button, { detail: 3 });
    expect(ignored).toHaveBeenCalledTimes(3);
    wait(ARMING_MS / 2);
    mouseClick(button);
    expect(ignored).toHaveBeenCalledTimes(4);
    expect(decided).not.toHaveBeenCalled();
    wait(ARMING_MS);
    mouseClick(button);
    expect(decided).toHaveBeenCalledTimes(1);
  });

  it('takes the spot where a finger came down as the aim', () => {
    const { button, decided } = renderButton();
    wait(ARMING_MS);
    fireEvent.pointerDown(button, { pointerType: 'touch' });
    mouseClick(button);
    expect(decided).toHaveBeenCalledTimes(1);
  });

  it('re-arms, for keys too, when what it decides changes though it did not move, and says so', () => {
    const decided = vi.fn();
    const ignored = vi.fn();
    const button = (decides: string) => (
      <SteadyButton decides={decides} onClick={decided} onUnsteadyClick={ignored}>
        Allow all
      </SteadyButton>
    );
    const { rerender } = render(button('a,b'));
    wait(ARMING_MS);
    rerender(button('a,b'));
    const allowAll = screen.getByRole('button', { name: 'Allow all' });
    expect(allowAll.hasAttribute('aria-disabled')).toBe(false);

    rerender(button('b,c'));
    expect(allowAll.getAttribute('aria-disabled')).toBe('true');
    mouseMove(allowAll);
    mouseClick(allowAll);
    fireEvent.click(allowAll, { detail: 0 });
    expect(decided).not.toHaveBeenCalled();
    expect(ignored.mock.calls).toStrictEqual([['changed'], ['changed']]);

    wait(ARMING_MS);
    fireEvent.click(allowAll, { detail: 0 });
    mouseClick(allowAll);
    expect(decided).toHaveBeenCalledTimes(2);
  });

  it('lets keys through at once: a focused button was reached on purpose', () => {
    const { button, decided, ignored } = renderButton();
    fireEvent.click(button, { detail: 0 });
    expect(decided).toHaveBeenCalledTimes(1);
    expect(ignored).not.toHaveBeenCalled();
  });

  // Found in review: Tab out of the open Settings dialog reached the Allow buttons it covers, and Space on one allowed.
  it('decides nothing, for a key or a pointer, while a modal dialog it is not in is open; one in the dialog still decides', () => {
    const decided = vi.fn();
    const inDialog = vi.fn();
    render(
      <>
        <SteadyButton onClick={decided}>Allow</SteadyButton>
        <div role="dialog" aria-modal="true">
          <SteadyButton onClick={inDialog}>Confirm</SteadyButton>
        </div>
      </>,
    );
    wait(ARMING_MS);
    const behind = screen.getByRole('button', { name: 'Allow' });
    fireEvent.click(behind, { detail: 0 });
    mouseMove(behind);
    mouseClick(behind);
    expect(decided).not.toHaveBeenCalled();
    const confirm = screen.getByRole('button', { name: 'Confirm' });
    fireEvent.click(confirm, { detail: 0 });
    expect(inDialog).toHaveBeenCalledTimes(1);

    document.querySelector('[aria-modal]')!.removeAttribute('aria-modal');
    fireEvent.click(behind, { detail: 0 });
    expect(decided).toHaveBeenCalledTimes(1);
  });

  it('takes a space or Enter after letters typed on it for typing, until the focus leaves and comes back', () => {
    const { button, decided, ignored } = renderButton();
    wait(ARMING_MS);
    button.focus();
    for (const key of ['n', 'o', ' ']) fireEvent.keyDown(button, { key });
    fireEvent.click(button, { detail: 0 });
    fireEvent.keyDown(button, { key: 'Enter' });
    fireEvent.click(button, { detail: 0 });
    expect(decided).not.toHaveBeenCalled();
    expect(ignored.mock.calls).toStrictEqual([['typing'], ['typing']]);

    button.blur();
    button.focus();
    fireEvent.keyDown(button, { key: 'Enter' });
    fireEvent.click(button, { detail: 0 });
    expect(decided).toHaveBeenCalledTimes(1);
  });
});
