import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, link, lstat, mkdir, open, readdir, readlink, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errorMessage } from '@airlock/core';
import { includedConfigFiles } from './git-config-includes';
import { hooksFoldersToKeep, hooksPathFolders } from './git-hooks-path';
import { oneLine } from './one-line';
import { maskedNow } from './sandbox/missing-git-paths-mask';
import { MAX_SUBMODULES_LOOKED_AT, submoduleGitDirs } from './submodule-git-dirs';
import { readSmallFile, repositoryConfigFiles, repositoryFolders, workspaceGitDir, type WorkspaceGitDir } from './workspace-git-dir';

/** Git reads at most this much of a HEAD file (`validate_headref`); a HEAD kept for restoring is no longer than this. */
const HEAD_BYTES = 255;

/** New hooks named in a report at most; the rest are counted. */
const HOOKS_NAMED = 5;

/** Hooks of a folder whose content is told apart at most; the rest are compared by name only. */
const HOOKS_READ = 200;

/**
 * The folders in a Git directory that make a rebase, cherry-pick or revert in progress: `git rebase --continue` or
 * `git cherry-pick --continue` then runs the rest of the todo list they hold, `exec` lines included.
 */
const SEQUENCER_STATE = ['rebase-merge', 'rebase-apply', 'sequencer'];

/**
 * What makes the workspace's repository the one Git finds, as it was when a call started. Git takes `.git` for the
 * repository only while its HEAD names a branch or commit and its `objects` and `refs` can be entered; when they do
 * not, `git status` at the root goes on to take the root itself for a bare repository (a `HEAD`, `config`, `objects/`
 * and `refs/` there), and a `.git/commondir` makes Git read the config of the folder it names. Each would run a
 * `core.fsmonitor` the call wrote, outside the sandbox, at the person's next `git status`, while `.git/config` stays
 * read-only and unchanged.
 */
export interface GitMetadataSnapshot {
  /**
   * The workspace's Git directory: `.git`, or the folder a `.git` file names inside the workspace (see
   * workspaceGitDir); undefined when there is none (no `.git`, a link, a `.git` file leading outside).
   */
  gitFolder: GitFolderState | undefined;
  /** The content of `.git` when it is a file (`gitdir: …`, a worktree or a submodule), which sends Git to the folder it names. */
  gitFile: Buffer | undefined;
  /** Whether the root itself looks like a Git directory (HEAD, objects/, refs/) to Git's discovery. */
  rootIsRepository: boolean;
  /**
   * The hooks folders `core.hooksPath` names inside the workspace (see hooksFoldersToKeep), with their hooks (undefined
   * for a folder missing). Without a sandbox a call writes there freely, and Git runs what it wrote at the next commit.
   */
  hooksPath: readonly { folder: string; hooks: Hooks | undefined }[];
  /**
   * The files inside the workspace that the repository config includes (see includedConfigFiles), each with what
   * tells a change (undefined when missing): Git reads them as repository config.
   */
  includedConfigs: readonly { file: string; identity: string | undefined }[];
}

/** The hooks in a folder, each name with what tells a change of its content (inode, size, times). */
type Hooks = ReadonlyMap<string, string>;

interface GitFolderState {
  /** Where it is, and its name in reports (relative to the workspace). */
  path: string;
  name: string;
  dev: number;
  ino: number;
  /** HEAD's content when it was a plain file naming a branch or commit. */
  head: Buffer | undefined;
  commondir: boolean;
  objects: boolean;
  refs: boolean;
  /**
   * Its hooks folders (its own, and the one in the folder its `commondir` names inside the workspace, see
   * repositoryFolders), each with its hooks, undefined when it is not a folder. Git runs a hook there, outside any
   * sandbox, at the person's next commit, merge or checkout; the sandbox makes the folder read-only (or, missing, keeps
   * it from being made), but without one a call writes it freely.
   */
  hooks: readonly { folder: string; hooks: Hooks | undefined }[];
  /**
   * Its `config.worktree` files (its own, and the one in the folder its `commondir` names), each with what tells a
   * change (undefined when missing): Git reads one as repository config once `extensions.worktreeConfig` is on.
   */
  worktreeConfigs: readonly { file: string; identity: string | undefined }[];
  /** Which of SEQUENCER_STATE were there. */
  sequencer: readonly string[];
  /** The Git directories of its submodules and worktrees (see submoduleGitDirs), by path, each with what Git runs from. */
  submodules: ReadonlyMap<string, SubmoduleState>;
}

