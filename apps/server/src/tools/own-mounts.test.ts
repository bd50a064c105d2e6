import { readFileSync } from 'node:fs';
import { mkdir, open, rename, symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { isOnOwnMount, MountPin, mountPinFor } from './own-mounts';
import { tempFolder } from './test-support';

/** The mount `fd` is on, as the kernel records it. */
function mountIdOf(fd: number): number {
  return Number(/^mnt_id:\s*(\d+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1'))?.[1]);
}

async function openedFolder(folder: string) {
  const handle = await open(folder, 'r');
  return { fd: handle.fd, [Symbol.asyncDispose]: () => handle.close() };
}

describe('a mount pin', () => {
  test('holds the mount its folder is on, so a folder there is ours without the mount list', async () => {
    await using folder = await tempFolder();
    await mkdir(path.join(folder.path, 'sub'));
    const pin = await MountPin.open(folder.path);
    await using sub = await openedFolder(path.join(folder.path, 'sub'));
    expect({ pinned: pin !== undefined, holds: pin?.holds(mountIdOf(sub.fd)), own: isOnOwnMount(sub.fd, pin) }).toStrictEqual({
      pinned: true,
      holds: true,
      own: true,
    });
    await pin?.close();
  });

  test('holds no other mount: a folder elsewhere is looked up in the mount list', async () => {
    await using folder = await tempFolder();
    const pin = await MountPin.open(folder.path);
    // /proc is a mount of its own, of this namespace.
    await using proc = await openedFolder('/proc');
    expect({ holds: pin?.holds(mountIdOf(proc.fd)), own: isOnOwnMount(proc.fd, pin) }).toStrictEqual({ holds: false, own: true });
    await pin?.close();
  });

  test('no longer holds once its folder is moved (a mount detached since shows it at another path) or it is closed', async () => {
    await using folder = await tempFolder();
    await mkdir(path.join(folder.path, 'pinned'));
    const moved = await MountPin.open(path.join(folder.path, 'pinned'));
    const closed = await MountPin.open(folder.path);
    await using here = await openedFolder(folder.path);
    const mount = mountIdOf(here.fd);
    const before = { moved: moved?.holds(mount), closed: closed?.holds(mount) };
    await rename(path.join(folder.path, 'pinned'), path.join(folder.path, 'elsewhere'));
    await closed?.close();
    expect({ before, after: { moved: moved?.holds(mount), closed: closed?.holds(mount) } }).toStrictEqual({
      before: { moved: true, closed: true },
      after: { moved: false, closed: false },
    });
    await moved?.close();
  });

  test('is not made for a path that is not the folder’s own (a link to it)', async () => {
    await using folder = await tempFolder();
    await mkdir(path.join(folder.path, 'real'));
    await symlink(path.join(folder.path, 'real'), path.join(folder.path, 'link'));
    expect(await MountPin.open(path.join(folder.path, 'link'))).toBeUndefined();
  });

  test('is shared by folder and kept for the last four folders asked for', async () => {
    await using folder = await tempFolder();
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (const name of names) await mkdir(path.join(folder.path, name));
    await using here = await openedFolder(folder.path);
    const mount = mountIdOf(here.fd);
    const first = await mountPinFor(path.join(folder.path, 'a'));
    const again = await mountPinFor(path.join(folder.path, 'a'));
    const heldBefore = first?.holds(mount);
    for (const name of names.slice(1)) await mountPinFor(path.join(folder.path, name));
    expect({ same: again === first, heldBefore }).toStrictEqual({ same: true, heldBefore: true });
    await vi.waitFor(() => expect(first?.holds(mount)).toBe(false));
  });
});
