import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, lstatSync, renameSync, rmSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { includedConfigFiles } from './git-config-includes';
import type { HiddenMask } from './hidden-paths';
import { maskedNow } from './sandbox/missing-git-paths-mask';
import { configsGitReads, missingGitPaths } from './sandbox/workspace-guards';
import { nestedGitDirs, readSmallFile, repositoryConfigFiles, workspaceGitDir } from './workspace-git-dir';

/**
 * The files a sandboxed call sees through a mount over the file itself: each hidden file (`/dev/null` bound over it)
 * and the config files held read-only (`.git/config`, its `config.worktree`, the files it or the person's includes). A
 * mount over a file holds only while the file is the one it was bound to: when the host renames another file over it
 * (zsh and fish save their history so, as do `git config`, `sed -i`, an editor's safe save, a secret's rotation) or
 * removes it, the kernel drops the mount in the call's namespace, and the call reads, or writes, the file now there.
 * Those that exist as the call starts.
 */
export function filesMountedOver(workspace: string, hidden: readonly HiddenMask[]): { files: string[]; held: Map<string, HeldContent>; missing: Set<string> } {
  const files = hidden.filter((mask) => !mask.folder).map((mask) => mask.path);
  const git = workspaceGitDir(workspace);
  const found = git !== undefined && 'found' in git ? git.found : undefined;
  // The configs of the Git directories of submodules and worktrees kept in `.git` are held read-only too (see openWorkspaceGuards).
  const nested = found === undefined ? [] : nestedGitDirs(found).gitDirs.flatMap((gitDir) => [path.join(gitDir, 'config'), path.join(gitDir, 'config.worktree')]);
  const configs = [...(found === undefined ? [] : repositoryConfigFiles(found)), ...nested, ...includedConfigFiles(workspace, configsGitReads(found))];
  // What each config held read-only holds as the call starts, to be put back if the call could write it (see restoreFile).
  const held = new Map<string, HeldContent>();
  for (const config of configs) {
    const content = readSmallFile(config, HELD_BYTES);
    if (content !== undefined) held.set(config, content);
  }
  // A config missing now is masked by an empty read-only file this server makes for the call (see
  // maskMissingGitPaths), which Git renames a new config over as it does an existing one: watched too, and removed
  // again if replaced. Found from outside: the person's `git config` during a call lifted that mask unnoticed, and the
  // call wrote a core.fsmonitor their next `git status` ran.
  const missing = new Set(missingGitPaths(workspace).filter((entry) => !entry.folder && (maskedNow(entry.path) || !existsSync(entry.path))).map((entry) => entry.path));
  for (const file of missing) held.set(file, 'missing');
  const there = [...new Set([...files, ...configs])].filter((file) => existsSync(file));
  return { files: [...new Set([...there, ...missing])], held, missing };
}

/** What a held config is put back as: its content at the call's start, or no file when it had none. */
export type HeldContent = Buffer | 'missing';

/** A held config larger than this is not kept to be put back (Git's own are a few hundred bytes). */
const HELD_BYTES = 1024 * 1024;

/**
 * Puts `content` back as `file`, by a rename over it as Git writes its config (so nothing reads it half written), or,
 * for one missing at the call's start, takes away what is there now. What is there was made outside the call (by the
 * person's `git config`, whose rename lifted the hold), and then perhaps written by the call before its kill: which
 * bytes are whose cannot be told, so it is neither used nor lost, but kept beside under a new name (`kept`), which Git
 * does not read. Nothing is kept when what is there holds `content` already. Undefined when it could not be put back.
 */
export function restoreFile(file: string, content: HeldContent): { kept: string | undefined } | undefined {
  const now = lstatSync(file, { throwIfNoEntry: false });
  if (now === undefined && content === 'missing') return { kept: undefined };
  if (now?.isFile() === true && content !== 'missing' && readSmallFile(file, HELD_BYTES)?.equals(content) === true) return { kept: undefined };
  const suffix = randomBytes(6).toString('hex');
  const kept = now === undefined ? undefined : `${file}.airlock-kept-${suffix}`;
  if (content === 'missing') {
    try {
      renameSync(file, kept!);
      return { kept };
    } catch {
      return undefined;
    }
  }
  const temporary = `${file}.airlock-${suffix}`;
  try {
    writeFileSync(temporary, content, { flag: 'wx' });
    if (kept !== undefined) {
      // A second name for a file keeps it where it is until the rename below replaces it in one step; a folder moves.
      if (now!.isDirectory()) renameSync(file, kept);
      else linkSync(file, kept);
    }
    renameSync(temporary, file);
    return { kept };
  } catch {
    rmSync(temporary, { force: true });
    return undefined;
  }
}

/** The files running calls' watches hold now (see watchReplacements), with how many calls hold each. */
const heldNow = new Map<string, number>();

/**
 * Whether a running sandboxed call holds `file` (a real path) by a mount over it: replacing it would lift that hold
 * in the call and kill it, and the watch would put the file back. write_file refuses such a file (see
 * createWriteFileTool).
 */
export function isHeldByRunningCall(file: string): boolean {
  return (heldNow.get(file) ?? 0) > 0;
}

/** A watch set by `watchReplacements`. */
export interface ReplacementWatch {
  close(): void;
}

/**
 * Calls `onReplaced` with the first of `files` that is renamed over, renamed away or removed (inotify, on each one's
 * folder), once; a change `isOwnChange` says this server made (a mount point it made) is passed over. A folder that cannot be watched (gone, the watch limit reached) is passed over: that file's mount is
 * then held as before, with nothing to tell of its replacement.
 */
export function watchReplacements(files: readonly string[], onReplaced: (file: string) => void, isOwnChange: (file: string) => boolean = () => false): ReplacementWatch {
  const byFolder = new Map<string, Set<string>>();
  for (const file of files) {
    const folder = path.dirname(file);
    let names = byFolder.get(folder);
    if (names === undefined) byFolder.set(folder, (names = new Set()));
    names.add(path.basename(file));
  }
  const watchers: FSWatcher[] = [];
  let told = false;
  const held = [...new Set(files)];
  for (const file of held) heldNow.set(file, (heldNow.get(file) ?? 0) + 1);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    for (const file of held) {
      const left = (heldNow.get(file) ?? 1) - 1;
      if (left > 0) heldNow.set(file, left);
      else heldNow.delete(file);
    }
  };
  const stopWatching = () => {
    for (const watcher of watchers.splice(0)) watcher.close();
  };
  const close = () => {
    stopWatching();
    release();
  };
  for (const [folder, names] of byFolder) {
    let watcher: FSWatcher;
    try {
      watcher = watch(folder, { persistent: false }, (event, name) => {
        // A write in place keeps the file and its mount ('change'); only a name made, moved or removed drops it.
        if (told || event !== 'rename' || name === null || !names.has(name.toString())) return;
        const file = path.join(folder, name.toString());
        if (isOwnChange(file)) return;
        told = true;
        stopWatching();
        onReplaced(file);
      });
    } catch {
      continue;
    }
    watcher.on('error', () => watcher.close());
    watchers.push(watcher);
  }
  return { close };
}
