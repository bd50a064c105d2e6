import { mayLeadUnderGit, mayNameOutside, type PathFacts } from './outside-workspace';
import type { ShellWord } from './shell-word';

/** A runner's known options, long names without their dashes. */
interface RunnerOptions {
  /** Long names are read in camelCase too (cac and yargs read `--pass-with-no-tests` as `--passWithNoTests`). */
  camelCase: boolean;
  /** A short option's value may be attached (`-fd`, `-epy311`): OptionParser and argparse read it so, cac does not. */
  attachedShort: boolean;
  /**
   * `paths`: operands are files, folders or patterns, none outside the workspace or under `.git`. `subcommand`: only a
   * first operand that is one of `subcommands`, and no `--` (tox hands what follows it to the commands it runs).
   */
  operands: 'paths' | 'subcommand';
  /** Long options that take no value: how much it prints, whether it watches, which tests it picks. */
  flags: ReadonlySet<string>;
  /** Long options with a value, attached (`--testTimeout=5000`) or in the next word (`-t "adds up"`). */
  valued: ReadonlySet<string>;
  /** Short options of each kind: a flag also grouped (`-iu`), one with a value alone or last in a group. */
  shortFlags: ReadonlySet<string>;
  shortValued: ReadonlySet<string>;
  /** Options whose value must be one of a few (a reporter's name, not a module's path). */
  values: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * How the parser reads a long option written shorter than its name: `none`, it does not (cac, yargs, pytest's
   * argparse, built with `allow_abbrev=False`); `prefix`, any start of one option's name (argparse, PHPUnit's
   * parser); `words`, a start of each of its dash-separated words, in any case, `_` for `-` (Ruby's OptionParser:
   * `--d-p` is `--default-path`, `--REQU` is `--require`). Such a word is judged as the option it stands for.
   */
  abbreviations: 'none' | 'prefix' | 'words';
  /**
   * With `abbreviations`, every long option the parser knows, in the versions read (covered or not, and those of
   * other versions): an abbreviation is taken for an option only when it can stand for no other, since the parser
   * refuses an ambiguous one or, as PHPUnit's and Ruby's do, picks one by an order of its own.
   */
  longOptions: ReadonlySet<string>;
  /**
   * `paths`: first operands that are subcommands a rule covers only when it names them (`vitest init` installs
   * packages); `subcommand`: the only ones it covers.
   */
  subcommands: ReadonlySet<string>;
}

/**
 * vitest's options that a prefix rule covers: how much it prints, whether it watches, which tests it picks, how many
 * at once, and `-u` (snapshots written next to the workspace's tests, as those tests may write anyway). Its parser
 * (cac) reads `--name value` and `--name=value`, camelCase or kebab-case, `--no-name`, and groups short flags. Every
 * other option is asked about: `--config`/`-c`, `--root`/`-r`, `--dir`, `--setupFiles`, `--globalSetup`,
 * `--environment`, `--pool`, `--reporter` with a path load code from the file they name; `--outputFile`,
 * `--coverage.reportsDirectory` write where they say; `--api`, `--ui`, `--inspect` open a port; later versions add
 * more.
 */
const VITEST: RunnerOptions = {
  camelCase: true,
  attachedShort: false,
  operands: 'paths',
  flags: new Set([
    'run', 'watch', 'noWatch', 'silent', 'passWithNoTests', 'allowOnly', 'globals', 'hideSkippedTests', 'color',
    'noColor', 'logHeapUsage', 'clearScreen', 'noClearScreen', 'coverage', 'coverage.enabled', 'noCoverage',
    'isolate', 'noIsolate', 'fileParallelism', 'noFileParallelism', 'sequence.shuffle', 'expandSnapshotDiff',
    'printConsoleTrace', 'includeTaskLocation', 'update', 'version', 'help',
  ]),
  valued: new Set([
    'testNamePattern', 'bail', 'retry', 'testTimeout', 'hookTimeout', 'teardownTimeout', 'maxWorkers', 'minWorkers',
    'maxConcurrency', 'shard', 'project', 'exclude', 'reporter', 'sequence.seed',
  ]),
  shortFlags: new Set(['w', 'u', 'v', 'h']),
  shortValued: new Set(['t']),
  values: new Map([['reporter', new Set(['default', 'basic', 'verbose', 'dot', 'tap', 'tap-flat', 'tree', 'hanging-process', 'github-actions', 'json', 'junit'])]]),
  abbreviations: 'none',
  longOptions: new Set(),
  subcommands: new Set(['init']),
};

