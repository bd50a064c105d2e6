import { closeSync, constants, fstatSync, lstatSync, openSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { hooksFoldersToKeep, hooksPathFolder } from '../git-hooks-path';
import { maskedNow, type MaskedPath } from './missing-git-paths-mask';

/** A path of the workspace mounted from a descriptor this server opened, so that no link swapped in can redirect the mount. */
export interface WorkspaceGuard {
  /** Where it is mounted: a real path in the workspace. */
  path: string;
  /** The open file or folder, in this process. */
  fd: number;
  /** Read-only, or bound over itself (a mount point cannot be renamed, so what lies under it stays where it is). */
  readOnly: boolean;
}

/** Linux's O_PATH, which node:fs does not name. */
const O_PATH = 0o10000000;

/**
 * What a call could leave behind to run outside the sandbox later: Git runs `core.fsmonitor`, aliases, filters and
 * hooks from a repository's config and hooks folder at the person's next `git status` or commit, and a workspace's
 * rules are read from `.airlock`. `.git` itself is bound over itself, so it cannot be renamed away from under them
 * and replaced.
 */
const GIT_FOLDER = '.git';
const IN_GIT_FOLDER: readonly { path: string; folder: boolean }[] = [
  { path: '.git/config', folder: false },
  { path: '.git/hooks', folder: true },
  // Old-style remotes: a `.git/remotes/origin` with `Pull: +refs/heads/main:refs/heads/keep` makes a `git fetch origin`
  // force-update a local branch.
  { path: '.git/remotes', folder: true },
  { path: '.git/branches', folder: true },
];
const IN_WORKSPACE: readonly { path: string; folder: boolean }[] = [{ path: '.airlock', folder: true }];

/**
 * Opens those of the guarded paths that exist now, each only when it is a plain file or folder at its very path
 * (no link anywhere on the way, checked on the open descriptor, so a link swapped in meanwhile is caught).
 * The caller closes the descriptors (`closeGuards`) once bubblewrap has them.
 */
export function openWorkspaceGuards(workspace: string): WorkspaceGuard[] {
  const guards: WorkspaceGuard[] = [];
  const gitFolder = openExactly(path.join(workspace, GIT_FOLDER), true);
  if (gitFolder !== undefined) {
    const inGit = IN_GIT_FOLDER.map((entry) => openGuard(workspace, entry)).filter((guard) => guard !== undefined);
    guards.push({ path: path.join(workspace, GIT_FOLDER), fd: gitFolder, readOnly: false }, ...inGit);
  }
  for (const entry of IN_WORKSPACE) {
    const guard = openGuard(workspace, entry);
    if (guard !== undefined) guards.push(guard);
  }
  const hooks = gitFolder === undefined ? undefined : configuredHooks(workspace);
  if (hooks !== undefined) guards.push(...hooksFolderGuards(workspace, hooks, guards));
  return guards;
}

/** The outermost folder to keep for the hooks folder `core.hooksPath` names inside the workspace (see hooksFoldersToKeep). */
function configuredHooks(workspace: string): string | undefined {
  const folder = hooksPathFolder({ workspace, configFile: path.join(workspace, GIT_FOLDER, 'config'), workTree: workspace });
  return folder === undefined ? undefined : hooksFoldersToKeep(folder)[0];
}

/**
 * The hooks folder read-only, and each folder between the workspace and it bound over itself, so that none can be
 * renamed away and another put in its place. Stops at the first that is missing, masked by a running call (see
 * missingGitPaths), or no plain folder (a link); those `held` already are left out.
 */
function hooksFolderGuards(workspace: string, hooks: string, held: readonly WorkspaceGuard[]): WorkspaceGuard[] {
  const guards: WorkspaceGuard[] = [];
  for (const folder of foldersFrom(workspace, hooks)) {
    if (maskedNow(folder)) break;
    const readOnly = folder === hooks;
    const existing = held.find((guard) => guard.path === folder);
    if (existing !== undefined) {
      if (readOnly || !existing.readOnly) continue;
      break;
    }
    const fd = openExactly(folder, true);
    if (fd === undefined) break;
    guards.push({ path: folder, fd, readOnly });
  }
  return guards;
}

/** The folders from just below `workspace` down to `folder`, which lies inside it. */
function foldersFrom(workspace: string, folder: string): string[] {
  const parts = path.relative(workspace, folder).split(path.sep);
  return parts.map((_, index) => path.join(workspace, ...parts.slice(0, index + 1)));
}

/**
 * The paths of the workspace's repository a call must not make when they are missing at its start (see
 * maskMissingGitPaths): its config and its hooks folder. `.git` is a repository to Git without a config (`git init`
 * then `rm .git/config`), and a call's first config could name a hooks folder or an fsmonitor. None where `.git` is no
 * folder of its own.
 */
export function missingGitPaths(workspace: string): MaskedPath[] {
  const gitFolder = openExactly(path.join(workspace, GIT_FOLDER), true);
  if (gitFolder === undefined) return [];
  closeSync(gitFolder);
  const hooks = configuredHooks(workspace);
  const missingHooks = hooks === undefined ? undefined : firstMissing(workspace, hooks);
  return [
    { path: path.join(workspace, GIT_FOLDER, 'config'), folder: false },
    { path: path.join(workspace, GIT_FOLDER, 'hooks'), folder: true },
    ...(missingHooks === undefined ? [] : [{ path: missingHooks, folder: true }]),
  ];
}

/**
 * For a hooks folder `core.hooksPath` names: the outermost folder on the way to it that is missing (or the mount point
 * of a running call masking it), which an empty read-only tmpfs keeps the call from making. Undefined when all are
 * there, or one on the way is no plain folder.
 */
function firstMissing(workspace: string, hooks: string): string | undefined {
  for (const folder of foldersFrom(workspace, hooks)) {
    if (maskedNow(folder)) return folder;
    let info;
    try {
      info = lstatSync(folder);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? folder : undefined;
    }
    if (!info.isDirectory()) return undefined;
  }
  return undefined;
}

export function closeGuards(guards: readonly WorkspaceGuard[]): void {
  for (const guard of guards) {
    try {
      closeSync(guard.fd);
    } catch {
      // Already closed.
    }
  }
}

function openGuard(workspace: string, entry: { path: string; folder: boolean }): WorkspaceGuard | undefined {
  const full = path.join(workspace, entry.path);
  const fd = openExactly(full, entry.folder);
  return fd === undefined ? undefined : { path: full, fd, readOnly: true };
}

/**
 * Opens `file` (a real path) only if what got opened is a folder or a regular file, as asked, at that very path.
 * O_PATH reads nothing: a fifo put there cannot block this server, and a file its owner cannot read is still held.
 */
function openExactly(file: string, folder: boolean): number | undefined {
  let fd: number;
  try {
    fd = openSync(file, O_PATH | constants.O_NOFOLLOW | (folder ? constants.O_DIRECTORY : 0));
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    if ((folder ? info.isDirectory() : info.isFile()) && realpathSync(`/proc/self/fd/${fd}`) === file) return fd;
  } catch {
    // Checked below as a mismatch.
  }
  closeSync(fd);
  return undefined;
}
