import { readlinkSync, statSync, type BigIntStats, type Dir } from 'node:fs';
import { constants, lstat, mkdir, open, opendir, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { HiddenFoldersTooLargeError, hiddenLinks, HiddenPaths, identityKey } from './hidden-paths';
import { isOnOwnMount, mountPinFor } from './own-mounts';
import { oneLine } from './one-line';
import { isWithin } from './path-within';

/** A path that resolves, after following every symbolic link, to somewhere outside the workspace. */
export class OutsideWorkspaceError extends Error {
  override readonly name = 'OutsideWorkspaceError';
  constructor(
    readonly requested: string,
    readonly detail?: string,
  ) {
    super(`Refused: "${requested}" is outside the workspace${detail === undefined ? '' : ` (${detail})`}.`);
  }
}

/** A path that is, or lies in, one of the server's own files (its data folder, token or key file) or a browser's profile. */
export class HiddenPathError extends Error {
  override readonly name = 'HiddenPathError';
  constructor(readonly requested: string) {
    super(`Refused: "${requested}" is one of the server's private files or a browser's profile; the file tools do not touch it.`);
  }
}

/** A path that cannot be opened safely here: proving what was opened needs /proc/self/fd and /proc/self/fdinfo. */
export class UncheckablePathError extends Error {
  override readonly name = 'UncheckablePathError';
  constructor(readonly requested: string) {
    super(`Refused: "${requested}" cannot be checked on this system (/proc/self/fd or /proc/self/fdinfo is not available).`);
  }
}

/** The longest path, in bytes, the system resolves (PATH_MAX less its NUL): a longer one cannot be proven inside the workspace. */
export const MAX_PATH_BYTES = 4095;

/** A path longer than the system resolves: what it leads to cannot be proven, so nothing is made or opened there. */
export class PathTooLongError extends Error {
  override readonly name = 'PathTooLongError';
  constructor(readonly requested: string) {
    super(`Refused: "${requested}" is too long: in the workspace it is a path of more than ${MAX_PATH_BYTES} bytes, more than this system resolves.`);
  }
}

/** Where a symbolic link met on a written path leads, as far as the file tools may say. */
export type LinkTarget =
  | { kind: 'workspace'; shown: string }
  | { kind: 'outside' }
  | { kind: 'hidden' }
  | { kind: 'nowhere' }
  | { kind: 'changed' };

const LINK_TARGET_WORDS: Record<Exclude<LinkTarget['kind'], 'workspace'>, string> = {
  outside: 'that leads outside the workspace',
  hidden: "that leads to one of the server's private files or a browser's profile",
  nowhere: 'that points nowhere',
  changed: 'that changed while it was looked at',
};

/** The file tools that go through no link, and their words for it. */
export type LinkRefusingTool = 'write_file' | 'read_file';

const LINK_REFUSAL_WORDS: Record<LinkRefusingTool, { goes: string; done: string; nothing: string; give: string }> = {
  write_file: { goes: 'writes', done: 'written', nothing: 'Nothing was written.', give: 'write to' },
  read_file: { goes: 'reads', done: 'read', nothing: 'Nothing was read.', give: 'read' },
};

/**
 * A path written or read through a symbolic link: the card would show the link's name while the write landed where
 * it leads (a repository's `docs/notes.md -> ../.git/config`, or a link swapped in after a rule allowed the path), or
 * the read sent the model what it leads to (`docs/setup.md -> ../.env`).
 */
export class SymbolicLinkError extends Error {
  override readonly name = 'SymbolicLinkError';
  constructor(
    readonly requested: string,
    /** The link, as the workspace names it. */
    readonly link: string,
    readonly target: LinkTarget,
    /** The path to give to reach where the link leads, when that is in the workspace. */
    readonly direct?: string,
    readonly tool: LinkRefusingTool = 'write_file',
  ) {
    const words = LINK_REFUSAL_WORDS[tool];
    super(
      target.kind === 'workspace'
        ? `Refused: "${link}" is a symbolic link to ${oneLine(target.shown)}; ${tool} ${words.goes} through no link, so that the path shown is the file ${words.done}. ` +
            `${words.nothing} If that is the file you mean, ${words.give} "${oneLine(direct ?? target.shown)}".`
        : `Refused: "${link}" is a symbolic link ${LINK_TARGET_WORDS[target.kind]}; ${tool} ${words.goes} through no link. ${words.nothing}`,
    );
  }
}

/** A folder on a path being opened name by name was renamed or replaced meanwhile: what was opened is no longer there. */
export class PathChangedError extends Error {
  override readonly name = 'PathChangedError';
  constructor(readonly requested: string) {
    super(`"${requested}": a folder on its path was moved or replaced while it was being opened; try again.`);
  }
}

/** Kernel pseudo-filesystems hold other processes' secrets (/proc/<pid>/environ); never served, whatever the workspace. */
const PSEUDO_FILESYSTEMS = ['/proc', '/sys', '/dev'];

const POINTS_NOWHERE = 'a symbolic link on the way points nowhere';

/** Bounds the walk from an opened folder up to the workspace, in case renames keep moving it. */
const MAX_DEPTH = 4096;

type Identity = string;

const identityOf: (info: BigIntStats) => Identity = identityKey;

/** Where hidden entries are now, and who they were: a folder or file renamed or hard-linked keeps its identity. */
interface Hidden {
  /** Real paths strictly inside the workspace; those around it or elsewhere are out of the file tools' reach anyway. */
  paths: string[];
  identities: ReadonlySet<Identity>;
  /**
   * The ways into the hidden folders among `paths` from elsewhere in the workspace (see hiddenLinks): the files with
   * another name there (a hard link a call made before the folder was there), and where their symbolic links lead
   * (a link a call put there in place of a history, which the person's program writes through). The folders are looked
   * through when first asked, bounded; past the bound, or while a link there leads through /proc (where each
   * program that opens it runs), 'any': any regular file may be one.
   */
  links: () => HiddenLinks | 'any';
}

interface HiddenLinks {
  /** Who the files are that have another name in a hidden folder, or that a link there leads to. */
  identities: ReadonlySet<Identity>;
  /** Where the links in hidden folders lead in the workspace, there or not yet. */
  targets: readonly string[];
}

/**
 * Confines paths to one folder by real paths, not by string prefixes: `..`, absolute paths, symbolic links
 * that lead out or point nowhere, and sibling folders whose names merely start with the workspace's are all refused,
 * and so are the hidden paths inside it.
 */
export class WorkspacePaths {
  readonly #given: string;
  /** The server's own files, shared with the sandbox: the same record of where and who each is. */
  readonly hidden: HiddenPaths;
  #root: Promise<string> | undefined;
  #rootId: Promise<Identity> | undefined;

  constructor(workspace: string, hidden: HiddenPaths = new HiddenPaths([])) {
    if (!path.isAbsolute(workspace)) throw new Error(`The workspace must be an absolute path, got "${workspace}".`);
    this.#given = path.resolve(workspace);
    this.hidden = hidden;
  }

  /** The workspace's real path, resolved once. */
  root(): Promise<string> {
    this.#root ??= realpath(this.#given).catch((error: unknown) => {
      this.#root = undefined;
      throw new Error(`The workspace "${this.#given}" is not available: ${(error as Error).message}`);
    });
    return this.#root;
  }

  /**
   * The real path `requested` designates, guaranteed inside the workspace and outside its hidden paths at the time
   * of the check. An existing target is fully resolved (links followed); a missing one is its deepest existing
   * ancestor, resolved, plus the missing names. Relative paths are taken from the workspace.
   * What is then opened must be proven again (`openFolder`, `openEntry`): the tree may change in between.
   */
  async resolve(requested: string): Promise<string> {
    const root = await this.root();
    const absolute = this.#absolute(requested, root);

    // The usual case, a path that exists, in one call: the same real path as the walk below would find for it.
    const direct = await realpath(absolute).catch(() => undefined);
    if (direct !== undefined) return this.#confined(requested, root, direct);

    let existing = absolute;
    const missing: string[] = [];
    for (;;) {
      try {
        await lstat(existing);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
        const parent = path.dirname(existing);
        if (parent === existing) throw new OutsideWorkspaceError(requested);
        missing.unshift(path.basename(existing));
        existing = parent;
      }
    }
    let real: string;
    try {
      real = await realpath(existing);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // lstat saw it, realpath cannot follow it: a link to nowhere, which a later write could make lead anywhere.
      if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR') {
        throw new OutsideWorkspaceError(requested, POINTS_NOWHERE);
      }
      throw error;
    }
    return this.#confined(requested, root, path.join(real, ...missing));
  }

  /**
   * Opens the folder `resolved` (from `resolve`) and proves that the folder actually opened is inside the workspace
   * and not hidden: a folder swapped for a link after the check is caught here, and later uses go through the
   * descriptor, not the path.
   */
  async openFolder(requested: string, resolved: string): Promise<WorkspaceFolder> {
    const root = await this.root();
    if (!isWithin(root, resolved)) throw new OutsideWorkspaceError(requested);
    return this.#proven(requested, root, await open(resolved, constants.O_RDONLY | constants.O_DIRECTORY));
  }

  /**
   * The names, from the workspace down, of the place `requested` designates by its words: `.` and `..` are taken as
   * written and no link is looked at. Empty for the workspace itself. Refused when the words lead out of it.
   */
  async names(requested: string): Promise<string[]> {
    const root = await this.root();
    const absolute = this.#absolute(requested, root);
    const relative = path.relative(isWithin(root, absolute) ? root : this.#given, absolute);
    return relative === '' ? [] : relative.split(path.sep);
  }

  /**
   * Opens the folder holding the entry `names` (from `names`, not empty) lead to, one name at a time from the
   * workspace, each opened through the folder before it with O_NOFOLLOW: no symbolic link is followed on the way,
   * whether it was there when a rule or the person looked at the path or was swapped in since (SymbolicLinkError
   * says where one leads). With `create`, missing folders are made, each in an opened one. The folder opened is then
   * proven as `openFolder`'s are, and to be at the very path the names give (PathChangedError when a folder on the
   * way was moved meanwhile). The entry itself is the caller's to open, through the folder.
   */
  async openParentFolder(requested: string, names: readonly string[], options: { create?: boolean; tool?: LinkRefusingTool } = {}): Promise<WorkspaceFolder> {
    const root = await this.root();
    const hidden = this.#hiddenKnown(root);
    // By path before anything is made: a hidden path not made yet must not be made by a tool either, nor a folder on
    // the way to a place too deep to be proven (each would be made, then the write refused).
    const target = path.join(root, ...names);
    checkPath(requested, root, hidden, target);
    checkLinked(requested, hidden, target);
    if (Buffer.byteLength(target) > MAX_PATH_BYTES) throw new PathTooLongError(requested);
    let handle = await open(root, constants.O_RDONLY | constants.O_DIRECTORY);
    let expected = root;
    try {
      for (const [index, name] of names.slice(0, -1).entries()) {
        expected = path.join(expected, name);
        let child: FileHandle;
        try {
          child = await this.openChildFolder(handle, name, options.create === true);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw error;
          const entry = `/proc/self/fd/${handle.fd}/${name}`;
          const info = await lstat(entry).catch(() => undefined);
          if (info?.isSymbolicLink() !== true) throw error;
          throw await this.linkError(requested, names, index, entry, options.tool);
        }
        await handle.close();
        handle = child;
        if (hidden.identities.has(identityOf(await handle.stat({ bigint: true })))) throw new HiddenPathError(requested);
      }
    } catch (error) {
      await handle.close();
      throw error;
    }
    const folder = await this.#proven(requested, root, handle, hidden);
    if (folder.real !== expected) {
      await folder.close();
      throw new PathChangedError(requested);
    }
    return folder;
  }

  /**
   * Opens the folder `name` of the open folder `parent` without following a link there (an error with code ENOTDIR
   * when it is one, or not a folder); with `create`, makes it first when missing.
   */
  protected async openChildFolder(parent: FileHandle, name: string, create: boolean): Promise<FileHandle> {
    const entry = `/proc/self/fd/${parent.fd}/${name}`;
    const flags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
    try {
      return await open(entry, flags);
    } catch (error) {
      if (!create || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    await mkdir(entry).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    return open(entry, flags);
  }

  /**
   * The refusal for the link `entry` (a path through an opened folder's descriptor), met as `names[index]` of a
   * path given as `names`: where it leads, read from the link itself.
   */
  async linkError(requested: string, names: readonly string[], index: number, entry: string, tool?: LinkRefusingTool): Promise<SymbolicLinkError> {
    const root = await this.root();
    const link = names.slice(0, index + 1).join('/');
    const text = await readlink(entry).catch(() => undefined);
    if (text === undefined) return new SymbolicLinkError(requested, link, { kind: 'changed' }, undefined, tool);
    let real: string;
    try {
      real = await this.resolve(path.resolve(root, ...names.slice(0, index), text));
    } catch (error) {
      if (error instanceof HiddenPathError) return new SymbolicLinkError(requested, link, { kind: 'hidden' }, undefined, tool);
      if (error instanceof OutsideWorkspaceError) {
        return new SymbolicLinkError(requested, link, { kind: error.detail === POINTS_NOWHERE ? 'nowhere' : 'outside' }, undefined, tool);
      }
      throw error;
    }
    // A link to what does not exist yet resolves to where it would be made: for a write, that is where it leads.
    const shown = await this.display(real);
    return new SymbolicLinkError(requested, link, { kind: 'workspace', shown }, path.posix.join(shown, ...names.slice(index + 1)), tool);
  }

  /**
   * Opens the folder `requested`, which exists, proves the folder opened as `openFolder` does, and opens it for
   * reading its entries (`bufferSize` at a time) through the same descriptor. Nothing is resolved before: what is
   * proven is the descriptor itself, so nothing can be swapped between a check and the use. The entries are opened
   * for alongside the proof rather than after it (opening reads nothing; a folder that fails the proof is closed
   * unread), so the usual case costs two trips to the file system's threads. A path that does not open as a folder
   * goes the long way (`resolve`, then `openFolder`), which refuses or explains it as for the other tools.
   * The caller closes both.
   */
  async openFolderForListing(requested: string, bufferSize: number): Promise<{ folder: WorkspaceFolder; dir: Dir }> {
    const opened = await this.#openDirectly(requested);
    if (opened === undefined) {
      const folder = await this.openFolder(requested, await this.resolve(requested));
      return {
        folder,
        dir: await opendir(folder.path, { bufferSize }).catch((error: unknown) => {
          folder.closeSoon();
          throw error;
        }),
      };
    }
    const [proof, listing] = await Promise.allSettled([
      this.#proven(requested, opened.root, opened.handle),
      opendir(`/proc/self/fd/${opened.handle.fd}`, { bufferSize }),
    ]);
    if (proof.status === 'rejected') {
      if (listing.status === 'fulfilled') listing.value.closeSync();
      throw proof.reason;
    }
    if (listing.status === 'rejected') {
      proof.value.closeSoon();
      throw listing.reason;
    }
    return { folder: proof.value, dir: listing.value };
  }

  /** The folder `requested` opened as it is named, or undefined when it does not open as a folder. */
  async #openDirectly(requested: string): Promise<{ root: string; handle: FileHandle } | undefined> {
    const root = await this.root();
    const absolute = this.#absolute(requested, root);
    try {
      return { root, handle: await open(absolute, constants.O_RDONLY | constants.O_DIRECTORY) };
    } catch {
      return undefined;
    }
  }

  /** `requested` made absolute from the workspace, refused when it names a place outside it by its very words. */
  #absolute(requested: string, root: string): string {
    if (requested.includes('\0')) throw new OutsideWorkspaceError(requested.replaceAll('\0', '\\0'), 'it contains a NUL byte');
    const absolute = path.resolve(root, requested);
    if (!isWithin(root, absolute) && !isWithin(this.#given, absolute)) throw new OutsideWorkspaceError(requested);
    return absolute;
  }

  /** Who the workspace's folder is (device and inode), read once, as its real path is. */
  #rootIdentity(root: string): Promise<Identity> {
    this.#rootId ??= stat(root, { bigint: true }).then(identityOf, (error: unknown) => {
      this.#rootId = undefined;
      throw error;
    });
    return this.#rootId;
  }

  /** How a resolved path is shown to the model: relative to the workspace. */
  async display(resolved: string): Promise<string> {
    return path.relative(await this.root(), resolved) || '.';
  }

  /** The opened folder `handle` as a WorkspaceFolder, once proven inside the workspace and not hidden; else closed and refused. */
  async #proven(requested: string, root: string, handle: FileHandle, known?: Hidden): Promise<WorkspaceFolder> {
    try {
      const opened = `/proc/self/fd/${handle.fd}`;
      // Awaited before the identities are asked for: a failure of theirs must find its handler below with no wait.
      const pin = await mountPinFor(root);
      // The stat goes to the file system (a network one may take its time): on a thread. The link and the mount
      // are the kernel's own record of the descriptor, read from memory: at once.
      const identities = Promise.all([stat(opened, { bigint: true }), this.#rootIdentity(root)]);
      let real: string;
      let ownMount: boolean;
      try {
        real = readlinkSync(opened);
        ownMount = isOnOwnMount(handle.fd, pin);
      } catch (error) {
        await identities.catch(() => undefined);
        if ((error as NodeJS.ErrnoException).code === 'ENAMETOOLONG') throw new PathTooLongError(requested);
        throw new UncheckablePathError(requested);
      }
      const [openedInfo, rootIdentity] = await identities;
      // Opened through another process's /proc/<pid>/root: its path and parents below are that process's view.
      if (!ownMount) throw new OutsideWorkspaceError(requested, "it leads into another process's view of the file system");
      const hidden = known ?? this.#hiddenKnown(root);
      checkPath(requested, root, hidden, real);
      checkLinked(requested, hidden, real);
      // By identity too, from the descriptor up: `..` of /proc/self/fd/<fd> is the parent of the folder opened,
      // whatever its path says, and a hidden folder moved since start-up is still recognised.
      let identity = identityOf(openedInfo);
      for (let depth = 0, up = opened; identity !== rootIdentity; depth += 1) {
        if (hidden.identities.has(identity)) throw new HiddenPathError(requested);
        if (depth >= MAX_DEPTH) throw new OutsideWorkspaceError(requested);
        up = `${up}/..`;
        const parent = identityOf(await stat(up, { bigint: true }));
        // The top of the filesystem, reached without passing the workspace.
        if (parent === identity) throw new OutsideWorkspaceError(requested);
        identity = parent;
      }
      return new WorkspaceFolder(requested, handle, real, hidden);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * The hidden paths to refuse inside the workspace: each where it was first seen (or, not seen yet, where it would
   * be: nothing may be made there either), and who each seen one is, so one moved since is still recognised.
   */
  #hiddenKnown(root: string): Hidden {
    const { paths, identities } = this.hidden.known();
    // One that is the workspace itself hides all of it (start-up refuses that: the data folder is never the workspace).
    const inside = paths.filter((real) => isWithin(root, real));
    let found: HiddenLinks | 'any' | undefined;
    const links = () => {
      found ??= linksInto(inside, root);
      return found;
    };
    return { paths: inside, identities, links };
  }

  async #confined(requested: string, root: string, target: string): Promise<string> {
    // By path only, as far as they are known: what is opened afterwards is proven against them all (`#proven`).
    checkPath(requested, root, this.#hiddenKnown(root), target);
    return target;
  }
}

/**
 * A workspace folder held open, proven inside the workspace and not hidden. Entries are reached through
 * /proc/self/fd/<fd>/<name>, so renaming or swapping the folder's path after the proof changes nothing.
 */
export class WorkspaceFolder implements AsyncDisposable {
  readonly #hidden: Hidden;

  constructor(
    readonly requested: string,
    readonly handle: FileHandle,
    /** The folder's real path when it was proven. */
    readonly real: string,
    hidden: Hidden,
  ) {
    this.#hidden = hidden;
  }

  /** This very folder, as a path. */
  get path(): string {
    return `/proc/self/fd/${this.handle.fd}`;
  }

  /** A path to the entry `name` (a single name) of this very folder. */
  entry(name: string): string {
    return `${this.path}/${name}`;
  }

  /** Whether the entry `name`, as `info` describes it, is hidden (by path or by identity). */
  isHidden(name: string, info: BigIntStats): boolean {
    const full = path.join(this.real, name);
    const identity = identityOf(info);
    if (this.#hidden.identities.has(identity) || this.#hidden.paths.some((hidden) => isWithin(hidden, full))) return true;
    const links = this.#hidden.links();
    if (links === 'any') return info.isFile();
    return links.identities.has(identity) || links.targets.some((target) => isWithin(target, full));
  }

  /** The entry's lstat, refused when it is hidden; undefined when there is none. */
  async lstatEntry(name: string): Promise<BigIntStats | undefined> {
    const info = await lstat(this.entry(name), { bigint: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (info !== undefined && this.isHidden(name, info)) throw new HiddenPathError(this.requested);
    return info;
  }

  /**
   * Opens the entry `name` without following a link there, refused (and closed) when what was opened is hidden;
   * answers it with what it is, as read from the descriptor for that check.
   */
  async openEntry(name: string, flags: number): Promise<{ handle: FileHandle; info: BigIntStats }> {
    const handle = await open(this.entry(name), flags | constants.O_NOFOLLOW);
    try {
      const info = await handle.stat({ bigint: true });
      if (this.isHidden(name, info)) throw new HiddenPathError(this.requested);
      return { handle, info };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  /** Closes the folder without waiting for it (see closeSoon). */
  closeSoon(): void {
    closeSoon(this.handle);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** Refuses `target` unless it is inside the workspace `root`, on no kernel pseudo-filesystem and outside every hidden path. */
function checkPath(requested: string, root: string, hidden: Hidden, target: string): void {
  if (!isWithin(root, target) || PSEUDO_FILESYSTEMS.some((system) => isWithin(system, target))) throw new OutsideWorkspaceError(requested);
  if (hidden.paths.some((path) => isWithin(path, target))) throw new HiddenPathError(requested);
}

/**
 * Refuses `target` where a symbolic link in a hidden folder leads, there or not yet. Only where a folder is proven or
 * an entry is about to be made (not at each `resolve`): it costs a look through the hidden folders.
 */
function checkLinked(requested: string, hidden: Hidden, target: string): void {
  const links = hidden.links();
  if (links !== 'any' && links.targets.some((leadsTo) => isWithin(leadsTo, target))) throw new HiddenPathError(requested);
}

/**
 * The ways into the hidden folders `inside` the workspace `root` from elsewhere in it (see hiddenLinks), with who
 * each link's target is when it is there.
 */
function linksInto(inside: readonly string[], root: string): HiddenLinks | 'any' {
  const identities = new Set<Identity>();
  const targets: string[] = [];
  try {
    for (const link of hiddenLinks(inside, root)) {
      if (link.kind === 'process') return 'any';
      if (link.kind === 'hard') {
        identities.add(link.identity);
        continue;
      }
      targets.push(link.leadsTo);
      const info = statSync(link.leadsTo, { bigint: true, throwIfNoEntry: false });
      if (info !== undefined) identities.add(identityOf(info));
    }
  } catch (error) {
    if (!(error instanceof HiddenFoldersTooLargeError)) throw error;
    return 'any';
  }
  return { identities, targets };
}

/**
 * Closes `handle` without waiting for it: for a caller whose answer does not depend on the close, which on a busy
 * machine costs a wake-up of the file system's thread and another of the server's.
 */
export function closeSoon(handle: FileHandle): void {
  handle.close().catch(() => undefined);
}
