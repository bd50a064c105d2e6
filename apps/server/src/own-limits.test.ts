import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ownLimit } from './own-limits';
import { tempDir } from '../test/support/temp-dir';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             95311                95311                processes
Max open files            20000                524288               files
Max msgqueue size         819200               unlimited            bytes
`;

describe('ownLimit', () => {
  test('reads the soft and the hard limit of the named line, and nothing of an unlimited one', async () => {
    await using folder = await tempDir('airlock-own-limits-');
    const file = path.join(folder.path, 'limits');
    await writeFile(file, LIMITS);
    expect([ownLimit('Max open files', 'soft', file), ownLimit('Max open files', 'hard', file)]).toStrictEqual([20_000, 524_288]);
    expect([ownLimit('Max msgqueue size', 'soft', file), ownLimit('Max msgqueue size', 'hard', file)]).toStrictEqual([819_200, undefined]);
  });

  test('is undefined where the file or its line is missing', async () => {
    await using folder = await tempDir('airlock-own-limits-');
    const file = path.join(folder.path, 'limits');
    await writeFile(file, 'Limit Soft Limit Hard Limit Units\nMax processes 1 1 processes\n');
    expect(ownLimit('Max open files', 'soft', file)).toBeUndefined();
    expect(ownLimit('Max open files', 'soft', path.join(folder.path, 'absent'))).toBeUndefined();
  });

  test('reads this process’s own file by default', () => {
    // Linux bounds open files (fs.nr_open): neither limit is unlimited.
    expect(ownLimit('Max open files', 'soft')).toBeGreaterThan(0);
    expect(ownLimit('Max open files', 'hard')).toBeGreaterThanOrEqual(ownLimit('Max open files', 'soft')!);
  });
});
