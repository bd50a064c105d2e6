import { describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

function offeredTools(request: Record<string, unknown> | undefined): string[] {
  const tools = (request?.tools ?? []) as { function: { name: string } }[];
  return tools.map((tool) => tool.function.name);
}

async function openSettings(chat: ChatPage) {
  await chat.page.getByRole('button', { name: 'Settings', exact: true }).click();
  return chat.page.getByRole('dialog', { name: 'Settings' });
}

describe('tool settings kept by the server', () => {
  it('keeps a tool turned off after a reload and in a new browser with no storage, and other tabs see it at once', async () => {
    const first = await ChatPage.open(suite.context, suite.airlock.link);
    const second = await ChatPage.open(suite.context, suite.airlock.link);
    const secondDialog = await openSettings(second);
    await secondDialog.getByRole('checkbox', { name: /^terminal/, checked: true }).waitFor();

    const dialog = await openSettings(first);
    await dialog.getByRole('checkbox', { name: /^terminal/ }).uncheck();
    // The other tab, its dialog open, follows without a reload.
    await secondDialog.getByRole('checkbox', { name: /^terminal/, checked: false }).waitFor();

    await first.page.reload();
    await first.connected();
    await (await openSettings(first)).getByRole('checkbox', { name: /^terminal/, checked: false }).waitFor();

    // Another browser: no localStorage, cookies or anything else in common with the first.
    let other: BrowserContext | undefined;
    try {
      other = await suite.browser.newContext({ viewport: { width: 1280, height: 800 } });
      const fresh = await ChatPage.open(other, suite.airlock.link);
      await (await openSettings(fresh)).getByRole('checkbox', { name: /^terminal/, checked: false }).waitFor();
      await fresh.page.keyboard.press('Escape');

      suite.airlock.model.enqueue({ text: 'No shell here either.' });
      await fresh.send('What can you use?');
      await fresh.waitForText('No shell here either.');
      const offered = offeredTools(suite.airlock.model.requests[0]);
      expect(offered).not.toContain('terminal');
      expect(offered).toContain('python');
    } finally {
      await other?.close();
    }
  });
});
