import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';
import { stopTime } from './support/tab-clock';

const logged = (word: string) => ({ name: 'terminal', arguments: { command: `echo ${word} | tee -a ran.log` } });

const suite = useBrowserSuite();

async function ranLog(): Promise<string | null> {
  return readFile(join(suite.airlock.workspace, 'ran.log'), 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
}

describe('Allow all when the waiting calls change under it', () => {
  it('decides nothing on a click just after another tab denied a call and its repeat was put up: the bar reads the same, but not what it would allow', async () => {
    // The model asks twice for the same command: the repeat waits for the first's outcome, then is put up itself.
    suite.airlock.model.enqueue({ toolCalls: [logged('danger'), logged('danger'), logged('y'), logged('z')] }, { text: 'Nothing ran.' });
    // This tab's clock is the test's: the click below comes at once after the change, however loaded the machine.
    const page = await suite.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.clock.install();
    await page.goto(suite.airlock.link);
    const tab1 = new ChatPage(page);
    await tab1.connected();
    await tab1.send('log some words');
    const bar = page.getByRole('region', { name: 'Waiting tool calls' });
    await bar.getByText('3 tool calls are waiting for your decision.').waitFor();
    expect(await page.getByRole('article').count()).toBe(3);
    const allowAll = bar.getByRole('button', { name: 'Allow all', exact: true });
    await vi.waitFor(async () => expect(await allowAll.isEnabled()).toBe(true), { timeout: 10_000 });
    const box = await allowAll.boundingBox();
    if (box === null) throw new Error('Allow all has no box');
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    // The person's pointer rests on Allow all, armed, and time stands still in this tab from here.
    await page.mouse.move(x, y);
    await stopTime(page);

    // Another tab (of another browser context: a page clock is one per context) denies the first call.
    const other = await suite.browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const tab2 = await ChatPage.open(other, suite.airlock.link);
      await tab2.openSession('log some words');
      const first = tab2.card(0);
      await tab2.waitForStatus(first, 'Waiting for your decision');
      const deny = tab2.button(first, 'Deny terminal');
      // A decision button ignores a click in its first moments on screen: clicked again while the call still waits.
      await vi.waitFor(
        async () => {
          if (await deny.isVisible()) await deny.click({ timeout: 2_000 }).catch(() => undefined);
          await tab2.waitForStatus(first, 'Denied', { timeout: 2_000 });
        },
        { timeout: 30_000, interval: 250 },
      );
    } finally {
      await other.close();
    }

    // Tab 1 sees the first call denied and the repeat put up in its place: three calls wait, as before.
    await tab1.waitForStatus(tab1.card(0), 'Denied');
    await vi.waitFor(async () => expect(await page.getByRole('article').count()).toBe(4), { timeout: 10_000 });
    await tab1.waitForStatus(tab1.card(3), 'Waiting for your decision');
    await bar.getByText('3 tool calls are waiting for your decision.').waitFor();
    const moved = await allowAll.boundingBox();
    expect(moved && Math.abs(moved.x - box.x) < 1 && Math.abs(moved.y - box.y) < 1).toBe(true);

    // The click the person aimed at the calls seen before.
    await page.mouse.click(x, y);
    await bar.getByText('Nothing was decided: the waiting calls changed as you clicked.', { exact: false }).waitFor();
    for (const index of [1, 2, 3]) await tab1.waitForStatus(tab1.card(index), 'Waiting for your decision');

    // With time going again, Deny all (armed once the new set stood still) denies the three calls now waiting.
    await page.clock.resume();
    const denyAll = bar.getByRole('button', { name: 'Deny all', exact: true });
    await vi.waitFor(
      async () => {
        if (await denyAll.isVisible()) await denyAll.click({ timeout: 2_000 }).catch(() => undefined);
        await tab1.waitForText('Nothing ran.', { timeout: 2_000 });
      },
      { timeout: 30_000, interval: 250 },
    );
    for (const index of [0, 1, 2, 3]) await tab1.waitForStatus(tab1.card(index), 'Denied');
    expect(await ranLog()).toBeNull();
  });
});
