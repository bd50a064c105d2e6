import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ARMING_MS } from '../lib/steady-button';
import type { ChatItem } from './chat-reducer';
import { ChatTranscript } from './chat-transcript';
import type { ToolCallView } from './tool-call-state';

const call: ToolCallView = {
  key: 'tool:run_1:c1',
  runId: 'run_1',
  toolCallId: 'c1',
  toolName: 'terminal',
  arguments: { command: 'ls' },
  state: { status: 'awaiting-decision', approvalId: 'apv_1', expiresAt: null, problem: null },
};
const waiting: ChatItem = { kind: 'tool', key: call.key, call };

/** The transcript's layout is the test's: how tall its content is, and how far it is scrolled. */
const layout = { contentHeight: 1000, scrolled: 0 };
const VIEW_HEIGHT = 600;
/** As a browser does: never scrolled past the end of its content, which may have shrunk since. */
const scrolledNow = () => Math.max(0, Math.min(layout.scrolled, layout.contentHeight - VIEW_HEIGHT));

beforeEach(() => {
  layout.contentHeight = 1000;
  layout.scrolled = 0;
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'requestAnimationFrame', 'cancelAnimationFrame', 'performance', 'Date'] });
  // Everything in the transcript stands 900 px down its content: scrolling it moves all of it up by as much.
  vi.spyOn(HTMLElement.prototype, 'getBoundingClientRect').mockImplementation(() => {
    const top = 900 - scrolledNow();
    return { left: 10, top, right: 70, bottom: top + 24, width: 60, height: 24, x: 10, y: top, toJSON: () => ({}) };
  });
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function renderTranscript(onDecide: () => void) {
  const props = { run: null, tools: new Map(), onDecide };
  const { rerender } = render(<ChatTranscript items={[waiting]} {...props} />);
  const transcript = document.querySelector('.transcript')!;
  Object.defineProperties(transcript, {
    scrollHeight: { configurable: true, get: () => layout.contentHeight },
    clientHeight: { configurable: true, get: () => VIEW_HEIGHT },
    scrollTop: {
      configurable: true,
      get: scrolledNow,
      set: (top: number) => {
        layout.scrolled = top;
        layout.scrolled = scrolledNow();
      },
    },
  });
  return { transcript, show: (items: ChatItem[]) => rerender(<ChatTranscript items={items} {...props} />) };
}

const wait = (ms: number) =>
  act(() => {
    vi.advanceTimersByTime(ms);
  });

function tap(button: HTMLElement) {
  fireEvent.pointerDown(button, { pointerType: 'touch' });
  fireEvent.click(button, { detail: 1 });
}

describe('ChatTranscript', () => {
  it('re-arms a decision button its own following of new output slid under a finger, not one the person scrolled', () => {
    const onDecide = vi.fn();
    const { transcript, show } = renderTranscript(onDecide);
    // Opened at the bottom (a frame after it shows), then left to stand.
    wait(16);
    expect(layout.scrolled).toBe(400);
    wait(ARMING_MS);
    const allow = screen.getByRole('button', { name: 'Allow terminal' });
    expect(allow.hasAttribute('aria-disabled')).toBe(false);

    // A reply comes in below the waiting call; a frame later the transcript follows it to the bottom, 100 px on.
    layout.contentHeight = 1100;
    show([waiting, { kind: 'assistant', key: 'assistant:run_2', runId: 'run_2', text: 'Meanwhile, more.', reasoning: '' }]);
    expect(allow.hasAttribute('aria-disabled')).toBe(false);
    wait(16);
    expect(layout.scrolled).toBe(500);
    expect(allow.getAttribute('aria-disabled')).toBe('true');
    // A finger coming down where Allow now is, in its first moments there, was aimed at what was there before.
    tap(allow);
    expect(onDecide).not.toHaveBeenCalled();
    expect(screen.getByText(/^Nothing was decided: the button had just appeared or moved/).textContent).toBeTruthy();

    // The person scrolls it 100 px back and taps it where it is now: they saw it go there.
    wait(ARMING_MS);
    transcript.scrollTop = 400;
    fireEvent.scroll(transcript);
    wait(16);
    expect(allow.hasAttribute('aria-disabled')).toBe(false);
    tap(allow);
    expect(onDecide).toHaveBeenCalledTimes(1);
  });

  it('re-arms a decision button moved when what is below it shrank and the transcript, at its bottom, was pulled back', async () => {
    const onDecide = vi.fn();
    const { show } = renderTranscript(onDecide);
    const reply: ChatItem = { kind: 'assistant', key: 'assistant:run_2', runId: 'run_2', text: 'A long reply.', reasoning: '' };
    layout.contentHeight = 1100;
    show([waiting, reply]);
    wait(16);
    expect(layout.scrolled).toBe(500);
    wait(ARMING_MS);
    const allow = screen.getByRole('button', { name: 'Allow terminal' });
    expect(allow.hasAttribute('aria-disabled')).toBe(false);

    // The reply below is cut short: the browser pulls the transcript back to the end of what is left, 100 px, in
    // the same change, and Allow slides down. The change is read in the microtask after it, before any click.
    layout.contentHeight = 1000;
    show([waiting, { ...reply, text: 'Short.' }]);
    await act(() => Promise.resolve());
    expect(scrolledNow()).toBe(400);
    expect(allow.getAttribute('aria-disabled')).toBe('true');
    tap(allow);
    expect(onDecide).not.toHaveBeenCalled();
  });

  it('re-arms a decision button moved when a card below it closed its reason box and the transcript, at its bottom, was pulled back', async () => {
    const onDecide = vi.fn();
    const below: ToolCallView = { ...call, key: 'tool:run_1:c2', toolCallId: 'c2', state: { ...call.state, approvalId: 'apv_2' } as ToolCallView['state'] };
    const { transcript, show } = renderTranscript(onDecide);
    show([waiting, { kind: 'tool', key: below.key, call: below }]);
    wait(16);
    expect(layout.scrolled).toBe(400);
    // The card below opens its reason box, 100 px tall, and the person scrolls down to the end of it.
    const openReason = screen.getAllByRole('button', { name: 'Deny with reason…' })[1]!;
    layout.contentHeight = 1100;
    fireEvent.click(openReason);
    transcript.scrollTop = 500;
    fireEvent.scroll(transcript);
    wait(16);
    wait(ARMING_MS);
    const allow = screen.getAllByRole('button', { name: 'Allow terminal' })[0]!;
    expect(allow.hasAttribute('aria-disabled')).toBe(false);

    // The box closes, a change of the card's own (the transcript does not render again): the browser pulls the
    // transcript back to the end of what is left, 100 px, and Allow slides down under the finger.
    layout.contentHeight = 1000;
    await act(async () => {
      fireEvent.click(openReason);
      await Promise.resolve();
    });
    expect(screen.queryByRole('textbox')).toBe(null);
    expect(scrolledNow()).toBe(400);
    expect(allow.getAttribute('aria-disabled')).toBe('true');
    tap(allow);
    expect(onDecide).not.toHaveBeenCalled();
  });
});

describe('the run status line', () => {
  it('shows what could hide or reorder the text it quotes as codes', () => {
    const run = { runId: 'run_1', phase: 'following' as const, status: 'Calling: mcp__files\u202Etxt.exe', lastSeq: 3, announcing: false, startedAtTurn: null };
    render(<ChatTranscript items={[]} run={run} tools={new Map()} onDecide={() => {}} />);
    expect(document.querySelector('.run-status')?.textContent).toBe('Calling: mcp__files\\u{202E}txt.exe');
  });
});
