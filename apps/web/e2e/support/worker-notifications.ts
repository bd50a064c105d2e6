import type { Worker } from 'playwright-core';

/** What the worker showed: as it asked, whether or not the list still holds it. */
export interface Shown {
  title: string;
  body: string | undefined;
  tag: string | undefined;
}

/**
 * Answers a function that waits for the next notification `worker` shows to be on screen (call this before what
 * shows it). Polling the list instead would not do: Chromium drops a notification from the list when the list is read
 * in the moment it is being shown, and nothing shows this one again.
 */
export async function nextShownByWorker(worker: Worker): Promise<() => Promise<Shown>> {
  await worker.evaluate(() => {
    const scope = self as unknown as { registration: ServiceWorkerRegistration; nextShown?: Promise<Shown> };
    const { registration } = scope;
    const show = registration.showNotification.bind(registration);
    scope.nextShown = new Promise((resolve) => {
      registration.showNotification = async (title, options) => {
        await show(title, options);
        resolve({ title, body: options?.body, tag: options?.tag });
      };
    });
  });
  return () => worker.evaluate(() => (self as unknown as { nextShown: Promise<Shown> }).nextShown);
}
