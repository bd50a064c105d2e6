import { sourceMayLeadAway } from './copy-sources';
import { mayBeFolder, pathsAsFound, seenOutside, treeMayHoldLinkOut, type PathFacts } from './outside-workspace';
import { shortValueLetters } from './short-option-files';
import type { ShellWord } from './shell-word';

/**
 * How a searcher that reads every file below the folders it is given is told to follow the links it meets there
 * (checked with the real programs: GNU grep 3.8, ripgrep, ugrep 3.11, ag, ack): a letter in a group of short ones, or
 * a long option by any start of it (grep, ag and ack take one; ripgrep, which refuses it, is asked about more only).
 * Without one, grep's `-r`, ripgrep's, ag's and ack's searches read the links named on the command line alone, which
 * are judged as any path is. ugrep follows the links to files below each folder it searches, with `-r` alone or a
 * folder named (`ugrep key src` printed `src/s.txt -> ../../outside/s.txt`; found in review), unless told not to.
 */
interface Searcher {
  /** Letters that have it follow every link below. */
  short: string;
  /** Long options that do. */
  long: readonly string[];
  /** Letters whose value is the pattern (`-e key`), when given so no word is. */
  patternLetters: string;
  /** Long options whose value is the pattern. */
  patternLong: readonly string[];
  /**
   * Given, it follows links below each folder it searches whatever else it is told, unless one of these letters or
   * long options, written whole (ugrep's `-p`, `--no-dereference`, in any place), is given. Default: none.
   */
  unlessTold?: { short: string; long: readonly string[] };
}

const GREP: Searcher = { short: 'R', long: ['--dereference-recursive'], patternLetters: 'ef', patternLong: ['--regexp', '--file'] };
const UGREP: Searcher = { short: '', long: [], patternLetters: 'ef', patternLong: ['--regexp', '--file'], unlessTold: { short: 'p', long: ['--no-dereference'] } };

const SEARCHERS: ReadonlyMap<string, Searcher> = new Map([
  ...['grep', 'egrep', 'fgrep'].map((grep): [string, Searcher] => [grep, GREP]),
  ['rg', { short: 'L', long: ['--follow'], patternLetters: 'ef', patternLong: ['--regexp', '--file'] }],
  ...['ugrep', 'ugrep+'].map((ugrep): [string, Searcher] => [ugrep, UGREP]),
  ['ag', { short: 'f', long: ['--follow'], patternLetters: '', patternLong: [] }],
  ...['ack', 'ack-grep'].map((ack): [string, Searcher] => [ack, { short: '', long: ['--follow'], patternLetters: '', patternLong: ['--match'] }]),
]);

/**
 * Whether a call of a program judged as `cat` is (`file-readers.ts`) follows the links below the folders it reads,
 * and one of those may hold a link that leads out of the workspace (`treeMayHoldLinkOut`, walking every folder, as
 * the program does: `node_modules`, where `npm link` leaves a link out, and `.git` too): `grep -R key src` printed
 * `src/vendor/s.txt` through `src/vendor -> ../../outside`, `zip -r o.zip src` packed it (found in review). The
 * folders read are each word that is no option (an option's value or the pattern too, which asks more only when it
 * names a folder), and the one it runs in when it searches with no folder named (`grep -R key`, `rg -L key`) or
 * recurses by patterns (`zip -R`). zip follows every link below what it packs with `-r`, unless `-y` keeps them as
 * links, and ugrep those to files below every folder it searches, unless `-p`; grep's `-r`, `rg`, `ag` and `ack`
 * alone do not. `words`: those past the program's name; `ruleWords`: how many of them the rule names, which it covers
 * as it covers a file it names (`cat /etc/hosts`).
 */
