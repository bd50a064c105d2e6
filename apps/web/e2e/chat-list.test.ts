import { createAirlockClient, parseStartupLink } from '@airlock/client';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
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

  // A title is a first message, pasted by anyone: a right-to-left override there drew it reversed, unmarked.
  it('shows a title’s hidden and reordering characters as escapes, in the header and the list', async () => {
    suite.airlock.model.enqueue({ text: 'Noted.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await chat.send('invoice \u202Efdp.exe\u202C done');
    await chat.waitForText('Noted.');
    const shown = 'invoice \\u{202E}fdp.exe\\u{202C} done';
    await page.getByRole('heading', { name: shown, level: 1 }).waitFor();
    await page.getByRole('navigation', { name: 'Chats' }).getByText(shown, { exact: true }).waitFor();
    expect(await page.locator('.chat-title, .session-title').evaluateAll((nodes) => nodes.some((node) => /[\u202E\u202C]/.test(node.textContent ?? '')))).toBe(false);
  });

  it('opens again after a reload a chat older than the 100 the list shows, under its own title, finds it by search, and shows the others on demand', { timeout: 120_000 }, async () => {
    suite.airlock.model.enqueue({ text: 'Hello.' });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await chat.send('The oldest chat of all');
    await chat.waitForText('Hello.');

    // 100 chats after it, from ten connections (a connection starts ten runs at once at most, then a few a minute).
    const clients = Array.from({ length: 10 }, () => createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket }));
    try {
      for (let index = 0; index < 100; index++) suite.airlock.model.enqueue({ text: 'ok' });
      await Promise.all(
        clients.map(async (client, c) => {
          for (let index = 0; index < 10; index++) for await (const event of client.startRun({ sessionId: `later-${c}-${index}`, message: `later chat ${c}-${index}` })) void event;
        }),
      );
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }

    await page.reload();
    await chat.connected();
    await page.getByRole('heading', { name: 'The oldest chat of all', level: 1 }).waitFor();
    await chat.waitForText('Hello.');
    const chats = page.getByRole('navigation', { name: 'Chats' });
    await expect.poll(() => chats.locator('.session-button', { hasText: 'later chat' }).count()).toBe(100);
    expect(await chats.getByText('The oldest chat of all', { exact: true }).count()).toBe(0);
    // The search is the server's: it finds the chat the tab has not read.
    const search = chats.getByRole('searchbox', { name: 'Search chats' });
    await search.fill('OLDEST chat');
    await expect.poll(() => chats.locator('.session-button').allTextContents()).toStrictEqual([expect.stringContaining('The oldest chat of all')]);
    await search.fill('');
    await expect.poll(() => chats.locator('.session-button', { hasText: 'later chat' }).count()).toBe(100);
    expect(await chats.getByText('The oldest chat of all', { exact: true }).count()).toBe(0);
    await chats.getByRole('button', { name: 'Show more chats' }).click();
    await chats.getByText('The oldest chat of all', { exact: true }).waitFor();
    expect(await chats.getByRole('button', { name: 'Show more chats' }).count()).toBe(0);
  });
});
