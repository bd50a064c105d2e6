import { opendirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { isWithinOrSame, realFolder } from './host-folders';
import type { HiddenMask } from '../hidden-paths';
import { MAX_VEILED_ENTRIES } from './veiled-folders';

/**
 * Folders of the home folder where programs make Unix sockets that reach the person's keys and machines: ssh's
 * `ControlMaster` sockets (`ControlPath ~/.ssh/…`, in whatever folder of it the person chose: `sockets`, `cm`,
 * `controlmasters`…), gpg-agent's where there is no `/run/user`, Docker Desktop's (`~/.docker/run`, `desktop`). Each,
 * and every folder inside it, is veiled for each call when outside the workspace (see veiledFolders and
 * homeSocketFolders), so a socket made there during the call is not in its view, while their files stay readable
 * (ssh's config and known_hosts, Docker's contexts); one too big to veil so is covered whole.
 */
export const HOME_SOCKET_FOLDERS: readonly string[] = ['.ssh', '.gnupg', '.docker'];

/** At most this many folders are veiled under each of HOME_SOCKET_FOLDERS, itself included; past it, it is covered whole. */
export const MAX_SOCKET_SUBFOLDERS = 32;

/**
 * At most this many entries, over all the folders veiled under one of HOME_SOCKET_FOLDERS (each entry a mount of the
 * call's, see veilArgs, and bubblewrap's time grows faster than its mounts: 1,000 took 4 s on the 2-core test machine
 * under load); past it, it is covered whole. With a tmpfs for each of their folders, the three stay within
 * MAX_VEILED_ENTRIES_IN_ALL (3 × (128 + 32)) with room for a veiled home folder of MAX_VEILED_ENTRIES.
 */
export const MAX_SOCKET_FOLDER_ENTRIES = 128;

/** What a call does with HOME_SOCKET_FOLDERS of the home folder (real paths). */
export interface HomeSocketFolders {
  /** Veiled, each of its folders too: their files stay readable, a socket made during the call is not in its view. */
  veiled: string[];
  /**
   * Too big to veil within the bounds (more than MAX_SOCKET_SUBFOLDERS folders, or more than MAX_SOCKET_FOLDER_ENTRIES
   * entries in all, or more than MAX_VEILED_ENTRIES in one folder): covered whole by an empty tmpfs, its files not
   * readable in the call either. Veiling it would take a mount per entry (thousands for a `~/.docker` of thousands of
   * contexts), and binding its folders back whole would leave a socket made in one during the call reachable.
   */
  covered: string[];
}

/**
 * HOME_SOCKET_FOLDERS of `home` that are there, each with the folders inside it, shallowest first (a link to a folder
 * followed once, veiled where it really is), or covered whole past the bounds (then no folder of it is veiled, nor
 * one it links to elsewhere). A veil binds its folders back whole, so
 * a socket made during a call in `~/.ssh/cm/` was reached while `~/.ssh` itself was veiled. The walk reads at most
 * MAX_SOCKET_SUBFOLDERS folders and MAX_SOCKET_FOLDER_ENTRIES entries of each, whatever the folder holds.
 */
export function homeSocketFolders(home: string): HomeSocketFolders {
  const found = new Set<string>();
  const veiled: string[] = [];
  const covered: string[] = [];
  for (const name of HOME_SOCKET_FOLDERS) {
    const root = realFolder(path.join(home, name));
    if (root === undefined || found.has(root)) continue;
    const walk = walkSocketFolder(root, found);
    for (const folder of walk.folders) found.add(folder);
    if (walk.within) veiled.push(...walk.folders);
    else covered.push(root);
  }
  return { veiled, covered };
}

/** The folders of `root` breadth first, those in `skip` left out, and whether all of it was within the bounds. */
function walkSocketFolder(root: string, skip: ReadonlySet<string>): { folders: string[]; within: boolean } {
  const folders: string[] = [];
  const queued = new Set([root]);
  const queue = [root];
  let entries = 0;
  for (let folder = queue.shift(); folder !== undefined; folder = queue.shift()) {
    if (folders.length === MAX_SOCKET_SUBFOLDERS) return { folders, within: false };
    folders.push(folder);
    let dir;
    try {
      dir = opendirSync(folder);
    } catch {
      continue;
    }
    try {
      let inFolder = 0;
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        inFolder += 1;
        entries += 1;
        if (inFolder > MAX_VEILED_ENTRIES || entries > MAX_SOCKET_FOLDER_ENTRIES) return { folders, within: false };
        if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
        const real = realFolder(path.join(folder, entry.name));
        if (real === undefined || queued.has(real) || skip.has(real)) continue;
        queued.add(real);
        queue.push(real);
      }
    } catch {
      // Unreadable partway: what was read is taken.
    } finally {
      dir.closeSync();
    }
  }
  return { folders, within: true };
}