export function followedTreeMayHoldLinkOut(name: string, words: readonly ShellWord[], facts: PathFacts, ruleWords = 0): boolean {
  // A word the shell computes is undefined when it may become an option (`*` may match `-R`), its text otherwise.
  const text = words.map((word) => (word.kind === 'literal' ? word.value : /^["']?[-*?[$]/.test(word.text) ? undefined : word.text));
  const comparer = COMPARERS.get(name);
  if (comparer !== undefined) return comparedFoldersMayHoldLinkOut(comparer, words, text, facts, ruleWords);
  const searcher = SEARCHERS.get(name);
  const follows = searcher === undefined ? name === 'zip' && zipFollows(text) : searcherFollows(name, searcher, text);
  if (!follows) return false;
  // A command before it on the line may have brought a link (`tar -xf x.tar && grep -R key src`).
  if (facts.fileSystemChanged === true) return seenOutside({ kind: 'literal', value: '.' }, facts, true);
  const readsHere = searcher === undefined ? text.some((word) => word === undefined || /^-[^-]*R/.test(word)) : searchesHere(name, searcher, text);
  const here: ShellWord = { kind: 'literal', value: '.' };
  if (readsHere && (sourceMayLeadAway(here, facts) || treeMayHoldLinkOut(here, facts, 'every'))) return true;
  // A plain glob by the folder before it, below which every match lies (`sourceMayLeadAway`).
  return words.some((word, index) => index >= ruleWords && text[index]?.startsWith('-') !== true && (word.kind === 'literal' ? treeMayHoldLinkOut(word, facts, 'every') : sourceMayLeadAway(word, facts, 'every')));
}

/** Whether a long option as written (`--deref`, `--follow=x`) is one of `options`, by any start of it. */
export function longOptionIn(word: string, options: readonly string[]): boolean {
  const written = word.split('=', 1)[0]!;
  return written.startsWith('--') && written.length > 2 && options.some((option) => option.startsWith(written));
}

/** Whether a group of short options (`-nR`) holds one of `letters` before one of `values`, which take a value. */
function inShortGroup(word: string, letters: string, values: string): boolean {
  if (!/^-[^-]/.test(word)) return false;
  for (const letter of word.slice(1)) {
    if (letters.includes(letter)) return true;
    if (values.includes(letter)) return false;
  }
  return false;
}

function searcherFollows(name: string, searcher: Searcher, words: readonly (string | undefined)[]): boolean {
  const end = words.indexOf('--');
  const options = end === -1 ? words : words.slice(0, end);
  const values = shortValueLetters(name) ?? '';
  const { unlessTold } = searcher;
  if (unlessTold !== undefined) return !options.some((word) => word !== undefined && (inShortGroup(word, unlessTold.short, values) || unlessTold.long.includes(word)));
  // A word the shell computes may become such an option.
  return options.some((word) => word === undefined || inShortGroup(word, searcher.short, values) || longOptionIn(word, searcher.long));
}

/**
 * Whether a searcher reads the folder it runs in: no word is left for a folder once the pattern is taken (the first
 * word that is no option, unless an option gives it). A long option written without `=` may take the next word as
 * its value: that word is not counted, which reads the folder the call runs in more often, never less.
 */
function searchesHere(name: string, searcher: Searcher, words: readonly (string | undefined)[]): boolean {
  const values = shortValueLetters(name) ?? '';
  let operands = 0;
  let patternGiven = false;
  let ended = false;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index];
    if (ended || word === undefined || !word.startsWith('-') || word === '-') {
      operands += 1;
    } else if (word === '--') {
      ended = true;
    } else if (word.startsWith('--')) {
      if (longOptionIn(word, searcher.patternLong)) patternGiven = true;
      if (!word.includes('=')) index += 1;
    } else {
      const at = [...word.slice(1)].findIndex((letter) => values.includes(letter));
      if (at === -1) continue;
      if (searcher.patternLetters.includes(word[at + 1]!)) patternGiven = true;
      if (at + 2 === word.length) index += 1;
    }
  }
  return operands - (patternGiven ? 0 : 1) <= 0;
}

/**
 * zip's letters that take a value or begin a longer option (`-b path`, `-ds 10m`, `-TT cmd`): a `y` after one in a
 * group may be part of it (`-bty` packed through the links, `ty` being -b's folder).
 */
const ZIP_VALUE_LETTERS = 'bdFilnOPstTUxZ';

/**
 * Whether a zip call recurses into the folders it packs (`-r`, `-R`, `--recurse-paths`) and follows their links:
 * unless `y` in a group of short options (`-ry`) or `--symlinks` by any start of it zip takes (`--sy`) keeps them.
 */
function zipFollows(words: readonly (string | undefined)[]): boolean {
  const recurses = words.some((word) => word === undefined || /^-[^-]*[rR]/.test(word) || (word.startsWith('--') && longOptionIn(word, ['--recurse-paths', '--recurse-patterns'])));
  const keepsLinks = words.some((word) => word !== undefined && (inShortGroup(word, 'y', ZIP_VALUE_LETTERS) || (word.length >= 4 && '--symlinks'.startsWith(word))));
  return recurses && !keepsLinks;
}

/**
 * How a program that compares two folders is told to go below them, or not to follow links: diff and colordiff (which
 * hands diff its options) compare the files of the same name in two folders, or a file with the one of its name in
 * a folder (`diff a/notes b`), following the links there, and every folder below with `-r`/`--recursive`, unless
 * `--no-dereference`; sdiff compares the files in them, with no such options. cmp and diff3 refuse a folder.
 */
interface Comparer {
  /** Letters that take a value (`-x PAT`, `-U 3`): a letter after one in a group is part of its value. */
  values: string;
  /** Whether it takes `-r`/`--recursive` and `--no-dereference`. */
  recurses: boolean;
}

const DIFF: Comparer = { values: 'CDFILSUWxX', recurses: true };
const COMPARERS: ReadonlyMap<string, Comparer> = new Map([
  ['diff', DIFF],
  ['colordiff', DIFF],
  ['sdiff', { values: shortValueLetters('sdiff') ?? '', recurses: false }],
]);

/**
 * Whether a comparer's call (`COMPARERS`) reads a folder that may hold a link leading out of the workspace
 * (`treeMayHoldLinkOut`, walking every folder): each word past the rule's that is no option and may be a folder, and
 * the folder `--from-file`/`--to-file` names (checked with GNU diffutils 3.8: `diff -r a b`, `diff a b`, `diff a/notes
 * b` and `sdiff a b` printed `outside/secret` through `b/notes -> ../../outside/secret`; found in review): with
 * `-r`, every folder below them (`every`), without it their own entries (`own`). After a command on the line that may change the file
 * system, a call with `-r` is asked about, as `grep -R` is; one without is judged as `cat` judges the files it is
 * named (`pathsAsFound`).
 */
function comparedFoldersMayHoldLinkOut(comparer: Comparer, words: readonly ShellWord[], text: readonly (string | undefined)[], facts: PathFacts, ruleWords: number): boolean {
  const end = text.indexOf('--');
  const options = end === -1 ? text : text.slice(0, end);
  if (comparer.recurses && options.some((word) => word !== undefined && longOptionIn(word, ['--no-dereference']))) return false;
  const recursive = comparer.recurses && options.some((word) => word === undefined || inShortGroup(word, 'r', comparer.values) || longOptionIn(word, ['--recursive']));
  if (recursive && facts.fileSystemChanged === true) return seenOutside({ kind: 'literal', value: '.' }, facts, true);
  const asFound = pathsAsFound(facts);
  // Without -r, diff reads the folders' own entries: a link among them is followed, a folder is not gone into.
  const walked = recursive ? 'every' : 'own';
  const folderMayHoldLinkOut = (word: ShellWord) =>
    word.kind === 'literal' ? mayBeFolder(word.value, asFound) && treeMayHoldLinkOut(word, asFound, walked) : sourceMayLeadAway(word, asFound, walked);
  return words.some((word, index) => {
    if (index < ruleWords) return false;
    const given = text[index];
    const operand = (end !== -1 && index > end) || given?.startsWith('-') !== true;
    if (operand) return folderMayHoldLinkOut(word);
    const named = /^(--[^=]+)=(.*)$/s.exec(given ?? '');
    return named !== null && longOptionIn(named[1]!, ['--from-file', '--to-file']) && folderMayHoldLinkOut({ kind: 'literal', value: named[2]! });
  });
}
