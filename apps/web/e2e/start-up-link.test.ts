import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { PAGE_TIMEOUT_MS } from './support/chat-page';

const suite = useBrowserSuite();

/** Every key and value of this origin's sessionStorage and localStorage, as `session:key=value` / `local:key=value`. */
function storedEntries(): string[] {
  const entries = (kind: string, storage: Storage) =>
    Array.from({ length: storage.length }, (_, index) => {
      const key = storage.key(index) ?? '';
      return `${kind}:${key}=${storage.getItem(key) ?? ''}`;
    });
  return [...entries('session', window.sessionStorage), ...entries('local', window.localStorage)];
}

/** The addresses of this tab's history entries, as the Navigation API lists them. */
function historyEntries(): string[] {
  const { navigation } = window as unknown as { navigation: { entries(): { url: string | null }[] } };
  return navigation.entries().map((entry) => entry.url ?? '');
}

describe('the start-up link', () => {
  it('as printed, carries a one-time code the page exchanges: no address the tab visited, nor its history, held the token', async () => {
    const { server } = suite.airlock;
    const link = new URL(server.newLink());
    expect(link.hash).toMatch(/^#code=[A-Za-z0-9_-]{27}$/);
    const page = await suite.context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
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
    await page.close();
  });

  it('leaves the token in the tab’s memory only: the tab keeps a per-tab credential, which re-opens it after a reload, and no storage ever holds the token', async () => {
    const { server } = suite.airlock;
    const page = await suite.context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const tabCredential = () => page.evaluate(() => window.sessionStorage.getItem('airlock.tab'));

    await page.goto(server.newLink());
    await page.getByRole('status', { name: 'Connection: Connected' }).waitFor();
    await page.waitForFunction(() => window.sessionStorage.getItem('airlock.tab') !== null);
    const first = await tabCredential();
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await page.evaluate(storedEntries)).filter((entry) => entry.includes(server.token))).toStrictEqual([]);

    await page.reload();
    // A new credential is given only once the server took the kept one in the token's place.
    await page.waitForFunction((kept) => ![null, kept].includes(window.sessionStorage.getItem('airlock.tab')), first);
    await page.getByRole('status', { name: 'Connection: Connected' }).waitFor();
    expect(await page.getByRole('heading', { name: 'This link is no longer valid' }).count()).toBe(0);
    expect(page.url()).toBe(`${new URL(server.browserUrl).origin}/`);
    expect((await page.evaluate(storedEntries)).filter((entry) => entry.includes(server.token))).toStrictEqual([]);
    await page.close();
  });

  it('a tab credential that no longer works (used already) shows the screen to open the new link or paste the token, and is dropped', async () => {
    const { server } = suite.airlock;
    const page = await suite.context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await page.goto(server.newLink());
    await page.waitForFunction(() => window.sessionStorage.getItem('airlock.tab') !== null);
    const used = await page.evaluate(() => window.sessionStorage.getItem('airlock.tab'));
    await page.reload();
    await page.waitForFunction((kept) => ![null, kept].includes(window.sessionStorage.getItem('airlock.tab')), used);

    const other = await suite.context.newPage();
    other.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await other.goto(`${new URL(server.browserUrl).origin}/`);
    await other.getByRole('heading', { name: 'Open Airlock from its start-up link' }).waitFor();
    await other.evaluate((credential) => window.sessionStorage.setItem('airlock.tab', credential!), used);
    await other.reload();
    await other.getByRole('heading', { name: 'This link is no longer valid' }).waitFor();
    await other.waitForFunction(() => window.sessionStorage.getItem('airlock.tab') === null);
    await other.close();
    await page.close();
  });

  it('opened again, as from the browser’s history, says it was used, that no new link was printed where a tool could read it and how to get in, and holds no token', async () => {
    const link = suite.airlock.server.newLink();
    const first = await suite.context.newPage();
    first.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await first.goto(link);
    await first.getByRole('status', { name: 'Connection: Connected' }).waitFor();
    await first.close();

    const again = await suite.context.newPage();
    again.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await again.goto(link);
    await again.getByRole('heading', { name: 'This start-up link cannot open Airlock' }).waitFor();
    expect(await again.locator('.auth-card').textContent()).toContain(
      // This server's output is not a terminal.
      'This start-up link was used already (each link opens Airlock once). Airlock prints no new link, since its output is not a terminal and a tool could ' +
        'read it there: start Airlock again for a new link, or start it with --token-file (or AIRLOCK_TOKEN_FILE) and use that token (paste it on the page).',
    );
    expect(again.url()).not.toContain('#code=');
    expect((await again.evaluate(storedEntries)).filter((entry) => entry.includes(suite.airlock.server.token))).toStrictEqual([]);
    await again.close();
  });

  it('opens the run’s own *.localhost origin, which Chromium reaches on loopback, and connects there', async () => {
    const link = new URL(suite.airlock.link);
    expect(link.hostname).toMatch(/^airlock-[a-z2-7]{16}\.localhost$/);
    const page = await suite.context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
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
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
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
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
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
    expect((await page.evaluate(storedEntries)).filter((entry) => entry.includes(suite.airlock.server.token))).toStrictEqual([]);
  });

  it('still takes a bare token pasted into the token screen on 127.0.0.1 (the fallback for a token file)', async () => {
    const page = await suite.context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await page.goto(`${suite.airlock.server.url}/`);
    await page.getByRole('heading', { name: 'Open Airlock from its start-up link' }).waitFor();
    await page.getByRole('textbox', { name: 'Or paste the address, or the token alone, here' }).fill(suite.airlock.server.token);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByRole('status', { name: 'Connection: Connected' }).waitFor();
    expect(new URL(page.url()).origin).toBe(suite.airlock.server.url);

    // The pasted token too stays in memory; the tab credential kept beside it re-opens the tab after a reload.
    await page.waitForFunction(() => window.sessionStorage.getItem('airlock.tab') !== null);
    const first = await page.evaluate(() => window.sessionStorage.getItem('airlock.tab'));
    await page.reload();
    await page.waitForFunction((kept) => ![null, kept].includes(window.sessionStorage.getItem('airlock.tab')), first);
    await page.getByRole('status', { name: 'Connection: Connected' }).waitFor();
    expect((await page.evaluate(storedEntries)).filter((entry) => entry.includes(suite.airlock.server.token))).toStrictEqual([]);
  });
});
