import { existsSync } from 'node:fs';
import path from 'node:path';
import { readIndexGitlinks } from '../rules/git-index-gitlinks';
import { readConfigFile } from './git-config-file';
import { isRealFolderInside, nestedGitDirs, readSmallFile, repositoryConfigFiles, type WorkspaceGitDir } from './workspace-git-dir';

/** Submodules of the index looked at, at most; the rest are counted. A call can record as many as it likes. */
export const MAX_SUBMODULES_LOOKED_AT = 256;
const MAX_INDEX_BYTES = 64 * 1024 * 1024;
const MAX_CONFIG_BYTES = 1024 * 1024;

/** The Git directories of a repository's submodules, as the person's `git status` in the workspace goes into them. */
export interface SubmoduleGitDirs {
  /** Real paths inside the workspace, each once. */
  gitDirs: string[];
  /** Submodules the index records past MAX_SUBMODULES_LOOKED_AT, not looked at. */
  notLookedAt: number;
  /** The index could not be read whole (too large, a split or sparse index): which submodules git goes into is not known. */
  indexUnread: boolean;
}

/**
 * The Git directories whose config and hooks the person's git runs from, besides the repository's own: those kept in
 * `.git/modules` and `.git/worktrees` (see nestedGitDirs), and, for each submodule the index records (a gitlink),
 * the Git directory at its path: `<path>/.git` as a folder, or the folder a `<path>/.git` file names. `git status`
 * runs each one's `core.fsmonitor` once `<path>/.git` is there, and a call can write all of these: the work tree, and
 * the index, which records a gitlink a call adds (`git update-index --add --cacheinfo 160000,…`), are its to write,
 * and a `.git/modules/<name>` missing as it starts is made as any new folder.
 */
export async function submoduleGitDirs(workspace: string, git: WorkspaceGitDir): Promise<SubmoduleGitDirs> {
  const found = new Set(nestedGitDirs(git).gitDirs);
  const objectFormat = repositoryConfigFiles(git)
    .flatMap((file) => readConfigFile(file, MAX_CONFIG_BYTES)?.settings ?? [])
    .find((setting) => setting.section === 'extensions' && setting.key === 'objectformat');
  const index = path.join(git.gitDir, 'index');
  const gitlinks = await readIndexGitlinks(index, objectFormat?.value?.toLowerCase() === 'sha256' ? 32 : 20, MAX_INDEX_BYTES);
  for (const gitlink of (gitlinks ?? []).slice(0, MAX_SUBMODULES_LOOKED_AT)) {
    const gitDir = gitDirAt(workspace, path.join(workspace, gitlink));
    if (gitDir !== undefined) found.add(gitDir);
  }
  return {
    gitDirs: [...found],
    notLookedAt: Math.max(0, (gitlinks?.length ?? 0) - MAX_SUBMODULES_LOOKED_AT),
    indexUnread: gitlinks === undefined && existsSync(index),
  };
}

/** The Git directory of the work tree `folder`: its `.git` folder, or the one its `.git` file names, inside the workspace. */
function gitDirAt(workspace: string, folder: string): string | undefined {
  const dotGit = path.join(folder, '.git');
  if (isRealFolderInside(workspace, dotGit)) return dotGit;
  const text = readSmallFile(dotGit)?.toString('utf8');
  if (text === undefined || !text.startsWith('gitdir: ')) return undefined;
  const named = path.resolve(folder, text.slice('gitdir: '.length).replace(/\s+$/, ''));
  return isRealFolderInside(workspace, named) ? named : undefined;
}