/** What the person's git runs from a submodule's Git directory: its config files' identities and its hooks. */
interface SubmoduleState {
  config: string | undefined;
  worktreeConfig: string | undefined;
  hooks: Hooks | undefined;
}

/** What the check after a call found: what it put back, and what it could not. */
export interface GitMetadataFindings {
  restored: string[];
  notRestored: string[];
}

/** Reads the snapshot: a few lstat, access and one read of at most 255 bytes; never throws. */
export async function snapshotGitMetadata(workspace: string): Promise<GitMetadataSnapshot> {
  const found = workspaceGitDir(workspace);
  const gitFile = found === undefined ? undefined : 'found' in found ? found.found.gitFile?.content : readSmallFile(path.join(workspace, '.git'));
  const gitDir = found !== undefined && 'found' in found ? found.found : undefined;
  const [git, rootIsRepository] = await Promise.all([gitDir === undefined ? undefined : lstatOrUndefined(gitDir.gitDir), looksLikeGitDirectory(workspace)]);
  if (gitDir === undefined || git?.isDirectory() !== true) return { gitFolder: undefined, gitFile, rootIsRepository, hooksPath: [], includedConfigs: [] };
  const gitPath = gitDir.gitDir;
  const folders = repositoryFolders(gitDir);
  const included = includedConfigFiles(workspace, repositoryConfigFiles(gitDir));
  const configuredFolders = [...new Set(hooksPathFolders(workspace, [...repositoryConfigFiles(gitDir), ...included]).flatMap(hooksFoldersToKeep))];
  const includedConfigs = await Promise.all(included.map(async (file) => ({ file, identity: await identityOf(file) })));
  const [head, commondir, objects, refs, hooks, worktreeConfigs, configured, sequencer, submodules] = await Promise.all([
    readHead(path.join(gitPath, 'HEAD')),
    lstatOrUndefined(path.join(gitPath, 'commondir')),
    canEnter(path.join(gitPath, 'objects')),
    canEnter(path.join(gitPath, 'refs')),
    Promise.all(folders.map(async (folder) => ({ folder: path.join(folder, 'hooks'), hooks: await hooksIn(path.join(folder, 'hooks')) }))),
    Promise.all(folders.map(async (folder) => ({ file: path.join(folder, 'config.worktree'), identity: await identityOf(path.join(folder, 'config.worktree')) }))),
    Promise.all(configuredFolders.map(async (folder) => ({ folder, hooks: await hooksIn(folder) }))),
    sequencerState(gitPath),
    submoduleStates(workspace, gitDir),
  ]);
  return {
    gitFolder: {
      path: gitPath,
      name: path.relative(workspace, gitPath),
      dev: git.dev,
      ino: git.ino,
      head: head?.valid === true && head.content !== undefined ? head.content : undefined,
      commondir: commondir !== undefined,
      objects,
      refs,
      hooks,
      worktreeConfigs,
      sequencer,
      submodules: submodules.states,
    },
    gitFile,
    rootIsRepository,
    hooksPath: configured,
    includedConfigs,
  };
}

/**
 * Compares the workspace's Git metadata with `before` once a call's processes are gone, and repairs what is safe to
 * repair: a HEAD that named a branch or commit and no longer does gets its content back (a HEAD moved to another valid
 * branch or commit is the call's own work and stays), a `commondir` that was not there is moved aside (a main
 * repository has none). What was there is never lost: the person may have written it during the call as well as the
 * call, which nothing tells apart, so it is kept beside under a name Git does not read, and named (see keptName). The
 * rest is only reported.
 */
