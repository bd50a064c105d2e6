import { closeSync, constants, fstatSync, lstatSync, opendirSync, openSync, readSync, realpathSync, type BigIntStats } from 'node:fs';
import path from 'node:path';
import { isStrictlyWithin } from './path-within';

/** A `.git` file or `commondir` longer than this is not read (Git writes one line). */
const LINK_FILE_BYTES = 4096;

/** Where the workspace's repository keeps what Git runs: its Git directory and the folder of its config and hooks. */
export interface WorkspaceGitDir {
  /** The Git directory: `.git` itself, or the folder a `.git` file names (`gitdir: …`). A real path in the workspace. */
  gitDir: string;
  /** The `.git` file that names gitDir, with its content; undefined when `.git` is the folder. */
  gitFile: { path: string; content: Buffer } | undefined;
  /**
   * Where the config and hooks are: the folder gitDir's `commondir` names (a worktree's main repository), or gitDir.
   * Undefined when that folder lies outside the workspace (read-only to a sandboxed call already).
   */
  commonDir: string | undefined;
}

/**
 * The workspace's repository as Git finds it at the root: `.git` as a folder, or a `.git` file (a worktree, a
 * submodule, `git init --separate-git-dir`) whose `gitdir:` line Git follows. The folder it names is followed only
 * when it lies in the workspace with no link on the way: `outside` says where it leads otherwise. Undefined when
 * there is no `.git` folder or file (a link is not followed). Never throws.
 */
export function workspaceGitDir(workspace: string): { found: WorkspaceGitDir } | { outside: string } | undefined {
  const dotGit = path.join(workspace, '.git');
  const info = lstatOrUndefined(dotGit);
  if (info?.isDirectory() === true) return { found: { gitDir: dotGit, gitFile: undefined, commonDir: commonDirOf(workspace, dotGit) } };
  if (info?.isFile() !== true) return undefined;
  const content = readSmallFile(dotGit);
  if (content === undefined) return undefined;
  // As Git reads it (read_gitfile_gently): `gitdir: ` and a path, trailing white space dropped, relative to the file's folder.
  const text = content.toString('utf8');
  if (!text.startsWith('gitdir: ')) return undefined;
  const named = text.slice('gitdir: '.length).replace(/\s+$/, '');
  if (named === '') return undefined;
  const gitDir = path.resolve(workspace, named);
  if (!isRealFolderInside(workspace, gitDir)) return { outside: named };
  return { found: { gitDir, gitFile: { path: dotGit, content }, commonDir: commonDirOf(workspace, gitDir) } };
}

/**
 * The folders whose config, `config.worktree` and hooks Git may read for the workspace: gitDir, and the folder its
 * `commondir` names. gitDir's own always: it is writable to a call (bound over itself), so a `commondir` there may be
 * one that a call running alongside wrote to steer the next call's guards off the real config and hooks.
 */
export function repositoryFolders(git: WorkspaceGitDir): string[] {
  return git.commonDir === undefined || git.commonDir === git.gitDir ? [git.gitDir] : [git.gitDir, git.commonDir];
}

/** Git directories kept inside the repository's own that nestedGitDirs gives one by one at most, and how deep it looks. */
export const MAX_NESTED_GIT_DIRS = 64;
const MAX_NESTED_DEPTH = 8;
/** Entries nestedGitDirs reads at most, all folders together, so that a `.git/modules` a call filled holds no call's start. */
const MAX_NESTED_ENTRIES_READ = 4096;

/** The Git directories kept inside a repository's own (see nestedGitDirs). */
export interface NestedGitDirs {
  /** Each one found, parents before what they hold. */
  gitDirs: string[];
  /**
   * The `modules` and `worktrees` folders, when they hold more than can be looked at (past MAX_NESTED_GIT_DIRS, or
   * MAX_NESTED_ENTRIES_READ entries, or MAX_NESTED_DEPTH deep): gitDirs is then empty, and these are to be held whole.
   * A call can lay out as many folders as it likes there, so a bound that left the rest out would let an earlier call
   * push a real one past it.
   */
  tooMany: string[];
}

/**
 * The Git directories kept inside those of repositoryFolders: a submodule's (`modules/<name>`, a name may hold `/`, and
 * theirs in turn) and a linked worktree's (`worktrees/<name>`, whose `commondir` sends the person's Git in that
 * worktree to its config and hooks). The person's `git status` in the workspace runs a submodule's `core.fsmonitor`,
 * and their Git in the worktree runs what its `commondir` leads to. Real folders only, no link on the way, a folder
 * holding a `HEAD` counting as one.
 */
