import { createAirlockClient, parseStartupLink, type RunStream } from '@airlock/client';
import type { BrowserContext, Page, WebSocketRoute } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { RECORDING_COMMAND } from './support/airlock-under-test';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';
import { nextShownByWorker } from './support/worker-notifications';

const suite = useBrowserSuite();

/** The parts of a service worker's global scope the test uses (the DOM typings have none). */
interface WorkerScope {
  registration: { getNotifications(filter: { tag: string }): Promise<Notification[]> };
  NotificationEvent: new (type: string, init: { notification: Notification | undefined; action: string }) => Event;
  dispatchEvent(event: Event): boolean;
}

interface Shown {
  title: string;
  body: string;
  tag: string;
  actions: string[];
  /** When it was put on screen: a notification shown again under the same tag has a new one. */
  timestamp: number;
}

/** Turns notifications on in Settings, and waits for the notification worker. */
async function turnOnNotifications(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('checkbox', { name: /Notify me when a decision is needed/ }).check();
  await page.getByRole('button', { name: 'Close settings' }).click();
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
}

/** Makes the page believe its tab went to the background, as a switch to another tab does. */
async function hide(page: Page): Promise<void> {
  await page.evaluate(() => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  });
}

/** The notifications on screen, as the page's service worker registration lists them. */
async function shown(page: Page): Promise<Shown[]> {
  return page.evaluate(async (): Promise<Shown[]> => {
    const registration = await navigator.serviceWorker.ready;
    const notifications = await registration.getNotifications();
    return notifications.map((n) => ({ title: n.title, body: n.body, tag: n.tag, actions: (n as unknown as { actions: { action: string }[] }).actions.map((a) => a.action), timestamp: (n as unknown as { timestamp: number }).timestamp }));
  });
}

/** A tab with notifications on, hidden while its chat's message makes two terminal calls wait; both are shown. */
async function twoCallsShownWhileHidden(...commands: [string, string]): Promise<{ chat: ChatPage; page: Page; all: Shown[] }> {
  await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
  suite.airlock.model.enqueue({ toolCalls: commands.map((command) => ({ name: 'terminal', arguments: { command } })) });
  const chat = await ChatPage.open(suite.context, suite.airlock.link);
  const { page } = chat;
  await turnOnNotifications(page);
  await hide(page);
  await chat.send('two commands');
  await vi.waitFor(async () => expect(await shown(page)).toHaveLength(2), { timeout: 10_000 });
  return { chat, page, all: await shown(page) };
}

