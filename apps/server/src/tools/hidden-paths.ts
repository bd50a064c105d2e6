import { accessSync, constants, lstatSync, opendirSync, readdirSync, readlinkSync, realpathSync, statSync, type Dir, type Dirent } from 'node:fs';
import path from 'node:path';
import { FolderScans } from './browser-profiles';
import { isStrictlyWithin as isInside, isWithin } from './path-within';
import { shellQuoted } from '../shell-quoted';
import { oneLine } from './one-line';
import { SOCKET_FOLDERS } from './sandbox/host-layout';
import { CALL_OWN_FOLDERS } from './sandbox/veiled-folders';
import { whereLeads } from './where-leads';

/** A hidden path as a call masks it: an empty tmpfs over a folder, /dev/null over a file. */
export interface HiddenMask {
  /** The real path (symlinks resolved). */
  path: string;
  folder: boolean;
}

/** A hidden path as first seen: where it really was, and which file or folder was there. */
interface Identity extends HiddenMask {
  dev: bigint;
  ino: bigint;
}

/** A folder on the way to others' paths: the names looked for in it, those of places to hide and of folders on the way. */
interface FolderLook {
  names: readonly string[];
  places: ReadonlySet<string>;
  ways: ReadonlySet<string>;
}

/** A hidden path is no longer where it was first seen: a mask at its place would leave it readable where it is now. */
export class HiddenPathMovedError extends Error {
  override readonly name = 'HiddenPathMovedError';
  constructor(
    readonly entry: string,
    readonly change: 'gone' | 'replaced',
  ) {
    super(
      `Refused: "${entry}", which tool calls must not see, has been moved or ${change === 'gone' ? 'removed' : 'replaced'} since the server ` +
        'started, so it cannot be hidden where it is now. Nothing was run: calls that run processes (terminal, python) are ' +
        'refused until it is back at its place.',
    );
  }
}

/** How a hidden file in the workspace is reached from elsewhere in it: a second name, or a link leading out of the hidden folders. */
export type HiddenLink =
  | { kind: 'hard'; path: string; nlink: bigint; identity: string }
  | {
      kind: 'symbolic';
      /** The link, in a hidden folder. */
      path: string;
      /** Where the kernel leads it now, in the workspace and outside the hidden paths; for a dangling link, where a write through it makes the file. */
      leadsTo: string;
    }
  | {
      kind: 'process';
      /** The link, in a hidden folder, that the kernel leads through /proc (`/proc/self/cwd/…`): where it leads is each opener's own. */
      path: string;
      /** What the link holds. */
      text: string;
    };

/**
 * A hidden file in the workspace can be reached from elsewhere in it. A hard link a call made there (before the file
 * held anything, as to a history not written yet) shows whatever is written to it later, since the sandbox masks the
 * hidden file by its path; so does a symbolic link a call put in a hidden folder in place of the file, leading to a
 * workspace file: the person's program opens the file by its name and writes through the link.
 */
export class HiddenPathLinkedError extends Error {
  override readonly name = 'HiddenPathLinkedError';
  constructor(
    readonly link: HiddenLink,
    workspace: string,
  ) {
    super(
      link.kind === 'hard'
        ? `Refused: "${oneLine(link.path)}", which tool calls must not see, has ${link.nlink} names: a hard link in the workspace would show what it holds. ` +
            'Nothing was run: calls that run processes (terminal, python) are refused until it has one name again ' +
            `(\`find ${shellQuoted(workspace)} -samefile ${shellQuoted(link.path)}\` lists them).`
        : `Refused: "${oneLine(link.path)}", in a folder tool calls must not see, is a symbolic link ` +
            (link.kind === 'symbolic'
              ? `to "${oneLine(link.leadsTo)}"${isWithin(workspace, link.leadsTo) ? ' in the workspace' : ', a place tool calls can read'}: what is written through it would be seen there. `
              : `through /proc ("${oneLine(link.text)}"), which leads to where each program that opens it runs, the workspace too. `) +
            `Nothing was run: calls that run processes (terminal, python) are refused until it is gone (\`rm ${shellQuoted(link.path)}\`) or leads elsewhere.`,
    );
  }
}

