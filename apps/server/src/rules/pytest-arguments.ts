import { leadsAway } from './test-runner-operands';
import type { PathFacts } from './outside-workspace';
import type { ShellWord } from './shell-word';

/**
 * pytest's options that a prefix rule covers and that take no value: how much it prints, when it stops, which tests
 * it picks from its cache. Any other option is asked about: pytest's own load code or write files (`-p`, `-c`,
 * `--doctest-glob`, `--junitxml` …), and each plugin adds more, some that write any file (`--benchmark-json=…`,
 * `--html=…`, `--cov-report=html:…`), so no list of what to refuse keeps up.
 */
const PYTEST_FLAGS = new Set([
  '-x', '--exitfirst', '-v', '--verbose', '-vv', '-vvv', '-q', '--quiet', '-qq', '-s', '-l', '--showlocals',
  '--no-showlocals', '--lf', '--last-failed', '--ff', '--failed-first', '--nf', '--new-first', '--sw', '--stepwise',
  '--sw-skip', '--stepwise-skip', '--co', '--collect-only', '--no-header', '--no-summary', '--disable-warnings',
  '--disable-pytest-warnings', '--strict-markers', '--strict-config', '--runxfail', '--cache-clear', '--setup-only',
  '--setup-show', '--setup-plan', '--fixtures', '--fixtures-per-test', '--markers', '--trace-config', '--full-trace',
  '--continue-on-collection-errors', '--version', '-V', '-h', '--help',
]);

/** Its short options of that kind, also grouped (`-xvs`). */
const SHORT_FLAGS = new Set(['x', 'v', 's', 'q', 'l']);

/**
 * pytest's options that a prefix rule covers with a value, attached (`--tb=short`, `-kfoo`, `-n4`) or in the next
 * word (`-k "not slow"`, `-n auto`): which tests run, how many at once, how the output looks.
 */
const PYTEST_VALUED = new Set([
  '-k', '-m', '-n', '-r', '--maxfail', '--tb', '--durations', '--durations-min', '--deselect', '--ignore',
  '--ignore-glob', '--capture', '--color', '--code-highlight', '--import-mode', '--numprocesses', '--log-level',
  '--log-cli-level', '--verbosity',
]);

/**
 * Whether a prefix rule for `pytest` may cover these words (`words` from `pytest` on, the first `trusted` of them the
 * rule's own tokens), given where the line runs. pytest runs every file and folder it is named: their `conftest.py`,
 * a `.py` file as tests whatever its name, a `.txt` or `.rst` file (or any, with `--doctest-glob`) as doctests, whose
 * `>>>` lines are Python. So an operand must lie in the workspace (by its text and its links, as a folder `cd` leads
 * to: `pytest ~/other` runs that folder's `conftest.py` as `cd ~/other && pytest` would) and not under `.git`, where
 * calls a rule allows write text the model chose (`git commit -m '>>> …'` writes `.git/COMMIT_EDITMSG`); and every
 * option must be one of the few known above.
 */
export function pytestArgumentsCovered(words: readonly ShellWord[], trusted: number, facts: PathFacts): boolean {
  let ended = false;
  for (let index = 1; index < words.length; index += 1) {
    const word = words[index]!;
    const untrusted = index >= trusted;
    if (word.kind === 'literal' && !ended && word.value === '--') {
      ended = true;
      continue;
    }
    if (word.kind === 'literal' && !ended && word.value.startsWith('-') && word.value !== '-') {
      const option = optionWords(word.value);
      if (option === undefined) {
        if (untrusted) return false;
        continue;
      }
      if (option === 'next') {
        const value = words[index + 1];
        // argparse takes no word starting with a dash for a value: `-k -p x` is an error, not `-k` with `-p`. A value
        // is judged as an operand too: pytest loads the `conftest.py` of its operands before it reads all its options,
        // and without xdist `-n` is unknown to it, so `-n ../other` names a folder.
        if (value !== undefined && index + 1 >= trusted && (value.kind !== 'literal' || value.value.startsWith('-') || leadsAway(value, facts))) return false;
        index += 1;
      }
      continue;
    }
    if (untrusted && leadsAway(word, facts)) return false;
  }
  return true;
}

/** How many words a known option takes: `'one'` for itself alone, `'next'` when its value is the next word. */
function optionWords(value: string): 'one' | 'next' | undefined {
  if (PYTEST_FLAGS.has(value)) return 'one';
  if (value.startsWith('--')) {
    const [name = ''] = value.split('=', 1);
    if (!PYTEST_VALUED.has(name)) return undefined;
    return name === value ? 'next' : 'one';
  }
  for (let at = 1; at < value.length; at += 1) {
    const letter = value[at]!;
    if (SHORT_FLAGS.has(letter)) continue;
    if (!PYTEST_VALUED.has(`-${letter}`)) return undefined;
    return at === value.length - 1 ? 'next' : 'one';
  }
  return 'one';
}
