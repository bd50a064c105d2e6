import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

describe('badges on tool cards', () => {
  it('say what each built-in really does', async () => {
    suite.airlock.model.enqueue({
      toolCalls: [
        { name: 'web_fetch', arguments: { url: 'http://127.0.0.1:9/' } },
        { name: 'write_file', arguments: { path: 'notes.md', content: 'hello' } },
        { name: 'terminal', arguments: { command: 'ls' } },
        { name: 'read_file', arguments: { path: 'notes.md' } },
      ],
    });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('four tools');
    await chat.waitForStatus(chat.card(3), 'Waiting for your decision');
    const badges = async (index: number) => (await chat.card(index).locator('.tool-card-header .badge').allTextContents()).map((text) => text.trim());
    expect(await badges(0)).toStrictEqual(['reaches the network']);
    expect(await badges(1)).toStrictEqual(['changes files']);
    expect(await badges(2)).toStrictEqual(['runs code']);
    expect(await badges(3)).toStrictEqual(['read-only']);
  });
});
