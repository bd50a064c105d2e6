import { mayNameOutside, type PathFacts } from './outside-workspace';
import type { ShellWord } from './shell-word';

/**
 * Whether a test runner's operand may name a place outside the workspace (whose tests and config it would load, as
 * `cd there && …` would), or one under a `.git` folder, where calls a rule allows write text the model chose (`git
 * commit -m …` writes `.git/COMMIT_EDITMSG`).
 */
export function leadsAway(word: ShellWord, facts: PathFacts): boolean {
  return mayNameOutside(word, facts) || underGitFolder(word);
}

/** Whether a path (before a test's `::name`) has a `.git` folder in it, in any case (macOS's file names ignore it). */
function underGitFolder(word: ShellWord): boolean {
  const text = word.kind === 'literal' ? word.value : word.text.replace(/["']/g, '');
  const [file = ''] = text.split('::', 1);
  return file.split('/').some((part) => part.toLowerCase() === '.git');
}
