import os from 'node:os';
import path from 'node:path';
import { configSettings, readConfigFile, type ConfigSetting } from './git-config-file';
import { isStrictlyWithin } from './path-within';

/** A repository config larger than this is not read for its hooks folder (Git's own are a few hundred bytes). */
const CONFIG_BYTES = 1024 * 1024;

/**
 * The folder `core.hooksPath` in the repository config `configFile` names, when it lies strictly inside the workspace
 * (`.husky/`, `.husky/_`, `.githooks/`): Git runs the hooks there, outside any sandbox, at the person's next commit,
 * merge or checkout, and nothing else keeps a call from writing one. A relative path is taken from the top of the
 * work tree (`workTree`), as Git takes it. Undefined when the config is not a plain file, sets no hooks folder, or
 * names one outside the workspace (read-only to a sandboxed call already). Never throws.
 */
export function hooksPathFolder(options: {
  /** The workspace, a real path. */
  workspace: string;
  /** The repository's config file. */
  configFile: string;
  /** The top of the work tree, where a relative hooks path starts. */
  workTree: string;
}): string | undefined {
  const read = readConfigFile(options.configFile, CONFIG_BYTES);
  return read === undefined ? undefined : folderInside(lastHooksPath(read.settings), options.workspace, options.workTree);
}

function folderInside(value: string | undefined, workspace: string, workTree: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  const folder = value.startsWith('~/') ? path.join(os.homedir(), value.slice(2)) : path.resolve(workTree, value);
  return isStrictlyWithin(workspace, folder) ? folder : undefined;
}

/**
 * The hooks folders inside the workspace that `core.hooksPath` names in any of `configFiles` (see hooksPathFolder),
 * each once. At most `CONFIG_BYTES` are read in all, in order (a file that would go past it is not read): a call may
 * have made the files it includes a megabyte each, and this runs on the event loop around every call.
 */
export function hooksPathFolders(workspace: string, configFiles: readonly string[]): string[] {
  const folders = new Set<string>();
  let left = CONFIG_BYTES;
  for (const configFile of configFiles) {
    const read = left > 0 ? readConfigFile(configFile, left) : undefined;
    if (read === undefined) continue;
    left -= read.bytes;
    const folder = folderInside(lastHooksPath(read.settings), workspace, workspace);
    if (folder !== undefined) folders.add(folder);
  }
  return [...folders];
}

/**
 * The folders to keep a call from writing for a hooks folder: the folder itself, and first its parent when it is
 * named `_`: husky (9 and later) sets `core.hooksPath` to `.husky/_`, whose hooks run the scripts of the same name in
 * `.husky`, which would run at the person's next commit as well. The outermost comes first.
 */
export function hooksFoldersToKeep(folder: string): string[] {
  return path.basename(folder) === '_' ? [path.dirname(folder), folder] : [folder];
}

/**
 * The last `core.hooksPath` of a Git config file's text, read as Git reads it (see configSettings). Includes
 * (`[include]`, `[includeIf …]`) are not followed here: see includedConfigFiles.
 */
export function hooksPathSetting(text: string): string | undefined {
  return lastHooksPath(configSettings(text));
}

function lastHooksPath(settings: readonly ConfigSetting[]): string | undefined {
  let found: string | undefined;
  for (const setting of settings) {
    if (setting.section === 'core' && !setting.subsection && setting.key === 'hookspath') found = setting.value;
  }
  return found;
}
