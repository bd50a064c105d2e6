import { longOptionIn } from './link-following-readers';
import type { ShellWord } from './shell-word';
import { shortValueLetters } from './short-option-files';

/**
 * How an option word is read: a flag (its value, if any, attached: `-f1`, `--skip-fields=1`), an option that takes the
 * next word as its value, or either when its parser may read it both ways or the word is not known (both are counted).
 */
type OptionReading = 'flag' | 'valued' | 'either';

/**
 * How a program judged as `cat` is (`file-readers.ts`) that prints by default is told to write instead, by an operand:
 * `uniq IN OUT`, `xxd IN OUT` (`xxd -r PATCH FILE` patches it), `ptx -G IN OUT` replaced OUT (checked with GNU coreutils
 * 9.1 and xxd 2022-01-14; found in review), as `sort -o OUT` does.
 */
interface OutputOperand {
  /** Which operand is the output, from 0. */
  at: number;
  /** How a word that starts with `-` (not `-` or `--`) before the options end is read. */
  option: (word: string) => OptionReading;
  /** Given, the output operand is one only when a word says so (ptx's `-G`, `--traditional`). Default: always. */
  when?: (word: string) => boolean;
  /** Whether the first operand ends the options (xxd's own parser). Default: GNU getopt's, options anywhere before `--`. */
  operandEndsOptions?: boolean;
  /** The word the program's parser reads for one written (xxd reads `--len` as `-len`). Default: the word as written. */
  readAs?: (word: string) => string;
}

/**
 * GNU getopt_long's reading: letters grouped (`-cf1`), a value attached or the next word; a long option by any start of
 * its name, its value after `=` or the next word. A letter or a name it does not know fails the call before it writes,
 * but is read as either all the same; so is a start of both kinds of name (`--c` of `--count` and `--check-chars`).
 */
function gnuOption(letters: { flags: string; valued: string }, names: { flags: readonly string[]; valued: readonly string[] }) {
  return (word: string): OptionReading => {
    if (!word.startsWith('--')) {
      for (const [at, letter] of [...word.slice(1)].entries()) {
        if (letters.valued.includes(letter)) return at === word.length - 2 ? 'valued' : 'flag';
        if (!letters.flags.includes(letter)) return 'either';
      }
      return 'flag';
    }
    if (word.includes('=')) return 'flag';
    if (names.flags.includes(word)) return 'flag';
    if (names.valued.includes(word)) return 'valued';
    const valued = longOptionIn(word, names.valued);
    const flag = longOptionIn(word, names.flags);
    return valued && !flag ? 'valued' : flag && !valued ? 'flag' : 'either';
  };
}

/**
 * xxd's own parser: one dash (`--X` is read as `-X`), an option by its letter and any start of its name past the letter
 * followed by anything (`-colsX 8`, `-seek…`, `-skip…`), its value in the next word; its letter with anything else
 * has the value attached (`-c8`). Only its flags are known not to take the next word.
 */
function xxdOption(word: string): OptionReading {
  if (/^-[abeupiCdrEvh]/.test(word)) return 'flag';
  if (/^-(?:c(?:ols.*)?|g(?:roup.*)?|o(?:ffset.*)?|s(?:eek.*|kip.*)?|l(?:en.*)?|n(?:ame.*)?)$/s.test(word)) return 'valued';
  return 'either';
}

/** Outputs that keep nothing: the program prints there as it would without them. */
const PRINTED = new Set(['-', '/dev/null', '/dev/stdout', '/dev/stderr']);

