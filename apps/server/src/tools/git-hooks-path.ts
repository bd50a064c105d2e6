import os from 'node:os';
import path from 'node:path';
import { readSmallFile } from './workspace-git-dir';

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
  const text = readSmallFile(options.configFile, CONFIG_BYTES)?.toString('utf8');
  const value = text === undefined ? undefined : hooksPathSetting(text);
  if (value === undefined || value === '') return undefined;
  const folder = value.startsWith('~/') ? path.join(os.homedir(), value.slice(2)) : path.resolve(options.workTree, value);
  const relative = path.relative(options.workspace, folder);
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? undefined : folder;
}

/** The hooks folders inside the workspace that `core.hooksPath` names in any of `configFiles` (see hooksPathFolder), each once. */
export function hooksPathFolders(workspace: string, configFiles: readonly string[]): string[] {
  const folders = configFiles.map((configFile) => hooksPathFolder({ workspace, configFile, workTree: workspace }));
  return [...new Set(folders.filter((folder) => folder !== undefined))];
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
  let found: string | undefined;
  for (const setting of configSettings(text)) {
    if (setting.section === 'core' && !setting.subsection && setting.key === 'hookspath') found = setting.value;
  }
  return found;
}

/** One setting of a Git config file: section and key lowercased; value undefined for a key with no `=` (true). */
export interface ConfigSetting {
  section: string;
  /** Whether the section header named a subsection (`[includeIf "gitdir:…"]`). */
  subsection: boolean;
  key: string;
  value: string | undefined;
}

/**
 * The settings of a Git config file's text, in order, read as Git reads it: section and key names in any case, a key
 * on the line of its section header, quoted parts, escapes, `#` and `;` comments, a line continued by a final
 * backslash.
 */
export function configSettings(text: string): ConfigSetting[] {
  const settings: ConfigSetting[] = [];
  let section = '';
  let subsection = false;
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    let line = lines[index]!.replace(/^\s+/, '');
    if (line.startsWith('[')) {
      const header = /^\[\s*([A-Za-z0-9.-]+)(\s+"(?:[^"\\]|\\.)*")?\s*\]/.exec(line);
      if (header === null) {
        section = '';
        subsection = false;
        continue;
      }
      section = header[1]!.toLowerCase();
      subsection = header[2] !== undefined;
      line = line.slice(header[0].length).replace(/^\s+/, '');
    }
    const key = /^([A-Za-z][A-Za-z0-9-]*)\s*(=|$|[#;])/.exec(line);
    if (key === null) continue;
    let value: string | undefined;
    if (key[2] === '=') {
      // A value may span lines (a final backslash): the lines it takes are not read for keys.
      const parsed = parseValue(lines, index, line.slice(key[0].length));
      index = parsed.lastLine;
      value = parsed.value;
    }
    if (section !== '') settings.push({ section, subsection, key: key[1]!.toLowerCase(), value });
  }
  return settings;
}

/** A value as Git parses it (`parse_value` in config.c), from `rest` on line `index`; where it ended. */
function parseValue(lines: readonly string[], index: number, rest: string): { value: string; lastLine: number } {
  let value = '';
  let spaces = 0;
  let quoted = false;
  let line = rest;
  let lastLine = index;
  for (let position = 0; position < line.length; position += 1) {
    const char = line[position]!;
    if (!quoted && /\s/.test(char)) {
      if (value !== '') spaces += 1;
      continue;
    }
    if (!quoted && (char === '#' || char === ';')) break;
    value += ' '.repeat(spaces);
    spaces = 0;
    if (char === '\\') {
      position += 1;
      if (position >= line.length) {
        if (lastLine + 1 >= lines.length) break;
        lastLine += 1;
        line = lines[lastLine]!;
        position = -1;
        continue;
      }
      value += ESCAPES.get(line[position]!) ?? '';
      continue;
    }
    if (char === '"') {
      quoted = !quoted;
      continue;
    }
    value += char;
  }
  return { value, lastLine };
}

const ESCAPES = new Map([
  ['n', '\n'],
  ['t', '\t'],
  ['b', '\b'],
  ['\\', '\\'],
  ['"', '"'],
]);