/**
 * jest's options that a prefix rule covers (its parser, yargs, reads them as cac does). Every other option is asked
 * about: `--config`/`-c` (also inline JSON, whose `transform` and `setupFiles` load any module), `--rootDir`,
 * `--roots`, `--setupFiles`, `--globalSetup`, `--testEnvironment`, `--testRunner`, `--resolver`, `--reporters`,
 * `--transform`, `--moduleNameMapper` … name modules it loads; `--outputFile` and `--coverageDirectory` write where
 * they say; `--clearCache` empties the cache folder its config names.
 */
const JEST: RunnerOptions = {
  camelCase: true,
  attachedShort: false,
  operands: 'paths',
  flags: new Set([
    'ci', 'watch', 'watchAll', 'noWatch', 'noWatchAll', 'runInBand', 'verbose', 'silent', 'passWithNoTests', 'coverage',
    'collectCoverage', 'onlyChanged', 'onlyFailures', 'lastCommit', 'detectOpenHandles', 'detectLeaks', 'forceExit',
    'listTests', 'noCache', 'cache', 'colors', 'json', 'useStderr', 'errorOnDeprecated', 'logHeapUsage', 'noStackTrace',
    'showConfig', 'findRelatedTests', 'randomize', 'runTestsByPath', 'expand', 'watchman', 'noWatchman', 'bail',
    'injectGlobals', 'updateSnapshot', 'version', 'help',
  ]),
  valued: new Set([
    'testNamePattern', 'testPathPattern', 'testPathPatterns', 'testPathIgnorePatterns', 'maxWorkers', 'maxConcurrency',
    'testTimeout', 'changedSince', 'seed', 'shard', 'selectProjects', 'ignoreProjects',
  ]),
  shortFlags: new Set(['i', 'o', 'f', 'e', 'b', 'u', 'v', 'h']),
  shortValued: new Set(['t', 'w']),
  values: new Map(),
  abbreviations: 'none',
  longOptions: new Set(),
  subcommands: new Set(),
};

/**
 * rspec's: `--format`/`-f` only with a built-in formatter (any other name is required as a file: `-f my_formatter`),
 * not `--require`/`-r`, `-I`, `--out`/`-o`, `--default-path`, `--options`, `--init`, `--deprecation-out`.
 */
const RSPEC: RunnerOptions = {
  camelCase: false,
  attachedShort: true,
  operands: 'paths',
  flags: new Set([
    'color', 'no-color', 'force-color', 'no-force-color', 'fail-fast', 'no-fail-fast', 'only-failures', 'next-failure',
    'dry-run', 'backtrace', 'warnings', 'profile', 'no-profile', 'version', 'help',
  ]),
  valued: new Set(['format', 'example', 'example-matches', 'tag', 'order', 'seed', 'pattern', 'exclude-pattern', 'fail-fast', 'profile']),
  shortFlags: new Set(['c', 'b', 'w', 'n', 'p', 'v', 'h']),
  shortValued: new Set(['f', 'e', 'E', 't']),
  values: new Map(['format', 'f'].map((name) => [name, new Set(['progress', 'p', 'documentation', 'd', 'failures', 'json', 'j'])])),
  abbreviations: 'words',
  // rspec-core's option_parser.rb; `--I` is refused there, and still makes `--i` ambiguous.
  longOptions: new Set([
    'I', 'require', 'options', 'order', 'seed', 'bisect', 'fail-fast', 'no-fail-fast', 'failure-exit-code',
    'error-exit-code', 'drb', 'no-drb', 'drb-port', 'format', 'out', 'deprecation-out', 'backtrace', 'color', 'colour',
    'force-color', 'force-colour', 'no-color', 'no-colour', 'profile', 'no-profile', 'dry-run', 'warnings',
    'only-failures', 'next-failure', 'pattern', 'exclude-pattern', 'example', 'example-matches', 'tag', 'default-path',
    'init', 'version', 'help',
  ]),
  subcommands: new Set(),
};