/**
 * The hidden folders in the workspace hold more entries than are looked through for hard links at each call: one
 * past them could have another name in the workspace, so the call is refused rather than run unchecked.
 */
export class HiddenFoldersTooLargeError extends Error {
  override readonly name = 'HiddenFoldersTooLargeError';
  constructor(
    readonly folder: string,
    readonly bound: number,
  ) {
    super(
      `Refused: the hidden folders in the workspace (${oneLine(folder)} and any others) hold more than ${bound} entries, too many to check at each call ` +
        'for a hard link to one of their files elsewhere in the workspace. Nothing was run: calls that run processes (terminal, python) are ' +
        'refused while the workspace holds them; make the workspace a project folder rather than one that holds the home folder.',
    );
  }
}

/** How many entries of the hidden folders in the workspace a call looks through for hard links, in all. */
export const LINK_CHECK_BOUND = 4096;

/**
 * Throws HiddenPathLinkedError for a hidden regular file inside `workspace` that has more than one name, the files in
 * hidden folders included, at any depth: a call can make a file and link it before its folder exists (atuin's
 * `history.db`, nano's `search_history`), and the folder, masked from then on, hides the file but not the link. Where
 * the other name is cannot be told without a walk of the workspace, so the call is refused rather than masked. So it
 * does for a symbolic link in a hidden folder that leads into the workspace, outside the hidden paths: the link is
 * masked with its folder, where it leads is not. The folders are looked through up to `bound` entries in all (see
 * hiddenLinks). Outside the workspace a call cannot make either: a link across mounts fails (EXDEV), and the rest of
 * the system is read-only.
 */
export function refuseLinkedHiddenFiles(masks: readonly HiddenMask[], workspace: string, bound = LINK_CHECK_BOUND): void {
  for (const link of hiddenLinks(masks.map((mask) => mask.path), workspace, bound)) {
    throw new HiddenPathLinkedError(link, workspace);
  }
}

/**
 * The ways into the hidden files inside `workspace` (among `hidden`, or in a folder among them, at any depth) from
 * elsewhere in it, one at a time: a regular file with more than one name, and a symbolic link that the kernel leads
 * into the workspace outside every path of `hidden` (one left dangling followed to where a write through it makes
 * the file: a program creates its history through it), or through /proc, where it leads to each opener's own (taken
 * as leading anywhere, see leadsThroughProc). The folders are looked through up to `bound` entries in all
 * (no link is followed on the way); past it, throws HiddenFoldersTooLargeError: a call could fill a folder it made to
 * push its link past what is looked at, so past the bound nothing is taken as unreached.
 */
export function* hiddenLinks(hidden: readonly string[], workspace: string, bound = LINK_CHECK_BOUND): Generator<HiddenLink> {
  const inside = [...new Set(hidden.filter((entry) => isInside(workspace, entry)))];
  const outermost = inside.filter((entry) => !inside.some((outer) => isInside(outer, entry)));
  const leadsOut = (link: string): HiddenLink | undefined => {
    if (leadsThroughProc(link)) return { kind: 'process', path: link, text: linkText(link) };
    const leadsTo = whereLeads(link);
    if (leadsTo === undefined || hidden.some((entry) => isWithin(entry, leadsTo))) return undefined;
    if (isWithin(workspace, leadsTo) || readableByCallsWritableByPerson(leadsTo)) return { kind: 'symbolic', path: link, leadsTo };
    return undefined;
  };
  let entries = 0;
  for (const top of outermost) {
    const info = lstatSync(top, { bigint: true, throwIfNoEntry: false });
    if (info?.isFile() === true && info.nlink > 1n) yield { kind: 'hard', path: top, nlink: info.nlink, identity: identityKey(info) };
    if (info?.isDirectory() !== true) continue;
    const pending = [top];
    for (let folder = pending.pop(); folder !== undefined; folder = pending.pop()) {
      for (const entry of folderEntries(folder)) {
        entries += 1;
        if (entries > bound) throw new HiddenFoldersTooLargeError(top, bound);
        const full = path.join(folder, entry.name);
        if (entry.isDirectory()) pending.push(full);
        if (entry.isSymbolicLink()) {
          const link = leadsOut(full);
          if (link !== undefined) yield link;
        }
        if (!entry.isFile()) continue;
        const stats = lstatSync(full, { bigint: true, throwIfNoEntry: false });
        if (stats?.isFile() === true && stats.nlink > 1n) yield { kind: 'hard', path: full, nlink: stats.nlink, identity: identityKey(stats) };
      }
    }
  }
}

