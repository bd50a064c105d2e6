import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';

/** A path that resolves, after following every symbolic link, to somewhere outside the workspace. */
export class OutsideWorkspaceError extends Error {
  override readonly name = 'OutsideWorkspaceError';
  constructor(
    readonly requested: string,
    readonly detail?: string,
  ) {
    super(`Refused: "${requested}" is outside the workspace${detail === undefined ? '' : ` (${detail})`}.`);
  }
}

/** Kernel pseudo-filesystems hold other processes' secrets (/proc/<pid>/environ); never served, whatever the workspace. */
const PSEUDO_FILESYSTEMS = ['/proc', '/sys', '/dev'];

/**
 * Confines paths to one folder by real paths, not by string prefixes: `..`, absolute paths, symbolic links
 * that lead out or point nowhere, and sibling folders whose names merely start with the workspace's are all refused.
 */
export class WorkspacePaths {
  readonly #given: string;
  #root: Promise<string> | undefined;

  constructor(workspace: string) {
    if (!path.isAbsolute(workspace)) throw new Error(`The workspace must be an absolute path, got "${workspace}".`);
    this.#given = path.resolve(workspace);
  }

  /** The workspace's real path, resolved once. */
  root(): Promise<string> {
    this.#root ??= realpath(this.#given).catch((error: unknown) => {
      this.#root = undefined;
      throw new Error(`The workspace "${this.#given}" is not available: ${(error as Error).message}`);
    });
    return this.#root;
  }

  /**
   * The real path `requested` designates, guaranteed inside the workspace. An existing target is fully resolved
   * (links followed); a missing one is its deepest existing ancestor, resolved, plus the missing names.
   * Relative paths are taken from the workspace.
   */
  async resolve(requested: string): Promise<string> {
    if (requested.includes('\0')) throw new OutsideWorkspaceError(requested.replaceAll('\0', '\\0'), 'it contains a NUL byte');
    const root = await this.root();
    const absolute = path.resolve(root, requested);
    if (!isWithin(root, absolute) && !isWithin(this.#given, absolute)) throw new OutsideWorkspaceError(requested);

    // The usual case, a path that exists, in one call: the same real path as the walk below would find for it.
    const direct = await realpath(absolute).catch(() => undefined);
    if (direct !== undefined) return confined(requested, root, direct);

    let existing = absolute;
    const missing: string[] = [];
    for (;;) {
      try {
        await lstat(existing);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
        const parent = path.dirname(existing);
        if (parent === existing) throw new OutsideWorkspaceError(requested);
        missing.unshift(path.basename(existing));
        existing = parent;
      }
    }
    let real: string;
    try {
      real = await realpath(existing);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // lstat saw it, realpath cannot follow it: a link to nowhere, which a later write could make lead anywhere.
      if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR') {
        throw new OutsideWorkspaceError(requested, 'a symbolic link on the way points nowhere');
      }
      throw error;
    }
    return confined(requested, root, path.join(real, ...missing));
  }

  /** How a resolved path is shown to the model: relative to the workspace. */
  async display(resolved: string): Promise<string> {
    return path.relative(await this.root(), resolved) || '.';
  }
}

/** `target` when it is inside the workspace `root` and on no kernel pseudo-filesystem. */
function confined(requested: string, root: string, target: string): string {
  if (!isWithin(root, target) || PSEUDO_FILESYSTEMS.some((system) => isWithin(system, target))) throw new OutsideWorkspaceError(requested);
  return target;
}

/** `target` is `folder` or inside it; `<folder>-evil` is not. */
export function isWithin(folder: string, target: string): boolean {
  const relative = path.relative(folder, target);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