/**
 * phpunit's: not `--configuration`/`-c`, `--bootstrap`, `--include-path`, `-d`, `--extension`, `--cache-directory`, the
 * `--log-*` and `--coverage-*` writers, `--generate-configuration`, `--migrate-configuration`.
 */
const PHPUNIT: RunnerOptions = {
  camelCase: false,
  attachedShort: false,
  operands: 'paths',
  flags: new Set([
    'stop-on-failure', 'stop-on-error', 'stop-on-defect', 'stop-on-warning', 'stop-on-risky', 'stop-on-skipped',
    'stop-on-incomplete', 'fail-on-warning', 'fail-on-risky', 'fail-on-empty-test-suite', 'fail-on-deprecation',
    'fail-on-notice', 'fail-on-skipped', 'fail-on-incomplete', 'testdox', 'no-coverage', 'no-progress', 'no-results',
    'no-output', 'do-not-cache-result', 'colors', 'debug', 'list-tests', 'list-suites', 'list-groups',
    'display-deprecations', 'display-warnings', 'display-errors', 'display-notices', 'display-skipped',
    'display-incomplete', 'display-all-issues', 'no-extensions', 'disallow-test-output', 'version', 'help',
  ]),
  valued: new Set(['filter', 'testsuite', 'exclude-testsuite', 'group', 'exclude-group', 'order-by', 'random-order-seed', 'colors']),
  shortFlags: new Set(['h']),
  shortValued: new Set(),
  values: new Map(),
  abbreviations: 'prefix',
  // The long options of PHPUnit 8.5, 9.6, 10.5, 11.5 and 12: its parser takes the first one listed that starts with
  // what is written, an order that changes between versions.
  longOptions: new Set([
    'all', 'atleast-version', 'bootstrap', 'branch-coverage', 'cache-directory', 'cache-result', 'cache-result-file',
    'cache-test-index', 'check-php-configuration', 'check-version', 'colors', 'columns', 'compact', 'configuration',
    'coverage-cache', 'coverage-clover', 'coverage-cobertura', 'coverage-crap4j', 'coverage-filter', 'coverage-html',
    'coverage-jsonl', 'coverage-openclover', 'coverage-php', 'coverage-text', 'coverage-xml', 'covers', 'debug',
    'default-time-limit', 'diff-context', 'disable-coverage-ignore', 'disable-coverage-targeting',
    'disallow-resource-usage', 'disallow-test-output', 'disallow-todo-tests', 'display-all-issues',
    'display-deprecations', 'display-errors', 'display-incomplete', 'display-notices', 'display-phpunit-deprecations',
    'display-phpunit-notices', 'display-skipped', 'display-warnings', 'do-not-cache-result', 'do-not-cache-test-index',
    'do-not-fail-on-deprecation', 'do-not-fail-on-direct-deprecation', 'do-not-fail-on-empty-test-suite',
    'do-not-fail-on-incomplete', 'do-not-fail-on-indirect-deprecation', 'do-not-fail-on-notice',
    'do-not-fail-on-phpunit-deprecation', 'do-not-fail-on-phpunit-notice', 'do-not-fail-on-phpunit-warning',
    'do-not-fail-on-risky', 'do-not-fail-on-self-deprecation', 'do-not-fail-on-skipped', 'do-not-fail-on-warning',
    'do-not-record-test-run-history', 'do-not-report-useless-tests',
    'do-not-warn-when-php-is-not-configured-for-development', 'dont-report-useless-tests', 'dump-xdebug-filter',
    'enforce-time-limit', 'exclude-filter', 'exclude-group', 'exclude-source-from-xml-coverage', 'exclude-testsuite',
    'extension', 'extensions', 'fail-on-all-issues', 'fail-on-deprecation', 'fail-on-direct-deprecation',
    'fail-on-empty-test-suite', 'fail-on-incomplete', 'fail-on-indirect-deprecation', 'fail-on-notice',
    'fail-on-phpunit-deprecation', 'fail-on-phpunit-notice', 'fail-on-phpunit-warning', 'fail-on-risky',
    'fail-on-self-deprecation', 'fail-on-skipped', 'fail-on-warning', 'filter', 'generate-baseline',
    'generate-configuration', 'globals-backup', 'group', 'help', 'ignore-baseline', 'ignore-dependencies',
    'include-git-information', 'include-path', 'list-groups', 'list-suites', 'list-test-files', 'list-test-ids',
    'list-tests', 'list-tests-xml', 'loader', 'log-events-text', 'log-events-verbose-text', 'log-junit', 'log-otr',
    'log-teamcity', 'migrate-configuration', 'no-configuration', 'no-coverage', 'no-extensions', 'no-interaction',
    'no-logging', 'no-output', 'no-progress', 'no-results', 'only-summary-for-coverage-text', 'order-by',
    'path-coverage', 'prepend', 'printer', 'process-isolation', 'random-order', 'random-order-seed',
    'record-test-run-history', 'repeat', 'require-coverage-contribution', 'requires-php-extension',
    'resolve-dependencies', 'retry', 'reverse-list', 'reverse-order', 'run-test-id', 'show-uncovered-for-coverage-text',
    'static-backup', 'stderr', 'stop-on-defect', 'stop-on-deprecation', 'stop-on-error', 'stop-on-failure',
    'stop-on-incomplete', 'stop-on-notice', 'stop-on-risky', 'stop-on-skipped', 'stop-on-warning', 'strict-coverage',
    'strict-global-state', 'teamcity', 'test-files-file', 'test-id-filter-file', 'test-suffix', 'testdox',
    'testdox-exclude-group', 'testdox-group', 'testdox-html', 'testdox-summary', 'testdox-text', 'testdox-xml',
    'testsuite', 'use-baseline', 'uses', 'validate-configuration', 'verbose', 'version', 'warm-coverage-cache',
    'warn-when-php-is-not-configured-for-development', 'whitelist', 'with-telemetry', 'without-class-view',
    'without-file-view',
  ]),
  subcommands: new Set(),
};

