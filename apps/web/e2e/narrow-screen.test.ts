import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();
const WIDTH = 360;

/** Elements wider than the viewport, described for the failure message. */
function tooWide(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const wide = [...document.querySelectorAll('body *')]
      .filter((element) => element.getBoundingClientRect().width > width + 0.5)
      .map((element) => `${element.tagName.toLowerCase()}.${[...element.classList].join('.')} ${Math.round(element.getBoundingClientRect().width)}px`);
    if (document.documentElement.scrollWidth > width) wide.push(`page scrolls to ${document.documentElement.scrollWidth}px`);
    return wide;
  });
}

async function expectOnScreen(button: Locator): Promise<void> {
  await button.scrollIntoViewIfNeeded();
  const box = await button.boundingBox();
  expect(box).not.toBeNull();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(WIDTH);
}

describe('a narrow screen', () => {
  it('never scrolls sideways, even with a long chat title, and keeps Send, Stop and Deny with reason on screen', async () => {
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: `echo ${'long-argument-'.repeat(20)}` } }] });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await page.setViewportSize({ width: WIDTH, height: 740 });
    await expectOnScreen(page.getByRole('button', { name: 'Send', exact: true }));
    expect(await tooWide(page)).toStrictEqual([]);

    await chat.send('Please-look-at-this-extraordinarily-long-unbroken-chat-title-that-goes-on-and-on-and-on');
    const card = chat.card();
    await chat.waitForStatus(card, 'Waiting for your decision');
    await page.getByRole('navigation', { name: 'Chats' }).getByText(/^Please-look-at/).waitFor();
    expect(await tooWide(page)).toStrictEqual([]);
    await expectOnScreen(chat.button(card, 'Deny with reason…'));
    await expectOnScreen(page.getByRole('button', { name: 'Stop', exact: true }));
  });
});
