import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

describe('the chat list', () => {
  it('shows when each chat was last active, finds chats by title, and names the workspace', async () => {
    suite.airlock.model.enqueue({ text: 'Hello.' }, { text: 'Hi again.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await page.getByText(suite.airlock.workspace, { exact: true }).waitFor();
    expect(await page.getByLabel('Workspace folder').textContent()).toBe(suite.airlock.workspace);

    await chat.send('Plan the `garden` party');
    await chat.waitForText('Hello.');
    await page.getByRole('button', { name: 'New chat', exact: true }).click();
    await chat.send('Fix the bicycle');
    await chat.waitForText('Hi again.');

    const chats = page.getByRole('navigation', { name: 'Chats' });
    const entries = chats.locator('.session-button');
    await chats.getByText('Plan the garden party', { exact: true }).waitFor();
    expect(await chats.locator('time').allTextContents()).toStrictEqual(['just now', 'just now']);

    await chats.getByRole('searchbox', { name: 'Search chats' }).fill('GARDEN');
    await expect.poll(() => entries.allTextContents()).toStrictEqual([expect.stringContaining('Plan the garden party')]);
    await chats.getByRole('searchbox', { name: 'Search chats' }).fill('nothing like this');
    await chats.getByText('No chat title contains “nothing like this”.').waitFor();
  });
});
