import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ledgerRecord } from '../chat/test-ledger-record';
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
});