const OUTPUT_OPERANDS: ReadonlyMap<string, OutputOperand> = new Map<string, OutputOperand>([
  [
    'uniq',
    {
      at: 1,
      option: gnuOption(
        { flags: '0123456789Dcdiuz', valued: 'fsw' },
        {
          // `--all-repeated` and `--group` take a value after `=` only.
          flags: ['--count', '--repeated', '--all-repeated', '--group', '--ignore-case', '--unique', '--zero-terminated', '--help', '--version'],
          valued: ['--skip-fields', '--skip-chars', '--check-chars'],
        },
      ),
    },
  ],
  ['xxd', { at: 1, option: xxdOption, operandEndsOptions: true, readAs: (word) => (word.startsWith('--') && word.length > 2 ? word.slice(1) : word) }],
  [
    'ptx',
    {
      at: 1,
      option: gnuOption(
        // The letters that take a value, as the readers judge ptx's files by them (short-option-files.ts).
        { flags: 'AGORTfrt', valued: shortValueLetters('ptx')! },
        {
          flags: ['--auto-reference', '--traditional', '--ignore-case', '--references', '--right-side-refs', '--typeset-mode', '--help', '--version'],
          valued: ['--break-file', '--flag-truncation', '--format', '--gap-size', '--ignore-file', '--macro-name', '--only-file', '--sentence-regexp', '--word-regexp', '--width'],
        },
      ),
      when: (word) => /^-[^-]*G/.test(word) || longOptionIn(word, ['--traditional']),
    },
  ],
]);

/** One way the words read so far may have been parsed. */
interface Reading {
  /** Operands counted, up to one past the output. */
  operands: number;
  /** Whether the output operand was counted and keeps what is written there. */
  writes: boolean;
  /** Whether a word made the output operand one (`OutputOperand.when`). */
  told: boolean;
  ended: boolean;
  /** Whether the next word is the value of an option. */
  valueNext: boolean;
}

/**
 * Whether a call of `name` (`words` past its name) may write an output operand its rule does not name (one among the
 * first `ruleWords` of `words` it does): counted as the program reads its operands, every reading of an option that
 * may or may not take the next word followed (a value counted as an operand asks more, an operand taken for a value
 * would miss the output). A word the shell expands may become several operands (`uniq *.txt`), or an option that makes
 * one an output (`-G`).
 */
export function writesOutputOperand(name: string, words: readonly ShellWord[], ruleWords: number): boolean {
  const spec = OUTPUT_OPERANDS.get(name);
  if (spec === undefined) return false;
  let readings: Reading[] = [{ operands: 0, writes: false, told: spec.when === undefined, ended: false, valueNext: false }];
  words.forEach((word, index) => {
    const next = new Map<string, Reading>();
    for (const reading of readings) {
      for (const after of readWord(spec, reading, word, index >= ruleWords)) next.set(JSON.stringify(after), after);
    }
    readings = [...next.values()];
  });
  return readings.some((reading) => reading.told && reading.writes);
}

/** The readings after `word`, given one before it; `beyondRule` when the rule does not name the word. */
function readWord(spec: OutputOperand, reading: Reading, word: ShellWord, beyondRule: boolean): Reading[] {
  if (reading.valueNext) return [{ ...reading, valueNext: false }];
  const counted = (count: number, told: boolean): Reading => {
    let { operands, writes } = reading;
    for (let added = 0; added < count; added += 1) {
      if (operands === spec.at) writes = beyondRule && !(word.kind === 'literal' && PRINTED.has(word.value));
      operands = Math.min(operands + 1, spec.at + 1);
    }
    return { ...reading, operands, writes, told, ended: reading.ended || spec.operandEndsOptions === true };
  };
  if (word.kind === 'dynamic') return [counted(2, reading.told || (!reading.ended && /^["']?[-*?[$]/.test(word.text)))];
  const value = spec.readAs?.(word.value) ?? word.value;
  if (reading.ended || value === '-' || !value.startsWith('-')) return [counted(1, reading.told)];
  if (value === '--') return [{ ...reading, ended: true }];
  const flag = { ...reading, told: reading.told || spec.when?.(value) === true };
  const read = spec.option(value);
  if (read === 'flag') return [flag];
  if (read === 'valued') return [{ ...flag, valueNext: true }];
  return [flag, { ...flag, valueNext: true }];
}
