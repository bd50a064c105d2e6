import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { commandBaseName } from '@airlock/api';
import { readConfigFile, type ConfigSetting } from '../tools/git-config-file';
import { readSmallFile, repositoryFolders, workspaceGitDir } from '../tools/workspace-git-dir';
import type { LineFacts } from './match-command';
import type { SimpleCommand } from './parse-command-line';

/**
 * Keys of a Git config whose value git runs as a program or a command line, or that lead it to (more config from a
 * file, a hooks folder, an alias's `!…`, a filter, a driver, a helper): written `section.name`, `section.*.name` for
 * any subsection, or `section` for each of its keys. `core.worktree`, `remote.*.url` and the like, which every
 * submodule's config holds, run nothing.
 */
const RUNS_KEYS = [
  'core.fsmonitor', 'core.pager', 'core.editor', 'core.sshcommand', 'core.askpass', 'core.hookspath', 'core.gitproxy',
  'core.alternaterefscommand', 'sequence.editor', 'diff.external', 'diff.*.command', 'diff.*.textconv', 'merge.*.driver',
  'interactive.difffilter', 'uploadpack.packobjectshook', 'imap.tunnel', 'web.browser', 'help.browser',
  'remote.*.uploadpack', 'remote.*.receivepack', 'remote.*.vcs', 'submodule.*.update', 'extensions.worktreeconfig',
  'lfs.*.path', 'lfs.*.clean', 'lfs.*.smudge', 'pager', 'filter', 'credential', 'gpg', 'difftool', 'mergetool',
  'guitool', 'browser', 'man', 'instaweb', 'sendemail', 'trailer', 'tar', 'hook', 'trace2', 'protocol', 'include',
  'includeif', 'alias',
];

/** The most folders looked at below one repository: past that, a git call counts as running what they say. */
const MAX_FOLDERS = 512;
/** A config file larger than this counts as setting such a key. */
const MAX_CONFIG_BYTES = 256 * 1024;

/**
 * Whether a git call may run what a call of the workspace wrote into the Git directory of one of its repository's
 * submodules or linked worktrees (`.git/modules/<name>/…`, nested `…/modules/…` too, `.git/worktrees/<name>/…`),
 * which the sandbox does not hold read-only as it holds `.git/config` and `.git/hooks`: `git status` runs each
 * populated submodule's `core.fsmonitor`, `cd sub && git commit` its hooks, `cd wt && git status` in a linked
 * worktree reads the config its `commondir` names. True while such a folder's `config` or `config.worktree` sets a key
 * of `RUNS_KEYS`, its `hooks` folder holds anything but git's `*.sample` files, a submodule's folder holds a
 * `commondir` or a worktree's names another folder than the repository's, a file there cannot be read, past the
 * bounds above, and, while such folders are there, after a command on the line that may have changed the file system
 * or led the shell out. False for any other program, when the facts name no workspace, and for a repository with
 * neither submodules nor linked worktrees. Read synchronously: a listing and a few small reads per folder.
 */
export function submoduleConfigMayRun(command: SimpleCommand, line: LineFacts): boolean {
  const [first] = command.words;
  if (first?.kind !== 'literal' || !/^git(?:-[a-z][a-z0-9-]*)?$/.test(commandBaseName(first.value))) return false;
  if (line.workspace === undefined) return false;
  const found = workspaceGitDir(line.workspace);
  if (found === undefined || !('found' in found)) return false;
  try {
    const pending: { folder: string; kind: 'module' | 'worktree'; common: string }[] = [];
    for (const folder of repositoryFolders(found.found)) {
      for (const module of subfolders(path.join(folder, 'modules'))) pending.push({ folder: module, kind: 'module', common: module });
      for (const worktree of subfolders(path.join(folder, 'worktrees'))) pending.push({ folder: worktree, kind: 'worktree', common: folder });
    }
    if (pending.length === 0) return false;
    if (line.leftWorkspace === true || line.fileSystemChanged === true) return true;
    for (let looked = 0, next = pending.pop(); next !== undefined; looked += 1, next = pending.pop()) {
      if (looked >= MAX_FOLDERS) return true;
      if (runsWhatItHolds(next.folder, next.kind, next.common)) return true;
      if (next.kind === 'worktree') continue;
      // A submodule's own submodules (`.git/modules/a/modules/b`), and the folders of a name with a slash
      // (`.git/modules/libs/x` for the submodule `libs/x`), which hold no repository of their own.
      const repository = exists(path.join(next.folder, 'HEAD')) || exists(path.join(next.folder, 'config'));
      for (const below of subfolders(repository ? path.join(next.folder, 'modules') : next.folder)) pending.push({ folder: below, kind: 'module', common: below });
    }
  } catch {
    return true;
  }
  return false;
}

/** Whether the Git directory `folder` holds config, hooks or a `commondir` that may make git run what a call wrote. */
function runsWhatItHolds(folder: string, kind: 'module' | 'worktree', common: string): boolean {
  for (const name of ['config', 'config.worktree']) {
    const file = path.join(folder, name);
    if (!exists(file)) continue;
    const read = readConfigFile(file, MAX_CONFIG_BYTES);
    if (read === undefined || read.settings.some(runsSomething)) return true;
  }
  if (readdirOrEmpty(path.join(folder, 'hooks')).some((hook) => !hook.endsWith('.sample'))) return true;
  const commondir = path.join(folder, 'commondir');
  if (!exists(commondir)) return false;
  if (kind === 'module') return true;
  const named = readSmallFile(commondir)?.toString('utf8').replace(/\s+$/, '');
  return named === undefined || path.resolve(folder, named) !== common;
}

function runsSomething(setting: ConfigSetting): boolean {
  return RUNS_KEYS.some((pattern) => {
    const parts = pattern.split('.');
    if (parts[0] !== setting.section) return false;
    if (parts.length === 1) return true;
    return parts.length === 3 ? setting.subsection && parts[2] === setting.key : !setting.subsection && parts[1] === setting.key;
  });
}

/** The folders in `folder` (a link among them counts as one, and is judged by what it holds), none when it is not there. */
function subfolders(folder: string): string[] {
  return readdirOrEmpty(folder)
    .map((name) => path.join(folder, name))
    .filter((entry) => {
      const info = lstatSync(entry);
      return info.isDirectory() || info.isSymbolicLink();
    });
}

function readdirOrEmpty(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
