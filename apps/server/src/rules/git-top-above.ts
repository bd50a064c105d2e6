import { accessSync, closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readlinkSync, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/** The work tree git finds from a folder of the workspace when its top lies above the workspace (`PathFacts.gitTopAbove`). */
export interface GitTopAbove {
  /** Its top: a folder above the workspace, absolute. */
  top: string;
  /**
   * Whether a file or folder is at an absolute path now: git takes a word before `--` that names one for a path,
   * and one that names none for a revision (or refuses it).
   */
  holds: (absolute: string) => boolean;
}

/**
 * Where git finds the top of its work tree from a folder of `workspace`, as its discovery goes (a `.git` folder that
 * is a Git directory, or a `.git` file, in that folder or the nearest one above it): `GitTopAbove` when that is above
 * the workspace (the workspace lies in a larger repository), or when the `.git` found inside leads to the larger
 * repository's (a gitfile `gitdir: ../.git`, or to a worktree of it); undefined when it is in the workspace or there is
 * none. Given no folder (a command before may have changed the file system, and removed the workspace's own `.git`),
 * the repository above the workspace counts whatever lies inside. Looked up on the file system as it is now, at each call.
 */
export function gitTopAboveWorkspace(workspace: string): (folder: string | undefined) => GitTopAbove | undefined {
  const found = (top: string): GitTopAbove => ({ top, holds: (absolute) => existsSync(absolute) });
  return (folder) => {
    if (folder !== undefined && (folder === workspace || folder.startsWith(`${workspace}/`))) {
      for (let at = folder; at.length >= workspace.length; at = path.dirname(at)) {
        const top = topAt(at);
        if (top === undefined) continue;
        // A `.git` inside whose repository is the larger one's (`gitdir: ../.git`, a worktree of it) reads its history.
        const above = aboveWorkspace(top.commonDir, workspace);
        return above === undefined ? undefined : found(above);
      }
    }
    for (let at = path.dirname(workspace); ; at = path.dirname(at)) {
      if (topAt(at) !== undefined) return found(at);
      if (at === path.dirname(at)) return undefined;
    }
  };
}

/**
 * Where git takes `folder` for the top of a work tree, its repository's common directory (where its objects and refs
 * are): its `.git` is a file (a gitfile, which git follows, or dies on when it leads to no repository; the common
 * directory is then the one it leads to, if any) or a folder git tells for a Git directory (`isGitDirectory`);
 * undefined for any other `.git`, which git passes by, going further up.
 */
function topAt(folder: string): { commonDir: string | undefined } | undefined {
  const dotGit = path.join(folder, '.git');
  const info = statOrUndefined(dotGit);
  if (info === undefined) return undefined;
  if (info.isFile()) {
    const target = gitfileTarget(dotGit);
    return { commonDir: target === undefined ? undefined : isGitDirectory(target) };
  }
  if (!info.isDirectory()) return undefined;
  const commonDir = isGitDirectory(dotGit);
  return commonDir === undefined ? undefined : { commonDir };
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