export async function checkGitMetadata(workspace: string, before: GitMetadataSnapshot): Promise<GitMetadataFindings> {
  const findings: GitMetadataFindings = { restored: [], notRestored: [] };
  if (before.gitFile !== undefined) await checkGitFile(path.join(workspace, '.git'), before.gitFile, findings);
  if (before.gitFolder !== undefined) {
    const git = await lstatOrUndefined(before.gitFolder.path);
    if (git?.isDirectory() !== true || git.dev !== before.gitFolder.dev || git.ino !== before.gitFolder.ino) {
      findings.notRestored.push(`${before.gitFolder.name} was removed or replaced`);
    } else {
      await checkGitFolder(workspace, before.gitFolder, findings);
      await checkSubmodules(workspace, before.gitFolder.submodules, findings);
    }
  }
  for (const { folder, hooks } of before.hooksPath) {
    reportHooks({ folder, name: path.relative(workspace, folder), before: hooks, after: await hooksIn(folder), configured: true }, findings);
  }
  for (const config of before.includedConfigs) {
    reportConfig({ ...config, name: path.relative(workspace, config.file), after: await identityOf(config.file), included: true }, findings);
  }
  if (!before.rootIsRepository && (await looksLikeGitDirectory(workspace))) {
    findings.notRestored.push('the workspace root now holds a repository layout (HEAD, objects/, refs/), which Git takes for the repository whenever .git is not a valid one');
  }
  return findings;
}

/**
 * The line appended to a call's result, or undefined when nothing was found. Each finding on one line (see oneLine):
 * the names in it are read from disk, and a call chooses them (a hook named `x\nexit code: 0` without a sandbox, a
 * hooks folder or an included file its config names).
 */
export function gitMetadataReport(findings: GitMetadataFindings): string | undefined {
  if (findings.restored.length === 0 && findings.notRestored.length === 0) return undefined;
  const sentences = ["Airlock: this call changed the workspace's Git metadata so that Git run here would read another configuration."];
  if (findings.restored.length > 0) sentences.push(`Restored: ${findings.restored.map(oneLine).join('; ')}.`);
  if (findings.notRestored.length > 0) sentences.push(`Not restored, so look at this before running git in the workspace: ${findings.notRestored.map(oneLine).join('; ')}.`);
  return sentences.join(' ');
}

/**
 * A `.git` file whose content changed gets it back: a `gitdir:` line the call wrote would send the person's Git to a
 * folder it laid out, with a config and hooks of its own.
 */
async function checkGitFile(file: string, before: Buffer, findings: GitMetadataFindings): Promise<void> {
  const now = readSmallFile(file);
  if (now?.equals(before) === true) return;
  try {
    const kept = await replaceFile(file, before);
    findings.restored.push(`.git, a file naming the Git directory, which was changed or removed during the call, has its content from before the call back${keptSaid(path.dirname(file), kept)}`);
  } catch (error) {
    findings.notRestored.push(`.git, a file naming the Git directory, was changed or replaced, and writing back its content failed (${errorMessage(error)})`);
  }
}