/**
 * tox's: which environments, how many at once, how much it prints, `-r` (recreate them). Not `-c`, `--root`,
 * `--workdir`, `-x`/`--override` (any setting, `commands` too), `--installpkg`, `--develop`, and no `--`, after which
 * its words go to the commands it runs (`tox -e py -- -p plugin` hands pytest `-p`). Subcommands other than running
 * and listing (`tox exec` runs any command, `tox devenv` and `tox quickstart` write) are asked about.
 */
const TOX: RunnerOptions = {
  camelCase: false,
  attachedShort: true,
  operands: 'subcommand',
  flags: new Set(['recreate', 'parallel-live', 'skip-missing-interpreters', 'notest', 'version', 'help']),
  valued: new Set(['parallel', 'colored', 'hashseed', 'skip-env', 'skip-missing-interpreters']),
  shortFlags: new Set(['q', 'v', 'r', 'o', 'p', 'h']),
  shortValued: new Set(['e', 'm', 'f']),
  values: new Map(),
  abbreviations: 'prefix',
  // tox 4's own options and those of its pip requirement files' parser (more names only make more abbreviations
  // ambiguous), and tox 3's.
  longOptions: new Set([
    'all', 'alwayscopy', 'colored', 'conf', 'constraint', 'core', 'develop', 'devenv', 'discover', 'editable',
    'exit-and-dump-after', 'extra-index-url', 'fail-fast', 'find-links', 'force-dep', 'force-reinstall', 'format',
    'global-option', 'hash', 'hashseed', 'help', 'help-ini', 'hi', 'index-url', 'install-option', 'installpkg',
    'list-dependencies', 'listenvs', 'listenvs-all', 'magic', 'no-binary', 'no-capture', 'no-deps', 'no-desc',
    'no-index', 'no-list-dependencies', 'no-provision', 'no-recreate-pkg', 'no-recreate-provision', 'notest',
    'only-binary', 'output-file', 'override', 'parallel', 'parallel-live', 'parallel-no-spinner', 'parallel--safe-build',
    'pkg-only', 'pre', 'prefer-binary', 'pypi-url', 'quiet', 'recreate', 'require-hashes', 'requirement',
    'result-json', 'root', 'run-integration', 'runner', 'sdistonly', 'showconfig', 'sitepackages', 'skip-env',
    'skip-env-install', 'skip-missing-interpreters', 'skip-pkg-install', 'stderr-color', 'strict', 'trusted-host',
    'use-feature', 'verbose', 'version', 'workdir',
  ]),
  subcommands: new Set(['run', 'r', 'run-parallel', 'p', 'list', 'l', 'depends', 'de']),
};