describe('notifications of waiting calls', () => {
  it('names each call while the tab is hidden, and an Allow from one decides that call only', async () => {
    const { chat, page, all } = await twoCallsShownWhileHidden(RECORDING_COMMAND, 'echo second\u202E; rm -rf ~\nls\nls');
    const first = all.find((notification) => notification.body.startsWith(RECORDING_COMMAND));
    const second = all.find((notification) => notification.body.startsWith('echo second'));
    expect(first).toMatchObject({ title: 'Decision needed: terminal', body: `${RECORDING_COMMAND}\nin “two commands”`, actions: ['allow', 'deny'] });
    // Not all of the second fits in a notification: it offers Review in place of Allow.
    expect(second).toMatchObject({ body: 'echo second\\u{202E}; rm -rf ~… (3 lines, 35 characters)\nin “two commands”', actions: ['open', 'deny'] });
    expect(second!.body).not.toContain('\u202E');

    const click = clickInWorker;
    // An Allow the notification could not have shown whole (a stale or forged action) only opens the card.
    await click(second!.tag, 'allow');
    await vi.waitFor(async () => expect(await page.evaluate(() => document.activeElement?.getAttribute('data-approval-id'))).toBe(second!.tag), { timeout: 10_000 });
    await chat.waitForStatus(chat.card(1), 'Waiting for your decision');

    await click(first!.tag, 'allow');
    await vi.waitFor(async () => expect(await suite.airlock.runCount()).toBe(1), { timeout: 10_000 });
    await chat.waitForStatus(chat.card(0), 'Done');
    await chat.waitForStatus(chat.card(1), 'Waiting for your decision');
  });

  // Found by an outside probe: an Allow 16 ms after the notification appeared ran the call.
  it('decides nothing on an Allow clicked as the notification appeared: it shows the call and says why', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await turnOnNotifications(page);
    await hide(page);
    await chat.send('one command');
    await vi.waitFor(async () => expect(await shown(page)).toHaveLength(1), { timeout: 10_000 });
    const [notification] = await shown(page);
    expect(notification!.actions).toStrictEqual(['allow', 'deny']);
    const [worker] = suite.context.serviceWorkers();
    const whyNot = await nextShownByWorker(worker!);
    // The click comes 100 ms after the notification was shown, on the worker's clock.
    await worker!.evaluate(async (tag) => {
      const scope = self as unknown as WorkerScope;
      const [shownNow] = await scope.registration.getNotifications({ tag });
      const now = Date.now;
      Date.now = () => (shownNow as unknown as { timestamp: number }).timestamp + 100;
      try {
        scope.dispatchEvent(new scope.NotificationEvent('notificationclick', { notification: shownNow, action: 'allow' }));
      } finally {
        Date.now = now;
      }
    }, notification!.tag);
    expect(await whyNot()).toMatchObject({
      title: 'Not decided',
      body: `Clicked as it appeared (within 0.6 s), so the call was not decided: a click meant for something else must not decide it. Read it in Waiting for you and decide there.\n${notification!.body}`,
      tag: `airlock-not-decided:${notification!.tag}`,
    });
    // The call's card is shown, still waiting; nothing ran.
    await vi.waitFor(async () => expect(await page.evaluate(() => document.activeElement?.getAttribute('data-approval-id'))).toBe(notification!.tag), { timeout: 10_000 });
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    expect(await suite.airlock.runCount()).toBe(0);
  });

  it('tells of a call put up while the person looked at the tab once they switch away while it waits', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo seen-first' } }] });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await turnOnNotifications(page);
    await chat.send('a call seen here');
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    // Looked at, so not told: the list of notifications stays empty while the tab is in front.
    await page.getByRole('region', { name: 'Waiting for you' }).getByRole('heading', { name: /Waiting for you \(1\)/ }).waitFor();
    expect(await shown(page)).toStrictEqual([]);

    await hide(page);
    await vi.waitFor(async () => expect((await shown(page)).map((n) => n.body)).toStrictEqual(['echo seen-first\nin “a call seen here”']), { timeout: 10_000 });
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
  });

  it('does not tell a call seen in front when the person switches to another Airlock tab, only once they leave the app', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo in-both-tabs' } }] });
    const first = await ChatPage.open(suite.context, suite.airlock.link);
    await turnOnNotifications(first.page);
    await first.send('a call seen in two tabs');
    await first.waitForStatus(first.card(), 'Waiting for your decision');
    // Every notification the first tab asks for, and every look it takes at the list, counted in the page.
    await first.page.evaluate(async () => {
      const counts = { looks: 0, shows: [] as string[] };
      (window as unknown as { counts: typeof counts }).counts = counts;
      const registration = await navigator.serviceWorker.ready;
      const getNotifications = registration.getNotifications.bind(registration);
      const showNotification = registration.showNotification.bind(registration);
      registration.getNotifications = (filter) => {
        counts.looks += 1;
        return getNotifications(filter);
      };
      registration.showNotification = (title, options) => {
        counts.shows.push(options?.body ?? '');
        return showNotification(title, options);
      };
    });
    const counts = () => first.page.evaluate(() => (window as unknown as { counts: { looks: number; shows: string[] } }).counts);
    // A second Airlock tab, in front: its Waiting for you lists the call.
    const second = await ChatPage.open(suite.context, suite.airlock.link);
    await second.page.getByRole('region', { name: 'Waiting for you' }).getByRole('listitem').getByText('echo in-both-tabs').waitFor();

    // The switch to it puts the first tab in the background. Passes are made one at a time, each starting with a
    // look at the list, so a third look after the switch means a whole pass of the hidden tab has been made (the
    // first may have begun before it).
    const before = (await counts()).looks;
    await hide(first.page);
    await vi.waitFor(async () => expect((await counts()).looks).toBeGreaterThanOrEqual(before + 3), { timeout: 10_000 });
    expect((await counts()).shows).toStrictEqual([]);
    expect(await shown(first.page)).toStrictEqual([]);

    // The person leaves Airlock altogether (here: closes the other tab): now the call is told.
    await second.page.close();
    await vi.waitFor(async () => expect((await counts()).shows).toStrictEqual(['echo in-both-tabs\nin “a call seen in two tabs”']), { timeout: 10_000 });
  });

  it('closes the notifications a tab showed as the tab goes, though their calls still wait', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo outlived' } }] });
    const going = await ChatPage.open(suite.context, suite.airlock.link);
    await turnOnNotifications(going.page);
    await hide(going.page);
    await going.send('a tab that goes');
    await vi.waitFor(async () => expect((await shown(going.page)).map((n) => n.body)).toStrictEqual(['echo outlived\nin “a tab that goes”']), { timeout: 10_000 });

    const staying = await ChatPage.open(suite.context, suite.airlock.link);
    await staying.page.getByRole('region', { name: 'Waiting for you' }).getByRole('heading', { name: /Waiting for you \(1\)/ }).waitFor();
    await going.page.close();
    // Its buttons would talk to a tab that is gone: the notification goes with it, and the call waits in the list.
    await vi.waitFor(async () => expect(await shown(staying.page)).toStrictEqual([]), { timeout: 10_000 });
    await staying.page.getByRole('region', { name: 'Waiting for you' }).getByRole('listitem').filter({ hasText: 'echo outlived' }).waitFor();
  });

  it('closes a notification left on screen of a call that waits no more, whichever tab showed it', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo still-waits' } }] });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await turnOnNotifications(chat.page);
    await chat.send('one call waits');
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    const approvalId = (await chat.card().getAttribute('data-approval-id'))!;
    const sessionId = (await chat.page.evaluate(() => window.sessionStorage.getItem('airlock.session')))!;

    // Left by tabs that ended without closing them (a crash, a killed browser): one of the call that waits, one of a
    // call the server no longer has (decided, or ended with its run, while no tab was open).
    const [worker] = suite.context.serviceWorkers();
    await worker!.evaluate(
      async ({ approvalId, sessionId }) => {
        const { registration } = self as unknown as { registration: ServiceWorkerRegistration };
        for (const id of [approvalId, 'approval-decided-meanwhile']) {
          await registration.showNotification('Decision needed: terminal', { tag: id, body: id, data: { approvalId: id, sessionId }, requireInteraction: true });
        }
      },
      { approvalId, sessionId },
    );
    await vi.waitFor(async () => expect((await shown(chat.page)).map((n) => n.tag)).toStrictEqual([approvalId]), { timeout: 10_000 });
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
  });

  it('names a call that starts waiting later in a run of a chat this tab does not show', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    suite.airlock.model.enqueue(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo step-one' } }] },
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo step-two' } }] },
      { text: 'Both steps ran.' },
    );
    const watcher = await ChatPage.open(suite.context, suite.airlock.link);
    await turnOnNotifications(watcher.page);
    await hide(watcher.page);

    const driver = await ChatPage.open(suite.context, suite.airlock.link);
    await driver.send('one step, then another');
    await vi.waitFor(async () => expect((await shown(watcher.page)).map((n) => n.body)).toStrictEqual(['echo step-one\nin “one step, then another”']), { timeout: 10_000 });

    // The run goes on: nothing about the chat itself changes as its next call starts waiting.
    await driver.button(driver.card(0), 'Allow terminal').click();
    await driver.waitForStatus(driver.card(1), 'Waiting for your decision');
    await vi.waitFor(async () => expect((await shown(watcher.page)).map((n) => n.body)).toStrictEqual(['echo step-two\nin “one step, then another”']), { timeout: 10_000 });
  });

  it('shows a waiting call again when its notification goes missing, unless the person dismissed it', async () => {
    const { chat, page, all: before } = await twoCallsShownWhileHidden('echo lost', 'echo dismissed');
    const lost = before.find((notification) => notification.body.startsWith('echo lost'))!;
    const dismissed = before.find((notification) => notification.body.startsWith('echo dismissed'))!;

    const [worker] = suite.context.serviceWorkers();
    // The person dismisses one: the worker hears of it and tells every tab, and it leaves the screen.
    const told = page.evaluate(
      (tag) =>
        new Promise<void>((resolve) =>
          navigator.serviceWorker.addEventListener('message', (event: MessageEvent<{ type?: string; approvalId?: string }>) => {
            if (event.data.type === 'airlock-notification-end' && event.data.approvalId === tag) resolve();
          }),
        ),
      dismissed.tag,
    );
    await worker!.evaluate(async (tag) => {
      const scope = self as unknown as WorkerScope;
      const [notification] = await scope.registration.getNotifications({ tag });
      scope.dispatchEvent(new scope.NotificationEvent('notificationclose', { notification, action: '' }));
      notification!.close();
    }, dismissed.tag);
    await told;
    // The other goes missing without the person's doing: closed where nothing tells the app.
    await worker!.evaluate(async (tag) => {
      const [notification] = await (self as unknown as WorkerScope).registration.getNotifications({ tag });
      notification!.close();
    }, lost.tag);

    await vi.waitFor(
      async () => {
        const again = (await shown(page)).find((notification) => notification.tag === lost.tag);
        expect(again?.timestamp).toBeGreaterThan(lost.timestamp);
      },
      { timeout: 10_000 },
    );
    expect((await shown(page)).map((notification) => notification.tag)).toStrictEqual([lost.tag]);
    await chat.waitForStatus(chat.card(0), 'Waiting for your decision');
    await chat.waitForStatus(chat.card(1), 'Waiting for your decision');
  });

  it('an Allow that reaches another tab runs nothing while a tab of this browser holds an edit of the call: it opens the card', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] });
    const editing = await ChatPage.open(suite.context, suite.airlock.link);
    await turnOnNotifications(editing.page);
    await hide(editing.page);
    await editing.send('edit it');
    await vi.waitFor(async () => expect(await shown(editing.page)).toHaveLength(1), { timeout: 10_000 });
    const [notification] = await shown(editing.page);
    expect(notification!.actions).toStrictEqual(['allow', 'deny']);

    const front = await ChatPage.open(suite.context, suite.airlock.link);
    await front.page.getByRole('region', { name: 'Waiting for you' }).getByRole('heading', { name: /Waiting for you \(1\)/ }).waitFor();
    // The front tab hears of the edit held in the other through their shared storage.
    const heard = front.page.evaluate(() => new Promise<void>((resolve) => window.addEventListener('storage', () => resolve(), { once: true })));
    const card = editing.card();
    await editing.button(card, 'Edit arguments of terminal').click();
    const editor = card.getByRole('form', { name: 'Edit the arguments of terminal' });
    await editor.getByRole('textbox', { name: /^command/ }).fill('echo edited-by-person');
    await editor.getByRole('group', { name: 'The edited call as it will run' }).getByText('echo edited-by-person', { exact: true }).waitFor();
    await heard;

    // The worker hands a click to the tab in front, not to the one that showed the notification: as it would.
    const data = await editing.page.evaluate(async () => {
      const [only] = await (await navigator.serviceWorker.ready).getNotifications();
      return only!.data as { approvalId: string; sessionId: string };
    });
    await front.page.evaluate((data) => navigator.serviceWorker.dispatchEvent(new MessageEvent('message', { data: { ...data, notAfter: Date.now() + 60_000 } })), { type: 'airlock-notification-click', action: 'allow', ...data });
    await vi.waitFor(async () => expect(await front.page.evaluate(() => document.activeElement?.getAttribute('data-approval-id'))).toBe(notification!.tag), { timeout: 10_000 });
    await front.waitForStatus(front.card(), 'Waiting for your decision');
    await editing.waitForStatus(card, 'Waiting for your decision');
    expect(await suite.airlock.runCount()).toBe(0);
    await editor.getByRole('group', { name: 'The edited call as it will run' }).getByText('echo edited-by-person', { exact: true }).waitFor();
  });

  it('a tab never closes the notification of a call it has not seen, shown by another tab', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    // Each tab is kept from hearing of one chat's waiting calls: "first" sees only chat-x's call, "second" only chat-y's.
    const first = await tabNotHearingOf(suite.context, suite.airlock.link, 'chat-y');
    await turnOnNotifications(first.page);
    await hide(first.page);
    const second = await tabNotHearingOf(suite.context, suite.airlock.link, 'chat-x');
    await second.page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
    await hide(second.page);

    const client = createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket });
    const runs: RunStream[] = [];
    const waitingRun = async (sessionId: string, command: string) => {
      suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command } }] });
      const run = client.startRun({ sessionId, message: `run ${command}` });
      runs.push(run);
      for await (const event of run) if (event.type === 'tool-start') return;
    };
    try {
      await waitingRun('chat-x', 'echo x');
      await vi.waitFor(async () => expect((await shown(first.page)).map((n) => n.body)).toStrictEqual(['echo x\nin “run echo x”']), { timeout: 10_000 });

      // The second tab shows chat-y's call; before that, it goes through every notification on screen, chat-x's
      // included, which it has never heard of.
      await waitingRun('chat-y', 'echo y');
      await vi.waitFor(async () => expect((await shown(first.page)).map((n) => n.body)).toContain('echo y\nin “run echo y”'), { timeout: 10_000 });
      expect((await shown(first.page)).map((n) => n.body).sort()).toStrictEqual(['echo x\nin “run echo x”', 'echo y\nin “run echo y”']);
    } finally {
      await Promise.all(runs.map((run) => run.cancel().catch(() => false)));
      await client.close();
    }
  });
});

