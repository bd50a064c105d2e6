import { access, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

const focusedLabel = (chat: ChatPage) => chat.page.evaluate(() => document.activeElement?.getAttribute('aria-label'));

describe('typing on a waiting card, its buttons and its editor, in the browser', () => {
  it('takes a message typed on the card or on its Allow button for a message, whole: e, r, a, d, Shift+A and a space open or decide nothing, and nothing is written', async () => {
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
    // Whole: the "e" the card took for its key goes to the box with the rest.
    await vi.waitFor(async () => expect(await box.inputValue()).toBe('explain what this file is for'), { timeout: 10_000 });

    // Each of the card's keys first, Shift+A and a capital after a key too.
    for (const message of ['run it in the src folder instead', 'also check the logs', 'deny that please', 'Always ask me', 'add this', 'dD first']) {
      await box.fill('');
      await card.focus();
      await page.keyboard.type(message);
      await vi.waitFor(async () => expect(await box.inputValue()).toBe(message), { timeout: 10_000 });
    }

    // Tab from the card reaches its Allow button; "no way" typed there is text too, and its space presses nothing.
    await box.fill('');
    await card.focus();
    await page.keyboard.press('Tab');
    expect(await focusedLabel(chat)).toBe('Allow write_file');
    await page.keyboard.type('no way');
    await vi.waitFor(async () => expect(await box.inputValue()).toBe('no way'), { timeout: 10_000 });

    await chat.waitForStatus(card, 'Waiting for your decision');
    expect(await card.getByRole('form').count()).toBe(0);
    expect(await card.getByRole('textbox', { name: 'Reason, passed to the model' }).count()).toBe(0);
    expect(await readdir(suite.airlock.workspace)).toStrictEqual([]);
  });

  it('runs nothing as proposed while the editor holds an edit: Allow, Always allow, a and the waiting list send the person to Allow edited', async () => {
    const proposed = 'echo DANGEROUS > edit1-danger.txt';
    const edited = 'echo harmless > edit1-safe.txt';
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: proposed } }] }, { text: 'Wrote it.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await chat.send('run it');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    const waiting = page.getByRole('region', { name: 'Waiting for you' });
    await waiting.getByRole('button', { name: `Allow terminal “${proposed}” in run it`, exact: true }).waitFor();

    await chat.button(card, 'Edit arguments of terminal').click();
    const editor = card.getByRole('form', { name: 'Edit the arguments of terminal' });
    await editor.getByRole('textbox', { name: /^command/ }).fill(edited);
    await editor.getByRole('group', { name: 'The edited call as it will run' }).getByText(edited, { exact: true }).waitFor();

    expect(await chat.button(card, 'Allow terminal').isDisabled()).toBe(true);
    expect(await chat.button(card, 'Always allow terminal').isDisabled()).toBe(true);
    await waiting.getByRole('button', { name: `Review terminal “${proposed}” in run it`, exact: true }).waitFor();
    expect(await waiting.getByRole('button', { name: `Allow terminal “${proposed}” in run it`, exact: true }).count()).toBe(0);
    await card.focus();
    await page.keyboard.press('a');
    expect(await card.locator('.key-hint').first().textContent()).toMatch(/^Keys on this card: d Deny · r Deny with reason…/);

    await editor.getByRole('button', { name: 'Allow edited', exact: true }).click();
    await chat.waitForStatus(card, 'Done');
    expect(await readFile(join(suite.airlock.workspace, 'edit1-safe.txt'), 'utf8')).toBe('harmless\n');
    await expect(access(join(suite.airlock.workspace, 'edit1-danger.txt'))).rejects.toThrow();
  });
});
