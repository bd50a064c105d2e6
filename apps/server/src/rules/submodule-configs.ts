import { lstatSync, readdirSync, realpathSync, type Dirent } from 'node:fs';
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
/** The most entries, and the deepest folder, the look for repositories nested in the workspace reads: past either, git counts as running what they say. */
const MAX_WALKED_ENTRIES = 50_000;
const MAX_WALKED_DEPTH = 64;

/**
 * Whether a git call may run what a call of the workspace wrote into a Git directory that git reads for it and the
 * sandbox does not hold read-only as it holds the repository's `.git/config` and `.git/hooks`: those of its
 * submodules and linked worktrees (`.git/modules/<name>/…`, nested `…/modules/…` too, `.git/worktrees/<name>/…`), and
 * those of any repository nested in the workspace (`nested/.git/`, a submodule not absorbed, a vendored clone) or
 * that such a folder's gitfile names (`gitdir: ../anywhere`). `git status` runs each populated submodule's
 * `core.fsmonitor`, `cd sub && git commit` its hooks, `cd nested && git status` the nested repository's, `cd wt && git
 * status` in a linked worktree reads the config its `commondir` names. True while such a folder's `config` or
 * `config.worktree` sets a key of `RUNS_KEYS`, its `hooks` folder holds anything but git's `*.sample` files, a
 * submodule's folder holds a `commondir` or a worktree's names another folder than its repository's, a nested `.git`
 * is a link or a gitfile naming a folder outside the workspace or none, a file there cannot be read, past the bounds
 * above, and after a command on the line that may have changed the file system or led the shell out (it may have
 * made any of these, so whether they are there yet does not count). False for any other program, when the facts name
 * no workspace, and for a workspace with no such Git directory. Read synchronously: one bounded walk of the workspace
 * (not into `.git` folders or through links), then a listing and a few small reads per Git directory.
 */
export function submoduleConfigMayRun(command: SimpleCommand, line: LineFacts): boolean {
  const [first] = command.words;
  if (first?.kind !== 'literal' || !/^git(?:-[a-z][a-z0-9-]*)?$/.test(commandBaseName(first.value))) return false;
  if (line.workspace === undefined) return false;
  if (line.leftWorkspace === true || line.fileSystemChanged === true || line.changedBefore === true) return true;
  const workspace = line.workspace;
  try {
    const pending: { folder: string; kind: 'module' | 'worktree'; common: string }[] = [];
    const found = workspaceGitDir(workspace);
    if (found !== undefined && 'found' in found) {
      for (const folder of repositoryFolders(found.found)) {
        for (const module of subfolders(path.join(folder, 'modules'))) pending.push({ folder: module, kind: 'module', common: module });
        for (const worktree of subfolders(path.join(folder, 'worktrees'))) pending.push({ folder: worktree, kind: 'worktree', common: folder });
      }
    }
    const nested = nestedOnce(workspace, line.walks);
    if (nested === undefined) return true;
    for (const entry of nested) {
      const gitDir = lstatSync(entry).isDirectory() ? entry : gitfileTarget(workspace, entry);
      if (gitDir === undefined) return true;
      const parent = path.dirname(gitDir);
      // A linked worktree's gitfile names `<repository>/worktrees/<name>`, whose commondir names that repository.
      if (path.basename(parent) === 'worktrees' && exists(path.join(gitDir, 'commondir'))) pending.push({ folder: gitDir, kind: 'worktree', common: path.dirname(parent) });
      else pending.push({ folder: gitDir, kind: 'module', common: gitDir });
      for (const worktree of subfolders(path.join(gitDir, 'worktrees'))) pending.push({ folder: worktree, kind: 'worktree', common: gitDir });
    }
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

/**
 * The `.git` entries below the workspace (not its own), each a folder, a gitfile or anything else: a walk that goes
 * into no `.git` folder and through no link (a folder not there holds none). Undefined past MAX_WALKED_ENTRIES or
 * MAX_WALKED_DEPTH.
 */
/** Walks of the workspace made, for tests. */
export const walkCount = { walks: 0 };

/**
 * The workspace's nested Git entries, walked once for the judging `walked` belongs to (`RuleContext.walks`): one
 * call's rules and both their sides, or the past calls a draft rule's preview judges, where nothing runs between
 * them. A walk costs a few hundred ms of the server's thread in a large workspace.
 */
function nestedOnce(workspace: string, walked: Map<string, string[] | undefined> | undefined): string[] | undefined {
  if (walked === undefined) return nestedGitEntries(workspace);
  if (!walked.has(workspace)) walked.set(workspace, nestedGitEntries(workspace));
  return walked.get(workspace);
}

function nestedGitEntries(workspace: string): string[] | undefined {
  walkCount.walks += 1;
  const found: string[] = [];
  const queue: { folder: string; depth: number }[] = [{ folder: workspace, depth: 0 }];
  let entries = 0;
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const entry of readdirOrEmpty(next.folder, { withFileTypes: true })) {
      if ((entries += 1) > MAX_WALKED_ENTRIES) return undefined;
      const entryPath = path.join(next.folder, entry.name);
      if (entry.name === '.git') {
        if (next.depth > 0) found.push(entryPath);
        continue;
      }
      if (!entry.isDirectory()) continue;
      if (next.depth + 1 > MAX_WALKED_DEPTH) return undefined;
      queue.push({ folder: entryPath, depth: next.depth + 1 });
    }
  }
  return found;
}

/**
 * The folder a nested `.git` gitfile names, as Git reads it (`gitdir: ` and a path relative to the file's folder);
 * undefined for a link, a file Git would not read as a gitfile, or a folder outside the workspace or reached through
 * a link.
 */
function gitfileTarget(workspace: string, file: string): string | undefined {
  if (!lstatSync(file).isFile()) return undefined;
  const text = readSmallFile(file)?.toString('utf8');
  if (text === undefined || !text.startsWith('gitdir: ')) return undefined;
  const named = text.slice('gitdir: '.length).replace(/\s+$/, '');
  if (named === '') return undefined;
  const gitDir = path.resolve(path.dirname(file), named);
  const relative = path.relative(workspace, gitDir);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  return realpathSync(gitDir) === path.join(realpathSync(workspace), relative) && lstatSync(gitDir).isDirectory() ? gitDir : undefined;
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

function readdirOrEmpty(folder: string): string[];
function readdirOrEmpty(folder: string, options: { withFileTypes: true }): Dirent[];
function readdirOrEmpty(folder: string, options?: { withFileTypes: true }): string[] | Dirent[] {
  try {
    return options === undefined ? readdirSync(folder) : readdirSync(folder, options);
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
