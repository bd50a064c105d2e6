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

  it('pasted into the token screen on 127.0.0.1, opens the run’s own origin and leaves no token on 127.0.0.1', async () => {
    const link = new URL(suite.airlock.link);
    const page = await suite.context.newPage();
    page.setDefaultTimeout(10_000);
    const sockets: string[] = [];
    page.on('websocket', (socket) => sockets.push(socket.url()));
    await page.goto(`${suite.airlock.server.url}/`);
    await page.getByRole('heading', { name: 'Open Airlock from its start-up link' }).waitFor();

    await page.getByRole('textbox', { name: 'Or paste the address, or the token alone, here' }).fill(`Airlock is running at ${link.href}`);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByRole('status', { name: 'Connection: Connected' }).waitFor();
    expect(new URL(page.url()).origin).toBe(link.origin);
    expect(page.url()).not.toContain('token=');
    expect(sockets.map((socket) => new URL(socket).host)).toStrictEqual([link.host]);

    // This tab's sessionStorage for 127.0.0.1 outlives the navigation away: back there, it holds no token.
    await page.goto(`${suite.airlock.server.url}/`);
    await page.getByRole('heading', { name: 'Open Airlock from its start-up link' }).waitFor();
    expect(await page.evaluate(() => window.sessionStorage.getItem('airlock.token'))).toBeNull();
  });

  it('still takes a bare token pasted into the token screen on 127.0.0.1 (the fallback for a token file)', async () => {
    const page = await suite.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${suite.airlock.server.url}/`);
    await page.getByRole('heading', { name: 'Open Airlock from its start-up link' }).waitFor();
    await page.getByRole('textbox', { name: 'Or paste the address, or the token alone, here' }).fill(suite.airlock.server.token);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByRole('status', { name: 'Connection: Connected' }).waitFor();
    expect(new URL(page.url()).origin).toBe(suite.airlock.server.url);
  });
});
