import { readSync } from 'node:fs';
import { withSmallFile } from './workspace-git-dir';

/** Git config files whose settings are kept between reads. */
const KEPT_FILES = 256;

/**
 * A settings read no younger than this after the file's last change is kept: the kernel's file clock is coarse, so a
 * write in the same tick as the change read would leave the times as they were.
 */
const SETTLED_NS = 2_000_000_000n;

interface Kept {
  identity: string;
  settings: ConfigSetting[];
}

const kept = new Map<string, Kept>();

/** What one read answers: the file's size in bytes and its settings; undefined for a file missing, unreadable or over `maxBytes`. */
export interface ConfigFileRead {
  bytes: number;
  settings: ConfigSetting[];
}

/**
 * The settings of a Git config file (see configSettings), read once per change: the server reads the repository's
 * config and the files it includes several times around each terminal and python call, on its event loop, and a
 * call may have made them a megabyte of lines. Kept by path while the file's device, inode, size and change times
 * stay as read (none of which a process can set back), once opened two seconds past the last change. Opened as
 * readSmallFile does: no link followed, no fifo waited on. `now` is for tests.
 */
export function readConfigFile(file: string, maxBytes: number, now: () => bigint = () => BigInt(Date.now()) * 1_000_000n): ConfigFileRead | undefined {
  // Taken before the file is opened: a change made after that has a change time past it, so the check below holds
  // for what the read finds however long it takes.
  const openedAt = now();
  return withSmallFile(file, maxBytes, (fd, info) => {
    const identity = `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
    const known = kept.get(file);
    if (known?.identity === identity) return { bytes: Number(info.size), settings: known.settings };
    const buffer = Buffer.alloc(Number(info.size));
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const settings = configSettings(buffer.subarray(0, read).toString('utf8'));
    kept.delete(file);
    if (openedAt - info.ctimeNs >= SETTLED_NS) {
      kept.set(file, { identity, settings });
      if (kept.size > KEPT_FILES) kept.delete(kept.keys().next().value!);
    }
    return { bytes: read, settings };
  });
}

/** One setting of a Git config file: section and key lowercased; value undefined for a key with no `=` (true). */
export interface ConfigSetting {
  section: string;
  /** Whether the section header named a subsection (`[includeIf "gitdir:…"]`, or the older `[filter.evil]`). */
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
      // `[filter.evil]`, Git's older form of `[filter "evil"]`: the section is the name before the first dot.
      const name = header[1]!.toLowerCase();
      const dot = name.indexOf('.');
      section = dot === -1 ? name : name.slice(0, dot);
      subsection = header[2] !== undefined || dot !== -1;
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
