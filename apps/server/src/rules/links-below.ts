import type { Dirent } from 'node:fs';
import { lstat, opendir, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { isWithin } from '../tools/path-within';

/** How far one walk goes: past either bound, the folder counts as holding a link that leads out. */
export interface WalkBounds {
  /** The most entries looked at. Default: `MAX_WALKED_ENTRIES`, 50,000. */
  maxEntries?: number;
  /** The deepest folder looked in, below the one walked. Default: `MAX_WALKED_DEPTH`, 64. */
  maxDepth?: number;
}

export const MAX_WALKED_ENTRIES = 50_000;
export const MAX_WALKED_DEPTH = 64;
/**
 * How many entries of a folder are read at a time: a folder of 50,000 entries read whole held the server's thread
 * for 50–270 ms while its names were handled (docs/benchmarks.md); read a slice at a time, other clients are served
 * between slices.
 */
const LISTING_SLICE = 256;

/**
 * The answers of the walks made for one judging, by workspace and path (`RuleContext.linkWalks`): shared by the
 * calls judged with it, as a draft rule's preview judges past calls with nothing run between them.
 */
export type LinkWalks = Map<string, Promise<boolean>>;

/**
 * Which folders a walk goes into: `collected`, all but `.git` and `node_modules` (see SKIPPED), as a test runner's
 * collection and a build do; `every`, those too, as a program that follows every link below its operands does
 * (`grep -R`, `rg -L`, `zip -r`, `tar -h`, `cp -rL`), which reads them as any other folder; `own`, none: the folder's
 * own entries only, as `diff a b` without `-r` reads them (a link among them that leads out counts, a link or a
 * folder below them does not).
 */
export type FoldersWalked = 'collected' | 'every' | 'own';

/** Walks made, for tests. */
export const walkCount = { walks: 0 };

/**
 * Whether the folder at an absolute path, or a folder above it inside `workspace`, may hold a symbolic link that leads
 * out of the workspace or into a `.git` folder of it, for a program that reads that folder and follows links there
 * by itself (pytest's and vitest's collection, a build reading its tree): a link that arrived by a call a rule
 * allowed (`git checkout` of a branch that holds one, `tar -x`, `unzip`, `git apply`) leads the program elsewhere
 * (`t/o -> ../../other`, then `pytest -q` runs the other folder's `conftest.py`), whoever made it. Looked for:
 *
 * - every symbolic link below the folder, its target looked up as the kernel does (one that points nowhere, by its
 *   text from its folder; one that loops counts as leading out), and a link to a folder inside looked in as well;
 * - in each folder from the workspace down to it, a link to anything but a folder (`conftest.py`, `pytest.ini`,
 *   `Makefile` there are read by programs run below, as pytest reads a `conftest.py` above its operands).
 *
 * Not looked in, unless `every` folder is asked for: `.git` and `node_modules` (see SKIPPED); a link there is still
 * judged where it is met. Not counted:
 * the interpreter links of a Python virtual environment (see interpreterOfEnvironment). Bounded (`WalkBounds`): past them, or on an
 * error other than the folder not being there, true. A folder not there
 * holds nothing now (a command of the line that makes it counts as changing the file system). Given `walks`, a path
 * asked about again in the same judging is answered from its first walk.
 */
export function folderHoldsLinkOut(
  workspace: string,
  bounds: WalkBounds = {},
  walks?: LinkWalks,
): (absolute: string, folders?: FoldersWalked) => Promise<boolean> {
  const limits = { maxEntries: bounds.maxEntries ?? MAX_WALKED_ENTRIES, maxDepth: bounds.maxDepth ?? MAX_WALKED_DEPTH };
  let root: Promise<string> | undefined;
  const rootOf = () =>
    (root ??= realpath(workspace).catch((error: unknown) => {
      root = undefined;
      throw error;
    }));
  const walk = async (absolute: string, folders: FoldersWalked) => {
    walkCount.walks += 1;
    try {
      return await holdsLinkOut(await rootOf(), absolute, { ...limits, folders });
    } catch {
      return true;
    }
  };
  if (walks === undefined) return (absolute, folders = 'collected') => walk(absolute, folders);
  return (absolute, folders = 'collected') => {
    const key = `${workspace}\0${folders}\0${absolute}`;
    const made = walks.get(key) ?? walk(absolute, folders);
    walks.set(key, made);
    return made;
  };
}

async function holdsLinkOut(root: string, absolute: string, limits: Required<WalkBounds> & { folders: FoldersWalked }): Promise<boolean> {
  let start: string;
  try {
    start = await realpath(absolute);
  } catch (error) {
    if (missing(error)) return false;
    throw error;
  }
  if (!isWithin(root, start)) return true;
  // The folders above it (for a file, from its own), whose files a program run there may read.
  for (let folder = start; folder !== root; ) {
    folder = path.dirname(folder);
    if (await holdsFileLinkOut(root, folder)) return true;
  }
  if (!(await lstat(start)).isDirectory()) return false;
  const visited = new Set([start]);
  const queue: { folder: string; depth: number }[] = [{ folder: start, depth: 0 }];
  let entries = 0;
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    const { folder, depth } = next;
    for await (const entry of listing(folder)) {
      if ((entries += 1) > limits.maxEntries) return true;
      const entryPath = path.join(folder, entry.name);
      let inside: string | undefined;
      if (entry.isSymbolicLink()) {
        if (await interpreterOfEnvironment(folder, entry.name)) continue;
        const led = await leadsTo(root, entryPath);
        if (led.away) return true;
        inside = limits.folders === 'own' ? undefined : led.folder;
      } else if (entry.isDirectory() && limits.folders !== 'own' && (limits.folders === 'every' || !SKIPPED(entry.name))) {
        inside = entryPath;
      }
      if (inside === undefined || visited.has(inside)) continue;
      if (depth + 1 > limits.maxDepth) return true;
      visited.add(inside);
      queue.push({ folder: inside, depth: depth + 1 });
    }
  }
  return false;
}