/**
 * pytest's options that a prefix rule covers: how much it prints, when it stops, which tests it picks and from its
 * cache, how many at once, and `-k`, `-m`, `-n` … with a value, attached (`--tb=short`, `-kfoo`, `-n4`) or in the next
 * word (argparse). Every other option is asked about: pytest's own load code or write files (`-p`, `-c`,
 * `--doctest-glob`, `--doctest-modules`, `--junitxml` …), and each plugin adds more, some that write any file
 * (`--benchmark-json=…`, `--html=…`, `--cov-report=html:…`), so no list of what to refuse keeps up. pytest loads the
 * `conftest.py` of its operands before it reads all its options, and without xdist `-n` is unknown to it, so a value
 * is judged as an operand too (`-n ../other` names a folder); a `.py`, `.txt` or `.rst` operand runs as tests or
 * doctests whatever its name.
 */
const PYTEST: RunnerOptions = {
  camelCase: false,
  attachedShort: true,
  operands: 'paths',
  flags: new Set([
    'exitfirst', 'verbose', 'quiet', 'showlocals', 'no-showlocals', 'lf', 'last-failed', 'ff', 'failed-first', 'nf',
    'new-first', 'sw', 'stepwise', 'sw-skip', 'stepwise-skip', 'co', 'collect-only', 'no-header', 'no-summary',
    'disable-warnings', 'disable-pytest-warnings', 'strict-markers', 'strict-config', 'runxfail', 'cache-clear',
    'setup-only', 'setup-show', 'setup-plan', 'fixtures', 'fixtures-per-test', 'markers', 'trace-config', 'full-trace',
    'continue-on-collection-errors', 'version', 'help',
  ]),
  valued: new Set([
    'maxfail', 'tb', 'durations', 'durations-min', 'deselect', 'ignore', 'ignore-glob', 'capture', 'color',
    'code-highlight', 'import-mode', 'numprocesses', 'log-level', 'log-cli-level', 'verbosity',
  ]),
  shortFlags: new Set(['x', 'v', 's', 'q', 'l', 'V', 'h']),
  shortValued: new Set(['k', 'm', 'n', 'r']),
  values: new Map(),
  abbreviations: 'none',
  longOptions: new Set(),
  subcommands: new Set(),
};

/** ESLint's own formatters: any other name is a module it loads (`-f ./x.js`, an `eslint-formatter-<name>` package). */
const ESLINT_FORMATTERS = new Set(['stylish', 'json', 'json-with-metadata', 'html']);

/**
 * ESLint's options that a prefix rule covers, read as optionator reads them (`--name value`, `--name=value`, no start
 * of a name, no camelCase, no short value attached): how much it prints, which files, `--fix`, the cache in its
 * default place, and `-f` with a built-in formatter. Every other option is asked about: `-c`/`--config`, `--plugin`,
 * `--parser`, `--parser-options` (a parser's options may name a config it loads, `babelOptions.configFile`),
 * `--rule`, `-f` naming a module load code; `-o`/`--output-file`, `--cache-location`, `--suppressions-location`
 * write where they say; `--inspect-config` and `--init` run a package fetched by npx or npm; `--mcp` serves. ESLint
 * looks for its config from each file's folder up, so a file outside the workspace has that folder's
 * `eslint.config.js` run, as pytest's operands have their `conftest.py`.
 */