/**
 * Whether `target`, outside the workspace, is where the person's program could write through a link and a call then
 * read it: a place the person may write (a file there, or the nearest folder there on the way), outside the folders
 * each call has its own of and those the sandbox masks. `/var/tmp` is one (a call's `cat` read a history written
 * there through a link it planted); `/tmp`, `/run`, and the system's folders the person cannot write, are not.
 */
function readableByCallsWritableByPerson(target: string): boolean {
  if ([...CALL_OWN_FOLDERS, ...SOCKET_FOLDERS].some((own) => isWithin(own, target))) return false;
  for (let at = target; ; at = path.dirname(at)) {
    if (lstatSync(at, { throwIfNoEntry: false }) !== undefined) {
      try {
        accessSync(at, constants.W_OK);
        return true;
      } catch {
        return false;
      }
    }
    if (path.dirname(at) === at) return false;
  }
}

/** Links followed at most in finding whether a path leads through /proc: a call's own links may loop. */
const MAX_LINKS_FOLLOWED = 256;

/**
 * Whether the kernel, resolving `file` name by name, passes through /proc (`/proc/self/cwd`, `/proc/self/root`, a
 * `/dev/fd` link): what is there is each process's own, so where the server resolves it is not where the person's
 * program does. True too for links that loop past `MAX_LINKS_FOLLOWED`: where they lead cannot be told.
 */
function leadsThroughProc(file: string): boolean {
  let at = '/';
  let pending = file.split('/');
  for (let followed = 0; followed <= MAX_LINKS_FOLLOWED; ) {
    const name = pending.shift();
    if (name === undefined) return false;
    if (name === '' || name === '.') continue;
    const next = name === '..' ? path.dirname(at) : path.join(at, name);
    if (isWithin('/proc', next)) return true;
    const info = lstatSync(next, { throwIfNoEntry: false });
    if (info?.isSymbolicLink() !== true) {
      if (info === undefined) return false;
      at = next;
      continue;
    }
    followed += 1;
    const text = linkText(next);
    if (text.startsWith('/')) at = '/';
    pending = [...text.split('/'), ...pending];
  }
  return true;
}

function linkText(link: string): string {
  try {
    return readlinkSync(link);
  } catch {
    return '';
  }
}

/**
 * The entries of `folder`, read a batch at a time as they are asked for: a walk that stops at its bound has not read
 * the rest of a folder of a million entries a call made (the whole listing took seconds before the bound was checked).
 */
function* folderEntries(folder: string): Generator<Dirent> {
  let dir: Dir;
  try {
    dir = opendirSync(folder, { bufferSize: 256 });
  } catch {
    return;
  }
  try {
    for (let entry = readEntry(dir); entry !== null; entry = readEntry(dir)) yield entry;
  } finally {
    dir.closeSync();
  }
}

function readEntry(dir: Dir): Dirent | null {
  try {
    return dir.readSync();
  } catch {
    return null;
  }
}

/** Who a file or folder is, whatever its path: its device and inode. */
export function identityKey(info: { dev: bigint; ino: bigint }): string {
  return `${info.dev}:${info.ino}`;
}

