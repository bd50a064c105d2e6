import { lstatSync, opendirSync, statSync, type BigIntStats } from 'node:fs';
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
  /** By folder, the answers for each set of names asked about it (a few: the places in it, the copies of a file there). */
  readonly #presence = new Map<string, Presence[]>();
  /**
   * By listing (the array `entriesNamed` keeps while its folder holds still), what `entriesWhere` judged of its entries
   * (true, or when it judged false), and its last answer with when a verdict in it is first due again.
   */
  readonly #verdicts = new WeakMap<readonly string[], { verdicts: Map<string, true | bigint>; found: string[] | undefined; until: bigint }>();

  constructor(
    private readonly options: {
      /** Now, in ns since the epoch (the clock file times are on). */
      now?: () => bigint;
      read?: (folder: string) => string[];
      /** Whether a path is an entry of its folder (`present`'s look at each name). */
      isEntry?: (file: string) => boolean;
    } = {},
  ) {}

  entriesNamed(folder: string, name: RegExp): string[] {
    const key = `${name.source}\u0000${folder}`;
    const info = folderStats(folder);
    if (info === undefined) {
      this.#scans.delete(key);
      return [];
    }
    const kept = this.#scans.get(key);
    if (kept !== undefined && holdsStill(kept, info)) return kept.entries;
    const now = this.#now();
    const entries = readEntriesNamed(folder, name, this.options.read);
    if (settled(info, now)) this.#scans.set(key, { dev: info.dev, ino: info.ino, ctimeNs: info.ctimeNs, mtimeNs: info.mtimeNs, entries });
    else this.#scans.delete(key);
    return entries;
  }

  /**
   * The entries of `folder` named `name` of which `judge` says true, with its verdicts kept as the listing is: while
   * the folder holds still, a true costs nothing at later uses, a false nothing until it is `falseForNs` old (what an
   * entry holds may change with its folder still: a verdict of false is looked at again that often), and an entry it
   * could not decide (undefined) is judged at each use, up to `maxUndecided` of them. One judge per folder and name;
   * `now` is the scans' clock.
   */
  entriesWhere(folder: string, name: RegExp, judge: (entry: string, now: bigint) => boolean | undefined, falseForNs: bigint, maxUndecided = Infinity): string[] {
    const entries = this.entriesNamed(folder, name);
    let judged = this.#verdicts.get(entries);
    if (judged === undefined) this.#verdicts.set(entries, (judged = { verdicts: new Map(), found: undefined, until: 0n }));
    const now = this.#now();
    // The answer as a whole, while no verdict in it is due again: a use then costs nothing per entry.
    if (judged.found !== undefined && now < judged.until) return judged.found;
    const verdicts = judged.verdicts;
    let until: bigint | undefined;
    let undecided = 0;
    const found = entries.filter((entry) => {
      const kept = verdicts.get(entry);
      if (kept === true) return true;
      let at = kept;
      if (at === undefined || now - at >= falseForNs) {
        const verdict = judge(entry, now);
        // Past `maxUndecided` in one use, an undecided entry is taken as false for a while: entries a call made to stay
        // undecided cost their judging once per `falseForNs`, not at every use.
        if (verdict === undefined && ++undecided <= maxUndecided) {
          verdicts.delete(entry);
          return false;
        }
        if (verdict) {
          verdicts.set(entry, true);
          return true;
        }
        verdicts.set(entry, (at = now));
      }
      if (until === undefined || at + falseForNs < until) until = at + falseForNs;
      return false;
    });
    judged.found = undecided > 0 ? undefined : found;
    judged.until = until ?? BigInt(Number.MAX_SAFE_INTEGER) * 1_000_000_000n;
    return found;
  }

  /**
   * Which of `names` are entries of `folder` now (a link counts, wherever it leads: its target may appear without the
   * folder changing). Kept, for the same names, while the folder holds still, as the listings are: a name comes or
   * goes only with a new change time of its folder. So the hundreds of places looked for at each call (histories,
   * editors' files, most of them missing) cost a stat per folder, not one per name. A name that cannot be looked at
   * (no permission) counts as there, for the caller's own look to decide. Undefined when `folder` is not a folder
   * there now (nothing under it is there either).
   */
  present(folder: string, names: readonly string[]): string[] | undefined {
    const info = folderStats(folder);
    if (info === undefined || !info.isDirectory()) {
      this.#presence.delete(folder);
      return undefined;
    }
    const answers = this.#presence.get(folder)?.filter((kept) => holdsStill(kept, info));
    const kept = answers?.find((answer) => sameNames(answer.names, names));
    if (kept !== undefined) return kept.present;
    const now = this.#now();
    const look = this.options.isEntry ?? isEntry;
    const present = names.filter((name) => look(path.join(folder, name)));
    if (!settled(info, now)) {
      this.#presence.delete(folder);
      return present;
    }
    // The folders and names asked about come from the places looked for and the files found, which change only as
    // the folders scanned do: bounded, but cleared rather than grown should they churn.
    if (this.#presence.size >= MAX_KEPT_FOLDERS) this.#presence.clear();
    const answer = { dev: info.dev, ino: info.ino, ctimeNs: info.ctimeNs, mtimeNs: info.mtimeNs, names: [...names], present };
    this.#presence.set(folder, [answer, ...(answers ?? [])].slice(0, MAX_ANSWERS_PER_FOLDER));
    return present;
  }

  #now(): bigint {
    return this.options.now?.() ?? BigInt(Date.now()) * 1_000_000n;
  }
}

/** Which of a folder's names were entries of it, for a folder as it stood. */
interface Presence extends Omit<Scan, 'entries'> {
  names: readonly string[];
  present: string[];
}

/** At most this many folders' answers are kept by `present`, and this many sets of names for each. */
const MAX_KEPT_FOLDERS = 4_096;
const MAX_ANSWERS_PER_FOLDER = 8;

function folderStats(folder: string): BigIntStats | undefined {
  try {
    return statSync(folder, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The folder is the one read, and no entry was added, removed or renamed in it since. */
function holdsStill(kept: Omit<Scan, 'entries'>, info: BigIntStats): boolean {
  return kept.dev === info.dev && kept.ino === info.ino && kept.ctimeNs === info.ctimeNs && kept.mtimeNs === info.mtimeNs;
}

/** The folder's change time is SETTLED_NS old: a change in the same tick of the kernel's clock would not show. */
function settled(info: BigIntStats, now: bigint): boolean {
  const changed = info.ctimeNs > info.mtimeNs ? info.ctimeNs : info.mtimeNs;
  return now - changed >= SETTLED_NS;
}

function sameNames(kept: readonly string[], names: readonly string[]): boolean {
  return kept.length === names.length && kept.every((name, i) => name === names[i]);
}

function isEntry(file: string): boolean {
  try {
    return lstatSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOTDIR';
  }
}