describe('a click on a notification that cannot be acted on', () => {
  it('says so in a notification of its own when the tab has lost its server, and decides nothing', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] });
    // The tab's socket can be cut as a server stopping (or moving to another address) cuts it, for good.
    const page = await suite.context.newPage();
    page.setDefaultTimeout(10_000);
    const open: WebSocketRoute[] = [];
    let cut = false;
    await page.routeWebSocket(/\/trpc/, (ws: WebSocketRoute) => {
      if (cut) return void ws.close({ code: 1001, reason: 'gone' });
      ws.connectToServer();
      open.push(ws);
    });
    await page.goto(suite.airlock.link);
    const chat = new ChatPage(page);
    await chat.connected();
    await turnOnNotifications(page);
    await hide(page);
    await chat.send('decided from afar');
    await vi.waitFor(async () => expect(await shown(page)).toHaveLength(1), { timeout: 10_000 });
    const [notification] = await shown(page);
    expect(notification!.actions).toStrictEqual(['allow', 'deny']);

    cut = true;
    await Promise.all(open.map((ws) => ws.close({ code: 1001, reason: 'gone' })));
    await page.getByRole('status', { name: /^Connection: (Reconnecting…|Offline, retrying)$/ }).waitFor();
    const [worker] = suite.context.serviceWorkers();
    const whyNot = await nextShownByWorker(worker!);
    await clickInWorker(notification!.tag, 'allow');
    const told = await whyNot();
    expect(told).toMatchObject({ title: 'Not decided', tag: `airlock-not-decided:${notification!.tag}` });
    expect(told.body).toMatch(/^Not allowed: this tab is not connected to Airlock \(the server stopped, or now serves another address\)\./);
    expect(await suite.airlock.runCount()).toBe(0);
  });

  it('says so in a notification of its own when no tab of the app is open to act on it', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    await turnOnNotifications(chat.page);
    const [worker] = suite.context.serviceWorkers();
    await chat.page.close();
    // Left on screen by a tab that ended without closing it (a crash, a killed browser).
    await worker!.evaluate(async () => {
      const { registration } = self as unknown as { registration: ServiceWorkerRegistration };
      await registration.showNotification('Decision needed: terminal', { tag: 'apv_left', body: 'echo left', data: { approvalId: 'apv_left', sessionId: 'chat-left' }, requireInteraction: true });
    });
    const whyNot = await nextShownByWorker(worker!);
    await clickInWorker('apv_left', 'allow');
    await whyNot();
    const listed = await worker!.evaluate(async () => {
      const { registration } = self as unknown as { registration: ServiceWorkerRegistration };
      return (await registration.getNotifications()).map((n) => ({ title: n.title, body: n.body }));
    });
    expect(listed).toStrictEqual([
      {
        title: 'Not decided',
        body: 'No tab of Airlock is open at this address, so the call was not decided. Open Airlock (after a restart, with the link the server printed) and decide it in Waiting for you.\necho left',
      },
    ]);
  });
});

