import path from 'node:path';
import type { ShellWord } from './shell-word';

/** Where the words of a command line are read from. */
export interface PathFacts {
  /** The workspace's absolute path, where the terminal runs: an absolute path under it is inside. Default: none is. */
  workspace?: string;
  /**
   * A command before this one on the line may have led the shell to a folder outside the workspace (`cd ~/other`,
   * `cd ..`, `cd "$X"`, `cd -`, `cd` alone, `popd`, `source x`): this one may run there, and a relative path may lead
   * anywhere. Otherwise it runs in the workspace or a folder inside, where a relative path that climbs no higher
   * than the workspace's own folder stays inside. Default: false.
   */
  leftWorkspace?: boolean;
}

const GLOB = /[*?[]/;

/**
 * Whether a word that names a file may name one outside the workspace, judged by its text (links inside the workspace
 * that lead out are not seen): an absolute path elsewhere, `~`, a `..` that climbs out, any `$NAME` (`$HOME`, `$_`),
 * braces (`{/etc/x,a}`), a glob part that may match `..` (`.*`), and any relative path once the line may have left
 * the workspace.
 */
export function mayNameOutside(word: ShellWord, facts: PathFacts): boolean {
  if (word.kind === 'literal') return pathLeadsOut(word.value, facts);
  if (word.variables.length > 0) return true;
  const text = word.text.replace(/["']/g, '');
  if (text.startsWith('~') || text.includes('{') || text.includes('..')) return true;
  if (text.split('/').some((part) => part.startsWith('.') && GLOB.test(part))) return true;
  const glob = text.search(GLOB);
  return pathLeadsOut(glob === -1 ? text : text.slice(0, text.lastIndexOf('/', glob) + 1), facts);
}

function pathLeadsOut(value: string, facts: PathFacts): boolean {
  if (value === '' || value === '-') return false;
  if (value.startsWith('~')) return true;
  if (value.startsWith('/')) {
    if (facts.workspace === undefined) return true;
    const workspace = path.posix.resolve(facts.workspace);
    const resolved = path.posix.resolve(value);
    return resolved !== workspace && !resolved.startsWith(workspace === '/' ? '/' : `${workspace}/`);
  }
  if (facts.leftWorkspace === true) return true;
  const normalized = path.posix.normalize(value);
  return normalized === '..' || normalized.startsWith('../');
}
