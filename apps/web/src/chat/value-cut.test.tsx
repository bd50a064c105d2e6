import { cleanup, fireEvent, render, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { DRAWN_CHARACTERS } from './tool-arguments';
import { ToolCallCard } from './tool-call-card';
import type { ToolCallState, ToolCallView } from './tool-call-state';

afterEach(cleanup);

const awaiting: ToolCallState = { status: 'awaiting-decision', approvalId: 'apv_1', expiresAt: Date.now() + 90_000, problem: null };
const annotations = { readOnly: false, destructive: true, executesCode: true, exactGrants: true, idempotent: false, openWorld: false };

function renderCard(toolName: string, args: Record<string, unknown>) {
  const call: ToolCallView = { key: 'c1', runId: 'run_1', toolCallId: 'c1', toolName, arguments: args, state: awaiting };
  render(<ToolCallCard call={call} annotations={annotations} onDecide={() => undefined} />);
  // Found by its element, not its role: working out every element's role in a card of thousands of escapes is slow.
  return document.querySelector<HTMLElement>(`article[aria-label="Tool call ${toolName}"]`)!;
}

// Found from outside: a terminal command `echo ok # ` and 99,000 zero-width spaces, within the tool's limit, was laid
// out as one line of 99,000 marked escapes: every tab that opened the app hung on that card for minutes.
describe('a value too long to lay out at once', () => {
  it('is drawn up to a bound, with a marked cut saying how much is left and a button that draws more', () => {
    const hidden = 3_000;
    const card = renderCard('terminal', { command: `echo ok # ${'\u200B'.repeat(hidden)}` });
    const code = card.querySelector<HTMLElement>('pre[data-language="shell"] code')!;
    const drawn = () => code.querySelectorAll('.escaped-char').length;
    // `echo ok # ` and then as many whole `\u{200B}` (8 characters each) as the bound holds.
    const first = Math.floor((DRAWN_CHARACTERS - 10) / 8);
    expect(drawn()).toBe(first);
    const note = card.querySelector<HTMLElement>('.value-cut-note')!;
    expect([note.getAttribute('role'), note.getAttribute('aria-label')]).toStrictEqual(['note', 'Not all drawn']);
    expect(card.querySelector('pre[data-language="shell"] .value-cut')?.textContent.trim()).toBe('✂');
    expect(note.textContent).toBe(
      `Not all of this value is drawn: ${(hidden - first).toLocaleString('en')} more characters (${(hidden - first).toLocaleString('en')} of them shown as \\u{…} codes) after the ✂ mark. Draw more of this value`,
    );
    expect(card.querySelector('.hidden-chars-warning')?.textContent).toMatch(/^This call contains hidden characters \(3000\)\./);
    fireEvent.click(within(note).getByRole('button', { name: 'Draw more of this value' }));
    expect(drawn()).toBe(hidden);
    expect(card.querySelector('.value-cut-note')).toBeNull();
    expect(card.querySelector('.value-cut')).toBeNull();
  });

  it('draws a value within the bound whole, with no cut', () => {
    const card = renderCard('terminal', { command: `echo ok # ${'\u200B'.repeat(100)}` });
    expect(card.querySelectorAll('pre[data-language="shell"] .escaped-char')).toHaveLength(100);
    expect(within(card).queryByRole('note', { name: 'Not all drawn' })).toBeNull();
    expect(within(card).queryByRole('button', { name: 'Draw more of this value' })).toBeNull();
  });
});
