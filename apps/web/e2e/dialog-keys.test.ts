import { describe, expect, it } from 'vitest';
import { RECORDING_COMMAND } from './support/airlock-under-test';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const runTerminal = { toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] };

const BANNER = 'Confirmation is off for this chat: tool calls run without asking.';

const suite = useBrowserSuite();

describe('the settings dialog', () => {
  // Found from outside: Alt+N in the open dialog opened the other chat's waiting card behind it and focused that card,
  // so the dialog's "Confirm tool calls" turned off asking in a chat the person had not opened it for, and `a` typed
  // next would have allowed a call the dialog covered.
  it('keeps Alt+N from opening another chat behind it: its "Confirm tool calls" stays the chat it was opened for', async () => {
    suite.airlock.model.enqueue(runTerminal, runTerminal);
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await chat.send('first chat');
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    await page.getByRole('button', { name: 'New chat', exact: true }).click();
    await chat.send('second chat');
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');

    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    await dialog.waitFor();
    await page.keyboard.press('Alt+KeyN');
    const setting = dialog.getByRole('checkbox', { name: 'Confirm tool calls' });
    await setting.uncheck();
    await dialog.getByRole('checkbox', { name: 'Confirm tool calls', checked: false }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.closest('article') === null)).toBe(true);
    await dialog.getByRole('button', { name: 'Close settings', exact: true }).click();

    await page.getByText(BANNER).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('second chat');
    await chat.openSession('first chat');
    await page.getByRole('heading', { level: 1, name: 'first chat' }).waitFor();
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    expect(await page.getByText(BANNER).count()).toBe(0);
  });
});
