import { access, constants, stat } from 'node:fs/promises';
import path from 'node:path';

/** The first executable file called `name` in the PATH-style `searchPath`, or undefined. */
export async function findExecutable(name: string, searchPath: string | undefined): Promise<string | undefined> {
  for (const folder of (searchPath ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(folder)) continue;
    const candidate = path.join(folder, name);
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  return undefined;
}
