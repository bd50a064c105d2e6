import os from 'node:os';
import path from 'node:path';
import { configSettings, readConfigFile, type ConfigFileRead, type ConfigSetting } from './git-config-file';
import { isStrictlyWithin } from './path-within';
import { lstatOrUndefined, realOrUndefined, whereLeads } from './where-leads';

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
 * and those they include in turn, wherever those lie (a team config outside the workspace may include a file of
 * it), as Git finds them: `~/` from the home folder, a relative path after the folder of the including file as Git
 * named it, resolved by the kernel (see includeTarget, whereLeads). Git reads each as repository config, so a call that writes one sets `core.fsmonitor`, an alias
 * or a hooks folder that the person's next `git status` or commit runs, unsandboxed: the common recipe for
 * project-shared settings (`git config include.path ../.gitconfig`) puts one at the top of the work tree. Each is a
 * real path in the workspace; it may be missing (Git skips a missing include, and reads one a call makes). One that
 * Git reaches through a link is given where the link leads now; its relative includes are read from beside the link. Bounded whatever the files hold: at most
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
  // Each file with the real folder its relative includes are read from: git reads them from the folder of the path
  // it was given, so a file reached through a link elsewhere includes other files from there.
  let including = configFiles.map((file) => ({ file, folder: path.dirname(file) }));
  const followed = new Set(including.map(({ file, folder }) => `${file}\0${folder}`));
  for (let depth = 0; depth < INCLUDE_DEPTH && including.length > 0 && found.length < INCLUDED_FILES; depth += 1) {
    const next: { file: string; folder: string }[] = [];
    for (const { file, folder } of including) {
      if (left === 0 || lookups === 0 || found.length >= INCLUDED_FILES) break;
      const config = read(file, left);
      if (config === undefined) continue;
      left -= config.bytes;
      // Each place once: a value written a thousand times is looked up once.
      const places = new Set(includeValues(config.settings).map((value) => includeTarget(os.homedir(), `${folder}/`, value)));
      for (const place of places) {
        if (found.length >= INCLUDED_FILES || lookups === 0) break;
        if (place === undefined) continue;
        lookups -= 1;
        const leads = whereLeads(place);
        if (leads === undefined) continue;
        const info = lstatOrUndefined(leads);
        // One outside the workspace is no call's to write, but what it includes may be: followed, not held.
        if (info?.isFile() === true) {
          const from = realOrUndefined(path.dirname(place));
          if (from !== undefined && !followed.has(`${leads}\0${from}`)) {
            followed.add(`${leads}\0${from}`);
            next.push({ file: leads, folder: from });
          }
        }
        if (!isStrictlyWithin(workspace, leads) || (info !== undefined && !info.isFile())) continue;
        if (found.includes(leads) || configFiles.includes(leads)) continue;
        if (path.relative(workspace, leads).split(path.sep).length > INCLUDED_FILE_FOLDERS + 1) continue;
        found.push(leads);
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

/**
 * The path Git opens for an include `value` in the config file it named `file` (handle_path_include,
 * interpolate_path): `~/` from `home`, a relative path put after the folder of `file` as Git named it, left for the
 * kernel to resolve (`link/../x` leads beside where `link` leads, not to `x`). Undefined for one it takes from
 * elsewhere (another user's home folder, Git's installation prefix).
 */
export function includeTarget(home: string, file: string, value: string): string | undefined {
  if (value === '~' || value.startsWith('~/')) return `${home}${value.slice(1)}`;
  if (value.startsWith('~') || value.startsWith('%(prefix)/')) return undefined;
  if (value.startsWith('/')) return value;
  return `${file.slice(0, file.lastIndexOf('/') + 1)}${value}`;
}