describe('a click on a notification that no tab answers', () => {
  it('is answered as when no tab is open once the worker has waited its bound, not waited on for good', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    // A tab of the app from before the worker took clicks: it hears them and never answers.
    const page = await suite.context.newPage();
    page.setDefaultTimeout(25_000);
    await page.addInitScript(() => {
      (window as unknown as { heardClicks: number }).heardClicks = 0;
      navigator.serviceWorker?.addEventListener('message', (event) => {
        if ((event.data as { type?: unknown } | null)?.type !== 'airlock-notification-click') return;
        (window as unknown as { heardClicks: number }).heardClicks += 1;
        event.stopImmediatePropagation();
      });
    });
    await page.goto(suite.airlock.link);
    const chat = new ChatPage(page);
    await chat.connected();
    await turnOnNotifications(page);
    const [worker] = suite.context.serviceWorkers();
    // The worker's timers are held for the test to run: its bound is run at once, and not waited for.
    await worker!.evaluate(async () => {
      const scope = self as unknown as { registration: ServiceWorkerRegistration; heldTimers: (() => void)[]; setTimeout: (callback: () => void) => number; clearTimeout: () => void };
      scope.heldTimers = [];
      scope.setTimeout = (callback) => scope.heldTimers.push(callback);
      scope.clearTimeout = () => undefined;
      await scope.registration.showNotification('Decision needed: terminal', { tag: 'apv_old_tab', body: 'echo old', data: { approvalId: 'apv_old_tab', sessionId: 'chat-old-tab' }, requireInteraction: true });
    });
    const whyNot = await nextShownByWorker(worker!);
    await clickInWorker('apv_old_tab', 'allow');
    await vi.waitFor(async () => expect(await page.evaluate(() => (window as unknown as { heardClicks: number }).heardClicks)).toBe(1), { timeout: 10_000 });
    await vi.waitFor(async () => expect(await worker!.evaluate(() => (self as unknown as { heldTimers: unknown[] }).heldTimers.length)).toBe(1), { timeout: 10_000 });
    await worker!.evaluate(() => (self as unknown as { heldTimers: (() => void)[] }).heldTimers.forEach((run) => run()));
    expect(await whyNot()).toStrictEqual({
      title: 'Not decided',
      body: 'No tab of Airlock answered the click (a tab opened before Airlock was updated takes none), so the call may not be decided. Reload Airlock and decide it in Waiting for you.\necho old',
      tag: 'airlock-not-decided:apv_old_tab',
    });
    expect(await suite.airlock.runCount()).toBe(0);
  });
});

