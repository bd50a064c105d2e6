import { link, mkdir, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempFolder, unixSocketServer } from '../test-support';
import { homeSocketFolders, liveSocketMasks, MAX_SOCKET_FOLDER_ENTRIES, MAX_SOCKET_SUBFOLDERS } from './live-sockets';
import { MAX_VEILED_ENTRIES } from './veiled-folders';

describe('liveSocketMasks', () => {
  test('takes every socket of a folder a listening socket is bound in, under any name, and no other file; none under a folder the call has its own of unless it is shown', async () => {
    await using folder = await tempFolder('/var/tmp');
    const passing = path.join(folder.path, 'cm-host.AbCdEfGh');
    const socket = path.join(folder.path, 'cm-host');
    await using server = await unixSocketServer(passing, 'answer');
    await link(server.path, socket);
    await unlink(passing);
    await writeFile(path.join(folder.path, 'config'), 'Host *\n');
    const ofFolder = (masks: { path: string }[]) => masks.filter((mask) => mask.path.startsWith(`${folder.path}${path.sep}`));
    expect(ofFolder(liveSocketMasks([], []))).toStrictEqual([{ path: socket, folder: false }]);
    expect(ofFolder(liveSocketMasks([path.dirname(folder.path)], []))).toStrictEqual([]);
    expect(ofFolder(liveSocketMasks([path.dirname(folder.path)], [folder.path]))).toStrictEqual([{ path: socket, folder: false }]);
  });
});

describe('homeSocketFolders', () => {
  test('gives ~/.ssh, ~/.gnupg and ~/.docker with every folder inside them, shallowest first, a linked folder once, up to the bound', async () => {
    await using home = await tempFolder('/var/tmp');
    const at = (...names: string[]) => path.join(home.path, ...names);
    await mkdir(at('.ssh', 'cm', 'deeper'), { recursive: true });
    await mkdir(at('.docker', 'contexts'), { recursive: true });
    await mkdir(at('elsewhere'));
    await writeFile(at('.ssh', 'config'), 'Host *\n');
    // A folder reached through a link is veiled where it really is.
    await symlink(at('elsewhere'), at('.ssh', 'sockets'));
    await symlink(at('.ssh', 'cm'), at('.ssh', 'cm-again'));
    expect(homeSocketFolders(home.path).veiled.sort()).toStrictEqual([at('.ssh'), at('.ssh', 'cm'), at('.ssh', 'cm', 'deeper'), at('elsewhere'), at('.docker'), at('.docker', 'contexts')].sort());
    expect(homeSocketFolders(home.path).covered).toStrictEqual([]);
    for (let index = 1; index < MAX_SOCKET_SUBFOLDERS; index += 1) await mkdir(at('.gnupg', String(index)), { recursive: true });
    const gnupg = homeSocketFolders(home.path).veiled.filter((folder) => folder.startsWith(at('.gnupg')));
    expect(gnupg.length).toBe(MAX_SOCKET_SUBFOLDERS);
    expect(gnupg[0]).toBe(at('.gnupg'));
  });

  test('covers one whole past the bounds (more folders than MAX_SOCKET_SUBFOLDERS, more entries in all than MAX_SOCKET_FOLDER_ENTRIES, more than MAX_VEILED_ENTRIES in one folder), veiling none of its folders', async () => {
    await using home = await tempFolder('/var/tmp');
    const at = (...names: string[]) => path.join(home.path, ...names);
    await mkdir(at('.ssh'));
    // More folders than the bound, few entries each.
    for (let index = 0; index < MAX_SOCKET_SUBFOLDERS; index += 1) await mkdir(at('.gnupg', String(index)), { recursive: true });
    // Entries in all past the bound, no folder past MAX_VEILED_ENTRIES.
    for (let folder = 0; folder * 50 <= MAX_SOCKET_FOLDER_ENTRIES; folder += 1) {
      await mkdir(at('.ssh', `f${folder}`));
      for (let index = 0; index < 50; index += 1) await writeFile(at('.ssh', `f${folder}`, String(index)), '');
    }
    // One folder past MAX_VEILED_ENTRIES.
    await mkdir(at('.docker', 'contexts'), { recursive: true });
    for (let index = 0; index <= MAX_VEILED_ENTRIES; index += 1) await writeFile(at('.docker', 'contexts', String(index)), '');
    expect(homeSocketFolders(home.path)).toStrictEqual({ veiled: [], covered: [at('.ssh'), at('.gnupg'), at('.docker')] });
  });
});
