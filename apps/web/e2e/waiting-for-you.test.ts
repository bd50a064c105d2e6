import { describe, expect, it, vi } from 'vitest';
import { RECORDING_COMMAND } from './support/airlock-under-test';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const runTerminal = { toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] };

const suite = useBrowserSuite();

describe('calls waiting for the person', () => {
  it('are marked in the list, counted in the tab, decided from one place, and reached by keyboard', async () => {
    suite.airlock.model.enqueue(runTerminal, runTerminal, { text: 'First chat done.' }, { text: 'Second chat done.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await chat.send('first chat');
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    await page.getByRole('button', { name: 'New chat', exact: true }).click();
    await chat.send('second chat');
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');

    const chats = page.getByRole('navigation', { name: 'Chats' });
    await chats.getByRole('img', { name: '1 call waiting for you' }).nth(1).waitFor();
    expect(await chats.getByRole('img', { name: 'running' }).count()).toBe(0);
    await vi.waitFor(async () => expect(await page.title()).toBe('(2) Airlock'), { timeout: 10_000 });
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toMatch(/^data:image\/png/);

    const waiting = page.getByRole('region', { name: 'Waiting for you' });
    await waiting.getByRole('heading', { name: /Waiting for you \(2\)/ }).waitFor();
    // A decision button ignores a click in its first moments on screen or after it moved (the list filling in on a
    // loaded machine): clicked again, while the call still waits there, until it has run.
    const allowFirst = waiting.getByRole('button', { name: `Allow terminal “${RECORDING_COMMAND}” in first chat`, exact: true });
    await vi.waitFor(
      async () => {
        if ((await suite.airlock.runCount()) === 0 && (await allowFirst.isVisible())) await allowFirst.click({ timeout: 2_000 }).catch(() => undefined);
        expect(await suite.airlock.runCount()).toBe(1);
      },
      { timeout: 15_000, interval: 250 },
    );
    await vi.waitFor(async () => expect(await page.title()).toBe('(1) Airlock'), { timeout: 10_000 });
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    await page.getByRole('button', { name: 'New chat', exact: true }).click();

    const reopened = await ChatPage.open(suite.context, suite.airlock.link);
    const again = reopened.page;
    await again.getByRole('heading', { level: 1, name: 'second chat' }).waitFor();
    await vi.waitFor(async () => expect(await again.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Tool call terminal'), { timeout: 10_000 });

    // In the message box Alt+N may type a character (Option+N on a Mac): it stays there, so the next letter is text.
    await again.getByRole('textbox', { name: 'Message' }).focus();
    await again.keyboard.press('Alt+KeyN');
    expect(await again.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Message');
    await again.evaluate(() => (document.activeElement as HTMLElement).blur());
    await again.keyboard.press('Alt+KeyN');
    await vi.waitFor(async () => expect(await again.evaluate(() => document.activeElement?.hasAttribute('data-approval-id'))).toBe(true), { timeout: 10_000 });
    await again.keyboard.press('r');
    const reason = reopened.card().getByRole('textbox', { name: 'Reason, passed to the model' });
    await reason.waitFor();
    await reason.press('d');
    await reopened.waitForStatus(reopened.card(), 'Waiting for your decision');

    await reopened.card().focus();
    await again.keyboard.press('d');
    await reopened.waitForStatus(reopened.card(), 'Denied');
    await reopened.waitForText('Second chat done.');
    await vi.waitFor(async () => expect(await again.title()).toBe('Airlock'), { timeout: 10_000 });
    expect(await suite.airlock.runCount()).toBe(1);
  });

  it('takes a message typed while the app opens on a waiting card for a message: nothing is decided, the text goes to the message box', async () => {
    suite.airlock.model.enqueue(runTerminal, { text: 'Ran it.' });
    const first = await ChatPage.open(suite.context, suite.airlock.link);
    await first.send('run it');
    await first.waitForStatus(first.card(), 'Waiting for your decision');

    // Opened again, the app lands on the waiting card, in focus; the person starts typing as if in the message box.
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await vi.waitFor(async () => expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Tool call terminal'), { timeout: 10_000 });
    await page.keyboard.type('Also, can you explain first? and do');
    await page.keyboard.press('Enter');
    const box = page.getByRole('textbox', { name: 'Message' });
    await vi.waitFor(async () => expect(await box.inputValue()).toBe('Also, can you explain first? and do'), { timeout: 10_000 });
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    expect(await page.getByText('Always allowed in this chat', { exact: false }).count()).toBe(0);
    expect(await suite.airlock.runCount()).toBe(0);

    // Deliberate keys still decide: a, alone, on the focused card.
    await chat.card().focus();
    await page.keyboard.press('a');
    await chat.card().getByText('Allowing… any key stops it').waitFor();
    await chat.waitForStatus(chat.card(), 'Done');
    expect(await suite.airlock.runCount()).toBe(1);
    expect(await page.getByText('Always allowed in this chat', { exact: false }).count()).toBe(0);
  });

  it('asks once more before an Always allow from the keyboard, and allows with a', async () => {
    suite.airlock.model.enqueue(runTerminal, { text: 'Ran it.' }, runTerminal, { text: 'Ran it again.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await chat.send('run it');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await card.focus();
    await card.getByText('Keys on this card', { exact: false }).waitFor();
    await page.keyboard.press('Shift+KeyA');
    const confirm = card.getByRole('group', { name: 'Confirm Always allow terminal' });
    await confirm.getByText('Always allow runs this exact command again without asking', { exact: false }).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    await chat.waitForStatus(card, 'Waiting for your decision');
    expect(await page.getByText('Always allowed in this chat', { exact: false }).count()).toBe(0);

    await card.focus();
    await page.keyboard.press('a');
    await chat.waitForStatus(card, 'Done');
    await chat.waitForText('Ran it.');

    await chat.send('again');
    const second = chat.card(1);
    await chat.waitForStatus(second, 'Waiting for your decision');
    await second.focus();
    await page.keyboard.press('Shift+KeyA');
    await page.keyboard.press('y');
    await chat.waitForStatus(second, 'Done');
    await page.getByText('Always allowed in this chat (1)').waitFor();
    expect(await suite.airlock.runCount()).toBe(2);
  });
});
