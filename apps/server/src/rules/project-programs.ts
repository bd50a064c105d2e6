import path from 'node:path';
import { PROJECT_FIRST_RUNNERS } from '@airlock/api/rules/commands';
import { executablesOnPath } from '../tools/find-executable';
import { isWithin } from '../tools/path-within';
import type { PathFacts } from './outside-workspace';

/**
 * Whether a runner given a program this machine has (on the server's PATH, outside the workspace and any
 * `node_modules`: `git`, `make`) may run a file of the workspace in its place. It may, always: which of the project's
 * files it takes depends on more than any lookup here keeps up with (its folders' `node_modules/.bin`, a `bin` in a
 * `package.json`, a `.npmrc` that moves it to another folder, a script of that name). A rule for `npm exec git
 * status` means the machine's git, so such a call is asked about. A program the machine does not have (`vitest`,
 * `eslint`) is the project's own, which such a rule names.
 */
export function projectMayRunInstead(runner: string, program: string, facts: PathFacts): boolean {
  if (program.includes('/') || !PROJECT_FIRST_RUNNERS.has(runner)) return false;
  return onSearchPath(program, facts.workspace);
}

/**
 * Whether an executable called `name` is in a folder of the server's PATH outside the workspace, other than a
 * project's `node_modules/.bin` (that of the project that started the server, when a package script did).
 */
function onSearchPath(name: string, workspace: string | undefined): boolean {
  const skip = (folder: string) => (workspace !== undefined && isWithin(workspace, folder)) || folder.split(path.sep).includes('node_modules');
  return !executablesOnPath(name, process.env.PATH, { skip }).next().done;
}
