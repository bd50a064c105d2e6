import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempFolder } from '../test-support';
import { MAX_VEILED_ENTRIES, masksBesideVeils, veiledFolders } from './veiled-folders';

describe('veiled folders', () => {
  test("a hidden file's folder outside the workspace is veiled with its other entries, links kept as links", async () => {
    await using home = await tempFolder();
    await writeFile(path.join(home.path, '.bash_history'), 'secret');
    await writeFile(path.join(home.path, '.bashrc'), '');
    await mkdir(path.join(home.path, '.mozilla'));
    await symlink('.bashrc', path.join(home.path, 'rc'));
    const hidden = [
      { path: path.join(home.path, '.bash_history'), folder: false },
      { path: path.join(home.path, '.mozilla'), folder: true },
    ];
    const veils = veiledFolders('/elsewhere', hidden, []);
    expect(veils).toHaveLength(1);
    expect(veils[0]!.path).toBe(home.path);
    expect([...veils[0]!.entries].sort((a, b) => a.name.localeCompare(b.name))).toStrictEqual([{ name: '.bashrc' }, { name: 'rc', link: '.bashrc' }]);
    // Neither hidden entry keeps a mask: neither is in the call's view of the folder.
    expect(masksBesideVeils(hidden, veils)).toStrictEqual([]);
  });

  test("no veil inside the workspace, inside a hidden folder or a folder the call has its own of, over the root, over a folder that cannot be read, or over one with too many entries", async () => {
    await using workspace = await tempFolder();
    await using crowded = await tempFolder();
    await writeFile(path.join(crowded.path, 'key'), 'secret');
    for (let i = 0; i <= MAX_VEILED_ENTRIES; i++) await writeFile(path.join(crowded.path, `f${i}`), '');
    const hidden = [
      { path: path.join(workspace.path, 'inner', 'key'), folder: false },
      { path: '/srv/data', folder: true },
      { path: '/srv/data/token', folder: false },
      { path: '/key', folder: false },
      { path: '/nowhere/at/all/key', folder: false },
      { path: path.join(crowded.path, 'key'), folder: false },
    ];
    expect(veiledFolders(workspace.path, hidden, [])).toStrictEqual([]);
    // /tmp, /run …: the call has an empty one of its own there; a veil would put the host's entries back.
    await using own = await tempFolder();
    await writeFile(path.join(own.path, 'token'), 'secret');
    const inOwn = [{ path: path.join(own.path, 'token'), folder: false }];
    expect(veiledFolders(workspace.path, inOwn, [])).toHaveLength(1);
    expect(veiledFolders(workspace.path, inOwn, [path.dirname(own.path)])).toStrictEqual([]);
  });
});