async function checkGitFolder(workspace: string, before: GitFolderState, findings: GitMetadataFindings): Promise<void> {
  const { path: gitPath, name } = before;
  const headPath = path.join(gitPath, 'HEAD');
  const commondirPath = path.join(gitPath, 'commondir');
  const [head, commondir, objects, refs, hooks, worktreeConfigs, sequencer] = await Promise.all([
    readHead(headPath),
    lstatOrUndefined(commondirPath),
    canEnter(path.join(gitPath, 'objects')),
    canEnter(path.join(gitPath, 'refs')),
    Promise.all(before.hooks.map(({ folder }) => hooksIn(folder))),
    Promise.all(before.worktreeConfigs.map(({ file }) => identityOf(file))),
    sequencerState(gitPath),
  ]);
  if (before.head !== undefined && head?.valid !== true) {
    try {
      const kept = await replaceFile(headPath, before.head);
      findings.restored.push(`${name}/HEAD, which no longer named a branch or commit, has its content from before the call back${keptSaid(workspace, kept)}`);
    } catch (error) {
      findings.notRestored.push(`${name}/HEAD no longer names a branch or commit, and writing back its content failed (${errorMessage(error)})`);
    }
  }
  if (!before.commondir && commondir !== undefined) {
    if (commondir.isDirectory()) {
      findings.notRestored.push(`${name}/commondir was added, as a folder`);
    } else {
      const kept = keptName(commondirPath);
      try {
        await rename(commondirPath, kept);
        findings.restored.push(
          `${name}/commondir, added during the call (it makes Git read the config of the folder it names), is no longer there: it is kept as ${path.relative(workspace, kept)}, which Git does not read, since the person may have added it meanwhile: look at it before putting it back`,
        );
      } catch (error) {
        findings.notRestored.push(`${name}/commondir was added, and moving it aside failed (${errorMessage(error)})`);
      }
    }
  }
  for (const [index, folder] of before.hooks.entries()) {
    reportHooks({ folder: folder.folder, name: path.relative(workspace, folder.folder), before: folder.hooks, after: hooks[index], configured: false }, findings);
  }
  for (const [index, config] of before.worktreeConfigs.entries()) {
    reportConfig({ ...config, name: path.relative(workspace, config.file), after: worktreeConfigs[index], included: false }, findings);
  }
  // Not removed: a rebase the call ran that stopped at a conflict leaves one too, the call's own work.
  for (const state of sequencer.filter((state) => !before.sequencer.includes(state))) {
    findings.notRestored.push(
      `${name}/${state} was made: Git takes it for a rebase, cherry-pick or revert in progress, and its --continue runs the rest of the todo list there (exec lines included), unsandboxed; read it, or run git ${state === 'sequencer' ? 'cherry-pick' : 'rebase'} --abort`,
    );
  }
  // Made again, empty: `.git` is then a repository to Git's discovery again, which stops it from taking a layout the
  // call planted at the root for the repository. What the folder held is lost either way.
  if (before.objects && !objects) await makeAgain(path.join(gitPath, 'objects'), `${name}/objects`, findings);
  if (before.refs && !refs) await makeAgain(path.join(gitPath, 'refs'), `${name}/refs`, findings);
}

/** The submodules' Git directories of the workspace's repository (see submoduleGitDirs), each with what Git runs from. */
async function submoduleStates(workspace: string, git: WorkspaceGitDir): Promise<{ states: Map<string, SubmoduleState>; notLookedAt: number; indexUnread: boolean }> {
  const found = await submoduleGitDirs(workspace, git);
  const states = await Promise.all(
    found.gitDirs.map(async (gitDir): Promise<[string, SubmoduleState]> => {
      const [config, worktreeConfig, hooks] = await Promise.all([identityOf(path.join(gitDir, 'config')), identityOf(path.join(gitDir, 'config.worktree')), hooksIn(path.join(gitDir, 'hooks'))]);
      return [gitDir, { config, worktreeConfig, hooks }];
    }),
  );
  return { states: new Map(states), notLookedAt: found.notLookedAt, indexUnread: found.indexUnread };
}

/**
 * Reports the Git directory of a submodule (or a worktree) that is new since the call started, one whose config or
 * `config.worktree` was made or changed, and hooks added or changed in one: the person's `git status` in the workspace
 * runs a submodule's `core.fsmonitor`, unsandboxed, and the sandbox cannot keep a call from laying one out (see
 * submoduleGitDirs). Nothing is put back: a call's `git submodule update --init` makes one too.
 */
async function checkSubmodules(workspace: string, before: ReadonlyMap<string, SubmoduleState>, findings: GitMetadataFindings): Promise<void> {
  const found = workspaceGitDir(workspace);
  if (found === undefined || !('found' in found)) return;
  const after = await submoduleStates(workspace, found.found);
  const runs = ': your git status in the workspace runs what its config names (core.fsmonitor), unsandboxed';
  for (const [gitDir, state] of after.states) {
    const name = path.relative(workspace, gitDir);
    const earlier = before.get(gitDir);
    if (earlier === undefined) {
      findings.notRestored.push(`${name}, the Git directory of a submodule, is new since the call started${runs}`);
      continue;
    }
    if (state.config !== earlier.config && state.config !== undefined) findings.notRestored.push(`${name}/config of a submodule was ${earlier.config === undefined ? 'made' : 'changed'}${runs}`);
    if (state.worktreeConfig !== earlier.worktreeConfig && state.worktreeConfig !== undefined) {
      findings.notRestored.push(`${name}/config.worktree of a submodule was ${earlier.worktreeConfig === undefined ? 'made' : 'changed'}${runs}`);
    }
    reportHooks({ folder: path.join(gitDir, 'hooks'), name: `${name}/hooks`, before: earlier.hooks, after: state.hooks, configured: false }, findings);
  }
  if (after.notLookedAt > 0) {
    findings.notRestored.push(`the index records ${after.notLookedAt} submodules past the ${MAX_SUBMODULES_LOOKED_AT} looked at, whose Git directories were not looked at${runs.replace('its config', 'a config')}`);
  }
  if (after.indexUnread) findings.notRestored.push(`the index could not be read whole (too large, split or sparse), so the submodules' Git directories were not looked at`);
}