/** The entries of a folder, read `LISTING_SLICE` at a time; the folder is closed when the loop reading them ends. */
async function* listing(folder: string): AsyncGenerator<Dirent> {
  yield* await opendir(folder, { bufferSize: LISTING_SLICE });
}

/**
 * Not looked in: `.git` (its links are Git's to judge, see awayFrom) and `node_modules`, where package managers keep
 * links that lead out (`npm link`) and which the runners leave out by default. Other dot folders are looked in:
 * vitest and jest collect test files there (`.hidden/a.test.mjs`), and a dot folder arrives by `tar -x` as any other.
 */
const SKIPPED = (name: string) => name.toLowerCase() === '.git' || name === 'node_modules';

/**
 * Whether `name` in `folder` is the interpreter link of a Python virtual environment (`.venv/bin/python ->
 * /usr/bin/python3`): in a `bin` or `Scripts` folder whose parent holds `pyvenv.cfg`, and named `python`, `python3`,
 * `python3.12`, `pypy3`… Such a link leads out by design, and no runner collects a test or config file through it.
 */
async function interpreterOfEnvironment(folder: string, name: string): Promise<boolean> {
  if (!/^(?:python|pypy)(?:\d+(?:\.\d+)*)?$/.test(name) || !['bin', 'Scripts'].includes(path.basename(folder))) return false;
  try {
    return (await lstat(path.join(path.dirname(folder), 'pyvenv.cfg'))).isFile();
  } catch {
    return false;
  }
}

/** Whether `folder` holds, as an entry of its own, a link to anything but a folder that leads away. */
async function holdsFileLinkOut(root: string, folder: string): Promise<boolean> {
  for await (const entry of listing(folder)) {
    if (!entry.isSymbolicLink()) continue;
    const led = await leadsTo(root, path.join(folder, entry.name));
    if (led.away && led.folder === undefined) return true;
  }
  return false;
}

/**
 * Where a symbolic link leads: `away` when out of the workspace or into a `.git` folder of it, by the kernel's
 * lookup, or, for one that points nowhere, by its text read from its folder (a later write there decides what it
 * reaches); a loop counts as away. `folder`: the real folder it leads to, if it leads to one.
 */
async function leadsTo(root: string, link: string): Promise<{ away: boolean; folder?: string }> {
  let real: string;
  try {
    real = await realpath(link);
  } catch (error) {
    if (!missing(error)) return { away: true };
    return { away: awayFrom(root, path.resolve(path.dirname(link), await readlink(link))) };
  }
  const away = awayFrom(root, real);
  return (await lstat(real)).isDirectory() ? { away, folder: real } : { away };
}

function awayFrom(root: string, real: string): boolean {
  return !isWithin(root, real) || path.relative(root, real).split(path.sep).some((part) => part.toLowerCase() === '.git');
}

function missing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
