import { sourceMayLeadAway } from './copy-sources';
import { longOptionIn } from './link-following-readers';
import { pathsAsFound, treeMayHoldLinkOut, type PathFacts } from './outside-workspace';
import type { ShellWord } from './shell-word';

/**
 * How a program otherwise covered wherever, as it shows names, sizes, times or hashes only (`wc -l ~/.bashrc`), is
 * told to read a file and print what it holds: the options that name such a file, and those that take a value,
 * so their value is not read as an option.
 */
interface PrintingOptions {
  /** Letters that take a value, attached or the next word. */
  values: string;
  /** Among `values`, the letters whose value is a file it prints. Default: none. */
  files?: string;
  /** Long options that take a value, after `=` or in the next word. */
  longValues: readonly string[];
  /** Among `longValues`, those whose value is a file it prints. Default: none. */
  longFiles?: readonly string[];
  /** A letter, and long options, that make each operand a file it prints (a checksum list). Default: none. */
  check?: { short?: string; long: readonly string[] };
  /**
   * How its parser reads a long option: `start`, GNU getopt_long's, any start of its name (`--fil` of `--files0-from`),
   * its value after `=` or in the next word; `whole`, tree's own, any word that starts with its whole name (`--hintroX`
   * is `--hintro`), its value after an `=` right past the name, else in the next word. Default: `start`.
   */
  longNames?: 'start' | 'whole';
  /** A character that parts a printed value into several files (file's `-m a:b`): each part is judged, and the whole. Default: none. */
  separator?: string;
  /** Whether a printed value may name a folder whose own files it reads, following links (file's `-m FOLDER`). Default: false. */
  readsFolders?: boolean;
}

/** md5sum and its kin: `-c`/`--check` prints the names each list holds, in its lines that read as checksums. */
const CHECKSUMS: PrintingOptions = { values: '', longValues: [], check: { short: 'c', long: ['--check'] } };

/**
 * Checked with GNU coreutils 9.1: `date -f ~/secret` printed each of its lines in an "invalid date" error, `wc
 * --files0-from=/etc/passwd` and `du --files0-from=…` the whole file as a name they could not open, `md5sum -c` the
 * names in a list's lines that read as checksums. `-` reads the input, as `cat -` does. `date -r` shows a time, `du
 * -X`/`--exclude-from` prints none of its patterns. Checked with file 5.44: `file -f FILE` printed each line as a name
 * it could not open, `file -m FILE` (`-C -m` too) each line in a warning, of every file of a `:` list or a folder
 * (links followed). tree 2.1 (its own parser, `tree.c`): `--fromfile` and `--fromtabfile` print the lines of the
 * files it is given as paths, `--hintro` and `--houtro` copy a file into its HTML, an `--infofile`'s comments are
 * printed beside the names they match; its letters that take a value take the next word each (`-PI a b`), which this
 * reading, taking one, only judges more words by; its `-o` and `-R` write (`match-command.ts`).
 */
const PRINTING_OPTIONS: ReadonlyMap<string, PrintingOptions> = new Map([
  ['date', { values: 'dfrs', files: 'f', longValues: ['--date', '--file', '--reference', '--set', '--rfc-3339'], longFiles: ['--file'] }],
  ['wc', { values: '', longValues: ['--files0-from'], longFiles: ['--files0-from'] }],
  [
    'du',
    {
      values: 'BdtX',
      longValues: ['--block-size', '--exclude', '--exclude-from', '--files0-from', '--max-depth', '--threshold', '--time-style'],
      longFiles: ['--files0-from'],
    },
  ],
  ...['md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum'].map((sum): [string, PrintingOptions] => [sum, CHECKSUMS]),
  ['cksum', { ...CHECKSUMS, values: 'al', longValues: ['--algorithm', '--length'] }],
  [
    'file',
    {
      values: 'efFmP',
      files: 'fm',
      longValues: ['--exclude', '--exclude-quiet', '--files-from', '--separator', '--magic-file', '--parameter'],
      longFiles: ['--files-from', '--magic-file'],
      separator: ':',
      readsFolders: true,
    },
  ],
  [
    'tree',
    {
      values: 'PIHTLo',
      longValues: ['--filelimit', '--charset', '--timefmt', '--sort', '--gitfile', '--infofile', '--hintro', '--houtro', '--scheme', '--authority', '--compress'],
      longFiles: ['--infofile', '--hintro', '--houtro'],
      check: { long: ['--fromfile', '--fromtabfile'] },
      longNames: 'whole',
    },
  ],
]);

