import { describe, expect, it, vi } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';
import { nextShownByWorker } from './support/worker-notifications';

// Calls kept over the restart: the old notification's call still waits, at the server's new address.
const suite = useBrowserSuite({ keepData: true });

/** The parts of a service worker's global scope the test uses (the DOM typings have none). */
interface WorkerScope {
  registration: ServiceWorkerRegistration;
  NotificationEvent: new (type: string, init: { notification: Notification | undefined; action: string }) => Event;
  dispatchEvent(event: Event): boolean;
}

describe('a notification shown before the server restarted on a new address', () => {
  it('its Allow decides nothing and a notification says why: the tab is signed out', async () => {
    await suite.context.grantPermissions(['notifications'], { origin: new URL(suite.airlock.link).origin });
    suite.airlock.model.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo kept' } }] });
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const { page } = chat;
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('checkbox', { name: /Notify me when a decision is needed/ }).check();
    await page.getByRole('button', { name: 'Close settings' }).click();
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
    await page.evaluate(() => {
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await chat.send('kept call');
    const [worker] = suite.context.serviceWorkers();
    const listed = () =>
      worker!.evaluate(async () => (await (self as unknown as WorkerScope).registration.getNotifications()).map((n) => ({ title: n.title, body: n.body, tag: n.tag })));
    await vi.waitFor(async () => expect(await listed()).toHaveLength(1), { timeout: 10_000 });
    const [notification] = await listed();

    await suite.airlock.restart();
    await page.getByRole('heading', { name: 'Airlock was restarted on a new address' }).waitFor({ timeout: 20_000 });
    const whyNot = await nextShownByWorker(worker!);
    await worker!.evaluate(async (tag) => {
      const scope = self as unknown as WorkerScope;
      const [shown] = await scope.registration.getNotifications({ tag });
      scope.dispatchEvent(new scope.NotificationEvent('notificationclick', { notification: shown, action: 'allow' }));
    }, notification!.tag);
    await whyNot();
    expect(await listed()).toStrictEqual([
      {
        title: 'Not decided',
        body: 'Not decided: this tab of Airlock is signed out (the server restarted on a new address or with another token). Sign in again with the link the server printed, then decide the call in Waiting for you.\necho kept\nin “kept call”',
        tag: `airlock-not-decided:${notification!.tag}`,
      },
    ]);

    // Nothing was decided: at the new address the call still waits.
    const fresh = await ChatPage.open(suite.context, suite.airlock.link);
    await fresh.page.getByRole('region', { name: 'Waiting for you' }).getByRole('listitem').filter({ hasText: 'echo kept' }).waitFor();
  });
});
