import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { startAirlockUnderTest, WEB_DIST } from './support/airlock-under-test';

describe('the built web app', () => {
  it('ships no source maps: none in the build, none named by a script, none served', async () => {
    await using airlock = await startAirlockUnderTest();
    const page = await (await fetch(`${airlock.server.url}/`)).text();
    const scripts = [...page.matchAll(/<script[^>]+src="([^"]+)"/g)].map((match) => match[1]!);
    expect(scripts).not.toStrictEqual([]);

    for (const script of scripts) {
      expect((await fetch(new URL(`${script}.map`, airlock.server.url))).status, `${script}.map`).toBe(404);
      const served = await fetch(new URL(script, airlock.server.url));
      expect(served.status, script).toBe(200);
      expect(/sourceMappingURL/.test(await served.text()), `${script} names a source map`).toBe(false);
    }
    const files = await readdir(WEB_DIST, { recursive: true });
    expect(files.filter((file) => file.endsWith('.map'))).toStrictEqual([]);
  });
});
