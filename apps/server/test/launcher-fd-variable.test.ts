import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { startOrExit } from './support/server-process';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('AIRLOCK_LAUNCHER_FD set where no launcher started the server (an environment copied from one it did)', () => {
  test('naming a descriptor that is not open: a one-line error naming the variable, not a crash', async () => {
    const root = await mkdtemp(join(tmpdir(), 'airlock-launcher-fd-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await mkdir(join(root, 'ws'));

    const { exitCode, output } = await startOrExit(['--workspace', join(root, 'ws'), '--data-dir', join(root, 'data')], { AIRLOCK_LAUNCHER_FD: '99' }, cleanups);

    expect(exitCode).toBe(1);
    expect(output).toBe(
      'airlock: AIRLOCK_LAUNCHER_FD: names descriptor 99, which is not the launcher\'s pipe (not open); only the launcher (bin/airlock.mjs) sets it: unset it to start the server directly\n',
    );
  }, 60_000);
});