describe('a click on a notification that a tab reads late', () => {
  it('decides nothing once the worker has given up on it (a tab frozen in the background reads it as it wakes): the tab shows the call', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: RECORDING_COMMAND } }] });
    const page = await suite.context.newPage();
    // While `frozen`, the tab holds the clicks the worker posts, as a tab the browser froze in the background does.
    await page.addInitScript(() => {
      const tab = window as unknown as { frozen: boolean; heldClicks: MessageEvent[] };
      tab.frozen = false;
      tab.heldClicks = [];
      navigator.serviceWorker?.addEventListener('message', (event) => {
        if (!tab.frozen || (event.data as { type?: unknown } | null)?.type !== 'airlock-notification-click') return;
        tab.heldClicks.push(event);
        event.stopImmediatePropagation();
      });
    });
    await page.goto(suite.airlock.link);
    const chat = new ChatPage(page);
    await chat.connected();
    await turnOnNotifications(page);
    await hide(page);
    await chat.send('one command');
    await vi.waitFor(async () => expect(await shown(page)).toHaveLength(1), { timeout: 10_000 });
    const [notification] = await shown(page);
    expect(notification!.actions).toStrictEqual(['allow', 'deny']);
    const [worker] = suite.context.serviceWorkers();
    // The worker's timers are held for the test to run: its wait for the tab's answer is over when the test says.
    await worker!.evaluate(() => {
      const scope = self as unknown as { heldTimers: (() => void)[]; setTimeout: (callback: () => void) => number; clearTimeout: () => void };
      scope.heldTimers = [];
      scope.setTimeout = (callback) => scope.heldTimers.push(callback);
      scope.clearTimeout = () => undefined;
    });
    await page.evaluate(() => ((window as unknown as { frozen: boolean }).frozen = true));
    const whyNot = await nextShownByWorker(worker!);
    await clickInWorker(notification!.tag, 'allow');
    await vi.waitFor(async () => expect(await page.evaluate(() => (window as unknown as { heldClicks: unknown[] }).heldClicks.length)).toBe(1), { timeout: 10_000 });
    await vi.waitFor(async () => expect(await worker!.evaluate(() => (self as unknown as { heldTimers: unknown[] }).heldTimers.length)).toBe(1), { timeout: 10_000 });
    await worker!.evaluate(() => (self as unknown as { heldTimers: (() => void)[] }).heldTimers.forEach((run) => run()));
    expect(await whyNot()).toMatchObject({ title: 'Not decided', tag: `airlock-not-decided:${notification!.tag}` });

    // The tab wakes past the click's time and reads it, its wall clock set back an hour meanwhile (by hand, or a time
    // sync): by that clock the click would be just made. Found in review: the tab decided it then.
    await page.evaluate(() => {
      const tab = window as unknown as { frozen: boolean; heldClicks: MessageEvent<{ notAfter?: number }>[]; setBack?: () => void };
      tab.frozen = false;
      const [held] = tab.heldClicks;
      const now = Date.now;
      Date.now = () => now() - 3_600_000;
      tab.setBack = () => (Date.now = now);
      navigator.serviceWorker.dispatchEvent(new MessageEvent('message', { data: held!.data, ports: [...held!.ports] }));
    });
    await vi.waitFor(async () => expect(await page.evaluate(() => document.activeElement?.getAttribute('data-approval-id'))).toBe(notification!.tag), { timeout: 10_000 });
    await page.evaluate(() => (window as unknown as { setBack: () => void }).setBack());
    await chat.waitForStatus(chat.card(), 'Waiting for your decision');
    expect(await suite.airlock.runCount()).toBe(0);
  });
});

