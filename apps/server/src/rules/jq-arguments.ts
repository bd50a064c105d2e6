import { mayNameOutside, type PathFacts } from './outside-workspace';
import type { ShellWord } from './shell-word';

/** jq's options that take the next words as values that are not files (`--arg name value`, `--indent 2`). */
const VALUE_COUNTS = new Map([['--arg', 2], ['--argjson', 2], ['--indent', 1]]);
/**
 * jq's options whose second value is a file it reads whole into the program (`--rawfile name file`), jq 1.6's
 * `--argfile` among them, which later versions refuse.
 */
const FILE_VALUES = new Set(['--rawfile', '--slurpfile', '--argfile']);
/** Options after which jq's operands past the filter are strings for `$ARGS`, not files. */
const ARGUMENTS = new Set(['--args', '--jsonargs']);
/** Options that take the next word in one version of jq and not in another. */
const FLAG_OR_VALUE = ['--from-file', '--library-path'];
/** Runs the tests of the files it is given, or of its input, and prints each line that fails. */
const RUN_TESTS = '--run-tests';
/**
 * jq's long options that take no value, in its versions 1.6 to 1.8 (`src/main.c`): jq takes a long option by its whole
 * name only (`--debug-trace=all` is one), and refuses any other, so a call with one not known here is asked about, as
 * a later version may read a file by it as `--run-tests` does.
 */
const JQ_FLAGS: ReadonlySet<string> = new Set([
  '--slurp', '--raw-output', '--raw-output0', '--join-output', '--compact-output', '--color-output', '--monochrome-output',
  '--ascii-output', '--unbuffered', '--sort-keys', '--raw-input', '--null-input', '--binary', '--tab', '--seq', '--stream',
  '--stream-errors', '--exit-status', '--debug-dump-disasm', '--debug-trace', '--debug-trace=all', '--help', '--version',
  '--build-configuration',
]);
const JQ_LONG_OPTIONS: ReadonlySet<string> = new Set([
  ...JQ_FLAGS, ...VALUE_COUNTS.keys(), ...FILE_VALUES, ...ARGUMENTS, ...FLAG_OR_VALUE, RUN_TESTS,
]);
/** Words in a filter that read files from a search path the filter itself may set (`import "x" as $x {search: "/"}`). */
const MODULE_WORDS = ['import', 'include', 'modulemeta'];

/**
 * Whether a prefix rule for `jq` (or `gojq`, `jaq`, `yq`: `name`) may cover these words (`words` from the program on,
 * the first `trusted` of them the rule's own tokens), given where the line runs: jq reads files, whole into its output
 * with `--rawfile`, `--slurpfile` and `--argfile`, so every file it is named (an operand, those options' files, `-L`
 * folders) must lie in the workspace, as the file tools' paths do; a filter that imports or includes modules is asked
 * about (its metadata may name any search path), and so is a program read from a file (`-f`, `--from-file`) or tests
 * run from one or from the input (`--run-tests`, which prints each line that fails), whose text the rule cannot see;
 * for jq itself, so is a long option it does not know (`JQ_LONG_OPTIONS`). `$ENV` and `env` show the terminal's
 * environment, which holds no secret (tools/child-env.ts), as `printenv` does.
 */
export function jqArgumentsCovered(
  name: string,
  words: readonly ShellWord[],
  trusted: number,
  facts: PathFacts & { anything: (word: ShellWord) => boolean },
): boolean {
  const untrusted = (index: number) => index >= trusted;
  const outside = (index: number) => {
    const word = words[index];
    return word !== undefined && untrusted(index) && mayNameOutside(word, facts);
  };
  let filterSeen = false;
  let argumentsOnly = false;
  let ended = false;
  for (let index = 1; index < words.length; index += 1) {
    const word = words[index]!;
    if (word.kind !== 'literal') {
      if (!untrusted(index)) continue;
      // A word that may become anything may become an option (a file named `--rawfile`).
      if (facts.anything(word)) return false;
      if (!filterSeen) {
        filterSeen = true;
        if (!plainFilter(word)) return false;
      } else if (!argumentsOnly && mayNameOutside(word, facts)) {
        return false;
      }
      continue;
    }
    const value = word.value;
    if (!ended && value === '--') {
      ended = true;
      continue;
    }
    // jq reads a word as options only when a letter or a dash follows its dash: `-/x` is a file named so.
    if (!ended && value.startsWith('--')) {
      if (name === 'jq' && untrusted(index) && !JQ_LONG_OPTIONS.has(value)) return false;
      // Every word after `--run-tests` names a test file or is a value of jq 1.8's `--skip` or `--take`.
      if (value === RUN_TESTS) return !untrusted(index) && !words.slice(index + 1).some((_, after) => outside(index + 1 + after));
      if (FLAG_OR_VALUE.includes(value)) {
        if (untrusted(index)) return false;
        if (value === '--from-file') filterSeen = true;
        else index += 1;
      } else if (FILE_VALUES.has(value)) {
        if (outside(index + 2)) return false;
        index += 2;
      } else if (ARGUMENTS.has(value)) {
        argumentsOnly = true;
      } else {
        index += VALUE_COUNTS.get(value) ?? 0;
      }
      continue;
    }
    if (!ended && /^-[A-Za-z]/.test(value)) {
      if (value.includes('f')) {
        if (untrusted(index)) return false;
        filterSeen = true;
      }
      const library = value.indexOf('L');
      if (library === -1) continue;
      // jq 1.6 takes the rest of the word after `-L`'s first two characters, or the next word (`-rL x` it reads as
      // `-L L` and `x` as the filter); later versions the rest after the `L`, or the next word.
      if (library !== 1 && untrusted(index)) return false;
      if (value.length > 2) {
        if (untrusted(index) && mayNameOutside({ kind: 'literal', value: value.slice(2) }, facts)) return false;
      } else {
        if (outside(index + 1)) return false;
        index += 1;
      }
      continue;
    }
    if (!filterSeen) {
      filterSeen = true;
      if (untrusted(index) && MODULE_WORDS.some((module) => value.includes(module))) return false;
      continue;
    }
    if (!argumentsOnly && outside(index)) return false;
  }
  return true;
}

/**
 * A filter the shell expands (`.[0]` unquoted is a glob) that cannot become one that loads modules: no variable, no
 * `*`, `?` or braces, and brackets of digits only (`[0]`, `[1-3]`), which can only put a digit where they stand.
 */
function plainFilter(word: Extract<ShellWord, { kind: 'dynamic' }>): boolean {
  if (word.variables.length > 0 || /[*?{}~]/.test(word.text)) return false;
  if ([...word.text.matchAll(/\[([^\]]*)\]/g)].some(([, inside]) => !/^[0-9-]*$/.test(inside ?? ''))) return false;
  return !MODULE_WORDS.some((module) => word.text.replace(/["'\\]/g, '').includes(module));
}
