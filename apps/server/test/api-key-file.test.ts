import { mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { startOrExit } from './support/server-process';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function folders(): Promise<{ root: string; args: string[] }> {
  const root = await mkdtemp(join(tmpdir(), 'airlock-api-key-file-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  await mkdir(join(root, 'ws'));
  // Nothing listens there: the key is refused before any request would be made.
  return { root, args: ['--model-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--workspace', join(root, 'ws'), '--data-dir', join(root, 'data')] };
}

describe('an API key no HTTP header can carry stops start-up, naming where it came from and not quoting it', () => {
  test.each([
    ['a second line', 'sk-first-part\nsk-second-part\n'],
    ['a byte order mark', '\uFEFFsk-first-part-sk-second-part\n'],
    ['a carriage return inside', 'sk-first-part\rsk-second-part'],
  ])('a key file with %s', async (_what, content) => {
    const { root, args } = await folders();
    const keyFile = join(root, 'key');
    await writeFile(keyFile, content, { mode: 0o600 });

    const { exitCode, output } = await startOrExit([...args, '--api-key-file', keyFile], {}, cleanups);

    expect(exitCode).toBe(1);
    expect(output).toContain(`airlock: --api-key-file (${keyFile}): must be printable ASCII without spaces, the key alone on one line\n`);
    expect(output).not.toContain('first-part');
    expect(output).not.toContain('second-part');
  }, 60_000);

  test('AIRLOCK_API_KEY with a line break', async () => {
    const { args } = await folders();

    const { exitCode, output } = await startOrExit(args, { AIRLOCK_API_KEY: 'sk-first-part\nsk-second-part' }, cleanups);

    expect(exitCode).toBe(1);
    expect(output).toContain('airlock: AIRLOCK_API_KEY: must be printable ASCII without spaces, the key alone on one line\n');
    expect(output).not.toContain('first-part');
  }, 60_000);
});

describe('a secret file far larger than any secret is refused by its size, unread', () => {
  test.each([['--token-file'], ['--api-key-file']])('%s naming a 64 MiB file (a log, an image given by mistake)', async (flag) => {
    const { root, args } = await folders();
    const file = join(root, 'big');
    await writeFile(file, '', { mode: 0o600 });
    // Sparse: no disk used. A file of gigabytes was read whole, held the start and took its size in memory.
    await truncate(file, 64 * 1024 * 1024);

    const { exitCode, output } = await startOrExit([...args, flag, file], {}, cleanups);

    expect(exitCode).toBe(1);
    expect(output).toContain(`airlock: ${flag}: "${file}" is larger than 64 KiB: it should hold the secret alone, on one line\n`);
  }, 60_000);
});
