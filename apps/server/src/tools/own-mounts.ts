import { readFile } from 'node:fs/promises';

/**
 * Whether the open descriptor `fd` is on a mount of this process's own mount namespace, rather than one opened
 * through another process's `/proc/<pid>/root` (or `cwd`). Such a descriptor is on a mount of that process's
 * namespace, where anything may be mounted anywhere: its path and its parents, read through the descriptor, are that
 * namespace's, and prove nothing about the workspace here. Rejects when that cannot be read.
 *
 * /proc/self/mountinfo is read at every check, never kept: a mount id freed by an unmount here is given to the next
 * mount anywhere, and a kept set would take another namespace's new mount for one of ours.
 */
export async function isOnOwnMount(fd: number): Promise<boolean> {
  // Both read after the descriptor was opened: an id in the fresh list is a mount of ours now.
  const [mount, ids] = await Promise.all([mountOf(fd), readOwnMountIds()]);
  return ids.has(mount);
}

/** The id of the mount the open descriptor `fd` is on (`mnt_id` in its fdinfo, Linux 3.15 and later). */
async function mountOf(fd: number): Promise<number> {
  const info = await readFile(`/proc/self/fdinfo/${fd}`, 'latin1');
  const match = /^mnt_id:\s*(\d+)$/m.exec(info);
  if (match === null) throw new Error(`no mnt_id in /proc/self/fdinfo/${fd}`);
  return Number(match[1]);
}

async function readOwnMountIds(): Promise<ReadonlySet<number>> {
  const ids = new Set<number>();
  // Each line begins with the mount's id.
  for (const line of (await readFile('/proc/self/mountinfo', 'latin1')).split('\n')) {
    const id = Number.parseInt(line, 10);
    if (Number.isSafeInteger(id)) ids.add(id);
  }
  return ids;
}
