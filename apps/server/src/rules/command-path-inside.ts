import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { isWithin } from '../tools/path-within';

/** Longer paths are not looked up: they count as outside. */
const MAX_PATH_CHARS = 4096;
/** The most names at the end of a path that may not exist yet: past that, it counts as outside. */
const MAX_MISSING_NAMES = 64;

/**
 * Whether an absolute path a command names leads inside `workspace` once its links are followed, as the program
 * given it would follow them: the real path of its longest existing part (a link that points nowhere counts as
 * outside, since what a later write makes there decides where it leads), plus the names not made yet. Unlike the
 * file tools' `WorkspacePaths.resolve`, the path is not tidied first: a program hands `link/../x` to the kernel,
 * which takes `..` from where the link leads. A `..` among the names not made yet, an error, or a path too long
 * count as outside. A path that ends in `/` names a folder to move to: it must be there, a folder, whole. Links are
 * followed by the kernel's own lookup (`realpath`), which gives up past its bound on links in one path (ELOOP): such
 * a path counts as outside too.
 */
export function commandPathInside(workspace: string): (absolute: string) => Promise<boolean> {
  const rootOf = realRoot(workspace);
  return async (absolute) => {
    try {
      const real = await realPathOf(absolute);
      return real !== undefined && isWithin(await rootOf(), real);
    } catch {
      return false;
    }
  };
}

/**
 * Whether an absolute path a command names leads, its links followed as `commandPathInside` follows them, into a
 * `.git` folder of `workspace` (in any case: macOS's file names ignore it), where calls a rule allows write text the
 * model chose (`git commit -m …` writes `.git/COMMIT_EDITMSG`): `docs/hooks/x` with a link `docs -> .git` the
 * repository holds. True when that cannot be told; false for a path that leads out of the workspace (that is
 * `commandPathInside`'s to say).
 */
export function commandPathUnderGit(workspace: string): (absolute: string) => Promise<boolean> {
  const rootOf = realRoot(workspace);
  return async (absolute) => {
    try {
      const real = await realPathOf(absolute);
      const root = await rootOf();
      if (real === undefined || !isWithin(root, real)) return false;
      return path.relative(root, real).split(path.sep).some((part) => part.toLowerCase() === '.git');
    } catch {
      return true;
    }
  };
}

/** The workspace's real path, looked up once (again after a failure). */
function realRoot(workspace: string): () => Promise<string> {
  let root: Promise<string> | undefined;
  return () =>
    (root ??= realpath(workspace).catch((error: unknown) => {
      root = undefined;
      throw error;
    }));
}

async function realPathOf(absolute: string): Promise<string | undefined> {
  if (!path.isAbsolute(absolute) || absolute.length > MAX_PATH_CHARS || absolute.includes('\0')) return undefined;
  // A folder to move to: there now, or judged outside (`mayNameOutsideFolder`). The `/` makes lstat follow a last link.
  if (absolute.endsWith('/') && absolute !== '/') return (await exists(absolute)) ? realpath(absolute) : undefined;
  let existing = absolute;
  const missing: string[] = [];
  while (!(await exists(existing))) {
    const name = path.basename(existing);
    const parent = path.dirname(existing);
    if (name === '..' || parent === existing || missing.length >= MAX_MISSING_NAMES) return undefined;
    missing.unshift(name);
    existing = parent;
  }
  return path.join(await realpath(existing), ...missing);
}

async function exists(entry: string): Promise<boolean> {
  try {
    await lstat(entry);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw error;
  }
}
