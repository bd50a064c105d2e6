import { readFileSync } from 'node:fs';

/**
 * Whether the open descriptor `fd` is on a mount of this process's own mount namespace, rather than one opened
 * through another process's `/proc/<pid>/root` (or `cwd`). Such a descriptor is on a mount of that process's
 * namespace, where anything may be mounted anywhere: its path and its parents, read through the descriptor, are that
 * namespace's, and prove nothing about the workspace here. Rejects when that cannot be read.
 *
 * /proc/self/mountinfo is read at every check, never kept: a mount id freed by an unmount here is given to the next
 * mount anywhere, and a kept set would take another namespace's new mount for one of ours.
 *
 * Both files are read synchronously: the kernel writes them from memory as they are read, with no disk or network
 * behind them, so a read costs microseconds, where reading them through the file system's threads cost four trips
 * to a thread and back each (open, stat, read, close), on every call of a file tool.
 */
export function isOnOwnMount(fd: number): boolean {
  // Both read after the descriptor was opened: an id in the fresh list is a mount of ours now.
  return readOwnMountIds().has(mountOf(fd));
}

/** The id of the mount the open descriptor `fd` is on (`mnt_id` in its fdinfo, Linux 3.15 and later). */
function mountOf(fd: number): number {
  const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1');
  const match = /^mnt_id:\s*(\d+)$/m.exec(info);
  if (match === null) throw new Error(`no mnt_id in /proc/self/fdinfo/${fd}`);
  return Number(match[1]);
}

function readOwnMountIds(): ReadonlySet<number> {
  const ids = new Set<number>();
  // Each line begins with the mount's id.
  for (const line of readFileSync('/proc/self/mountinfo', 'latin1').split('\n')) {
    const id = Number.parseInt(line, 10);
    if (Number.isSafeInteger(id)) ids.add(id);
  }
  return ids;
}
