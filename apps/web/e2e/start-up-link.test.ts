import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';

const suite = useBrowserSuite();

describe('the start-up link', () => {
  it('opens the run’s own *.localhost origin, which Chromium reaches on loopback, and connects there', async () => {
    const link = new URL(suite.airlock.link);
    expect(link.hostname).toMatch(/^airlock-[a-z2-7]{16}\.localhost$/);
    const page = await suite.context.newPage();
    page.setDefaultTimeout(10_000);
    const sockets: string[] = [];
    page.on('websocket', (socket) => sockets.push(socket.url()));

    await page.goto(link.href);
    await page.getByRole('status', { name: 'Connection: Connected' }).waitFor();

    expect(new URL(page.url()).origin).toBe(link.origin);
    expect(page.url()).not.toContain('token=');
    expect(sockets.map((socket) => new URL(socket).host)).toStrictEqual([link.host]);
  });

  it('is picked up when pasted into a tab already on the token screen', async () => {
    const page = await suite.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${suite.airlock.server.url}/`);
    await page.getByRole('heading', { name: 'Open Airlock from its start-up link' }).waitFor();
    await page.evaluate((hash) => {
      window.location.hash = hash;
    }, new URL(suite.airlock.link).hash);
    await page.getByRole('status', { name: 'Connection: Connected' }).waitFor();
    expect(page.url()).not.toContain('token=');
  });
});
