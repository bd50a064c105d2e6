import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { isWithinOrSame, realFolder } from './host-folders';

/**
 * Folders where services keep their Unix sockets: a database, the system and session D-Bus (through which
 * `systemd-run --user` starts a process outside the sandbox), the session's agents under /run/user/<uid>, docker,
 * LXD and Incus (whose socket makes its group root). connect() works on a read-only mount and does not care about
 * the network namespace, so each is covered with an empty tmpfs. /var/run is a link to /run on most systems;
 * MySQL and MariaDB keep their socket in /var/lib/mysql on Red Hat family systems.
 */
export const SOCKET_FOLDERS = ['/run', '/var/run', '/var/lib/mysql', '/var/lib/lxd', '/var/snap/lxd/common/lxd', '/var/lib/incus'] as const;

/** Where links in /etc that point into a socket folder are looked for (resolv.conf, often a link into /run). */
const LINKS_FOLDER = '/etc';

/** What the sandbox covers of this machine's own layout, and what it keeps under those covers. */
export interface HostLayout {
  /** Socket folders that exist here, real paths: each gets an empty tmpfs. */
  maskedFolders: readonly string[];
  /**
   * Files of /etc that are links into a masked folder (resolv.conf into /run/systemd/resolve/), bound read-only
   * back at the path the sandbox follows the link to: `source` is the real file, `path` where it is looked up.
   */
  keptFiles: readonly { source: string; path: string }[];
  /** Links at the top of a masked folder (/run/shm -> /dev/shm, a system profile link), made again over the tmpfs. */
  keptLinks: readonly { target: string; path: string }[];
}

/** This machine's layout as a call starting now sees it: a few stat calls, so read for each call. */
export function hostLayout(): HostLayout {
  const maskedFolders = [...new Set(SOCKET_FOLDERS.map(realFolder).filter((folder) => folder !== undefined))];
  return { maskedFolders, keptFiles: keptFiles(maskedFolders), keptLinks: maskedFolders.flatMap(topLinks) };
}

/**
 * The path at which a lookup of `file` enters one of `folders`, following links as the kernel does, or undefined
 * when it never does. Inside a masked folder nothing of the host is left, so what lies under it is named as the
 * lookup would spell it there.
 */
export function lookupInside(file: string, folders: readonly string[]): string | undefined {
  let pending = path.resolve(file).split('/').filter(Boolean);
  let current = '/';
  for (let links = 0; pending.length > 0; ) {
    const name = pending.shift()!;
    if (name === '.') continue;
    if (name === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, name);
    if (folders.some((folder) => isWithinOrSame(folder, next))) return path.join(next, ...pending);
    let target: string;
    try {
      if (!lstatSync(next).isSymbolicLink()) {
        current = next;
        continue;
      }
      target = readlinkSync(next);
    } catch {
      return undefined;
    }
    links += 1;
    if (links > 40) return undefined;
    pending = [...target.split('/').filter(Boolean), ...pending];
    if (path.isAbsolute(target)) current = '/';
  }
  return undefined;
}

function keptFiles(maskedFolders: readonly string[]): HostLayout['keptFiles'] {
  if (maskedFolders.length === 0) return [];
  let entries: string[];
  try {
    entries = readdirSync(LINKS_FOLDER, { withFileTypes: true })
      .filter((entry) => entry.isSymbolicLink())
      .map((entry) => path.join(LINKS_FOLDER, entry.name));
  } catch {
    return [];
  }
  const kept: { source: string; path: string }[] = [];
  for (const link of entries) {
    const inside = lookupInside(link, maskedFolders);
    if (inside === undefined) continue;
    try {
      // Regular files only: a link to a socket or a folder of sockets is what the mask is for.
      if (statSync(link).isFile()) kept.push({ source: realpathSync(link), path: inside });
    } catch {
      // A dangling link stays dangling.
    }
  }
  return kept;
}

function topLinks(folder: string): HostLayout['keptLinks'] {
  try {
    return readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isSymbolicLink())
      .map((entry) => ({ target: readlinkSync(path.join(folder, entry.name)), path: path.join(folder, entry.name) }));
  } catch {
    return [];
  }
}


