import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempFolder } from '../test-support';
import { foldersOnTheWay, MAX_VEILED_ENTRIES, MAX_VEILED_ENTRIES_IN_ALL, masksBesideVeils, veiledFolders } from './veiled-folders';

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

  test('the veils of a call hold at most MAX_VEILED_ENTRIES_IN_ALL mounts in all (an entry each and their tmpfs): a folder past it is not veiled (its hidden files keep their masks); the folders veiled without a hidden file (socket folders) are taken first', async () => {
    await using root = await tempFolder();
    const folders = ['sockets', 'a', 'b', 'c', 'd', 'e'].map((name) => path.join(root.path, name));
    for (const folder of folders) {
      await mkdir(folder);
      for (let i = 0; i < 200; i++) await writeFile(path.join(folder, `f${i}`), '');
    }
    const hidden = folders.slice(1).map((folder) => ({ path: path.join(folder, 'key'), folder: false }));
    for (const mask of hidden) await writeFile(mask.path, 'secret');
    const veils = veiledFolders('/elsewhere', hidden, [], [folders[0]!]);
    expect(veils.map((veil) => veil.path)).toStrictEqual(folders.slice(0, Math.floor(MAX_VEILED_ENTRIES_IN_ALL / 201)));
    expect(veils.reduce((sum, veil) => sum + veil.entries.length + 1, 0)).toBeLessThanOrEqual(MAX_VEILED_ENTRIES_IN_ALL);
    expect(masksBesideVeils(hidden, veils)).toStrictEqual(hidden.slice(veils.length - 1));
  });

  test('the folders on the way from the home folder to each hidden path, shallowest first, down to the deepest there when one is missing, whether the path is named through a link to the home folder or as the kernel resolves it; none for a path outside it or directly in it', async () => {
    await using root = await tempFolder();
    const home = path.join(root.path, 'home');
    await mkdir(path.join(home, '.local', 'share', 'notes'), { recursive: true });
    await mkdir(path.join(home, '.config', 'Code', 'User'), { recursive: true });
    await symlink(home, path.join(root.path, 'link'));
    const hidden = [
      path.join(home, '.local', 'share', 'fish', 'fish_history'),
      path.join(root.path, 'link', '.config', 'Code', 'User', 'History'),
      path.join(home, '.local', 'state', 'nvim', 'shada'),
      path.join(home, '.bash_history'),
      path.join(root.path, 'elsewhere', 'token'),
    ];
    const link = path.join(root.path, 'link');
    expect(foldersOnTheWay(link, hidden)).toStrictEqual([
      path.join(link, '.config'),
      path.join(home, '.local'),
      path.join(link, '.config', 'Code'),
      path.join(home, '.local', 'share'),
      path.join(link, '.config', 'Code', 'User'),
    ]);
  });
});