export function nestedGitDirs(git: WorkspaceGitDir): NestedGitDirs {
  const roots = repositoryFolders(git).flatMap((folder) => [
    { path: path.join(folder, 'modules'), namespaces: true },
    { path: path.join(folder, 'worktrees'), namespaces: false },
  ]);
  const found: string[] = [];
  let budget = MAX_NESTED_ENTRIES_READ;
  let overflow = false;
  const visit = (folder: string, depth: number, namespaces: boolean) => {
    if (overflow) return;
    if (depth > MAX_NESTED_DEPTH) {
      overflow = true;
      return;
    }
    const names = realSubfolders(folder, budget);
    if (names === undefined) {
      overflow = true;
      return;
    }
    budget -= names.read;
    for (const name of names.folders) {
      const child = path.join(folder, name);
      if (lstatOrUndefined(path.join(child, 'HEAD'))?.isFile() === true) {
        if (found.push(child) > MAX_NESTED_GIT_DIRS) overflow = true;
        visit(path.join(child, 'modules'), depth + 1, true);
      } else if (namespaces) {
        visit(child, depth + 1, true);
      }
      if (overflow) return;
    }
  };
  for (const root of roots) visit(root.path, 0, root.namespaces);
  if (!overflow) return { gitDirs: [...new Set(found)], tooMany: [] };
  return { gitDirs: [], tooMany: roots.map((root) => root.path).filter((root) => lstatOrUndefined(root)?.isDirectory() === true) };
}

/**
 * The names of the plain folders (no links) in `folder`, and how many entries were read for them; none when it is no
 * plain folder. Undefined when it holds more than `budget` entries: read one at a time, so no more are.
 */
function realSubfolders(folder: string, budget: number): { folders: string[]; read: number } | undefined {
  if (lstatOrUndefined(folder)?.isDirectory() !== true) return { folders: [], read: 0 };
  let dir;
  try {
    dir = opendirSync(folder);
  } catch {
    return { folders: [], read: 0 };
  }
  const folders: string[] = [];
  let read = 0;
  try {
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
      if (++read > budget) return undefined;
      if (entry.isDirectory()) folders.push(entry.name);
    }
  } catch {
    // Gone meanwhile: what was read stands.
  } finally {
    dir.closeSync();
  }
  return { folders, read };
}

/** The files Git may read repository config from: `config` and `config.worktree` of each of repositoryFolders. */
export function repositoryConfigFiles(git: WorkspaceGitDir): string[] {
  return repositoryFolders(git).flatMap((folder) => [path.join(folder, 'config'), path.join(folder, 'config.worktree')]);
}

/** The folder `gitDir/commondir` names (relative to gitDir), gitDir when there is none, undefined when it is outside. */
function commonDirOf(workspace: string, gitDir: string): string | undefined {
  const content = readSmallFile(path.join(gitDir, 'commondir'));
  if (content === undefined) return gitDir;
  const named = content.toString('utf8').replace(/\s+$/, '');
  const commonDir = path.resolve(gitDir, named);
  return isRealFolderInside(workspace, commonDir) ? commonDir : undefined;
}

/** Whether `folder` is a folder strictly inside `workspace` reached through no link. */
export function isRealFolderInside(workspace: string, folder: string): boolean {
  if (!isStrictlyWithin(workspace, folder)) return false;
  try {
    return realpathSync(folder) === folder && lstatSync(folder).isDirectory();
  } catch {
    return false;
  }
}

/** A regular file's bytes, read without following a link at its last component, when at most `maxBytes`. */
export function readSmallFile(file: string, maxBytes = LINK_FILE_BYTES): Buffer | undefined {
  return withSmallFile(file, maxBytes, (fd, info) => {
    const buffer = Buffer.alloc(Number(info.size));
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0));
  });
}

/**
 * Opens `file` without following a link there or waiting on a fifo, and gives `read` its descriptor and its stat when
 * it is a regular file of at most `maxBytes`; undefined when it is not, or when anything fails. Closed after.
 */
export function withSmallFile<T>(file: string, maxBytes: number, read: (fd: number, info: BigIntStats) => T | undefined): T | undefined {
  let fd: number;
  try {
    // O_NONBLOCK: a fifo put there cannot hold this server.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd, { bigint: true });
    if (!info.isFile() || info.size > BigInt(maxBytes)) return undefined;
    return read(fd, info);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function lstatOrUndefined(file: string) {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}