const ESLINT: RunnerOptions = {
  camelCase: false,
  attachedShort: false,
  operands: 'paths',
  flags: new Set([
    'fix', 'fix-dry-run', 'no-ignore', 'no-config-lookup', 'stdin', 'quiet', 'color', 'no-color', 'no-inline-config',
    'report-unused-disable-directives', 'cache', 'no-error-on-unmatched-pattern', 'exit-on-fatal-error',
    'no-warn-ignored', 'pass-on-no-patterns', 'debug', 'stats', 'env-info', 'version', 'help',
  ]),
  valued: new Set([
    'ext', 'global', 'fix-type', 'ignore-pattern', 'max-warnings', 'report-unused-disable-directives-severity',
    'report-unused-inline-configs', 'cache-strategy', 'concurrency', 'format', 'stdin-filename', 'print-config',
  ]),
  shortFlags: new Set(['h', 'v']),
  shortValued: new Set(['f']),
  values: new Map(['format', 'f'].map((name) => [name, ESLINT_FORMATTERS])),
  abbreviations: 'none',
  longOptions: new Set(),
  subcommands: new Set(),
};

/** Prettier's own parsers: Prettier 2 took a module's path for `--parser` and loaded it. */
const PRETTIER_PARSERS = new Set([
  'babel', 'babel-flow', 'babel-ts', 'flow', 'typescript', 'espree', 'meriyah', 'acorn', 'css', 'less', 'scss', 'json',
  'json5', 'jsonc', 'json-stringify', 'graphql', 'markdown', 'mdx', 'vue', 'yaml', 'glimmer', 'html', 'angular', 'lwc',
]);

/**
 * Prettier's options that a prefix rule covers (its parser takes whole kebab-case names only, and ignores others):
 * checking or writing the files it is named, how it formats, how much it prints. Every other option is asked about:
 * `--plugin` (a module it loads), `--config` (a `prettier.config.js` is code), `--cache-location` (written where it
 * says), `--parser` with a path. Prettier reads its config from each file's folder up, so a file outside the
 * workspace has that folder's config run.
 */
const PRETTIER: RunnerOptions = {
  camelCase: false,
  attachedShort: false,
  operands: 'paths',
  flags: new Set([
    'check', 'list-different', 'write', 'no-config', 'no-editorconfig', 'semi', 'no-semi', 'single-quote',
    'jsx-single-quote', 'bracket-spacing', 'no-bracket-spacing', 'bracket-same-line', 'use-tabs',
    'single-attribute-per-line', 'vue-indent-script-and-style', 'experimental-ternaries', 'require-pragma',
    'insert-pragma', 'ignore-unknown', 'no-error-on-unmatched-pattern', 'cache', 'color', 'no-color', 'debug-check',
    'version', 'help',
  ]),
  valued: new Set([
    'print-width', 'tab-width', 'trailing-comma', 'arrow-parens', 'end-of-line', 'prose-wrap', 'quote-props',
    'html-whitespace-sensitivity', 'embedded-language-formatting', 'object-wrap', 'experimental-operator-position',
    'log-level', 'cache-strategy', 'stdin-filepath', 'find-config-path', 'file-info', 'ignore-path', 'parser',
  ]),
  shortFlags: new Set(['c', 'l', 'w', 'u', 'h', 'v']),
  shortValued: new Set(),
  values: new Map([['parser', PRETTIER_PARSERS]]),
  abbreviations: 'none',
  longOptions: new Set(),
  subcommands: new Set(),
};

const RUNNERS = new Map([
  ['pytest', PYTEST], ['vitest', VITEST], ['jest', JEST], ['rspec', RSPEC], ['phpunit', PHPUNIT], ['tox', TOX],
  // Not test runners, but read alike: their options and the folders of their files load code.
  ['eslint', ESLINT], ['prettier', PRETTIER],
]);

