import { lstatSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configSettings } from './git-hooks-path';
import { readSmallFile } from './workspace-git-dir';

/** A config file larger than this is not read for its includes (Git's own are a few hundred bytes). */
const CONFIG_BYTES = 1024 * 1024;

/** How deep includes of includes are followed: Git's own limit (MAX_INCLUDE_DEPTH). */
const INCLUDE_DEPTH = 10;

/** Included files looked at at most, whatever the depth. */
const INCLUDED_FILES = 64;

/**
 * The files inside the workspace that the repository config `configFiles` includes (`include.path`, and
 * `includeIf.<condition>.path` whatever the condition, which may hold later: a branch checked out, a folder moved),
 * and those they include in turn, as Git finds them: `~/` from the home folder, a relative path from the folder of
 * the including file. Git reads each as repository config, so a call that writes one sets `core.fsmonitor`, an alias
 * or a hooks folder that the person's next `git status` or commit runs, unsandboxed: the common recipe for
 * project-shared settings (`git config include.path ../.gitconfig`) puts one at the top of the work tree. Each is a
 * real path in the workspace; it may be missing (Git skips a missing include, and reads one a call makes). One that
 * Git reaches through a link is given where the link leads now. Never throws.
 */
export function includedConfigFiles(workspace: string, configFiles: readonly string[]): string[] {
  const found: string[] = [];
  let including = [...configFiles];
  for (let depth = 0; depth < INCLUDE_DEPTH && including.length > 0; depth += 1) {
    const next: string[] = [];
    for (const file of including) {
      const text = readSmallFile(file, CONFIG_BYTES)?.toString('utf8');
      if (text === undefined) continue;
      for (const value of includePaths(text)) {
        const included = inWorkspace(workspace, includedPath(file, value));
        if (included === undefined || found.includes(included) || configFiles.includes(included) || found.length >= INCLUDED_FILES) continue;
        found.push(included);
        next.push(included);
      }
    }
    including = next;
  }
  return found;
}

/** The values of `include.path` and `includeIf.*.path` in a config file's text, in order. */
export function includePaths(text: string): string[] {
  return configSettings(text)
    .filter(({ section, subsection, key }) => key === 'path' && ((section === 'include' && !subsection) || (section === 'includeif' && subsection)))
    .flatMap(({ value }) => (value === undefined || value === '' ? [] : [value]));
}

/** The path Git opens for an include `value` in `file` (handle_path_include, interpolate_path); undefined for one it takes from elsewhere. */
function includedPath(file: string, value: string): string | undefined {
  if (value === '~' || value.startsWith('~/')) return path.join(os.homedir(), value.slice(1));
  // Another user's home folder, or Git's installation prefix: outside the workspace.
  if (value.startsWith('~') || value.startsWith('%(prefix)/')) return undefined;
  return path.resolve(path.dirname(file), value);
}

/**
 * `file` as the kernel finds it, when that lies strictly inside the workspace: where it leads when it is there, the
 * path itself when it is missing below a folder reached through no link (a call could make it, and the folders on the
 * way). Undefined otherwise, or for a file that is no regular file.
 */
function inWorkspace(workspace: string, file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  let real: string | undefined;
  try {
    real = realpathSync(file);
  } catch {
    real = undefined;
  }
  if (real !== undefined) return isStrictlyInside(workspace, real) && lstatOrUndefined(real)?.isFile() === true ? real : undefined;
  if (!isStrictlyInside(workspace, file)) return undefined;
  let folder = path.dirname(file);
  while (folder !== workspace && lstatOrUndefined(folder) === undefined) folder = path.dirname(folder);
  try {
    return realpathSync(folder) === folder && lstatSync(folder).isDirectory() ? file : undefined;
  } catch {
    return undefined;
  }
}

function lstatOrUndefined(file: string) {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}

function isStrictlyInside(workspace: string, file: string): boolean {
  const relative = path.relative(workspace, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}
