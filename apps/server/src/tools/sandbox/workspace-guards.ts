import { closeSync, constants, fstatSync, openSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { MaskedPath } from './missing-git-paths-mask';

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
  return guards;
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
  return [
    { path: path.join(workspace, GIT_FOLDER, 'config'), folder: false },
    { path: path.join(workspace, GIT_FOLDER, 'hooks'), folder: true },
  ];
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
