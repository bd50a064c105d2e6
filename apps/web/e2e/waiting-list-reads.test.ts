import { createAirlockClient, parseStartupLink } from '@airlock/client';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
// Named apart: the page's own WebSocket is the one the tab's init script extends.
import { WebSocket as NodeWebSocket } from 'ws';
import { RECORDING_COMMAND } from './support/airlock-under-test';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage, PAGE_TIMEOUT_MS } from './support/chat-page';

const suite = useBrowserSuite();

/** A tab of the app that counts the reads of waiting calls it sends (see pendingReads). */
async function countingTab(): Promise<{ page: Page; chat: ChatPage }> {
  const page = await suite.context.newPage();
  page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  await page.addInitScript(() => {
    const counted = window as unknown as { pendingReads: number };
    counted.pendingReads = 0;
    window.WebSocket = class extends WebSocket {
      override send(data: Parameters<WebSocket['send']>[0]): void {
        if (typeof data === 'string') counted.pendingReads += data.split('"path":"chat.pending"').length - 1;
        super.send(data);
      }
    };
  });
  return { page, chat: new ChatPage(page) };
}

/** How many times the page has asked the server for a chat's waiting calls, counted as it sends them. */
function pendingReads(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as { pendingReads: number }).pendingReads);
}

/** Denies the recording call of the chat titled `chat` from the Waiting for you list, until the list is gone. */
async function denyFromList(waiting: Locator, chat: string): Promise<void> {
  const deny = waiting.getByRole('button', { name: `Deny terminal “${RECORDING_COMMAND}” in ${chat}`, exact: true });
  await vi.waitFor(
    async () => {
      if (await deny.isVisible()) await deny.click({ timeout: 2_000 }).catch(() => undefined);
      expect(await waiting.count()).toBe(0);
    },
    { timeout: 15_000, interval: 250 },
  );
}

describe('the waiting list across chats', () => {
  it('reads a chat’s waiting calls when the server says they changed, not every few seconds: ten seconds of the tab’s time ask nothing', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] }, { text: 'Not run.' });
    const { page, chat } = await countingTab();
    // The tab's clock is the test's, to let seconds go by at once.
    await page.clock.install();
    await page.goto(suite.airlock.link);
    await chat.connected();
    await chat.send('a call that waits');
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    // The person moves on to another chat; the call waits in the list.
    await page.getByRole('button', { name: 'New chat', exact: true }).click();
    const waiting = page.getByRole('region', { name: 'Waiting for you' });
    const item = waiting.getByRole('listitem').filter({ hasText: 'a call that waits' });
    await item.getByText(RECORDING_COMMAND).waitFor();
    const read = await pendingReads(page);
    expect(read).toBeGreaterThan(0);

    // Well within the 30 s after which a list nothing was said about is read anyway (WAITING_FALLBACK_MS).
    await page.clock.runFor(10_000);
    expect(await pendingReads(page)).toBe(read);
    await item.getByText(RECORDING_COMMAND).waitFor();

    // Denied from the list: the server says the chat's waiting calls changed, and the list reads them again.
    await page.clock.resume();
    await denyFromList(waiting, 'a call that waits');
    expect(await pendingReads(page)).toBeGreaterThan(read);
    expect(await suite.airlock.runCount()).toBe(0);
  });

  it('does not read a chat’s waiting calls again when another thing of the chat changes: only a change of its waiting calls does', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] }, { text: 'Not run.' });
    const { page, chat } = await countingTab();
    await page.goto(suite.airlock.link);
    await chat.connected();
    await chat.send('a call that waits');
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    const waiting = page.getByRole('region', { name: 'Waiting for you' });
    await waiting.getByRole('listitem').filter({ hasText: 'a call that waits' }).getByText(RECORDING_COMMAND).waitFor();
    const read = await pendingReads(page);

    // Another client renames the chat three times: each is a change of the chat every tab is told of, none of its calls.
    const client = createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket: NodeWebSocket });
    try {
      const sessionId = (await page.evaluate(() => window.sessionStorage.getItem('airlock.session')))!;
      for (const title of ['renamed once', 'renamed twice', 'renamed at last']) await client.trpc.sessions.update.mutate({ sessionId, title });
    } finally {
      await client.close();
    }
    // The tab has read the chat list again (the list names the chat anew), and the call still waits in it.
    const item = waiting.getByRole('listitem').filter({ hasText: 'renamed at last' });
    await item.getByText(RECORDING_COMMAND).waitFor();
    expect(await pendingReads(page)).toBe(read);

    // A change of its waiting calls is read: denied from the list, the call leaves it.
    await denyFromList(waiting, 'renamed at last');
    expect(await pendingReads(page)).toBeGreaterThan(read);
    expect(await suite.airlock.runCount()).toBe(0);
  });
});
