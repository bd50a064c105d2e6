import { accessSync, constants, lstatSync, statSync } from 'node:fs';
import path from 'node:path';
import type { PathFacts } from './outside-workspace';

/**
 * Runners that look for the program they are given among the project's before this machine's: the programs its
 * packages install (`node_modules/.bin` of the folder they run in and of each folder above it, first on the PATH of
 * what they run); pnpm and Yarn a script of that name before that, and pnpm may install first, running the project's
 * lifecycle scripts.
 */
const NODE_RUNNERS: ReadonlySet<string> = new Set(['npm', 'npx', 'bun', 'bunx']);
const SCRIPT_FIRST_RUNNERS: ReadonlySet<string> = new Set(['pnpm', 'pnpx', 'yarn', 'yarnpkg']);

/**
 * Whether a runner given a program this machine has (on the server's PATH, outside the workspace: `git`, `make`)
 * may run a file of the workspace in its place: for npm, npx and bun, while a `node_modules/.bin` from the folder it
 * runs in up to the workspace holds one of that name (a package's `bin`, or what a cloned project left there), or
 * when the line may have made one before; for pnpm and Yarn always (a script of that name comes first, and pnpm may
 * install first). A rule for `npm exec git status` is one for the machine's git, so such a call is asked about. A
 * program the machine does not have (`vitest`, `eslint`) is the project's own, which such a rule names.
 */
export function projectMayRunInstead(runner: string, program: string, facts: PathFacts): boolean {
  if (program.includes('/') || !(NODE_RUNNERS.has(runner) || SCRIPT_FIRST_RUNNERS.has(runner))) return false;
  const { workspace, folder } = facts;
  if (!onSearchPath(program, workspace)) return false;
  if (SCRIPT_FIRST_RUNNERS.has(runner)) return true;
  if (facts.fileSystemChanged === true || workspace === undefined || folder === undefined || !isAtOrWithin(folder, workspace)) return true;
  for (let at = folder; ; at = path.dirname(at)) {
    if (exists(path.join(at, 'node_modules', '.bin', program))) return true;
    if (at === workspace || at === path.dirname(at)) return false;
  }
}

/**
 * Whether an executable called `name` is in a folder of the server's PATH outside the workspace, other than a
 * project's `node_modules/.bin` (that of the project that started the server, when a package script did).
 */
function onSearchPath(name: string, workspace: string | undefined): boolean {
  for (const folder of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(folder) || (workspace !== undefined && isAtOrWithin(folder, workspace))) continue;
    if (folder.split(path.sep).includes('node_modules')) continue;
    const candidate = path.join(folder, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return true;
    } catch {
      // Not there, or not a program.
    }
  }
  return false;
}

function exists(entry: string): boolean {
  try {
    lstatSync(entry);
    return true;
  } catch {
    return false;
  }
}

function isAtOrWithin(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
