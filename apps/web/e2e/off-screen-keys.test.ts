import { describe, expect, it } from 'vitest';
import { RECORDING_COMMAND } from './support/airlock-under-test';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

/** A command of 14 lines: its card is tall, so four of them do not fit on the screen together. */
function tallCommand(name: string): string {
  return [`echo ${name}`, ...Array.from({ length: 13 }, (_, line) => `echo ${name}-line-${line}`)].join('\n');
}

/** Whether the card's decision buttons are on screen: inside the window and the transcript's visible part. */
function buttonsInView(card: Element): boolean {
  const buttons = card.querySelector('.decision-buttons')!.getBoundingClientRect();
  const scroller = card.closest('.transcript')!.getBoundingClientRect();
  return buttons.top >= Math.max(0, scroller.top) && buttons.bottom <= Math.min(window.innerHeight, scroller.bottom);
}

/** A batch of four terminal calls, all waiting: the first runs RECORDING_COMMAND, the other three are tall. */
async function fourWaitingCards() {
  suite.airlock.model.enqueue({
    toolCalls: [
      { name: 'terminal', arguments: { command: RECORDING_COMMAND } },
      ...['second', 'third', 'fourth'].map((name) => ({ name: 'terminal', arguments: { command: tallCommand(name) } })),
    ],
  });
  const chat = await ChatPage.open(suite.context, suite.airlock.link);
  await chat.send('four commands');
  const last = chat.card(3);
  await chat.waitForStatus(last, 'Waiting for your decision');
  return { chat, page: chat.page, first: chat.card(0), last };
}

describe('keys on a card off screen', () => {
  // Found from outside: the app opens with the oldest waiting card in focus; the person scrolled down to the last
  // card of the batch, read it and pressed `a`, and the first card, off screen and unseen, was allowed.
  it('decide nothing: the card is brought into view first, and the key works once it is there', async () => {
    const { chat, page, first, last } = await fourWaitingCards();
    await first.focus();
    await last.evaluate((card) => card.scrollIntoView({ block: 'end' }));
    expect(await first.evaluate(buttonsInView)).toBe(false);

    await page.keyboard.press('a');
    expect(await first.getByRole('status').filter({ hasText: 'any key stops it' }).count()).toBe(0);
    await chat.waitForStatus(first, 'Waiting for your decision');
    expect(await first.evaluate(buttonsInView)).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.closest('article')?.getAttribute('aria-label'))).toBe('Tool call terminal');

    await page.keyboard.press('a');
    await chat.waitForStatus(first, 'Done');
    expect(await suite.airlock.runCount()).toBe(1);
  });

  // Found from outside: Tab from the card the app opened on lands on its Allow; the person scrolled down to read the
  // last card and pressed space to scroll on, and the space pressed the first card's Allow, off screen.
  it('take a space or Enter on a decision button off screen for nothing: it is brought into view first', async () => {
    const { chat, page, first, last } = await fourWaitingCards();
    await chat.button(first, 'Allow terminal').focus();
    await last.evaluate((card) => card.scrollIntoView({ block: 'end' }));
    expect(await first.evaluate(buttonsInView)).toBe(false);

    await page.keyboard.press(' ');
    await first.getByText('Nothing was decided: the button was off screen').waitFor();
    expect(await first.evaluate(buttonsInView)).toBe(true);
    await chat.waitForStatus(first, 'Waiting for your decision');

    await page.keyboard.press('Enter');
    await chat.waitForStatus(first, 'Done');
    expect(await suite.airlock.runCount()).toBe(1);
  });
});
