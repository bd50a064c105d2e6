import { sourceMayLeadAway } from './copy-sources';
import { longOptionIn } from './link-following-readers';
import { pathsAsFound, type PathFacts } from './outside-workspace';
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
  /** A letter, and a long option, that make each operand a file it prints (a checksum list). Default: none. */
  check?: { short: string; long: string };
}

/** md5sum and its kin: `-c`/`--check` prints the names each list holds, in its lines that read as checksums. */
const CHECKSUMS: PrintingOptions = { values: '', longValues: [], check: { short: 'c', long: '--check' } };

/**
 * Checked with GNU coreutils 9.1: `date -f ~/secret` printed each of its lines in an "invalid date" error, `wc
 * --files0-from=/etc/passwd` and `du --files0-from=…` the whole file as a name they could not open, `md5sum -c` the
 * names in a list's lines that read as checksums. `-` reads the input, as `cat -` does. `date -r` shows a time, `du
 * -X`/`--exclude-from` prints none of its patterns.
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
]);

/**
 * Whether a call of a program covered wherever (`PRINTING_OPTIONS`) is told to print a file that may lie outside the
 * workspace, judged as `cat` judges its operands (`sourceMayLeadAway`): the value of such an option, attached or the
 * next word, or with a checksum's `-c` each operand. A word with a variable that may become any text may become such
 * an option and its file (`wc "$X"` with `X=--files0-from=/etc/passwd`), and is asked about where an option may
 * stand. `words`: those past the program's name.
 */
export function printingOptionMayReadAway(name: string, words: readonly ShellWord[], facts: PathFacts & { anything: (word: ShellWord) => boolean }): boolean {
  const options = PRINTING_OPTIONS.get(name);
  if (options === undefined) return false;
  const { values, files = '', longValues, longFiles = [], check } = options;
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
      const equals = text.indexOf('=');
      const written = equals === -1 ? text : text.slice(0, equals);
      if (check !== undefined && longOptionIn(written, [check.long])) checking = true;
      if (!longOptionIn(written, longValues)) continue;
      const value = equals === -1 ? words[(index += 1)] : attachedValue(text.slice(equals + 1));
      if (value !== undefined && longOptionIn(written, longFiles)) printed.push(value);
    } else {
      const at = [...text.slice(1)].findIndex((letter) => values.includes(letter));
      const flags = at === -1 ? text.slice(1) : text.slice(1, at + 1);
      if (check !== undefined && flags.includes(check.short)) checking = true;
      if (at === -1) continue;
      const attached = text.slice(at + 2);
      const value = attached === '' ? words[(index += 1)] : attachedValue(attached);
      if (value !== undefined && files.includes(text[at + 1]!)) printed.push(value);
    }
  }
  const asFound = pathsAsFound(facts);
  const judged = checking ? [...printed, ...operands] : printed;
  return judged.some((word) => !(word.kind === 'literal' && word.value === '-') && (facts.anything(word) || sourceMayLeadAway(word, asFound)));
}
