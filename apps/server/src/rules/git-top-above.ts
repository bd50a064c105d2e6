import { accessSync, closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readlinkSync, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { readConfigFile, type ConfigSetting } from '../tools/git-config-file';

/** The work tree git finds from a folder of the workspace when its top lies above the workspace (`PathFacts.gitTopAbove`). */
export interface GitTopAbove {
  /** Its top: a folder above the workspace, absolute (with `pathsFromTop`, the folder git reads paths from, anywhere). */
  top: string;
  /**
   * Whether a file or folder is at an absolute path now: git takes a word before `--` that names one for a path,
   * and one that names none for a revision (or refuses it). Always false with `pathsFromTop`.
   */
  holds: (absolute: string) => boolean;
  /**
   * Set where git reads no path from the folder it runs in: it found a Git directory with no work tree (a bare
   * repository: the folder, or one above it, is itself a Git directory; or its config sets `core.bare`), or whose
   * `core.worktree` the folder lies outside (`workTreeOf`). Every path and pathspec then names a file
   * from the top of the repository's tree (`.` is all of it, `src` its `src`), so none limits a read to the
   * workspace, and a `<rev>:<path>` names one of `top`. A rule covers no read of the tree, index or history there.
   */
  pathsFromTop?: true;
}

/**
 * Where git finds its repository from a folder of `workspace`, as its discovery goes (`discover`): `GitTopAbove` when
 * its work tree's top is above the workspace (the workspace lies in a larger repository), when the `.git` found inside
 * leads to the larger repository's (a gitfile `gitdir: ../.git`, or to a worktree of it), or when what git finds has
 * no work tree (`pathsFromTop`); undefined when its top is in the workspace or there is none. Given no folder (a
 * command before may have changed the file system, and removed the workspace's own `.git`), the repository above the
 * workspace counts whatever lies inside. Looked up on the file system as it is now, at each call.
 */
export function gitTopAboveWorkspace(workspace: string): (folder: string | undefined) => GitTopAbove | undefined {
  return (folder) => {
    const inside = folder !== undefined && (folder === workspace || folder.startsWith(`${workspace}/`));
    const found = discover(inside ? folder : path.dirname(workspace));
    if (found === undefined) return undefined;
    const judged = judge(found, inside ? folder : workspace, workspace);
    if (judged !== undefined || found.at === workspace || found.at.startsWith(`${workspace}/`)) return judged;
    // Above the workspace, a `.git` git dies on counts as the larger repository: it may be another by the time git runs.
    return larger(found.at);
  };
}

/** What git's discovery finds (`discover`). */
interface Found {
  /** The folder whose `.git` it is, or, for a bare one, the Git directory itself. */
  at: string;
  /** The Git directory: `at`'s `.git`, the folder a gitfile there names, or `at` itself. */
  gitDir: string;
  /** Its common directory (where its objects and refs are); undefined where git dies on what it found. */
  commonDir: string | undefined;
  /** Whether `at` is itself the Git directory: git then has no work tree. */
  bare: boolean;
}

/**
 * The Git directory git finds from `start`, as git 2.39's `setup_git_directory_gently_1` (setup.c) goes: in each
 * folder from there up, its `.git` if a file (a gitfile, which git follows, or dies on when it leads to no
 * repository) or a Git directory (`isGitDirectory`), and then the folder itself, if it is a Git directory (a bare
 * repository: an ordinary `HEAD` and `commondir` in a folder make it one, `safe.bareRepository` being `all` by
 * default); undefined when there is none up to the root. `GIT_CEILING_DIRECTORIES` and mount points, which would stop
 * it sooner, are not counted.
 */
function discover(start: string): Found | undefined {
  for (let at = start; ; at = path.dirname(at)) {
    const dotGit = path.join(at, '.git');
    const info = statOrUndefined(dotGit);
    if (info?.isFile() === true) {
      const target = gitfileTarget(dotGit);
      return { at, gitDir: target ?? dotGit, commonDir: target === undefined ? undefined : isGitDirectory(target), bare: false };
    }
    const commonDir = info === undefined ? undefined : isGitDirectory(dotGit);
    if (commonDir !== undefined) return { at, gitDir: dotGit, commonDir, bare: false };
    const itself = isGitDirectory(at);
    if (itself !== undefined) return { at, gitDir: at, commonDir: itself, bare: true };
    if (at === path.dirname(at)) return undefined;
  }
}

/**
 * `GitTopAbove` for what git found from `folder`, or undefined where it reads nothing outside the workspace from there:
 * its work tree lies in the workspace, and so does the folder, and its repository is not the larger one's (the
 * workspace's own, a nested one, a repository elsewhere the workspace's `.git` names), or git dies on it. A work tree
 * that holds the workspace (`core.worktree = ../../..` in a repository inside it, which `git add -A` then fills with the
 * larger repository's files) is read as a larger repository's. With no work tree, or one the folder lies outside, git
 * reads paths from the top (`pathsFromTop`): the work tree's, or with none the folder whose `.git` the common directory
 * is (`mono` for `mono/.git`), or that directory itself.
 */
function judge(found: Found, folder: string, workspace: string): GitTopAbove | undefined {
  const { commonDir } = found;
  if (commonDir === undefined) return undefined;
  const set = workTreeOf(found);
  if (set === 'unknown' || set === 'none') return fromTop(topOf(commonDir));
  const { tree } = set;
  const within = (file: string) => [workspace, realOrSame(workspace)].some((top) => file === top || file.startsWith(`${top}/`));
  if (tree !== found.at) {
    const here = realOrSame(folder);
    if (here !== tree && !here.startsWith(`${tree === '/' ? '' : tree}/`)) return within(tree) && within(realOrSame(commonDir)) ? undefined : fromTop(tree);
    if (!within(tree)) return larger(tree);
  } else if (!within(tree)) return larger(tree);
  // A `.git` inside whose repository is the larger one's (`gitdir: ../.git`, a worktree of it) reads its history.
  const above = aboveWorkspace(commonDir, workspace);
  return above === undefined ? undefined : larger(above);
}

/** A config larger than this counts as one that may say anything. */
const MAX_CONFIG_BYTES = 256 * 1024;

/**
 * The work tree git sets up for what it found, as git 2.39's `check_repository_format_gently` and
 * `setup_discovered_git_dir`, `setup_bare_git_dir` and `setup_explicit_git_dir` (setup.c) do: `core.worktree` (a path
 * relative to the Git directory, links followed) or, with `core.bare`, none, as the common directory's `config` sets
 * them, or the Git directory's `config.worktree` with `extensions.worktreeConfig`; both read only from a config that
 * sets `core.repositoryformatversion`, and not for a linked worktree (a Git directory with a `commondir`) but from
 * `config.worktree`. Otherwise `found.at`, or none for a bare repository. `unknown` for a config git may read otherwise
 * (a link, one too large, a key with no value or a value git dies on) or a `core.worktree` not there now.
 */
function workTreeOf(found: Found): { tree: string } | 'none' | 'unknown' {
  const common = configOf(path.join(found.commonDir ?? found.gitDir, 'config'));
  if (common === 'unknown') return 'unknown';
  let settings = common;
  let own = !existsSync(path.join(found.gitDir, 'commondir'));
  if (!common.some((setting) => isKey(setting, 'core', 'repositoryformatversion'))) settings = [];
  else {
    const perWorktree = lastBoolean(common, 'extensions', 'worktreeconfig');
    if (perWorktree === 'unknown') return 'unknown';
    if (perWorktree === true) {
      const worktree = configOf(path.join(found.gitDir, 'config.worktree'));
      if (worktree === 'unknown') return 'unknown';
      settings = [...common, ...worktree];
      own = true;
    }
  }
  const bare = own ? lastBoolean(settings, 'core', 'bare') : false;
  const named = own ? settings.filter((setting) => isKey(setting, 'core', 'worktree')).at(-1) : undefined;
  if (bare === 'unknown' || (named !== undefined && named.value === undefined)) return 'unknown';
  if (named?.value !== undefined) {
    if (bare === true) return 'none';
    try {
      return { tree: realpathSync(path.resolve(realpathSync(found.gitDir), named.value)) };
    } catch {
      return 'unknown';
    }
  }
  return found.bare || bare === true ? 'none' : { tree: found.at };
}

/** A Git config's settings (`readConfigFile`), none where there is no file, `unknown` where it cannot be read as git would. */
function configOf(file: string): ConfigSetting[] | 'unknown' {
  try {
    lstatSync(file);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? [] : 'unknown';
  }
  return readConfigFile(file, MAX_CONFIG_BYTES)?.settings ?? 'unknown';
}

function isKey(setting: ConfigSetting, section: string, key: string): boolean {
  return setting.section === section && !setting.subsection && setting.key === key;
}

/** The last value of a key, read as git's `git_config_bool` reads it; undefined for none, `unknown` where git dies on it. */
function lastBoolean(settings: readonly ConfigSetting[], section: string, key: string): boolean | undefined | 'unknown' {
  const last = settings.filter((setting) => isKey(setting, section, key)).at(-1);
  if (last === undefined) return undefined;
  if (last.value === undefined) return true;
  const value = last.value.toLowerCase();
  if (['true', 'yes', 'on'].includes(value)) return true;
  if (['', 'false', 'no', 'off'].includes(value)) return false;
  return /^-?\d+$/.test(value) ? Number(value) !== 0 : 'unknown';
}

function larger(top: string): GitTopAbove {
  return { top, holds: (absolute) => existsSync(absolute) };
}

function fromTop(top: string): GitTopAbove {
  return { top, holds: () => false, pathsFromTop: true };
}

/** The folder a repository's files are read from when it has no work tree: the one whose `.git` it is, or itself. */
function topOf(commonDir: string): string {
  const real = realOrSame(commonDir);
  return path.basename(real) === '.git' ? path.dirname(real) : real;
}

/**
 * As git's `is_git_directory` (setup.c): a `HEAD` that `validate_headref` takes (`validHead`), and an `objects` and
 * `refs` git may enter in its common directory (the folder its `commondir` file names, or itself). The common
 * directory, or undefined.
 */
function isGitDirectory(gitDir: string): string | undefined {
  if (!validHead(path.join(gitDir, 'HEAD'))) return undefined;
  const commonDir = commonDirOf(gitDir);
  if (commonDir === undefined) return undefined;
  return enterable(path.join(commonDir, 'objects')) && enterable(path.join(commonDir, 'refs')) ? commonDir : undefined;
}

/**
 * As git's `validate_headref` (path.c): a link into `refs/`, or a file whose first 255 bytes, read as a C string (up to
 * a NUL), start with `ref:`, spaces as git's own `isspace` tells them (space, tab, CR, LF: not `\f`, `\v` or U+00A0,
 * which JavaScript's `\s` takes) and `refs/`, or with an object id of 40 hex digits (git checks for SHA-1's length
 * before it has read the repository's format).
 */
function validHead(head: string): boolean {
  try {
    const info = lstatSync(head);
    if (info.isSymbolicLink()) return readlinkSync(head).startsWith('refs/');
    if (!info.isFile()) return false;
    const text = cString(readFileStart(head, 255));
    return /^ref:[ \t\r\n]*refs\//.test(text) || /^[0-9a-f]{40}/i.test(text);
  } catch {
    return false;
  }
}

/**
 * `commondir`'s folder, or the Git directory itself where there is none. Read as git's `get_common_dir_noenv` does:
 * trailing line ends dropped, then, used as a C string, cut at the first NUL (`../..\0x` names `../..`); relative to
 * the Git directory unless absolute.
 */
function commonDirOf(gitDir: string): string | undefined {
  const file = path.join(gitDir, 'commondir');
  if (!existsSync(file)) return gitDir;
  try {
    return path.resolve(gitDir, cString(withoutLineEnds(readFileStart(file, 4096))));
  } catch {
    return undefined;
  }
}

/**
 * A gitfile's Git directory, or undefined where git would die on it. Read as git's `read_gitfile_gently` does:
 * `gitdir: `, trailing line ends dropped, nothing left after it an error, then the path up to the first NUL (git uses it
 * as a C string: `gitdir: ../.git\0junk` names `../.git`), relative to the gitfile's folder unless absolute.
 */
function gitfileTarget(gitfile: string): string | undefined {
  try {
    const text = withoutLineEnds(readFileStart(gitfile, 4096));
    if (!text.subarray(0, GITDIR.length).equals(GITDIR) || text.length === GITDIR.length) return undefined;
    return path.resolve(path.dirname(gitfile), cString(text.subarray(GITDIR.length)));
  } catch {
    return undefined;
  }
}

const GITDIR = Buffer.from('gitdir: ');

/** Bytes as C reads them: up to the first NUL. */
function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString('utf8');
}