/** Reports a hooks folder made, and hooks added to it or changed in it. */
function reportHooks(
  hooksFolder: { folder: string; name: string; before: Hooks | undefined; after: Hooks | undefined; configured: boolean },
  findings: GitMetadataFindings,
): void {
  const { folder, name, before, after } = hooksFolder;
  if (after === undefined) return;
  const added = [...after.keys()].filter((hook) => before?.has(hook) !== true).sort();
  const changed = [...after].filter(([hook, identity]) => before?.has(hook) === true && before.get(hook) !== identity).map(([hook]) => hook).sort();
  // An empty one that another call, running alongside, masks is that call's mount point (see maskMissingGitPaths).
  if (before === undefined && added.length === 0 && maskedNow(folder)) return;
  const runs = `: Git runs a hook there${hooksFolder.configured ? ' (core.hooksPath)' : ''}, unsandboxed, at your next commit, merge or checkout`;
  if (before === undefined) {
    findings.notRestored.push(`${name} was made${added.length > 0 ? `, holding ${listed(name, added)}` : ''}${runs}`);
    return;
  }
  if (added.length > 0) findings.notRestored.push(`${listed(name, added)} added${runs}`);
  if (changed.length > 0) findings.notRestored.push(`${listed(name, changed)} changed${runs}`);
}

/**
 * Reports a `config.worktree`, or a file the repository config includes, made or changed: neither is put back, as the
 * call may have run `git sparse-checkout`, or changed a project's shared settings on purpose.
 */
function reportConfig(
  config: { file: string; name: string; identity: string | undefined; after: string | undefined; included: boolean },
  findings: GitMetadataFindings,
): void {
  const { file, name, identity, after } = config;
  if (after === undefined || after === identity) return;
  // An empty one that another call, running alongside, masks is that call's mount point (see maskMissingGitPaths).
  if (identity === undefined && maskedNow(file) && after.split(':')[1] === '0') return;
  const reads = `: Git reads it as repository config (core.fsmonitor, core.hooksPath, aliases)${config.included ? ', included by the repository config' : ' whenever extensions.worktreeConfig is on'}, and runs what it names, unsandboxed, at your next git status or commit`;
  findings.notRestored.push(`${name} was ${identity === undefined ? 'made' : 'changed'}${reads}`);
}

function listed(folder: string, hooks: readonly string[]): string {
  const named = hooks.slice(0, HOOKS_NAMED).map((hook) => `${folder}/${hook}`);
  return `${named.join(', ')}${hooks.length > HOOKS_NAMED ? ` and ${hooks.length - HOOKS_NAMED} more` : ''}`;
}

async function makeAgain(folder: string, name: string, findings: GitMetadataFindings): Promise<void> {
  try {
    await mkdir(folder, { mode: 0o755 });
    findings.restored.push(`${name}, which was gone, was made again, empty (what it held is lost), so Git takes ${path.dirname(name)} for the repository again`);
  } catch (error) {
    findings.notRestored.push(`${name} is gone or cannot be entered, and making it again failed (${errorMessage(error)})`);
  }
}

/** Which of SEQUENCER_STATE are in the Git directory `gitPath`. */
async function sequencerState(gitPath: string): Promise<string[]> {
  const found = await Promise.all(SEQUENCER_STATE.map((state) => lstatOrUndefined(path.join(gitPath, state))));
  return SEQUENCER_STATE.filter((_, index) => found[index] !== undefined);
}

