import { readFileSync, readlinkSync } from 'node:fs';
import { constants, open, type FileHandle } from 'node:fs/promises';

/**
 * Whether the open descriptor `fd` is on a mount of this process's own mount namespace, rather than one opened
 * through another process's `/proc/<pid>/root` (or `cwd`). Such a descriptor is on a mount of that process's
 * namespace, where anything may be mounted anywhere: its path and its parents, read through the descriptor, are that
 * namespace's, and prove nothing about the workspace here. Rejects when that cannot be read.
 *
 * The mount `pin` holds is ours without a look at /proc/self/mountinfo (see MountPin); any other is looked up there,
 * read at every check, never kept: a mount id freed by an unmount here is given to the next mount anywhere, and a kept
 * set would take another namespace's new mount for one of ours. The list grows with the host's mounts (milliseconds a
 * read with a thousand of them), so the usual case, a folder on the workspace's own mount, is spared it.
 *
 * The files are read synchronously: the kernel writes them from memory as they are read, with no disk or network
 * behind them, where reading them through the file system's threads cost four trips to a thread and back each (open,
 * stat, read, close), on every call of a file tool.
 */
export function isOnOwnMount(fd: number, pin?: MountPin): boolean {
  // Read after the descriptor was opened: an id in the fresh list, or the pinned one, is a mount of ours now.
  const id = mountOf(fd);
  return pin?.holds(id) === true || readOwnMountIds().has(id);
}

/**
 * A folder kept open, found on a mount of this namespace once, when it was opened. While a descriptor is open its
 * mount cannot be freed, so its id is given to no other mount: a descriptor on that id is on that very mount. It is
 * still one of ours while the folder is at the same path here: a mount detached since (`umount -l`) shows its folders
 * by their paths inside it only. The cost: that file system cannot be unmounted (but with -l) while the pin is kept.
 */
export class MountPin {
  readonly #handle: FileHandle;
  readonly #path: string;
  readonly #mountId: number;
  #closed = false;

  private constructor(handle: FileHandle, path: string, mountId: number) {
    this.#handle = handle;
    this.#path = path;
    this.#mountId = mountId;
  }

  /** Opens the folder at the real path `folder`; undefined when it is not at that path on a mount of ours. */
  static async open(folder: string): Promise<MountPin | undefined> {
    const handle = await open(folder, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const mountId = mountOf(handle.fd);
      // The list is read after the folder was opened, so the mount is ours with the folder open on it.
      if (readlinkSync(`/proc/self/fd/${handle.fd}`) === folder && readOwnMountIds().has(mountId)) return new MountPin(handle, folder, mountId);
    } catch {
      // Not pinned: every check then reads the list.
    }
    await handle.close();
    return undefined;
  }

  /** Whether `mountId` is the pinned mount, still at the folder's path in this namespace. */
  holds(mountId: number): boolean {
    if (this.#closed || mountId !== this.#mountId) return false;
    try {
      return readlinkSync(`/proc/self/fd/${this.#handle.fd}`) === this.#path;
    } catch {
      return false;
    }
  }

  /** Lets the mount go; `holds` is false from now on. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#handle.close();
  }
}

/** Folders pinned, by real path, the one asked for last at the end: a server has one workspace, tests many. */
const pins = new Map<string, Promise<MountPin | undefined>>();
const MAX_PINS = 4;

/** The pin of the folder at the real path `folder`, opened at the first call and kept while among the last few asked for. */
export function mountPinFor(folder: string): Promise<MountPin | undefined> {
  const pin = pins.get(folder) ?? MountPin.open(folder).catch(() => undefined);
  pins.delete(folder);
  pins.set(folder, pin);
  for (const [oldest, dropped] of pins) {
    if (pins.size <= MAX_PINS) break;
    pins.delete(oldest);
    void dropped.then((unpinned) => unpinned?.close());
  }
  return pin;
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
