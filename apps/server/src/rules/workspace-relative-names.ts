import path from 'node:path';

const MAX_PATH_CHARS = 4096;

/**
 * The names of `requested` relative to `workspace` (`[]` for the workspace itself), or undefined when it lies
 * outside. Lexical only: the file tools resolve symbolic links themselves, and `evaluateRules` can be given
 * the real path too.
 */
export function workspaceRelativeNames(workspace: string, requested: string): string[] | undefined {
  if (requested.length > MAX_PATH_CHARS || requested.includes('\0')) return undefined;
  const relative = path.posix.relative(path.posix.resolve(workspace), path.posix.resolve(workspace, requested));
  if (relative === '') return [];
  if (relative === '..' || relative.startsWith('../') || path.posix.isAbsolute(relative)) return undefined;
  return relative.split('/');
}
