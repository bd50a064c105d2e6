import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { startOrExit } from './support/server-process';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a flag given an empty value (`--data-dir "$DIR"`, DIR unset) stops start-up naming it', () => {
  test.each([
    ['--data-dir', ['--workspace', 'WS']],
    ['--workspace', ['--data-dir', 'DATA']],
    ['--model', ['--workspace', 'WS', '--data-dir', 'DATA', '--model-url', 'http://127.0.0.1:9/v1']],
  ])('%s ""', async (flag, others) => {
    const root = await mkdtemp(join(tmpdir(), 'airlock-empty-flag-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const started = join(root, 'started-here');
    await mkdir(started);
    await mkdir(join(root, 'ws'));
    const args = others.map((arg) => (arg === 'WS' ? join(root, 'ws') : arg === 'DATA' ? join(root, 'data') : arg));

    const { exitCode, output } = await startOrExit([...args, flag, ''], {}, cleanups, { cwd: started });

    expect(exitCode).toBe(1);
    expect(output).toContain(`airlock: ${flag}: is empty: give a value, or leave the flag out for the default\n`);
    // Not the folder it was started from in its place: no database there.
    expect(await readdir(started)).toStrictEqual([]);
  }, 60_000);
});
