import { open, realpath, stat } from 'node:fs/promises';

/**
 * Interpreters that, asked which executable they run, named themselves: real interpreters, not a version manager's
 * shim. Asking costs a start of the interpreter at every call; one that named itself is the program that runs, so
 * the answer holds for as long as the file is the same. Each is known by the path it was found at and what that path
 * is now (its real path, device, inode, change and modification times, size), so a file replaced, edited or relinked
 * there is asked again. A script (`#!`) is never remembered: the program it starts is named inside it, not by it.
 */
export class SelfRunningInterpreters {
  /** Identities, oldest use first. */
  readonly #known = new Set<string>();

  /** @param limit Interpreters remembered at most; the one used least recently is forgotten first. Default 32. */
  constructor(private readonly limit = 32) {}

  /** What `candidate` is now, as a key; undefined for a script or a file that cannot be read, never remembered. */
  async identity(candidate: string): Promise<string | undefined> {
    try {
      const real = await realpath(candidate);
      const file = await stat(real, { bigint: true });
      if (!file.isFile() || (await isScript(real))) return undefined;
      return JSON.stringify([candidate, real, file.dev, file.ino, file.ctimeNs, file.mtimeNs, file.size].map(String));
    } catch {
      return undefined;
    }
  }

  /** Whether the interpreter with this identity named itself when asked. */
  has(identity: string): boolean {
    if (!this.#known.delete(identity)) return false;
    this.#known.add(identity);
    return true;
  }

  /** Notes that the interpreter with this identity named itself. */
  remember(identity: string): void {
    this.#known.delete(identity);
    this.#known.add(identity);
    for (const oldest of this.#known) {
      if (this.#known.size <= this.limit) break;
      this.#known.delete(oldest);
    }
  }
}

async function isScript(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const start = Buffer.alloc(2);
    const { bytesRead } = await handle.read(start, 0, 2, 0);
    return bytesRead === 2 && start.toString('latin1') === '#!';
  } finally {
    await handle.close();
  }
}
