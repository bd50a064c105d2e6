import type { Page } from 'playwright-core';

/** Stops the tab's clock (installed, and running on its own until now) a moment ahead of where it is. */
export async function stopTime(page: Page): Promise<void> {
  for (;;) {
    const now = await page.evaluate(() => Date.now());
    const stopped = await page.clock.pauseAt(now + 100).then(
      () => true,
      // The clock went past that moment before the pause reached it: aimed again.
      (error: Error) => (error.message.includes('to the past') ? false : Promise.reject(error)),
    );
    if (stopped) return;
  }
}