/** Whether `name` is a test runner whose arguments a prefix rule judges (`testRunnerArgumentsCovered`). */
export function isTestRunner(name: string): boolean {
  return RUNNERS.has(name);
}

/**
 * Whether a prefix rule for one of these test runners may cover these words (`words` from the runner on, the first
 * `trusted` of them the rule's own tokens), given where the line runs: every option must be one of the few known
 * above, and every other word (a file, a folder, a pattern, an option's value) must not lead outside the workspace, by its text or its links, nor under `.git`: `vitest run ../other` runs that folder's tests
 * with its config, and a call a rule allows writes text the model chose in `.git/COMMIT_EDITMSG` (`git commit -m …`),
 * which `jest --config .git/COMMIT_EDITMSG` would load as its config. A word the shell may turn into anything
 * (`anything`: a variable, a glob that may match a file named `--config=…`) is asked about.
 */
export function testRunnerArgumentsCovered(
  name: string,
  words: readonly ShellWord[],
  trusted: number,
  facts: PathFacts & { anything: (word: ShellWord) => boolean },
): boolean {
  const runner = RUNNERS.get(name);
  if (runner === undefined) return true;
  let ended = false;
  let operandSeen = false;
  for (let index = 1; index < words.length; index += 1) {
    const word = words[index]!;
    if (index < trusted) {
      if (word.kind === 'literal' && !word.value.startsWith('-')) operandSeen = true;
      continue;
    }
    if (word.kind !== 'literal') {
      if (runner.operands === 'subcommand' || facts.anything(word) || leadsAway(word, facts)) return false;
      operandSeen = true;
      continue;
    }
    if (!ended && word.value === '--') {
      if (runner.operands === 'subcommand') return false;
      ended = true;
      continue;
    }
    if (!ended && word.value.startsWith('-') && word.value !== '-') {
      const option = optionWords(word.value, runner);
      if (option === undefined) return false;
      if (option.next) {
        const value = words[index + 1];
        // A value is judged as an operand too: a pattern or a test's name never needs to climb out of the workspace.
        if (value !== undefined && (value.kind !== 'literal' || value.value.startsWith('-') || leadsAway(value, facts) || !allowedValue(option.name, value.value, runner))) return false;
        index += 1;
      }
      continue;
    }
    if (runner.operands === 'subcommand') {
      if (operandSeen || !runner.subcommands.has(word.value)) return false;
      operandSeen = true;
      continue;
    }
    if (!operandSeen && runner.subcommands.has(word.value)) return false;
    operandSeen = true;
    if (leadsAway(word, facts)) return false;
  }
  return true;
}

/**
 * The files and folders a test runner is named to collect (`pytest -q tests` names `tests`; `vitest run` none; a
 * test's `file::name` as its file), for a look below them for links (`treeMayHoldLinkOut`); undefined when that is
 * not known (an option not known here, whose value may be taken for one, a word the shell expands, a runner whose
 * operands are subcommands), so the folder it runs in is looked in too. Empty: it collects the folder it runs in.
 */
export function testRunnerPathOperands(name: string, words: readonly ShellWord[]): string[] | undefined {
  const runner = RUNNERS.get(name);
  if (runner === undefined || runner.operands !== 'paths') return undefined;
  const operands: string[] = [];
  let ended = false;
  for (let index = 1; index < words.length; index += 1) {
    const word = words[index]!;
    if (word.kind !== 'literal') return undefined;
    if (!ended && word.value === '--') {
      ended = true;
    } else if (!ended && word.value.startsWith('-') && word.value !== '-') {
      const option = optionWords(word.value, runner);
      if (option === undefined) return undefined;
      if (option.next) index += 1;
    } else if (!(operands.length === 0 && runner.subcommands.has(word.value)) && !SUBCOMMAND_WORDS.has(word.value)) {
      operands.push(word.value.split('::', 1)[0]!);
    }
  }
  return operands;
}

