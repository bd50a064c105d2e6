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
 * The last `core.hooksPath` of a Git config file's text, read as Git reads it: section and key names in any case, a
 * key on the line of its section header, quoted parts, escapes, `#` and `;` comments, a line continued by a final
 * backslash. Includes (`[include]`, `[includeIf …]`) are not followed.
 */
export function hooksPathSetting(text: string): string | undefined {
  let section = '';
  let found: string | undefined;
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    let line = lines[index]!.replace(/^\s+/, '');
    if (line.startsWith('[')) {
      const header = /^\[\s*([A-Za-z0-9.-]+)(\s+"(?:[^"\\]|\\.)*")?\s*\]/.exec(line);
      if (header === null) {
        section = '';
        continue;
      }
      section = header[2] === undefined ? header[1]!.toLowerCase() : `${header[1]!.toLowerCase()} "`;
      line = line.slice(header[0].length).replace(/^\s+/, '');
    }
    const key = /^([A-Za-z][A-Za-z0-9-]*)\s*(=|$|[#;])/.exec(line);
    if (key === null) continue;
    if (section !== 'core' || key[1]!.toLowerCase() !== 'hookspath') {
      // A continued value of another key may span lines: skip them as Git would.
      if (key[2] === '=') index = skipValue(lines, index, line.slice(key[0].length));
      continue;
    }
    if (key[2] !== '=') {
      found = undefined;
      continue;
    }
    const parsed = parseValue(lines, index, line.slice(key[0].length));
    index = parsed.lastLine;
    found = parsed.value;
  }
  return found;
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

function skipValue(lines: readonly string[], index: number, rest: string): number {
  return parseValue(lines, index, rest).lastLine;
}