/** How long a notification is shown before its Allow or Deny decides (the worker's ARMING_MS). */
const NOTIFICATION_ARMING_MS = 600;

/**
 * Clicks the notification `tag` (on `action`) as the person would, in the page's service worker, once it has been on
 * screen for the arming time, as a person who read it.
 */
async function clickInWorker(tag: string, action: string): Promise<void> {
  const [worker] = suite.context.serviceWorkers();
  const age = () =>
    worker!.evaluate(async (tag) => {
      const [notification] = await (self as unknown as WorkerScope).registration.getNotifications({ tag });
      return notification === undefined ? Infinity : Date.now() - (notification as unknown as { timestamp: number }).timestamp;
    }, tag);
  await vi.waitFor(async () => expect(await age()).toBeGreaterThanOrEqual(NOTIFICATION_ARMING_MS), { timeout: 10_000, interval: 50 });
  await worker!.evaluate(
    async ([tag, action]) => {
      const scope = self as unknown as WorkerScope;
      const [notification] = await scope.registration.getNotifications({ tag });
      scope.dispatchEvent(new scope.NotificationEvent('notificationclick', { notification, action }));
    },
    [tag, action] as const,
  );
}

describe('the notification setting', () => {
  it('is each browser profile’s own: turning it on or off in one leaves another on the same server as it was', async () => {
    const origin = new URL(suite.airlock.link).origin;
    const otherProfile = await suite.browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      await suite.context.grantPermissions(['notifications'], { origin });
      await otherProfile.grantPermissions(['notifications'], { origin });
      const first = await ChatPage.open(suite.context, suite.airlock.link);
      const second = await ChatPage.open(otherProfile, suite.airlock.link);
      const notifyBox = async (chat: ChatPage) => {
        await chat.page.getByRole('button', { name: 'Settings', exact: true }).click();
        const dialog = chat.page.getByRole('dialog', { name: 'Settings' });
        // Loaded from the server: the tool settings show, and with them whatever the server could still say.
        await dialog.getByRole('checkbox', { name: /^terminal/ }).waitFor();
        return dialog.getByRole('checkbox', { name: /Notify me when a decision is needed/ });
      };

      await (await notifyBox(first)).check();
      await second.page.reload();
      await second.connected();
      const secondBox = await notifyBox(second);
      expect(await secondBox.isChecked()).toBe(false);
      await expect(secondBox.locator('xpath=..').textContent()).resolves.toContain('Kept by this browser for this address; other browsers and profiles keep their own.');

      await secondBox.check();
      await secondBox.uncheck();
      await first.page.reload();
      await first.connected();
      // Kept over a reload, and the other profile's off did not reach it.
      expect(await (await notifyBox(first)).isChecked()).toBe(true);
      await second.page.reload();
      await second.connected();
      expect(await (await notifyBox(second)).isChecked()).toBe(false);
    } finally {
      await otherProfile.close();
    }
  });
});

/** A tab of the app whose requests for the waiting calls of `sessionId` never reach the server. */
async function tabNotHearingOf(context: BrowserContext, link: string, sessionId: string): Promise<ChatPage> {
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.routeWebSocket(/\/trpc/, (ws: WebSocketRoute) => {
    const server = ws.connectToServer();
    ws.onMessage((message) => {
      const text = String(message);
      if (text.includes('"chat.pending"') && text.includes(`"${sessionId}"`)) return;
      server.send(message);
    });
  });
  await page.goto(link);
  const chat = new ChatPage(page);
  await chat.connected();
  return chat;
}