/**
 * The server's own files and folders (data folder, token and key files) that no tool may reach, each held to the file
 * or folder first seen at its path (device and inode). One record serves both guards:
 * - the file tools refuse a path that is, or lies in, one of them by where it was first seen, and an entry that is
 *   one of them by identity, so a link, a hard link or a renamed folder does not reach it (`known`);
 * - a sandboxed call gets a mask over each (`masks`). A mask is bound over a path, so if the path was renamed away
 *   (an ancestor inside the writable workspace moved), a mask at the old place would leave it readable at the new
 *   one: such a call is refused instead.
 * One missing so far (an optional file, a data folder created after the tools) is looked for again at each use.
 *
 * Others' folders and files (a browser's profile; the server's output file, which a log rotation moves: `others`) are
 * hidden as well, but held to nothing: their owner makes, moves and removes them, so each use hides them wherever they
 * are then, one that appeared from then on, and one gone is simply no longer there to hide. None of them ever refuses a
 * call.
 */
export class HiddenPaths {
  readonly #entries: readonly string[];
  readonly #others: () => readonly string[];
  readonly #scans: FolderScans;
  #lastOthers: { list: readonly string[]; byFolder: ReadonlyMap<string, FolderLook> } | undefined;
  readonly #seen = new Map<string, Identity>();
  readonly #identities = new Set<string>();

  constructor(
    entries: readonly string[],
    options: {
      /** The paths of others' folders and files that may exist now, looked for at each use. Default none. */
      others?: () => readonly string[];
      /** Where the folders of `others` are kept track of between uses (default: this record's own). */
      scans?: FolderScans;
    } = {},
  ) {
    this.#entries = [...new Set(entries.map((entry) => path.resolve(entry)))];
    this.#others = options.others ?? (() => []);
    this.#scans = options.scans ?? new FolderScans();
    this.#lookForMissing();
  }