/** Whether Git's discovery would take `folder` for a Git directory: a valid HEAD, and objects/ and refs/ it can enter. */
async function looksLikeGitDirectory(folder: string): Promise<boolean> {
  const [head, objects, refs] = await Promise.all([readHead(path.join(folder, 'HEAD')), canEnter(path.join(folder, 'objects')), canEnter(path.join(folder, 'refs'))]);
  return head?.valid === true && objects && refs;
}

/**
 * HEAD as Git's `validate_headref` reads it: a link leading to `refs/…`, or a file starting with `ref:` and `refs/…`
 * or with an object id. `content` is set for a plain file of at most 255 bytes. Undefined when there is none.
 */
async function readHead(file: string): Promise<{ valid: boolean; content: Buffer | undefined } | undefined> {
  const info = await lstatOrUndefined(file);
  if (info === undefined) return undefined;
  if (info.isSymbolicLink()) {
    const target = await readlink(file).catch(() => '');
    return { valid: target.startsWith('refs/'), content: undefined };
  }
  if (!info.isFile()) return { valid: false, content: undefined };
  // O_NONBLOCK: a fifo swapped in after the lstat cannot hold this server.
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
  if (handle === undefined) return { valid: false, content: undefined };
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) return { valid: false, content: undefined };
    const buffer = Buffer.alloc(HEAD_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const content = buffer.subarray(0, Math.min(bytesRead, HEAD_BYTES));
    return { valid: namesBranchOrCommit(content.toString('latin1')), content: bytesRead <= HEAD_BYTES ? Buffer.from(content) : undefined };
  } catch {
    return { valid: false, content: undefined };
  } finally {
    await handle.close();
  }
}

function namesBranchOrCommit(text: string): boolean {
  if (text.startsWith('ref:')) return /^\s*refs\//.test(text.slice(4));
  return /^[0-9a-f]{40}/i.test(text);
}

/** The hooks in `folder` (through a link, as Git goes), undefined when it is no folder. */
async function hooksIn(folder: string): Promise<Hooks | undefined> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return undefined;
  }
  const identities = await Promise.all(names.slice(0, HOOKS_READ).map(async (name) => (await identityOf(path.join(folder, name))) ?? ''));
  return new Map(names.map((name, index) => [name, identities[index] ?? '']));
}

/** What tells a change of a file's content (inode, size, times), undefined when there is nothing at `file`. */
async function identityOf(file: string): Promise<string | undefined> {
  const info = await lstatOrUndefined(file);
  return info === undefined ? undefined : `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
}

/** Git checks objects/ and refs/ with access(X_OK), following links; so does this. */
async function canEnter(folder: string): Promise<boolean> {
  try {
    await access(folder, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes a new file beside `file` and renames it over: whatever is at `file` (a link too) is replaced, never written
 * through, and not lost: it first gets a second name (keptName, a hard link, so the rename stays one step and a link is
 * kept as a link), which is returned. Nothing is kept when nothing was there; a folder there fails the rename.
 */
async function replaceFile(file: string, content: Buffer): Promise<string | undefined> {
  const temporary = `${file}.airlock-${randomBytes(6).toString('hex')}`;
  await writeFile(temporary, content, { flag: 'wx', mode: 0o644 });
  let kept: string | undefined;
  try {
    const now = await lstatOrUndefined(file);
    if (now !== undefined && !now.isDirectory()) {
      kept = keptName(file);
      await link(file, kept);
    }
    await rename(temporary, file);
    return kept;
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    // Still at its place: the second name is not needed.
    if (kept !== undefined) await unlink(kept).catch(() => undefined);
    throw error;
  }
}

/** A new name beside `file` that Git reads nothing under, as a repository config put back keeps what was there (see restoreFile). */
function keptName(file: string): string {
  return `${file}.airlock-kept-${randomBytes(6).toString('hex')}`;
}

/** The end of a finding for a file put back over what `kept` now holds, relative to `folder`. */
function keptSaid(folder: string, kept: string | undefined): string {
  if (kept === undefined) return '';
  return `; what was there, which a change made meanwhile outside the call would be, is kept as ${path.relative(folder, kept)}, which Git does not read: look at it before putting it back`;
}

async function lstatOrUndefined(file: string) {
  try {
    return await lstat(file);
  } catch {
    return undefined;
  }
}
