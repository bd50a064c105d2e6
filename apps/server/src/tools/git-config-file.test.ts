import { readdirSync, readlinkSync, statSync, utimesSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { configSettings, readConfigFile } from './git-config-file';
import { hooksPathFolders } from './git-hooks-path';
import { tempFolder } from './test-support';

const LATER_NS = BigInt(Date.now() + 60_000) * 1_000_000n;

function readlinkOrUndefined(link: string): string | undefined {
  try {
    return readlinkSync(link);
  } catch {
    return undefined;
  }
}

describe('readConfigFile', () => {
  test("reads a file's settings once while it does not change, and again once it does", async () => {
    await using folder = await tempFolder();
    const file = path.join(folder.path, 'config');
    await writeFile(file, '[core]\n\thooksPath = .husky\n');
    const first = readConfigFile(file, 1024, () => LATER_NS);
    expect(first?.settings).toStrictEqual([{ section: 'core', subsection: false, key: 'hookspath', value: '.husky' }]);
    expect(readConfigFile(file, 1024, () => LATER_NS)?.settings).toBe(first?.settings);
    // The same size, the times set back: the change time still moves.
    await writeFile(file, '[core]\n\thooksPath = .evils\n');
    utimesSync(file, new Date(0), new Date(0));
    expect(readConfigFile(file, 1024, () => LATER_NS)?.settings).toStrictEqual([{ section: 'core', subsection: false, key: 'hookspath', value: '.evils' }]);
  });

  test('does not keep a read made within two seconds of the last change, when a write in the same clock tick would go unseen', async () => {
    await using folder = await tempFolder();
    const file = path.join(folder.path, 'config');
    await writeFile(file, '[core]\n\tbare = false\n');
    const now = () => BigInt(Date.now()) * 1_000_000n;
    const first = readConfigFile(file, 1024, now);
    expect(readConfigFile(file, 1024, now)?.settings).not.toBe(first?.settings);
  });

  test('takes its time before it opens the file, not after the read: a read that outlasts two seconds of a file changed just before is not kept', async () => {
    await using folder = await tempFolder();
    const file = path.join(folder.path, 'config');
    await writeFile(file, '[core]\n\tbare = false\n');
    const changedAt = statSync(file, { bigint: true }).ctimeNs;
    // Two seconds past the change once the file is open (the read under way), one before.
    const isOpen = () => readdirSync('/proc/self/fd').some((fd) => readlinkOrUndefined(`/proc/self/fd/${fd}`) === file);
    const now = () => changedAt + (isOpen() ? 3_000_000_000n : 1_000_000_000n);
    const first = readConfigFile(file, 1024, now);
    expect(readConfigFile(file, 1024, () => LATER_NS)?.settings).not.toBe(first?.settings);
  });
});

describe('configSettings', () => {
  test('reads the older header [filter.evil] as Git does: the section before the first dot, the rest a subsection', () => {
    expect(configSettings('[filter.evil]\n\tclean = touch x\n[Diff.Some.Name]\n\ttextconv = y\n[core]\n\tpager = z\n')).toStrictEqual([
      { section: 'filter', subsection: true, key: 'clean', value: 'touch x' },
      { section: 'diff', subsection: true, key: 'textconv', value: 'y' },
      { section: 'core', subsection: false, key: 'pager', value: 'z' },
    ]);
  });
});

describe('hooksPathFolders', () => {
  test('reads at most 1 MiB of config files in all: a call cannot make each file it is given a megabyte to read', async () => {
    await using folder = await tempFolder();
    const files = ['a', 'b', 'c'].map((name) => path.join(folder.path, name));
    const padding = `[padding]\n${'\tx = y\n'.repeat(80_000)}`;
    await writeFile(files[0]!, padding);
    await writeFile(files[1]!, `${padding}[core]\n\thooksPath = .b\n`);
    await writeFile(files[2]!, '[core]\n\thooksPath = .c\n');
    // The second would pass 1 MiB with the first: it is not read, and the third, small, still is.
    expect(hooksPathFolders(folder.path, files)).toStrictEqual([path.join(folder.path, '.c')]);
  });
});
