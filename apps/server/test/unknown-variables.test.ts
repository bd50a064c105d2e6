import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { startServerProcess } from './support/server-process';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('an AIRLOCK_ variable Airlock does not read is said at start-up, not ignored in silence', () => {
  test('a misspelt AIRLOCK_TOOL_NETWORK=off (the network stays on) is named; the client’s AIRLOCK_URL is not', async () => {
    const root = await mkdtemp(join(tmpdir(), 'airlock-unknown-variables-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await mkdir(join(root, 'ws'));

    const server = await startServerProcess(
      ['--workspace', join(root, 'ws'), '--data-dir', join(root, 'data'), '--tool-sandbox', 'none'],
      { AIRLOCK_TOOL_NETWROK: 'off', AIRLOCK_URL: 'http://127.0.0.1:7700' },
      cleanups,
    );

    const lines = server.output().split('\n').filter((line) => line.includes('AIRLOCK_'));
    expect(lines).toStrictEqual(['Warning: AIRLOCK_TOOL_NETWROK is not a setting of the server and is ignored: check its name (airlock --help lists them)']);
  }, 60_000);
});