/** Bytes without the CRs and LFs that end them. */
function withoutLineEnds(bytes: Buffer): Buffer {
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] === 0x0a || bytes[end - 1] === 0x0d)) end -= 1;
  return bytes.subarray(0, end);
}

/**
 * The folder above the workspace whose `.git` a common directory is (followed through links), or undefined for one
 * that is no such `.git` (the workspace's own, or a repository elsewhere). Undefined common directory: git dies.
 */
function aboveWorkspace(commonDir: string | undefined, workspace: string): string | undefined {
  if (commonDir === undefined) return undefined;
  const real = realOrSame(commonDir);
  if (path.basename(real) !== '.git') return undefined;
  const top = path.dirname(real);
  return [workspace, realOrSame(workspace)].some((folder) => folder.startsWith(`${top === '/' ? '' : top}/`)) ? top : undefined;
}

function enterable(folder: string): boolean {
  try {
    accessSync(folder, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Up to `length` bytes from the start of a regular file of the workspace, read on the server's thread (its bytes), for the look at
 * a Git directory. The workspace is the model's to fill, so the open never waits
 * (O_NONBLOCK: a FIFO no one writes would hold an open for reading, and every client with it, until someone did), and
 * anything but a regular file, a FIFO or device swapped in after a look included, is refused with an error rather than
 * read; a large file costs `length` bytes, not its size. Throws as `openSync` does (ENOENT for none).
 */
function readFileStart(file: string, length: number): Buffer {
  const descriptor = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!fstatSync(descriptor).isFile()) throw new Error(`${file} is not a regular file`);
    const buffer = Buffer.alloc(length);
    let read = 0;
    for (let got = -1; got !== 0 && read < length; read += got) got = readSync(descriptor, buffer, read, length - read, read);
    return buffer.subarray(0, read);
  } finally {
    closeSync(descriptor);
  }
}

function realOrSame(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

function statOrUndefined(file: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
