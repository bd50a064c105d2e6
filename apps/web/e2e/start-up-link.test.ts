import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';

const suite = useBrowserSuite();

/** The addresses of this tab's history entries, as the Navigation API lists them. */
function historyEntries(): string[] {
  const { navigation } = window as unknown as { navigation: { entries(): { url: string | null }[] } };
  return navigation.entries().map((entry) => entry.url ?? '');
}

describe('the start-up link', () => {
  it('as printed, carries a one-time code the page exchanges: no address the tab visited, nor its history, held the token; a reload stays connected', async () => {
    const { server } = suite.airlock;
    const link = new URL(server.newLink());
    expect(link.hash).toMatch(/^#code=[A-Za-z0-9_-]{27}$/);
    const page = await suite.context.newPage();
    page.setDefaultTimeout(15_000);
    const visited: string[] = [];
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) visited.push(frame.url());
    });

    await page.goto(link.href);
    await page.getByRole('status', { name: 'Connection: Connected' }).waitFor();

    expect(page.url()).toBe(`${link.origin}/`);
    const entries = await page.evaluate(historyEntries);
    // The code left the address too, before it was exchanged: the entry a reload or Back comes to holds neither.
    expect(entries).toStrictEqual([`${link.origin}/`]);
    expect([...visited, ...entries].filter((address) => address.includes(server.token))).toStrictEqual([]);
    expect(await page.evaluate(() => window.sessionStorage.getItem('airlock.token'))).toBe(server.token);

    await page.reload();
    await page.getByRole('status', { name: 'Connection: Connected' }).waitFor();
    expect(page.url()).toBe(`${link.origin}/`);
    await page.close();
  });

  it('opened again, as from the browser’s history, says it was used and that a new link was printed, and holds no token', async () => {
    const link = suite.airlock.server.newLink();
    const first = await suite.context.newPage();
    first.setDefaultTimeout(15_000);
    await first.goto(link);
    await first.getByRole('status', { name: 'Connection: Connected' }).waitFor();
    await first.close();

    const again = await suite.context.newPage();
    again.setDefaultTimeout(15_000);
    await again.goto(link);
    await again.getByRole('heading', { name: 'This start-up link cannot open Airlock' }).waitFor();
    expect(await again.locator('.auth-card').textContent()).toContain(
      'This start-up link was used already (each link opens Airlock once). Airlock printed a new link in the terminal where it runs: open that one.',
    );
    expect(again.url()).not.toContain('#code=');
    expect(await again.evaluate(() => window.sessionStorage.getItem('airlock.token'))).toBeNull();
    await again.close();
  });

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
