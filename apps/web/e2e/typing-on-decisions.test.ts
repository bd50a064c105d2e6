import { readdir } from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

const focusedLabel = (chat: ChatPage) => chat.page.evaluate(() => document.activeElement?.getAttribute('aria-label'));

describe('typing on a waiting card, its buttons and its editor, in the browser', () => {
  it('takes a message typed on the card or on its Allow button for a message: e, r and a space open or decide nothing, and nothing is written', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'from the model' } }] });
    const first = await ChatPage.open(suite.context, suite.airlock.link);
    await first.send('write the notes');
    await first.waitForStatus(first.card(), 'Waiting for your decision');

    // Opened again, the app lands on the waiting card, in focus; the person types as if in the message box.
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    const card = chat.card();
    const box = page.getByRole('textbox', { name: 'Message' });
    // A bound for a loaded machine: the app lands on the card once its chat has loaded.
    await vi.waitFor(async () => expect(await focusedLabel(chat)).toBe('Tool call write_file'), { timeout: 10_000 });
    await page.keyboard.type('explain what this file is for');
    await page.keyboard.press('Enter');
    await vi.waitFor(async () => expect(await box.inputValue()).toBe('xplain what this file is for'));

    await box.fill('');
    await card.focus();
    await page.keyboard.type('run it in the src folder instead');
    await page.keyboard.press('Enter');
    await vi.waitFor(async () => expect(await box.inputValue()).toBe('un it in the src folder instead'));

    // Tab from the card reaches its Allow button; "no way" typed there is text too, and its space presses nothing.
    await box.fill('');
    await card.focus();
    await page.keyboard.press('Tab');
    expect(await focusedLabel(chat)).toBe('Allow write_file');
    await page.keyboard.type('no way');
    await vi.waitFor(async () => expect(await box.inputValue()).toBe('no way'));

    await chat.waitForStatus(card, 'Waiting for your decision');
    expect(await card.getByRole('form').count()).toBe(0);
    expect(await card.getByRole('textbox', { name: 'Reason, passed to the model' }).count()).toBe(0);
    expect(await readdir(suite.airlock.workspace)).toStrictEqual([]);
  });
});
