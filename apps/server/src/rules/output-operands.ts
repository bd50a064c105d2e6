import { longOptionIn } from './link-following-readers';
import type { ShellWord } from './shell-word';

/**
 * How a program judged as `cat` is (`file-readers.ts`) that prints by default is told to write instead, by an operand:
 * `uniq IN OUT`, `xxd IN OUT` (`xxd -r PATCH FILE` patches it), `ptx -G IN OUT` replaced OUT (checked with GNU coreutils
 * 9.1 and xxd 2022-01-14; found in review), as `sort -o OUT` does.
 */
interface OutputOperand {
  /** Which operand is the output, from 0. */
  at: number;
  /**
   * Words that take the next one as their value (not one attached: `-f1`, `-c8`, `--skip-fields=1`). Only those that
   * surely do: a value taken for an operand asks more, an operand taken for a value would miss the output.
   */
  valued: (word: string) => boolean;
  /** Given, the output operand is one only when a word says so (ptx's `-G`, `--traditional`). Default: always. */
  when?: (word: string) => boolean;
}

/** Whether `word` is one of `options`, by any start of it, with its value in the next word (no `=`). */
const longValueNext = (word: string, options: readonly string[]) => !word.includes('=') && longOptionIn(word, options);

/** Outputs that keep nothing: the program prints there as it would without them. */
const PRINTED = new Set(['-', '/dev/null', '/dev/stdout', '/dev/stderr']);

const OUTPUT_OPERANDS: ReadonlyMap<string, OutputOperand> = new Map([
  // GNU getopt: a letter's value attached or the next word, a long option's after `=` or the next word, by any start of it.
  ['uniq', { at: 1, valued: (word) => /^-[^-fsw]*[fsw]$/.test(word) || longValueNext(word, ['--skip-fields', '--skip-chars', '--check-chars']) }],
  // xxd's own parser: one dash, a letter or its whole name, the value attached or the next word.
  ['xxd', { at: 1, valued: (word) => /^-(?:c|cols|g|groupsize|l|len|n|name|o|offset|s|seek)$/.test(word) }],
  [
    'ptx',
    {
      at: 1,
      valued: (word) =>
        /^-[^-bFgiMoSwW]*[bFgiMoSwW]$/.test(word) ||
        longValueNext(word, ['--break-file', '--flag-truncation', '--gap-size', '--ignore-file', '--macro-name', '--only-file', '--sentence-regexp', '--word-regexp', '--width']),
      when: (word) => /^-[^-]*G/.test(word) || longOptionIn(word, ['--traditional']),
    },
  ],
]);

/**
 * Whether a call of `name` (`words` past its name) may write an output operand its rule does not name (one among the
 * first `ruleWords` of `words` it does): counted as the program reads its operands, options anywhere before `--` and a
 * value after those that take one (a value not known to be one is counted as an operand, which asks more). A word the
 * shell expands may become several operands (`uniq *.txt`), or an option that makes one an output (`-G`).
 */
export function writesOutputOperand(name: string, words: readonly ShellWord[], ruleWords: number): boolean {
  const spec = OUTPUT_OPERANDS.get(name);
  if (spec === undefined) return false;
  const operands: { word: ShellWord; index: number }[] = [];
  let told = spec.when === undefined;
  let ended = false;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index]!;
    if (word.kind === 'dynamic') {
      if (!ended && /^["']?[-*?[$]/.test(word.text)) told = true;
      operands.push({ word, index }, { word, index });
    } else if (!ended && word.value === '--') {
      ended = true;
    } else if (!ended && word.value.startsWith('-') && word.value !== '-') {
      if (spec.when?.(word.value) === true) told = true;
      if (spec.valued(word.value)) index += 1;
    } else {
      operands.push({ word, index });
    }
  }
  const output = operands[spec.at];
  return told && output !== undefined && output.index >= ruleWords && !(output.word.kind === 'literal' && PRINTED.has(output.word.value));
}
