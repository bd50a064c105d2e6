import { link, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempFolder, unixSocketServer } from '../test-support';
import { liveSocketMasks } from './live-sockets';

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
