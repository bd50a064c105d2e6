import { access, constants, stat } from 'node:fs/promises';
import path from 'node:path';

/** Every executable file called `name` in the PATH-style `searchPath`, in its order. */
export async function* executablesOnPath(name: string, searchPath: string | undefined): AsyncGenerator<string> {
  for (const folder of (searchPath ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(folder)) continue;
    const candidate = path.join(folder, name);
    try {
      await access(candidate, constants.X_OK);
      if (!(await stat(candidate)).isFile()) continue;
    } catch {
      continue;
    }
    yield candidate;
  }
}
