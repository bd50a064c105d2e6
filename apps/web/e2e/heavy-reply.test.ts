import { describe, expect, it, vi } from 'vitest';
import { RECORDING_COMMAND } from './support/airlock-under-test';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

/** One paragraph of 900 KB of plain words, no Markdown marker, as a model's deltas of 4,000 characters. */
function heavyReply(): string[] {
  const text = `Working on it.\n\n${'word '.repeat(180_000)}`;
  const deltas: string[] = [];
  for (let index = 0; index < text.length; index += 4_000) deltas.push(text.slice(index, index + 4_000));
  return deltas;
}

describe('a heavy reply with a call waiting under it', () => {
  it('leaves the app usable when it opens again on the waiting call: the card is allowed and the call runs', async () => {
    suite.airlock.model.enqueue({ text: heavyReply(), toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] }, { text: 'Ran it.' });
    const first = await ChatPage.open(suite.context, suite.airlock.link);
    await first.send('write a lot, then run it');
    await first.card().getByTestId('tool-status').getByText('Waiting for your decision', { exact: true }).waitFor({ timeout: 60_000 });
    await first.page.close();

    // Opened again (a reload, a new tab), the app lands on the waiting call and replays the run, the reply with it.
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await chat.button(card, 'Allow terminal').click();
    await vi.waitFor(async () => expect(await suite.airlock.runCount()).toBe(1), { timeout: 30_000 });
    await chat.page.getByText('Ran it.').waitFor({ timeout: 30_000 });
    await vi.waitFor(async () => expect(await chat.page.getByRole('region', { name: 'Waiting for you' }).count()).toBe(0), { timeout: 10_000 });
    expect(await chat.page.getByLabel('Assistant').first().textContent()).toContain('word word word');
  }, 180_000);
});
