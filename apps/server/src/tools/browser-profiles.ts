import { opendirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/** Where one user's browsers keep their profiles and caches. */
export interface BrowserPlaces {
  /** The home folder. */
  home: string;
  /** XDG_CONFIG_HOME when set; `~/.config` is looked at too. */
  configHome?: string;
  /** XDG_CACHE_HOME when set; `~/.cache` is looked at too. */
  cacheHome?: string;
  /** XDG_DATA_HOME when set; `~/.local/share` is looked at too. */
  dataHome?: string;
}

/**
 * Names, in the XDG config, cache and data folders, of the folders browsers keep a profile or a cache in: the
 * Chromium-based ones, Firefox, and the Qt and GTK ones (qutebrowser, Falkon, Konqueror, GNOME Web).
 */
const XDG_BROWSER_FOLDER = /^(?:chromium|google-chrome|microsoft-edge|vivaldi|opera|yandex-browser|thorium)|^(?:bravesoftware|mozilla|qutebrowser|falkon|konqueror|epiphany|net\.imput\.helium)$/i;

/** Names, in the XDG data folder, of the Qt and GTK browsers' profiles (exact: that folder holds every app's data). */
const DATA_BROWSER_FOLDER = /^(?:qutebrowser|falkon|konqueror|epiphany)$/i;

/** Names, in `~/snap`, of browser snaps (each one's folder holds its profile). */
const SNAP_BROWSER_FOLDER = /^(?:chromium|firefox|brave|opera|vivaldi|microsoft-edge|google-chrome)/;

/**
 * Folders in the home folder itself: Firefox's and its forks' profiles, and every flatpak app's own home (flatpak
 * browsers keep their profile in theirs, under names too many to list; no tool needs another app's private folder).
 */
const HOME_BROWSER_FOLDERS = ['.mozilla', '.librewolf', '.waterfox', path.join('.var', 'app')];

/** The places of the user whose environment is `env`: HOME (else the account's home folder), XDG_CONFIG_HOME, XDG_CACHE_HOME. */
export function browserPlaces(env: Readonly<Record<string, string | undefined>>): BrowserPlaces {
  const absolute = (value: string | undefined) => (value !== undefined && path.isAbsolute(value) ? value : undefined);
  const configHome = absolute(env.XDG_CONFIG_HOME);
  const cacheHome = absolute(env.XDG_CACHE_HOME);
  const dataHome = absolute(env.XDG_DATA_HOME);
  return {
    home: absolute(env.HOME) ?? homedir(),
    ...(configHome === undefined ? {} : { configHome }),
    ...(cacheHome === undefined ? {} : { cacheHome }),
    ...(dataHome === undefined ? {} : { dataHome }),
  };
}

/**
 * The browser profile and cache folders that may exist now (some of the fixed ones may not). A browser keeps what
 * a page stored (the web app keeps its token in Session Storage, which Chromium writes to disk for session restore)
 * and the addresses it visited, so no tool may read them. Looked for at each use: a browser makes and removes them.
 * With `scans`, a folder whose entries did not change since it was last read is not read again (see FolderScans).
 */
export function browserProfileFolders(places: BrowserPlaces, scans?: FolderScans): string[] {
  const entriesNamed = (folder: string, name: RegExp) => (scans === undefined ? readEntriesNamed(folder, name) : scans.entriesNamed(folder, name));
  const configs = new Set([places.configHome, path.join(places.home, '.config')].filter((folder) => folder !== undefined));
  const caches = new Set([places.cacheHome, path.join(places.home, '.cache')].filter((folder) => folder !== undefined));
  const data = new Set([places.dataHome, path.join(places.home, '.local', 'share')].filter((folder) => folder !== undefined));
  return [
    ...[...configs, ...caches].flatMap((folder) => entriesNamed(folder, XDG_BROWSER_FOLDER)),
    ...[...data].flatMap((folder) => entriesNamed(folder, DATA_BROWSER_FOLDER)),
    ...entriesNamed(path.join(places.home, 'snap'), SNAP_BROWSER_FOLDER),
    ...HOME_BROWSER_FOLDERS.map((name) => path.join(places.home, name)),
  ];
}

/**
 * How many entries of one folder a listing reads. A call can fill a folder it may write (a workspace that holds the
 * home folder) and touch it before each call: read whole, 200,000 entries held the event loop 1.5-2 s at every call.
 */
export const MAX_LISTED_ENTRIES = 20_000;

/**
 * The entries of `folder` whose name matches `name`, as paths; the folder itself when it holds more than
 * `MAX_LISTED_ENTRIES` (what it holds past them cannot be told, so the whole of it is what to hide).
 */
function readEntriesNamed(folder: string, name: RegExp, read?: (folder: string) => string[]): string[] {
  try {
    if (read !== undefined) return read(folder).filter((entry) => name.test(entry)).map((entry) => path.join(folder, entry));
    const dir = opendirSync(folder, { bufferSize: 256 });
    const found: string[] = [];
    try {
      let listed = 0;
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        if (++listed > MAX_LISTED_ENTRIES) return [folder];
        if (name.test(entry.name)) found.push(path.join(folder, entry.name));
      }
    } finally {
      dir.closeSync();
    }
    return found;
  } catch {
    return [];
  }
}

/** Where a folder's entries stood when it was read: a folder gets a new change time when an entry is added, removed or renamed. */
interface Scan {
  dev: bigint;
  ino: bigint;
  ctimeNs: bigint;
  mtimeNs: bigint;
  entries: string[];
}

/** How long a folder's change time must have held still before its listing is kept (the kernel's clock is coarse). */
const SETTLED_NS = 2_000_000_000n;

/**
 * The listings of the folders browsers keep profiles in (`~/.config`, `~/.cache` hold hundreds of entries on a desktop),
 * kept while each folder's change time (ctime, which no call can set back, and mtime) and identity hold still, so a
 * call costs a stat per folder, not a read of each. A listing is kept only once the folder's change time is
 * `SETTLED_NS` old: an entry made in the same tick of the kernel's coarse clock as the read would leave the times as
 * they were, and is still seen by the next read.
 */
export class FolderScans {
  readonly #scans = new Map<string, Scan>();

  constructor(
    private readonly options: {
      /** Now, in ns since the epoch (the clock file times are on). */
      now?: () => bigint;
      read?: (folder: string) => string[];
    } = {},
  ) {}

  entriesNamed(folder: string, name: RegExp): string[] {
    const key = `${name.source}\u0000${folder}`;
    let info;
    try {
      info = statSync(folder, { bigint: true, throwIfNoEntry: false });
    } catch {
      info = undefined;
    }
    if (info === undefined) {
      this.#scans.delete(key);
      return [];
    }
    const kept = this.#scans.get(key);
    if (kept !== undefined && kept.dev === info.dev && kept.ino === info.ino && kept.ctimeNs === info.ctimeNs && kept.mtimeNs === info.mtimeNs) return kept.entries;
    const now = this.options.now?.() ?? BigInt(Date.now()) * 1_000_000n;
    const entries = readEntriesNamed(folder, name, this.options.read);
    const changed = info.ctimeNs > info.mtimeNs ? info.ctimeNs : info.mtimeNs;
    if (now - changed >= SETTLED_NS) this.#scans.set(key, { dev: info.dev, ino: info.ino, ctimeNs: info.ctimeNs, mtimeNs: info.mtimeNs, entries });
    else this.#scans.delete(key);
    return entries;
  }
}
