import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite();

describe('a link in a reply', () => {
  it('holds no address the browser could look up on hover, and opens in a new tab with no referrer and no opener on a click', async () => {
    const target = `${suite.airlock.server.browserUrl}/healthz`;
    suite.airlock.model.enqueue({ text: `Read [the health page](${target}) first.` });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('where do I look?');
    const link = chat.page.getByLabel('Assistant').getByRole('button', { name: 'the health page' });
    await link.hover();
    expect(await link.getAttribute('title')).toBe(target);
    expect(await chat.page.getByLabel('Assistant').locator('[href]').count()).toBe(0);
    expect(await chat.page.evaluate(() => document.querySelector('meta[http-equiv="x-dns-prefetch-control"]')?.getAttribute('content'))).toBe('off');

    const opened = suite.context.waitForEvent('page');
    await link.click();
    const tab = await opened;
    await tab.waitForLoadState();
    expect(tab.url()).toBe(target);
    expect(await tab.evaluate(() => ({ referrer: document.referrer, opener: window.opener as unknown }))).toStrictEqual({ referrer: '', opener: null });
  });

  // Found in review: an address with no scheme kept the user name it holds on hover, and the browser opened the host
  // after it.
  it('shows and opens an address with no scheme as the browser reads it, with no user name', async () => {
    const airlock = new URL(suite.airlock.server.browserUrl);
    const target = `http://127.0.0.1:${airlock.port}/healthz`;
    suite.airlock.model.enqueue({ text: `Read [the health page](//${airlock.host}@127.0.0.1:${airlock.port}/healthz) first.` });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await chat.send('where do I look?');
    const link = chat.page.getByLabel('Assistant').getByRole('button', { name: 'the health page' });
    expect(await link.getAttribute('title')).toBe(target);

    const opened = suite.context.waitForEvent('page');
    await link.click();
    const tab = await opened;
    await tab.waitForLoadState();
    expect(tab.url()).toBe(target);
  });
});
