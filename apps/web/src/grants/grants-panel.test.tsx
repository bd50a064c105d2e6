import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { DRAWN_CHARACTERS } from '../chat/tool-arguments';
import type { Grant } from '../lib/api-types';
import { answering, testTrpc } from '../lib/test-trpc';
import { GrantsPanel } from './grants-panel';

afterEach(cleanup);

/** The panel of chat `chat_1`, its server answering grants.list with `grants`. */
async function panelWith(grants: Grant[]) {
  render(testTrpc(answering('grants.list', grants)).provide(<GrantsPanel sessionId="chat_1" enabled />));
  const panel = await screen.findByText(/^Always allowed in this chat/);
  return panel.closest('details')!;
}

const exactly = (command: string): Grant => ({ grantId: 'grant_1', sessionId: 'chat_1', toolName: 'terminal', arguments: { command }, createdAt: 1_000 });

// A grant holds the exact value allowed, as long as the call's: drawn whole, a value of 99,000 marked escapes held the
// tab for minutes each time the chat opened, as it did on the card.
describe('an exact grant of a value too long to lay out at once', () => {
  it('is drawn up to the card’s bound, with the cut marked, how much is left, and a button that draws more', async () => {
    const hidden = 3_000;
    const panel = await panelWith([exactly(`echo ok # ${'\u200B'.repeat(hidden)}`)]);
    const value = panel.querySelector<HTMLElement>('.grant-args')!;
    const drawn = () => value.querySelectorAll('.escaped-char').length;
    // `echo ok # ` and then as many whole `\u{200B}` (8 characters each) as the bound holds.
    const first = Math.floor((DRAWN_CHARACTERS - 10) / 8);
    expect(drawn()).toBe(first);
    expect(value.querySelector('.value-cut')?.textContent.trim()).toBe('✂');
    const note = within(panel).getByRole('note', { name: 'Not all drawn' });
    expect(note.textContent).toBe(
      `Not all of this value is drawn: ${(hidden - first).toLocaleString('en')} more characters (${(hidden - first).toLocaleString('en')} of them shown as \\u{…} codes) after the ✂ mark. Draw more of this value`,
    );
    fireEvent.click(within(note).getByRole('button', { name: 'Draw more of this value' }));
    expect(drawn()).toBe(hidden);
    expect(within(panel).queryByRole('note', { name: 'Not all drawn' })).toBeNull();
    expect(value.querySelector('.value-cut')).toBeNull();
    expect(within(panel).getByRole('button', { name: 'Revoke always-allow for terminal' })).toBeTruthy();
  });

  it('draws a value within the bound whole, with no cut', async () => {
    const panel = await panelWith([exactly(`echo ok # ${'\u200B'.repeat(100)}`)]);
    expect(panel.querySelectorAll('.grant-args .escaped-char')).toHaveLength(100);
    expect(within(panel).queryByRole('note', { name: 'Not all drawn' })).toBeNull();
    expect(panel.querySelector('.value-cut')).toBeNull();
  });
});

// Found in review: the arguments were drawn `name: value, name: value`, so a grant of the string "false" read as the
// boolean, and a string holding `, other: x` as a second argument.
describe('an exact grant of several arguments', () => {
  const grant = (args: Record<string, unknown>): Grant => ({ grantId: 'grant_1', sessionId: 'chat_1', toolName: 'mcp_files__sync', arguments: args, createdAt: 1_000 });
  const rows = (panel: HTMLElement) => [...panel.querySelectorAll('.grant-args .grant-arg')].map((row) => row.textContent);

  it('draws each argument on a row of its own, so a value cannot read as another argument', async () => {
    const panel = await panelWith([grant({ folder: 'docs, dry_run: true', overwrite: 'no' })]);
    expect(rows(panel)).toStrictEqual(['folder: docs, dry_run: true', 'overwrite: no']);
  });

  it('labels a string that reads as JSON, and a value that is not a string, with its type, as the card does', async () => {
    const panel = await panelWith([grant({ dry_run: 'false', limit: 5, force: false, note: 'plain' })]);
    expect(rows(panel)).toStrictEqual(['dry_run (text): false', 'limit (number): 5', 'force (boolean): false', 'note: plain']);
    expect([...panel.querySelectorAll('.grant-args .value-type')].map((label) => label.getAttribute('data-type'))).toStrictEqual(['text', 'number', 'boolean']);
  });
});
