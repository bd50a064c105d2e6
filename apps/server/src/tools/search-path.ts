import { realpathSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

export interface CleanedSearchPath {
  /** The entries kept, in their order, joined as PATH. */
  path: string;
  /** Entries left out: empty or relative (read from whatever folder the process runs in) or in the workspace. */
  dropped: string[];
}

/**
 * A PATH for a process whose commands must not be the workspace's: without its empty and relative entries (an empty
 * one is the current folder; a process the model runs, or an MCP server, may run in the workspace) and those in the
 * workspace. A call, even sandboxed, can write the workspace: a `node_modules/.bin/git` it planted would otherwise be
 * what a `git status` that a grant or rule lets through by name runs.
 */
export function cleanSearchPath(searchPath: string, workspace: string): CleanedSearchPath {
  const roots = [realOrResolved(workspace), resolve(workspace)];
  const inWorkspace = (path: string) => roots.some((root) => isAtOrWithin(path, root));
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const entry of searchPath.split(delimiter)) {
    // Where it is written too, not only where it leads now: a link in the workspace to a system folder is one a
    // call can swap for a folder of its own.
    if (isAbsolute(entry) && !inWorkspace(resolve(entry)) && !inWorkspace(realOrResolved(entry))) kept.push(entry);
    else dropped.push(entry);
  }
  return { path: kept.join(delimiter), dropped };
}

/** The path with links resolved as far as it exists: a folder not made yet still counts where its parent lies. */
export function realOrResolved(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(realOrResolved(parent), basename(absolute));
  }
}

export function isAtOrWithin(inner: string, outer: string): boolean {
  const path = relative(outer, inner);
  return path === '' || (path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path));
}
