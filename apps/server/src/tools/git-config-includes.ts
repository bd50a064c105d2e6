import { lstatSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configSettings, readConfigFile, type ConfigFileRead, type ConfigSetting } from './git-config-file';
import { isStrictlyWithin } from './workspace-paths';

/**
 * A config file larger than this is not read for its includes (Git's own are a few hundred bytes), and past this
 * much read in all, no more are: the scan runs on the server's event loop, several times for each terminal and python
 * call, and a call can write the files it reads.
 */
const CONFIG_BYTES = 1024 * 1024;

/** How deep includes of includes are followed: Git's own limit (MAX_INCLUDE_DEPTH). */
const INCLUDE_DEPTH = 10;

/** Included files looked at at most, whatever the depth. */
const INCLUDED_FILES = 64;

/** Include values looked up at most, in all (each resolves its path on the event loop). */
const INCLUDE_VALUES = 256;

/** Folders below the workspace an included file lies in at most: each one on the way is held for every call. */
const INCLUDED_FILE_FOLDERS = 32;

/**
 * The files inside the workspace that the repository config `configFiles` includes (`include.path`, and
 * `includeIf.<condition>.path` whatever the condition, which may hold later: a branch checked out, a folder moved),
 * and those they include in turn, as Git finds them: `~/` from the home folder, a relative path from the folder of
 * the including file. Git reads each as repository config, so a call that writes one sets `core.fsmonitor`, an alias
 * or a hooks folder that the person's next `git status` or commit runs, unsandboxed: the common recipe for
 * project-shared settings (`git config include.path ../.gitconfig`) puts one at the top of the work tree. Each is a
 * real path in the workspace; it may be missing (Git skips a missing include, and reads one a call makes). One that
 * Git reaches through a link is given where the link leads now. Bounded whatever the files hold: at most
 * `INCLUDED_FILES` found, `INCLUDE_VALUES` looked up (each value once per file), `CONFIG_BYTES` read in all (a file
 * that would go past it is not read), none more than `INCLUDED_FILE_FOLDERS` folders down (each folder on the way is
 * held for every call): Git's own configs are a small part of each. Each file's settings are read once per change
 * (readConfigFile). What lies past a bound is not
 * followed; since the configs and the files they include are held read-only during calls, only a config of a
 * repository a call made itself can be made to pass them (not covered, see docs/security.md). `read` is for tests.
 * Never throws.
 */
export function includedConfigFiles(workspace: string, configFiles: readonly string[], read: (file: string, maxBytes: number) => ConfigFileRead | undefined = readConfigFile): string[] {
  const found: string[] = [];
  let left = CONFIG_BYTES;
  let lookups = INCLUDE_VALUES;
  let including = [...configFiles];
  for (let depth = 0; depth < INCLUDE_DEPTH && including.length > 0 && found.length < INCLUDED_FILES; depth += 1) {
    const next: string[] = [];
    for (const file of including) {
      if (left === 0 || lookups === 0 || found.length >= INCLUDED_FILES) break;
      const config = read(file, left);
      if (config === undefined) continue;
      left -= config.bytes;
      // Each place once: a value written a thousand times is looked up once.
      const places = new Set(includeValues(config.settings).map((value) => includedPath(file, value)));
      for (const place of places) {
        if (found.length >= INCLUDED_FILES || lookups === 0) break;
        lookups -= 1;
        const included = inWorkspace(workspace, place);
        if (included === undefined || found.includes(included) || configFiles.includes(included)) continue;
        if (path.relative(workspace, included).split(path.sep).length > INCLUDED_FILE_FOLDERS + 1) continue;
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
  return includeValues(configSettings(text));
}

function includeValues(settings: readonly ConfigSetting[]): string[] {
  return settings
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
  return isStrictlyWithin(workspace, file);
}
