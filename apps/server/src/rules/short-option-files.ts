/**
 * How a program judged as `cat` is reads its short options (`file-readers.ts`): the letters that take a value,
 * attached (`-o/home/me/.bashrc`, `-rf/x` after flags) or as the next word, and among them those whose value names a
 * file it reads or writes, or a list of `key=value` options whose values may name one (pygmentize's `-O`, `-P`:
 * `cssfile=…` writes there). A letter not among `values` is taken as a flag; one the table misses only has more of
 * the group judged as a value, which asks more, not less.
 */
interface ShortOptions {
  /** Letters that take a value: the rest of the group, or the next word. */
  values: string;
  /** Letters whose value is a file read or written. */
  files: string;
  /** Letters whose value is a comma-separated list of `key=value` options, each value judged as a file. */
  optionLists?: string;
}

const GREP: ShortOptions = { values: 'efmABCdD', files: 'f' };

const SHORT_OPTIONS: ReadonlyMap<string, ShortOptions> = new Map([
  // GNU grep and the compressed-file greps that hand it their options: `-f FILE` reads the patterns.
  ...['grep', 'egrep', 'fgrep', 'zgrep', 'zegrep', 'zfgrep', 'bzgrep', 'bzegrep', 'bzfgrep', 'xzgrep', 'xzegrep', 'xzfgrep', 'lzgrep', 'zstdgrep'].map(
    (grep): [string, ShortOptions] => [grep, GREP],
  ),
  ['rg', { values: 'ABCdeEfgjmMrtT', files: 'f' }],
  ...['ugrep', 'ugrep+'].map((ugrep): [string, ShortOptions] => [ugrep, { values: 'ABCdDefgJKmMNOt', files: 'f' }]),
  // pygmentize writes `-o`, and its HTML formatter the stylesheet `-O cssfile=…` or `-P cssfile=…` names.
  ['pygmentize', { values: 'lfOPFoaS', files: 'o', optionLists: 'OP' }],
  // enscript and a2ps write the file `-p`/`-o` names; highlight reads `-i` and `-e` (a stylesheet it copies into the
  // output) and writes `-o`, `-c` and into the folder `-d` (its `-B` search is asked about: `match-command.ts`);
  // source-highlight reads `-i` and writes `-o`.
  ['enscript', { values: '#aAbCdDeEfFHiILMnopPsStTuUwWX', files: 'op' }],
  ['a2ps', { values: 'aAbdDEflLMnoPsSTuX', files: 'o' }],
  ['highlight', { values: 'oidceDsSOtkKjJmuyTBFx', files: 'oidce' }],
  ['source-highlight', { values: 'iosfcTtH', files: 'ioH' }],
  // iconv, uudecode and shuf write the file `-o` names, sdiff its merge, csplit the pieces named after `-f`'s prefix.
  ['iconv', { values: 'fto', files: 'o' }],
  ['uudecode', { values: 'o', files: 'o' }],
  ['shuf', { values: 'ino', files: 'o' }],
  ['sdiff', { values: 'oIw', files: 'o' }],
  ['csplit', { values: 'bfn', files: 'f' }],
  // ptx reads the words to keep or leave out from `-o`, `-i` and the break characters from `-b`.
  ['ptx', { values: 'bFgiMoSwW', files: 'bio' }],
  // hexdump reads its format strings from `-f`, and prints what they hold where it fails to parse them.
  ...['hexdump', 'hd'].map((hexdump): [string, ShortOptions] => [hexdump, { values: 'efns', files: 'f' }]),
  // zstd and brotli write `-o` and read a dictionary from `-D`; unzip extracts into `-d`.
  ...['zstd', 'unzstd', 'zstdcat'].map((zstd): [string, ShortOptions] => [zstd, { values: 'oDTBM', files: 'oD' }]),
  ['brotli', { values: 'oDqwS', files: 'oD' }],
  ['unzip', { values: 'dP', files: 'd' }],
  // xsv writes `-o`; glow reads a style from `-s`, a file when it is no style's name.
  ['xsv', { values: 'do', files: 'o' }],
  ['glow', { values: 'sw', files: 's' }],
  // strip writes the stripped copy to `-o` (elfutils' the removed sections to `-f` too); addr2line reads `-e`.
  ...['strip', 'llvm-strip'].map((strip): [string, ShortOptions] => [strip, { values: 'FIORKNo', files: 'o' }]),
  ['eu-strip', { values: 'FfoRK', files: 'Ffo' }],
  ...['addr2line', 'llvm-addr2line', 'eu-addr2line'].map((addr2line): [string, ShortOptions] => [addr2line, { values: 'bej', files: 'e' }]),
]);

/**
 * The paths the short options of a call of `name` name in its `words` (their quotes dropped), before a `--`: a file
 * option's value attached (`-o/home/me/.bashrc`, `-qp/x`) or the next word when that starts with a dash (other next
 * words are judged as operands already; one the shell computes is judged so too), and each value of a `key=value` list (`-O full,cssfile=/x`).
 */
export function shortOptionPaths(name: string, words: readonly (string | undefined)[]): string[] {
  const options = SHORT_OPTIONS.get(name);
  if (options === undefined) return [];
  return shortOptionValues(options, words).flatMap(({ letter, value }) => {
    if (value === undefined) return [];
    if (options.files.includes(letter)) return [value];
    return options.optionLists?.includes(letter) === true ? optionListPaths(value) : [];
  });
}

/** The letters that take a value in a call of `name` (`SHORT_OPTIONS`); undefined for a program not in the table. */
export function shortValueLetters(name: string): string | undefined {
  return SHORT_OPTIONS.get(name)?.values;
}

/**
 * The values the short option `letter` of a call of `name` is given in its `words`, before a `--`, read as
 * `shortOptionPaths` reads them (highlight's `-S` language); undefined for one the shell computes.
 */
export function shortOptionValuesOf(name: string, letter: string, words: readonly (string | undefined)[]): (string | undefined)[] {
  const options = SHORT_OPTIONS.get(name);
  if (options === undefined) return [];
  return shortOptionValues(options, words).filter((given) => given.letter === letter).map(({ value }) => value);
}

/** Each value-taking letter of the groups in `words` before a `--`, with the value attached or the next word. */
function shortOptionValues(options: ShortOptions, words: readonly (string | undefined)[]): { letter: string; value: string | undefined }[] {
  const found: { letter: string; value: string | undefined }[] = [];
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index];
    if (word === '--') break;
    if (word === undefined || !/^-[^-]/.test(word)) continue;
    const at = [...word.slice(1)].findIndex((letter) => options.values.includes(letter));
    if (at === -1) continue;
    const letter = word[at + 1]!;
    const attached = word.slice(at + 2);
    if (attached === '') index += 1;
    if (attached === '' && index >= words.length) continue;
    found.push({ letter, value: attached !== '' ? attached : words[index] });
  }
  return found;
}

/** The values of a comma-separated `key=value` list (`full,cssfile=/x` gives `/x`). */
function optionListPaths(list: string): string[] {
  return list.split(',').flatMap((option) => {
    const equals = option.indexOf('=');
    return equals === -1 ? [] : [option.slice(equals + 1)];
  });
}