/** Where the kernel lists the Unix sockets bound in this network namespace, each with the path it was bound to. */
const BOUND_SOCKETS = '/proc/net/unix';

/**
 * The Unix socket files a call must not reach, as masks (see HiddenPaths): every socket in each folder where a socket
 * of this network namespace is bound now, outside `covered` (the folders the call has its own of, `/tmp`, and the
 * socket folders covered whole, see HostLayout) unless within `shown` (the workspace and what else is bound into the
 * call, which is mounted over those covers). connect() works on a read-only mount and across network namespaces,
 * so a socket the person's programs listen on in the home folder or the workspace reached them from inside: ssh's
 * `ControlMaster` (which runs commands on the remote host as the person), Docker Desktop's `~/.docker/…/docker.sock`
 * (which starts a root container with the home folder mounted), gpg-agent's (which signs as the person).
 *
 * The kernel's list gives where listening sockets live at the cost of one read; every socket of those folders is
 * taken, not only the listed path, since ssh binds under a passing name, links the socket to its own name and removes
 * the passing one. A socket outside the workspace then leaves its folder veiled (not in the call's view, nor one made
 * there during the call), one in the workspace is masked by /dev/null and watched (see filesMountedOver). Not found:
 * a socket bound by a relative path or in another network namespace (a container's), and one bound during the call
 * in a folder that is not veiled.
 */
export function liveSocketMasks(covered: readonly string[], shown: readonly string[]): HiddenMask[] {
  const isCovered = (folder: string) => covered.some((own) => isWithinOrSame(own, folder)) && !shown.some((bound) => isWithinOrSame(bound, folder));
  const folders = new Set<string>();
  for (const bound of boundSocketPaths()) {
    const folder = path.dirname(bound);
    if (!isCovered(folder)) folders.add(folder);
  }
  const masks = new Map<string, HiddenMask>();
  for (const folder of folders) {
    let real: string;
    let sockets: string[];
    try {
      real = realpathSync.native(folder);
      sockets = readdirSync(real, { withFileTypes: true })
        .filter((entry) => entry.isSocket())
        .map((entry) => path.join(real, entry.name));
    } catch {
      continue;
    }
    if (isCovered(real)) continue;
    for (const socket of sockets) masks.set(socket, { path: socket, folder: false });
  }
  return [...masks.values()];
}

/** The absolute paths sockets of this network namespace are bound to (abstract and unnamed ones have none). */
function boundSocketPaths(): string[] {
  let text: string;
  try {
    text = readFileSync(BOUND_SOCKETS, 'latin1');
  } catch {
    return [];
  }
  const paths = new Set<string>();
  // "Num RefCount Protocol Flags Type St Inode Path": the path is the eighth field, and may hold spaces.
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8) continue;
    const bound = fields.slice(7).join(' ');
    if (path.isAbsolute(bound)) paths.add(path.normalize(bound));
  }
  return [...paths];
}