/** Words a runner reads as its own command, not a path (`vitest run`, `vitest watch`). */
const SUBCOMMAND_WORDS = new Set(['run', 'watch', 'dev', 'related', 'bench']);

/** A known option's name (camelCase, no dashes) and whether its value is the next word; undefined for any other. */
function optionWords(value: string, runner: RunnerOptions): { name: string; next: boolean } | undefined {
  if (value.startsWith('--')) {
    const equals = value.indexOf('=');
    const written = value.slice(2, equals === -1 ? undefined : equals);
    const name = longOptionName(runner.camelCase ? camelCase(written) : written, runner);
    if (name === undefined) return undefined;
    if (equals !== -1) {
      return runner.valued.has(name) && allowedValue(name, value.slice(equals + 1), runner) ? { name, next: false } : undefined;
    }
    if (runner.flags.has(name)) return { name, next: false };
    return runner.valued.has(name) ? { name, next: true } : undefined;
  }
  // A short option alone or a group of flags (`-w`, `-ib`); one with a value last (`-it name`), or attached to it
  // where the parser reads it so (`-fd`).
  const letters = value.slice(1);
  for (let at = 0; at < letters.length; at += 1) {
    const letter = letters[at]!;
    if (runner.shortFlags.has(letter)) continue;
    if (!runner.shortValued.has(letter)) return undefined;
    if (at === letters.length - 1) return { name: letter, next: true };
    const attached = letters.slice(at + 1);
    return runner.attachedShort && !attached.startsWith('=') && allowedValue(letter, attached, runner) ? { name: letter, next: false } : undefined;
  }
  return { name: letters, next: false };
}

/**
 * The long option a word names as the runner's parser reads it: its whole name, or the one option of `longOptions`
 * an abbreviation can stand for (`rspec --form d` is `--format d`, `tox --recr` is `--recreate`). Undefined for an
 * abbreviation of none or of more than one, or for a runner whose parser takes none.
 */
function longOptionName(written: string, runner: RunnerOptions): string | undefined {
  if (runner.flags.has(written) || runner.valued.has(written) || runner.longOptions.has(written)) return written;
  if (runner.abbreviations === 'none' || written === '') return undefined;
  const stands = runner.abbreviations === 'prefix' ? (option: string) => option.startsWith(written) : rubyAbbreviation(written);
  const [only, ...others] = [...runner.longOptions].filter(stands);
  return others.length === 0 ? only : undefined;
}

/**
 * Ruby's OptionParser completion: `_` read as `-`, each run of word characters a start of one (`\w*` after it), in
 * any case, from the name's start.
 */
function rubyAbbreviation(written: string): (option: string) => boolean {
  const escaped = written.replaceAll('_', '-').replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  const pattern = new RegExp(`^${escaped.replace(/\w+\b/g, '$&\\w*')}`, 'i');
  return (option) => pattern.test(option);
}

function allowedValue(name: string, value: string, runner: RunnerOptions): boolean {
  return runner.values.get(name)?.has(value) ?? true;
}

/** `pass-with-no-tests` as `passWithNoTests`, as both parsers read it. */
function camelCase(name: string): string {
  return name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * Whether a test runner's operand may name a place outside the workspace (whose tests and config it would load, as
 * `cd there && …` would), or one under a `.git` folder, by its text or its links (`docs/hooks` with `docs -> .git`),
 * where calls a rule allows write text the model chose (`git commit -m …` writes `.git/COMMIT_EDITMSG`).
 */
function leadsAway(word: ShellWord, facts: PathFacts): boolean {
  return mayNameOutside(word, facts) || underGitFolder(word) || mayLeadUnderGit(word, facts);
}

/** Whether a path (before a test's `::name`) has a `.git` folder in it, in any case (macOS's file names ignore it). */
function underGitFolder(word: ShellWord): boolean {
  const text = word.kind === 'literal' ? word.value : word.text.replace(/["']/g, '');
  const [file = ''] = text.split('::', 1);
  return file.split('/').some((part) => part.toLowerCase() === '.git');
}
