import { realpathSync } from 'node:fs';
import { commandBaseName } from '@airlock/api';
import { executablesOnPath, isExecutableFile } from '../tools/find-executable';

/** PATH entries looked through at most: a longer PATH is judged by its first ones. */
const MAX_SEARCH_ENTRIES = 64;

/**
 * The name of the program a command's name leads to, links followed, when it is another than the name says: a bare
 * name as the shell finds it on the server's PATH (`editor` → `vim.basic`, `pager` → `less`, Debian's alternatives),
 * an absolute path as it is (`/usr/bin/view` → `vim.basic`). Undefined when nothing is found there, when the real
 * name is the same, and for a path relative to where the command runs (a program of the workspace, judged as one).
 * Looked up each time it is asked, synchronously (a few `realpath` calls per command): a link made by an earlier call
 * counts at once.
 */
export function realProgramName(word: string, searchPath: string = process.env.PATH ?? ''): string | undefined {
  if (word === '' || (word.includes('/') && !word.startsWith('/'))) return undefined;
  const candidates = word.includes('/') ? [word].filter(isExecutableFile) : executablesOnPath(word, searchPath, { maxEntries: MAX_SEARCH_ENTRIES });
  for (const candidate of candidates) {
    let real: string;
    try {
      real = realpathSync(candidate);
    } catch {
      continue;
    }
    const name = commandBaseName(real);
    return name === commandBaseName(word) ? undefined : name;
  }
  return undefined;
}
