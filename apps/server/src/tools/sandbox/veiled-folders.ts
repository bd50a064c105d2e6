import { opendirSync, readlinkSync, realpathSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { isWithinOrSame, realFolder } from './host-folders';
import type { HiddenMask } from '../hidden-paths';

/**
 * A folder outside the workspace that holds a hidden file, as a call sees it: an empty read-only tmpfs with each of its
 * other entries put back (bound read-only, or a link made again), and the hidden ones not there at all.
 *
 * A mask bound over a file holds only while the file is the one it was bound to: a host that renames a new file over
 * it (zsh and fish save their history so; a secret's rotation does too) makes the kernel drop the mask in the call's
 * namespace, and the call reads the new file. A hidden file that is not in the call's view of its folder cannot be
 * uncovered so: whatever the host does to it, the call's folder has no such entry.
 */
export interface VeiledFolder {
  /** The folder's real path. */
  path: string;
  /** Its entries as the call starts, the hidden ones left out: `link` is a symbolic link's target, made again as such. */
  entries: readonly { name: string; link?: string }[];
}

/** The folders every sandboxed call has its own of, whatever the host holds there (see bubblewrapArgs). */
export const CALL_OWN_FOLDERS: readonly string[] = ['/tmp', '/dev', '/proc'];

/** A folder with more entries than this keeps masks over its hidden files (each entry is a mount of the call's). */
export const MAX_VEILED_ENTRIES = 256;

/**
 * At most this many mounts in all the veils of a call (one per entry, and the veil's own tmpfs): a folder whose veil
 * would pass it is not veiled, and keeps masks over its hidden files. bubblewrap reads the mount table again for each
 * mount, so its start grows
 * faster than the mounts (on the 2-core test machine under a load of 10: 100 mounts 0.2 s, 1,000 4.4 s, 2,000 16 s);
 * each is also three of its arguments, of which it takes at most 9,000 (`Exceeded maximum number of arguments`), and
 * the kernel refuses a command line past its own bound (E2BIG): without a bound in all, crowded folders each within
 * MAX_VEILED_ENTRIES made every call fail.
 */
export const MAX_VEILED_ENTRIES_IN_ALL = 768;

/**
 * The veils of a call's hidden files: one per folder that holds one, outside the workspace, not inside a hidden
 * folder (masked whole already) and not inside a folder the sandbox gives the call its own of (`replaced`: `/tmp`,
 * `/dev`, `/proc`, the socket folders it covers with an empty tmpfs), where nothing of the host is there to hide and a
 * veil would put the host's entries back. Read as the call starts. A folder that cannot be read, or holds more than
 * MAX_VEILED_ENTRIES entries, or would take the veils past MAX_VEILED_ENTRIES_IN_ALL, is not veiled: its hidden files
 * keep their masks (and the watch that kills a call whose mask is lifted, see replaced-files-watch). `also`: folders
 * veiled on the same terms though they hold no hidden file (where programs make Unix sockets, see HOME_SOCKET_FOLDERS,
 * whose own bounds keep them within MAX_VEILED_ENTRIES_IN_ALL), taken first: a socket folder not veiled has no mask to
 * fall back on. No veil puts a socket back: one outside the workspace would reach a program outside the sandbox.
 */
export function veiledFolders(workspace: string, hidden: readonly HiddenMask[], replaced: readonly string[], also: readonly string[] = []): VeiledFolder[] {
  const hiddenPaths = new Set(hidden.map((mask) => mask.path));
  const hiddenFolders = hidden.filter((mask) => mask.folder).map((mask) => mask.path);
  const folders = new Set<string>();
  const wanted = [...also.flatMap((folder) => realFolder(folder) ?? []), ...hidden.filter((mask) => !mask.folder).map((mask) => path.dirname(mask.path))];
  for (const folder of wanted) {
    if (folder === path.dirname(folder)) continue;
    if (isWithinOrSame(workspace, folder) || [...hiddenFolders, ...replaced].some((covered) => isWithinOrSame(covered, folder))) continue;
    folders.add(folder);
  }
  const veils: VeiledFolder[] = [];
  let inAll = 0;
  for (const folder of folders) {
    const entries = readVeilEntries(folder, hiddenPaths);
    if (entries === undefined || inAll + entries.length + 1 > MAX_VEILED_ENTRIES_IN_ALL) continue;
    inAll += entries.length + 1;
    veils.push({ path: folder, entries });
  }
  return veils;
}

/**
 * The folders on the way from `home` to each path of `hidden` inside it (there or not), shallowest first: each folder
 * from the home folder's entry down to the hidden path's own folder, or, where one is missing, down to the deepest
 * that is there. Veiled (see veiledFolders), each holds its entries as the call starts, so a history a program writes
 * for the first time while the call runs is in none of them: fish's in a `~/.local/share/fish` made then, VS Code's
 * in a `User/History` made then, neovim's ShaDa in a `~/.local/state` made then. A veil of the home folder alone puts
 * `~/.local` and `~/.config` back whole, as the host's folders, where such a history shows as it is written. `home`
 * as named and as the kernel resolves it: the server's hidden paths are real paths.
 */
export function foldersOnTheWay(home: string, hidden: readonly string[]): string[] {
  const homes = new Set([home]);
  try {
    homes.add(realpathSync.native(home));
  } catch {
    return [];
  }
  const there = new Map<string, boolean>();
  const isFolder = (folder: string) => {
    let known = there.get(folder);
    if (known === undefined) {
      try {
        known = statSync(folder, { throwIfNoEntry: false })?.isDirectory() === true;
      } catch {
        known = false;
      }
      there.set(folder, known);
    }
    return known;
  };
  for (const base of homes) {
    for (const target of hidden) {
      const relative = path.relative(base, path.dirname(target));
      if (relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) continue;
      let folder = base;
      for (const part of relative.split(path.sep)) {
        folder = path.join(folder, part);
        if (!isFolder(folder)) break;
      }
    }
  }
  const depth = (folder: string) => folder.split(path.sep).length;
  return [...there].flatMap(([folder, isOne]) => (isOne ? [folder] : [])).sort((a, b) => depth(a) - depth(b));
}

/** The hidden masks a call still needs beside its veils: none for an entry of a veiled folder, which is simply not there. */
export function masksBesideVeils(hidden: readonly HiddenMask[], veils: readonly VeiledFolder[]): HiddenMask[] {
  if (veils.length === 0) return [...hidden];
  const veiled = new Set(veils.map((veil) => veil.path));
  return hidden.filter((mask) => !veiled.has(path.dirname(mask.path)));
}

/** bubblewrap's arguments for a veil: the tmpfs, its entries put back, then the tmpfs made read-only. */
export function veilArgs(veil: VeiledFolder): string[] {
  const args = ['--tmpfs', veil.path];
  for (const entry of veil.entries) {
    const at = path.join(veil.path, entry.name);
    // -try: an entry removed since it was listed is left out rather than failing the call.
    if (entry.link !== undefined) args.push('--symlink', entry.link, at);
    else args.push('--ro-bind-try', at, at);
  }
  args.push('--remount-ro', veil.path);
  return args;
}

function readVeilEntries(folder: string, hiddenPaths: ReadonlySet<string>): { name: string; link?: string }[] | undefined {
  let dir;
  try {
    dir = opendirSync(folder);
  } catch {
    return undefined;
  }
  try {
    const entries: { name: string; link?: string }[] = [];
    for (let entry: Dirent | null; (entry = dir.readSync()) !== null; ) {
      const at = path.join(folder, entry.name);
      if (hiddenPaths.has(at) || entry.isSocket()) continue;
      if (entries.length === MAX_VEILED_ENTRIES) return undefined;
      if (entry.isSymbolicLink()) {
        try {
          entries.push({ name: entry.name, link: readlinkSync(at) });
        } catch {
          // Gone since it was listed: left out.
        }
      } else {
        entries.push({ name: entry.name });
      }
    }
    return entries;
  } catch {
    return undefined;
  } finally {
    dir.closeSync();
  }
}


