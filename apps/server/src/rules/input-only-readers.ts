import type { ShellWord } from './shell-word';

/** A count as head and tail take it (`20`, `+3`, `-5` for all but the last five). */
const COUNT = /^[+-]?\d+$/;
/** head's and tail's options that take a count, short and long (the long ones whole, with `=` or the next word). */
const COUNT_SHORT = new Set(['-n', '-c']);
const COUNT_LONG = new Set(['--lines', '--bytes']);
/** Their options that take nothing and read no file. */
const HEAD_TAIL_FLAGS = new Set(['-q', '-v', '-z', '--quiet', '--silent', '--verbose', '--zero-terminated']);

/**
 * grep's one-letter options that take no value and leave it reading its input when named no file (no `-r`/`-R`,
 * which read `.`, no `-d`, `-f`, `-e`, `-A` … which take one), in any group (`-iv`), and the long ones, whole.
 */
const GREP_LETTERS = 'ivcnEFGwxoqshHlLbaIzPUT';
const GREP_LONG = new Set([
  '--ignore-case', '--no-ignore-case', '--invert-match', '--count', '--line-number', '--extended-regexp', '--fixed-strings',
  '--basic-regexp', '--perl-regexp', '--word-regexp', '--line-regexp', '--only-matching', '--quiet', '--silent',
  '--no-messages', '--no-filename', '--with-filename', '--files-with-matches', '--files-without-match', '--byte-offset',
  '--text', '--null-data', '--line-buffered', '--color', '--colour', '--color=never', '--color=always', '--color=auto',
  '--colour=never', '--colour=always', '--colour=auto',
]);

/**
 * Whether a call of a program that prints the files it is named (its words past its name, `words`) is named none,
 * and so reads its input only, whatever the file system holds: head or tail given only counts and flags (`tail -n
 * 20`, `head -20`, `tail -c5`, `tail --lines=5`), grep, egrep or fgrep only flags of `GREP_LETTERS`/`GREP_LONG` and
 * its pattern (`grep -ic error`). Every word literal, none `--` or `-`; any other option, or a start of a long one,
 * leaves the call judged as one that may read a file.
 */
export function readsInputOnly(name: string, words: readonly ShellWord[]): boolean {
  const given: string[] = [];
  for (const word of words) {
    if (word.kind !== 'literal' || word.value === '--' || word.value === '-') return false;
    given.push(word.value);
  }
  if (name === 'head' || name === 'tail') return headTailCountsOnly(given);
  if (name === 'grep' || name === 'egrep' || name === 'fgrep') return grepPatternOnly(given);
  return false;
}

function headTailCountsOnly(words: readonly string[]): boolean {
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index]!;
    if (HEAD_TAIL_FLAGS.has(word) || /^-\d+$/.test(word)) continue;
    if (COUNT_SHORT.has(word) || COUNT_LONG.has(word)) {
      index += 1;
      if (!COUNT.test(words[index] ?? '')) return false;
      continue;
    }
    const short = /^(-[nc])(.+)$/.exec(word);
    const long = /^(--[a-z]+)=(.*)$/.exec(word);
    if (short !== null && COUNT.test(short[2]!)) continue;
    if (long !== null && COUNT_LONG.has(long[1]!) && COUNT.test(long[2]!)) continue;
    return false;
  }
  return true;
}

function grepPatternOnly(words: readonly string[]): boolean {
  const flag = (word: string) => GREP_LONG.has(word) || (/^-[^-]/.test(word) && [...word.slice(1)].every((letter) => GREP_LETTERS.includes(letter)));
  return words.filter((word) => !word.startsWith('-')).length === 1 && words.every((word) => !word.startsWith('-') || flag(word));
}
