import { lstat } from 'node:fs/promises';
import path from 'node:path';

/** Files of a Git directory that say which repository it is and what git runs in it (names in lower case, see `folded`). */
const LAYOUT_FILES = new Set(['head', 'config', 'config.worktree', 'commondir', 'packed-refs']);
/** Folders of a Git directory: what is under them is the repository, or programs git runs (`hooks`). */
const LAYOUT_FOLDERS = new Set(['objects', 'refs', 'hooks']);
/** The most folders of one path looked at: past that, the write counts as making a repository. */
const MAX_FOLDERS = 16;

/**
 * Answers, for the workspace-relative names of a file about to be written, the folder (workspace-relative names,
 * `[]` for the workspace itself) where the write would complete or change a Git directory, or undefined when it
 * would not. git takes any folder that holds a `HEAD` file and `objects` and `refs` folders for a repository (a bare
 * one when no `.git` is found first), also a `HEAD` and a `commondir` naming a folder that holds the rest
 * (`holdsLayout`), and runs the commands its `config` names (`core.fsmonitor`) at the next `git status` there, in
 * the person's own shell: writing `HEAD`, `config`, `config.worktree`, `commondir` or `packed-refs` into such a
 * folder, or anything under its `objects/`, `refs/` or `hooks/`, counting the write itself towards the layout, is
 * such a write. Looked up on the real file system when asked; an error, or a path with too
 * many candidate folders, counts as making one.
 */
export function gitLayoutWrite(workspace: string): (names: readonly string[]) => Promise<string[] | undefined> {
  return async (names) => {
    let looked = 0;
    for (let index = names.length - 1; index >= 0; index--) {
      const rest = names.slice(index);
      const first = folded(rest[0]);
      if (first === undefined) continue;
      const relevant = rest.length === 1 ? LAYOUT_FILES.has(first) : LAYOUT_FOLDERS.has(first);
      if (!relevant) continue;
      const folder = names.slice(0, index);
      if (++looked > MAX_FOLDERS) return folder;
      try {
        if (await holdsLayout(path.join(workspace, ...folder), rest)) return folder;
      } catch {
        return folder;
      }
    }
    return undefined;
  };
}

/**
 * Whether `folder`, once `rest` (below it) is written, is a Git directory or the common part of one: a `HEAD` file
 * with `objects` and `refs` folders, or with a `commondir` file, which sends git to the folder it names for objects,
 * refs and the config it runs (`src/x/HEAD` + `src/x/commondir` → `../y`, each folder harmless alone); or `objects`
 * and `refs` folders with a `config` file, which such a `commondir` may name (`src/y`).
 */
async function holdsLayout(folder: string, rest: readonly string[]): Promise<boolean> {
  const first = folded(rest[0]);
  // A link counts as either: it may lead to the file or the folder git looks for.
  const holds = async (name: string, kind: 'file' | 'folder') =>
    (kind === 'file' ? rest.length === 1 : rest.length > 1) && first === folded(name) ? true : [kind, 'link'].includes(await entryKind(path.join(folder, name)));
  const stores = async () => (await holds('objects', 'folder')) && (await holds('refs', 'folder'));
  if (await holds('HEAD', 'file')) return (await holds('commondir', 'file')) || (await stores());
  return (await holds('config', 'file')) && (await stores());
}

/** A name as a file system that ignores case (macOS's, Windows') finds it: `Head` is git's `HEAD` there. */
function folded(name: string | undefined): string | undefined {
  return name?.toLowerCase();
}

async function entryKind(entry: string): Promise<'absent' | 'folder' | 'link' | 'file'> {
  try {
    const stats = await lstat(entry);
    return stats.isDirectory() ? 'folder' : stats.isSymbolicLink() ? 'link' : 'file';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'absent';
    throw error;
  }
}
