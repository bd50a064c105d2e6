import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** How a PATH is looked through (see executablesOnPath). */
export interface PathSearch {
  /** Folders of the PATH passed over (the workspace's, a `node_modules/.bin`). Default: none. */
  skip?: (folder: string) => boolean;
  /** At most this many of its absolute entries are looked through: a longer PATH is judged by its first ones. Default: all. */
  maxEntries?: number;
}

/**
 * Every executable regular file (links followed) called `name` in the PATH-style `searchPath`, in its order. Relative
 * and empty entries, which name whatever folder a process runs in, are passed over. Synchronous, a few `access` and
 * `stat` calls an entry, so that the rules can ask as a line is judged; read lazily, so the first found costs only the
 * entries before it.
 */
export function* executablesOnPath(name: string, searchPath: string | undefined, search: PathSearch = {}): Generator<string> {
  const folders = (searchPath ?? '').split(path.delimiter).filter((folder) => path.isAbsolute(folder));
  for (const folder of folders.slice(0, search.maxEntries)) {
    if (search.skip?.(folder) === true) continue;
    const candidate = path.join(folder, name);
    if (isExecutableFile(candidate)) yield candidate;
  }
}

/** Whether `file`, links followed, is a regular file this process may run. */
export function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
