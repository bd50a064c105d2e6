import { createAirlockClient, parseStartupLink } from '@airlock/client';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

describe('rules of a chat older than the 100 the chat list reads first', () => {
  it('name the chat by its title, and its editor reaches older chats with Show more chats', { timeout: 120_000 }, async () => {
    // The oldest chat, then 100 after it, from ten connections (a connection starts ten runs at once at most).
    const clients = Array.from({ length: 10 }, () => createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket }));
    try {
      suite.airlock.model.enqueue({ text: 'Hello.' });
      for await (const event of clients[0]!.startRun({ sessionId: 'oldest', message: 'The oldest chat of all' })) void event;
      for (let index = 0; index < 100; index++) suite.airlock.model.enqueue({ text: 'ok' });
      await Promise.all(
        clients.map(async (client, c) => {
          for (let index = 0; index < 10; index++) for await (const event of client.startRun({ sessionId: `later-${c}-${index}`, message: `later chat ${c}-${index}` })) void event;
        }),
      );
      await clients[0]!.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['make'], exact: false }, scope: { kind: 'chat', sessionId: 'oldest' }, source: 'user' });
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }

    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await page.getByRole('button', { name: 'Rules', exact: true }).click();
    await page.getByRole('heading', { name: 'Rules', exact: true }).waitFor();
    const rule = page.getByRole('list', { name: 'Rules' }).getByRole('listitem');
    await rule.getByText('chat “The oldest chat of all”', { exact: true }).waitFor();

    // Its editor shows that chat picked, under its title.
    await rule.getByRole('button', { name: 'Edit' }).click();
    const editor = page.getByRole('form', { name: 'Edit rule' });
    const picked = editor.getByRole('combobox', { name: 'Chat' });
    await expect.poll(() => picked.evaluate((select: HTMLSelectElement) => select.selectedOptions[0]?.textContent)).toBe('The oldest chat of all');
    await editor.getByRole('button', { name: 'Cancel' }).click();

    // A new chat rule: the picker lists the newest 100 chats, and the oldest at Show more chats.
    await page.getByRole('button', { name: 'Add a rule' }).click();
    const adding = page.getByRole('form', { name: 'New rule' });
    await adding.getByRole('combobox', { name: 'Where' }).selectOption('chat');
    const picker = adding.getByRole('combobox', { name: 'Chat' });
    await expect.poll(() => picker.locator('option').count()).toBe(101);
    expect(await picker.locator('option', { hasText: 'The oldest chat of all' }).count()).toBe(0);
    await adding.getByRole('button', { name: 'Show more chats' }).click();
    await picker.locator('option', { hasText: 'The oldest chat of all' }).waitFor({ state: 'attached' });
    await picker.selectOption({ label: 'The oldest chat of all' });
    expect(await adding.getByRole('button', { name: 'Show more chats' }).count()).toBe(0);
  });
});
