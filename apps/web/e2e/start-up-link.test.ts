import { describe, expect, it } from 'vitest';
import { useBrowserSuite } from './support/browser-suite';

const suite = useBrowserSuite();

describe('the start-up link', () => {
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
