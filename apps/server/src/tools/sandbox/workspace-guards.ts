import { closeSync, constants, fstatSync, lstatSync, openSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { includedConfigFiles } from '../git-config-includes';
import { hooksFoldersToKeep, hooksPathFolders } from '../git-hooks-path';
import { nestedGitDirs, repositoryConfigFiles, repositoryFolders, workspaceGitDir, type WorkspaceGitDir } from '../workspace-git-dir';
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
 * rules are read from `.airlock`. The Git directory itself (`.git`, or the folder a `.git` file names) is bound over
 * itself, so it cannot be renamed away from under them and replaced. Each is held in the Git directory and in the
 * folder its `commondir` names (see repositoryFolders).
 */
const IN_GIT_FOLDER: readonly { name: string; folder: boolean }[] = [
  { name: 'config', folder: false },
  // Repository config as well once `extensions.worktreeConfig` is on (`git sparse-checkout` turns it on).
  { name: 'config.worktree', folder: false },
  { name: 'hooks', folder: true },
  // Old-style remotes: a `.git/remotes/origin` with `Pull: +refs/heads/main:refs/heads/keep` makes a `git fetch origin`
  // force-update a local branch.
  { name: 'remotes', folder: true },
  { name: 'branches', folder: true },
  // A worktree's `commondir`: rewritten by a running call, it would send the config and hooks of the person's Git, and
  // the guards of calls starting meanwhile, to a folder the call chose. Missing, it is not masked (Git would read an
  // empty one); a call may then write one, which is why the Git directory's own config and hooks stay held too.
  { name: 'commondir', folder: false },
];
const IN_WORKSPACE: readonly { path: string; folder: boolean }[] = [{ path: '.airlock', folder: true }];

/**
 * Opens those of the guarded paths that exist now, each only when it is a plain file or folder at its very path
 * (no link anywhere on the way, checked on the open descriptor, so a link swapped in meanwhile is caught).
 * The caller closes the descriptors (`closeGuards`) once bubblewrap has them.
 */
export function openWorkspaceGuards(workspace: string): WorkspaceGuard[] {
  const guards: WorkspaceGuard[] = [];
  // A `.git` file read-only, whatever it names (a linked worktree's leads outside the workspace): rewritten, it would
  // send Git to a folder the call laid out.
  holdReadOnly(guards, path.join(workspace, '.git'), false);
  const git = gitDirIn(workspace);
  if (git !== undefined) {
    const folders = repositoryFolders(git);
    for (const folder of folders) guards.push(...foldersHeld(workspace, folder, guards, false));
    for (const folder of folders) {
      for (const entry of IN_GIT_FOLDER) holdReadOnly(guards, path.join(folder, entry.name), entry.folder);
    }
    // A submodule's or a linked worktree's Git directory kept in `.git` is run from as `.git` is: the person's `git
    // status` runs a submodule's `core.fsmonitor`, their Git in the worktree follows its `commondir`. Each held as
    // `.git` is, the folders on the way bound over themselves so none is renamed away and replaced.
    const nested = nestedGitDirs(git);
    for (const gitDir of nested.gitDirs) {
      guards.push(...foldersHeld(workspace, gitDir, guards, false));
      for (const entry of IN_GIT_FOLDER) holdReadOnly(guards, path.join(gitDir, entry.name), entry.folder);
    }
    for (const folder of nested.tooMany) holdReadOnly(guards, folder, true);
  }
  for (const entry of IN_WORKSPACE) {
    const guard = openGuard(workspace, entry);
    if (guard !== undefined) guards.push(guard);
  }
  for (const hooks of configuredHooks(workspace, git)) guards.push(...foldersHeld(workspace, hooks, guards, true));
  // After the hooks folders, which stay read-only should one hold an included file. Each folder on the way is bound
  // over itself, so that none can be renamed away with the file and another put in its place.
  for (const file of includedConfigFiles(workspace, configsGitReads(git))) {
    if (path.dirname(file) !== workspace) guards.push(...foldersHeld(workspace, path.dirname(file), guards, false));
    holdReadOnly(guards, file, false);
  }
  return guards;
}

/** Adds `file` read-only when it is there; one already held is made read-only (a `commondir` may name a folder inside the Git directory). */
function holdReadOnly(guards: WorkspaceGuard[], file: string, folder: boolean): void {
  const index = guards.findIndex((guard) => guard.path === file);
  if (index >= 0 && guards[index]!.readOnly) return;
  const fd = openExactly(file, folder);
  if (fd === undefined) return;
  if (index >= 0) {
    closeSync(guards[index]!.fd);
    guards.splice(index, 1);
  }
  guards.push({ path: file, fd, readOnly: true });
}

/**
 * The configs whose includes are held in the workspace: the person's own, which Git reads for every repository (a
 * `~/.gitconfig` of a dotfiles repository includes a file of it), before the workspace repository's, so that a
 * repository a call made itself cannot spend the bounds of includedConfigFiles before them. The person's are found
 * from the home folder as the person's Git finds them with no `XDG_CONFIG_HOME` or `GIT_CONFIG_*` set.
 */
export function configsGitReads(git: WorkspaceGitDir | undefined): string[] {
  const home = os.homedir();
  const own = [path.join(home, '.gitconfig'), path.join(home, '.config', 'git', 'config'), '/etc/gitconfig'];
  return [...own, ...(git === undefined ? [] : repositoryConfigFiles(git))];
}

/** The workspace's Git directory when `.git` is a folder or a file naming one inside the workspace (see workspaceGitDir). */
function gitDirIn(workspace: string): WorkspaceGitDir | undefined {
  const git = workspaceGitDir(workspace);
  return git !== undefined && 'found' in git ? git.found : undefined;
}

/**
 * The outermost folder to keep for each hooks folder `core.hooksPath` names inside the workspace (see
 * hooksFoldersToKeep), in the configs Git reads for the workspace's repository (the person's own, which name one for
 * every repository: `.githooks`, each repository's own, or `~/.git-hooks` in a workspace holding the home folder; and
 * the repository's) or a file they include. Without a repository yet too: a call may make one.
 */
function configuredHooks(workspace: string, git: WorkspaceGitDir | undefined): string[] {
  const configFiles = configsGitReads(git);
  const hooks = hooksPathFolders(workspace, [...configFiles, ...includedConfigFiles(workspace, configFiles)]);
  return [...new Set(hooks.map((folder) => hooksFoldersToKeep(folder)[0]!))];
}

/**
 * Each folder from the workspace down to `target` bound over itself, so that none can be renamed away and another put
 * in its place, and `target` read-only when asked. Stops at the first that is missing, masked by a running call (see
 * missingGitPaths), or no plain folder (a link); those `held` already are left out.
 */
function foldersHeld(workspace: string, target: string, held: readonly WorkspaceGuard[], targetReadOnly: boolean): WorkspaceGuard[] {
  const guards: WorkspaceGuard[] = [];
  for (const folder of foldersFrom(workspace, target)) {
    if (maskedNow(folder)) break;
    const readOnly = targetReadOnly && folder === target;
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
 * maskMissingGitPaths): its config, `config.worktree` and hooks folder, in the Git directory (`.git`, or what a `.git`
 * file names) and in the folder its `commondir` names, the hooks folders `core.hooksPath` names, and the files the
 * config or the person's own includes inside the workspace (see includedConfigFiles, configsGitReads; for one in a
 * folder missing, that folder). A Git directory is a repository to Git without a config (`git init` then `rm
 * .git/config`), and a call's first config could name a hooks folder or an fsmonitor. Only those the person's config
 * includes where the workspace has no Git directory of its own (a `.git` link, a `.git` file leading outside the
 * workspace).
 */
export function missingGitPaths(workspace: string): MaskedPath[] {
  const git = gitDirIn(workspace);
  const paths: MaskedPath[] = (git === undefined ? [] : repositoryFolders(git)).flatMap((folder) => [
    { path: path.join(folder, 'config'), folder: false },
    { path: path.join(folder, 'config.worktree'), folder: false },
    { path: path.join(folder, 'hooks'), folder: true },
  ]);
  const wanted = [
    ...configuredHooks(workspace, git).map((hooks) => ({ path: hooks, folder: true })),
    ...includedConfigFiles(workspace, configsGitReads(git)).map((file) => ({ path: file, folder: false })),
  ];
  for (const entry of wanted) {
    const missing = firstMissing(workspace, entry);
    if (missing !== undefined && !paths.some((known) => known.path === missing.path)) paths.push(missing);
  }
  return paths;
}

/**
 * For a hooks folder `core.hooksPath` names, or a config file the repository config includes: the outermost path on
 * the way to it that is missing (or the mount point of a running call masking it), which an empty read-only tmpfs (a
 * folder) or file keeps the call from making. Undefined when all are there, or one on the way is no plain folder.
 */
function firstMissing(workspace: string, target: MaskedPath): MaskedPath | undefined {
  for (const entry of foldersFrom(workspace, target.path)) {
    const folder = entry !== target.path || target.folder;
    if (maskedNow(entry)) return { path: entry, folder };
    let info;
    try {
      info = lstatSync(entry);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? { path: entry, folder } : undefined;
    }
    if (folder && !info.isDirectory()) return undefined;
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