/**
 * Whether a call of a program covered wherever (`PRINTING_OPTIONS`) is told to print a file that may lie outside the
 * workspace, judged as `cat` judges its operands (`sourceMayLeadAway`): the value of such an option, attached or the
 * next word, or with a checksum's `-c` each operand; each file of a list (`separator`), and for a program that reads a
 * folder's files so, a folder whose own entries may hold a link that leads out (`treeMayHoldLinkOut`, as `diff a b`
 * reads them). A word with a variable that may become any text may become such
 * an option and its file (`wc "$X"` with `X=--files0-from=/etc/passwd`), and is asked about where an option may
 * stand. `words`: those past the program's name.
 */
export function printingOptionMayReadAway(name: string, words: readonly ShellWord[], facts: PathFacts & { anything: (word: ShellWord) => boolean }): boolean {
  const options = PRINTING_OPTIONS.get(name);
  if (options === undefined) return false;
  const { values, files = '', longValues, longFiles = [], check, longNames = 'start', separator, readsFolders = false } = options;
  const printed: ShellWord[] = [];
  const operands: ShellWord[] = [];
  let checking = false;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index]!;
    if (word.kind === 'dynamic' && word.variables.length > 0 && facts.anything(word)) return true;
    // A glob or `~` after the option's name (`--file=~/x`, which bash leaves as it is) stays in its value.
    const text = word.kind === 'literal' ? word.value : word.text.replace(/["']/g, '');
    const attachedValue = (value: string): ShellWord => (word.kind === 'literal' ? { kind: 'literal', value } : { ...word, text: value });
    if (text === '--') {
      operands.push(...words.slice(index + 1));
      break;
    }
    if (text === '-' || !text.startsWith('-')) {
      operands.push(word);
    } else if (text.startsWith('--')) {
      if (check !== undefined && longOptionRead(text, check.long, longNames) !== undefined) checking = true;
      const option = longOptionRead(text, longValues, longNames);
      if (option === undefined) continue;
      const value = option.attached === undefined ? words[(index += 1)] : attachedValue(option.attached);
      if (value !== undefined && longOptionRead(text, longFiles, longNames) !== undefined) printed.push(value);
    } else {
      const at = [...text.slice(1)].findIndex((letter) => values.includes(letter));
      const flags = at === -1 ? text.slice(1) : text.slice(1, at + 1);
      if (check?.short !== undefined && flags.includes(check.short)) checking = true;
      if (at === -1) continue;
      const attached = text.slice(at + 2);
      const value = attached === '' ? words[(index += 1)] : attachedValue(attached);
      if (value !== undefined && files.includes(text[at + 1]!)) printed.push(value);
    }
  }
  const asFound = pathsAsFound(facts);
  const judged = checking ? [...printed, ...operands] : printed;
  const parts = (word: ShellWord): ShellWord[] => {
    if (separator === undefined) return [word];
    const text = word.kind === 'literal' ? word.value : word.text;
    const split = text
      .split(separator)
      .filter((part) => part !== '')
      .map((part): ShellWord => (word.kind === 'literal' ? { kind: 'literal', value: part } : { ...word, text: part }));
    return [word, ...split];
  };
  return judged.flatMap(parts).some(
    (word) =>
      !(word.kind === 'literal' && word.value === '-') &&
      (facts.anything(word) || sourceMayLeadAway(word, asFound) || (readsFolders && treeMayHoldLinkOut(word, asFound, 'own'))),
  );
}

/**
 * The option of `names` a word that starts with `--` is, read as `longNames` says (`PrintingOptions.longNames`), and
 * the value attached to it, if any; undefined for none of them.
 */
function longOptionRead(text: string, names: readonly string[], longNames: 'start' | 'whole'): { attached: string | undefined } | undefined {
  if (longNames === 'whole') {
    const name = names.find((option) => text.startsWith(option));
    return name === undefined ? undefined : { attached: text[name.length] === '=' ? text.slice(name.length + 1) : undefined };
  }
  const equals = text.indexOf('=');
  return longOptionIn(equals === -1 ? text : text.slice(0, equals), names) ? { attached: equals === -1 ? undefined : text.slice(equals + 1) } : undefined;
}
