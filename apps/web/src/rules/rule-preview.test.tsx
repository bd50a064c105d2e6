import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ledgerRecord } from '../chat/test-ledger-record';
import { DRAWN_CHARACTERS } from '../chat/tool-arguments';
import { PreviewedCall } from './rule-preview';

afterEach(cleanup);

describe('PreviewedCall', () => {
  it('shows a past call under the display rules: a bidi control is marked and the command reads in the order it ran', () => {
    const call = ledgerRecord({ toolName: 'term\u202Einal', arguments: { command: 'touch ok #\u202E gnp.txt' } });
    render(
      <ul>
        <PreviewedCall call={call} />
      </ul>,
    );
    const item = screen.getByRole('listitem');
    expect(item.textContent).toBe('term\\u{202E}inal touch ok #\\u{202E} gnp.txt');
    expect([...item.querySelectorAll('.escaped-char')].map((escape) => escape.getAttribute('data-class'))).toStrictEqual(['bidi', 'bidi']);
  });

  // A ledger row holds the value as the model wrote it, denied or not: laid out whole, 99,000 marked escapes held the
  // Rules page for minutes as soon as a draft rule matched the call.
  it('draws a long value up to the card’s bound, marks the cut, and draws more on asking', () => {
    const hidden = 3_000;
    render(
      <ul>
        <PreviewedCall call={ledgerRecord({ toolName: 'terminal', arguments: { command: `echo ok # ${'\u200B'.repeat(hidden)}` } })} />
      </ul>,
    );
    const item = screen.getByRole('listitem');
    const drawn = () => item.querySelectorAll('.escaped-char').length;
    const first = Math.floor((DRAWN_CHARACTERS - 10) / 8);
    expect(drawn()).toBe(first);
    expect(item.querySelector('.value-cut')?.textContent.trim()).toBe('✂');
    const note = within(item).getByRole('note', { name: 'Not all drawn' });
    expect(note.textContent).toContain(`${(hidden - first).toLocaleString('en')} more characters`);
    fireEvent.click(within(note).getByRole('button', { name: 'Draw more of this value' }));
    expect(drawn()).toBe(hidden);
    expect(within(item).queryByRole('note', { name: 'Not all drawn' })).toBeNull();
  });
});