  /**
   * Where each is (where first seen; where it would be, if not seen yet; others' where they are now), and who those
   * seen are; with the editors' copies of the files among them there now (see editorCopies).
   */
  known(): { paths: string[]; identities: ReadonlySet<string> } {
    this.#lookForMissing();
    const others = this.#othersNow();
    const copies = this.#copiesNow(others);
    const paths = [...this.#entries.map((entry) => this.#seen.get(entry)?.path ?? entry), ...[...others, ...copies].map((other) => other.path)];
    if (others.length === 0 && copies.length === 0) return { paths, identities: this.#identities };
    return { paths, identities: new Set([...this.#identities, ...[...others, ...copies].map(identityKey)]) };
  }

  /**
   * The masks of the next call. Throws HiddenPathMovedError when one of the server's own paths seen before is gone
   * from its place or is another one now; others' folders are masked where they are.
   */
  masks(): HiddenMask[] {
    this.#lookForMissing();
    const masks: HiddenMask[] = [];
    for (const entry of this.#entries) {
      const seen = this.#seen.get(entry);
      if (seen === undefined) continue;
      const now = identify(entry);
      if (now === undefined) throw new HiddenPathMovedError(entry, 'gone');
      if (now.path !== seen.path || now.dev !== seen.dev || now.ino !== seen.ino) throw new HiddenPathMovedError(entry, 'replaced');
      masks.push({ path: seen.path, folder: seen.folder });
    }
    const masked = new Set(masks.map((mask) => mask.path));
    const others = this.#othersNow();
    for (const other of [...others, ...this.#copiesNow(others)]) {
      if (masked.has(other.path)) continue;
      masked.add(other.path);
      masks.push({ path: other.path, folder: other.folder });
    }
    return masks;
  }

  /**
   * Others' paths there now. Most are missing (browsers and editors not installed) and a few folders hold them all, so
   * the folders on their way are walked from `/`: each folder there is looked at once, for the names of the places in
   * it and of the folders on the way to others (FolderScans.present, which keeps its answer while the folder holds
   * still); a folder missing from its parent is not looked at, nor anything under it; only the places there are
   * looked up.
   */
  #othersNow(): Identity[] {
    const found: Identity[] = [];
    const reached = new Set<string>();
    for (const [folder, { names, places, ways }] of this.#othersByFolder(this.#others())) {
      if (folder !== path.dirname(folder) && !reached.has(folder)) continue;
      for (const name of this.#scans.present(folder, names) ?? []) {
        const full = path.join(folder, name);
        if (ways.has(name)) reached.add(full);
        if (!places.has(name)) continue;
        const identity = identify(full);
        if (identity !== undefined) found.push(identity);
      }
    }
    return found;
  }

  /**
   * `others` by folder, shortest first (a folder before those under it), each with the folders on the way to it; the
   * same list as at the last use (as it mostly is) is not sorted again.
   */
  #othersByFolder(others: readonly string[]): ReadonlyMap<string, FolderLook> {
    const last = this.#lastOthers;
    if (last !== undefined && last.list.length === others.length && last.list.every((entry, i) => entry === others[i])) return last.byFolder;
    const byFolder = new Map<string, { places: Set<string>; ways: Set<string> }>();
    const look = (folder: string) => {
      let entry = byFolder.get(folder);
      if (entry === undefined) byFolder.set(folder, (entry = { places: new Set(), ways: new Set() }));
      return entry;
    };
    for (const entry of others) {
      const full = path.resolve(entry);
      const name = path.basename(full);
      // `/` has no folder and cannot be masked (see identify).
      if (name === '') continue;
      look(path.dirname(full)).places.add(name);
      for (let at = path.dirname(full); at !== path.dirname(at); at = path.dirname(at)) {
        const ways = look(path.dirname(at)).ways;
        if (ways.has(path.basename(at))) break;
        ways.add(path.basename(at));
      }
    }
    const sorted = [...byFolder].sort(([a], [b]) => a.length - b.length);
    const grouped = new Map(sorted.map(([folder, { places, ways }]) => [folder, { names: [...new Set([...places, ...ways])], places, ways }] as const));
    this.#lastOthers = { list: [...others], byFolder: grouped };
    return grouped;
  }

  /**
   * The editors' copies there now of the hidden files seen (the server's own and `others`), held to nothing. The names
   * of the copies of a folder's files are asked about at once (FolderScans.present, a stat while the folder holds
   * still); a save's temporary name holds a process id, so is not known beforehand: those are found in the folder's
   * listing (see #numberedSaves). Links named as copies are passed over: a link leads elsewhere, and its target is no
   * copy.
   */
  #copiesNow(others: readonly Identity[]): Identity[] {
    const byFolder = new Map<string, { copies: Set<string>; files: string[] }>();
    for (const file of [...this.#seen.values(), ...others]) {
      if (file.folder) continue;
      const folder = path.dirname(file.path);
      let entry = byFolder.get(folder);
      if (entry === undefined) byFolder.set(folder, (entry = { copies: new Set(), files: [] }));
      entry.files.push(path.basename(file.path));
      for (const copy of editorCopies(file.path)) entry.copies.add(path.basename(copy));
    }
    const copies: Identity[] = [];
    for (const [folder, { copies: names, files }] of byFolder) {
      for (const copy of [...(this.#scans.present(folder, [...names]) ?? []), ...this.#numberedSaves(folder, files)]) {
        const full = path.join(folder, copy);
        if (!isRegularFile(full)) continue;
        const identity = identify(full);
        if (identity !== undefined) copies.push(identity);
      }
    }
    return copies;
  }

  /**
   * The saves in progress of the files `files` of `folder` (bash's `.bash_history-<pid>.tmp`, see isNumberedSave):
   * found among the folder's entries that end so, listed again only when the folder changed; a folder past what a
   * listing reads (MAX_LISTED_ENTRIES) is read whole, as before there was a bound.
   */
  #numberedSaves(folder: string, files: readonly string[]): string[] {
    const listed = this.#scans.entriesNamed(folder, NUMBERED_SAVE);
    const names = listed.length === 1 && listed[0] === folder ? [...regularFileNames(folder)] : listed.map((entry) => path.basename(entry));
    return names.filter((entry) => files.some((file) => isNumberedSave(file, entry)));
  }

  #lookForMissing(): void {
    if (this.#seen.size === this.#entries.length) return;
    for (const entry of this.#entries) {
      if (this.#seen.has(entry)) continue;
      const identity = identify(entry);
      if (identity === undefined) continue;
      this.#seen.set(entry, identity);
      this.#identities.add(identityKey(identity));
    }
  }
}

/**
 * The names an editor or a tool keeps a copy of `file` under, beside it: Emacs's and `cp --backup`'s backups (`token~`,
 * `token.~1~` to `~9~`) and Emacs's autosave (`#token#`), vim's swap files (`.token.swp`, then `.swo`, `.swn`, `.swm`,
 * `.swl` while others are there; `.openai-key.swp` for a name that starts with a dot) and undo file (`.token.un~`),
 * Kate's swap file (`.token.kate-swp`), the JetBrains
 * editors' safe write (`token___jb_old___`, `token___jb_tmp___`), the `.bak`, `.orig`, `.old`, `.save` (nano) of
 * `sed -i.bak`, patch, a person's `cp`, patch's rejected hunks (`token.rej`) and the temporary file of an atomic save
 * (`token.tmp`, `token.new`: zsh writes its whole history to `.zsh_history.new`, then renames it over the history;
 * bash's `-<pid>.tmp` is matched apart, see isNumberedSave). Each holds the file's content, or part of it, so a hidden file's copies are hidden with it. Found from
 * outside: `token~` and `.token.swp` beside the token file were bound back into every call's view of its folder, and a
 * call read the server's token from both; later, `token___jb_old___` and `.token.kate-swp` were missed. Not a copy:
 * Emacs's lock `.#token`, a link naming who edits the file (and links are passed over, see #copiesNow), and any other
 * name (`token.pub`, `token.2024`), which may be a different file.
 */
export function editorCopies(file: string): string[] {
  const folder = path.dirname(file);
  const name = path.basename(file);
  // vim names the swap of a file whose name starts with a dot without a second one (`.openai-key.swp`); Kate's swap
  // and vim's undo file add one whatever the name: both names are taken for each, a copy either way.
  const dotted = name.startsWith('.') ? [name, `.${name}`] : [`.${name}`];
  const names = [
    `${name}~`,
    ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((number) => `${name}.~${number}~`),
    `#${name}#`,
    ...dotted.flatMap((base) => ['swp', 'swo', 'swn', 'swm', 'swl'].map((extension) => `${base}.${extension}`)),
    ...dotted.map((base) => `${base}.un~`),
    ...dotted.map((base) => `${base}.kate-swp`),
    `${name}___jb_old___`,
    `${name}___jb_tmp___`,
    ...['bak', 'orig', 'old', 'save', 'rej', 'tmp', 'new'].map((extension) => `${name}.${extension}`),
  ];
  return names.map((copy) => path.join(folder, copy));
}

/**
 * Whether `entry` is a save of the file `name` in progress under the saving process's id: bash (and any program saving
 * a history through readline) writes the whole history to `.bash_history-<pid>.tmp`, then renames it over the history.
 */
function isNumberedSave(name: string, entry: string): boolean {
  return entry.startsWith(`${name}-`) && /^\d+\.tmp$/.test(entry.slice(name.length + 1));
}

/** The end of a save's temporary name that holds the saving process's id (see isNumberedSave). */
const NUMBERED_SAVE = /-\d+\.tmp$/;

function isRegularFile(file: string): boolean {
  try {
    return lstatSync(file, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/** The names of the regular files of a folder (links are passed over: a link named as a copy leads elsewhere, and its target is no copy). */
function regularFileNames(folder: string): ReadonlySet<string> {
  try {
    return new Set(
      readdirSync(folder, { withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => entry.name),
    );
  } catch {
    return new Set();
  }
}

/**
 * Where a path really is and what is there; nothing for a missing path, or for `/`, which cannot be masked. Most of
 * the paths looked for at each call are missing (browsers not installed): a stat that answers undefined for those
 * costs a system call, where a realpath that throws cost a JavaScript error with its stack.
 */
function identify(entry: string): Identity | undefined {
  try {
    if (statSync(entry, { throwIfNoEntry: false }) === undefined) return undefined;
    const real = realpathSync.native(entry);
    if (real === path.parse(real).root) return undefined;
    const stats = statSync(real, { bigint: true });
    return { path: real, folder: stats.isDirectory(), dev: stats.dev, ino: stats.ino };
  } catch {
    return undefined;
  }
}
