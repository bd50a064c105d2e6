// The small module alone: deny rules read runners in the command reader's worker too (command-wrappers.ts).
import { commandBaseName, type RunnerProgram } from '@airlock/api/rules/commands';
import { packageManagerCommand } from './package-manager-commands';

/** Stands for a word the shell computes: no runner's or package manager's command, nor a harmless option. */
export const COMPUTED_WORD = '\0';

/**
 * npm's and pnpm's option parser reads `-node-options=…` as `--node-options=…`, any start of an option's name as
 * the option (`--node-opt`), `--no-no-node-options=…` as the option itself, and one-dash shorthands that expand to
 * options (`-C` is `--prefix`): no list of what to refuse keeps up with that, so only these words are options that
 * a prefix rule lets through; they neither run code nor take the word after them as a value.
 */
export const NPM_HARMLESS: ReadonlySet<string> = new Set([
  '-s', '--silent', '-q', '--quiet', '-d', '--verbose', '--if-present', '--ignore-scripts', '--foreground-scripts',
  '--json', '--parseable', '--long', '--all', '--workspaces', '--ws', '--include-workspace-root', '--color',
  '--no-color', '--dry-run', '--offline', '--prefer-offline', '--no-audit', '--no-fund',
  ...['silent', 'error', 'warn', 'notice', 'http', 'info', 'verbose', 'silly'].map((level) => `--loglevel=${level}`),
]);

const QUIET_OR_VERBOSE = ['-q', '--quiet', '-v', '--verbose'];
const UV_HARMLESS = [...QUIET_OR_VERBOSE, '--offline', '--no-progress'];
/** npx's and pnpx's answer to "install this package?" changes nothing that runs. */
const NPX_HARMLESS: ReadonlySet<string> = new Set([...NPM_HARMLESS, '-y', '--yes', '--no']);

/**
 * A tool that runs the program named after its runner subcommand (`uv run make test`, `pnpm exec git status`,
 * `bundle exec rake`), and the options it may be given before that program, or before the subcommand, that change
 * neither what runs nor where: no value, no package to install, no other folder, environment or file of variables
 * (`uv run --with x`, `pnpm exec --filter x`, `uv --directory x`, `poetry -C x`, `conda run -n x`, `bundle exec
 * --gemfile=x`, `uv run --env-file x` are not here).
 */
interface Runner {
  /** The subcommands that run a program: `run`, `exec` … (`uv tool run` is `tool` then `run`). */
  subcommands: ReadonlySet<string>;
  /** Option words that may stand before the subcommand and before the program, and are skipped when judging it. */
  harmless: ReadonlySet<string>;
  /**
   * pnpm runs a word it does not know as a command as a script, or failing that as a program (`pnpm make test` is
   * `make test`), and Yarn a binary of the project's packages: after any other word, what follows is a command too.
   */
  fallback?: boolean;
  /** `npx`, `pnpx`, `bunx`, `uvx`: no subcommand, the program follows the runner's options (`npx -y rimraf x`). */
  direct?: boolean;
  /** Words a subcommand takes before the program: `direnv exec DIR cmd`, `npm explore PKG -- cmd`. */
  operands?: ReadonlyMap<string, number>;
  /** `mise exec node@20 -- cmd`: the program follows the subcommand's first `--`; without one it is not known. */
  afterDashes?: boolean;
  /**
   * Words before the subcommand that run the rest once for each package or workspace (`pnpm recursive exec …`,
   * `pnpm m exec …`), each with the operands and options it takes (`yarn workspace NAME exec …`, `yarn workspaces
   * foreach -A exec …`): skipped, and the subcommand read after them.
   */
  prefixes?: ReadonlyMap<string, Prefix>;
}

/** A word before a runner's subcommand that hands it the rest (`Runner.prefixes`). */
interface Prefix {
  /** The word that must follow it (`workspaces foreach`). */
  then?: string;
  /** Operands it takes (`yarn workspace NAME`). */
  operands?: number;
  /** Its options that take no value and change nothing that runs; any other option hides the program. */
  flags?: ReadonlySet<string>;
}

/** `yarn workspaces foreach`'s switches: which workspaces, in which order, how the output looks. */
const YARN_FOREACH_FLAGS = new Set([
  '-A', '--all', '-R', '--recursive', '-W', '--worktree', '-v', '--verbose', '-p', '--parallel', '-i', '--interlaced',
  '-t', '--topological', '--topological-dev', '-n', '--no-private', '--dry-run',
]);

/** A version manager's `exec` (`pyenv exec rm -rf x`) runs the program named next in the version it selects. */
const VERSION_MANAGER: Runner = { subcommands: new Set(['exec']), harmless: new Set() };

/** Keyed by the programs with the `runner` trait (program-traits.ts): a runner listed here alone does not type-check. */
const RUNNERS = new Map<RunnerProgram, Runner>([
  // npm takes any unambiguous start of a command for it (`npm exe`: `npmSubcommand`); `npm explore PKG -- …` hands
  // the words after the package to a shell (`runnerCommandLines`).
  ['npm', { subcommands: new Set(['exec', 'explore']), harmless: NPM_HARMLESS, operands: new Map([['explore', 1]]) }],
  ['pnpm', {
    subcommands: new Set(['exec', 'dlx']),
    harmless: NPM_HARMLESS,
    fallback: true,
    prefixes: new Map([['recursive', {}], ['multi', {}], ['m', {}]]),
  }],
  // `yarn node x.js` runs node, `yarn npm publish` npm's publish (Yarn 2 and later): the program is that word (below).
  ['yarn', {
    subcommands: new Set(['exec', 'dlx', 'node', 'npm']),
    harmless: NPM_HARMLESS,
    fallback: true,
    prefixes: new Map<string, Prefix>([['workspace', { operands: 1 }], ['workspaces', { then: 'foreach', flags: YARN_FOREACH_FLAGS }]]),
  }],
  // `corepack npm publish`, `corepack pnpm@9 exec …`: the package manager named next, in the version it pins.
  ['corepack', { subcommands: new Set(), harmless: new Set(), direct: true }],
  ['pyenv', VERSION_MANAGER],
  ['rbenv', VERSION_MANAGER],
  ['nodenv', VERSION_MANAGER],
  ['goenv', VERSION_MANAGER],
  ['asdf', VERSION_MANAGER],
  ['fnm', VERSION_MANAGER],
  ['mise', { subcommands: new Set(['exec', 'x']), harmless: new Set(), afterDashes: true }],
  ['rtx', { subcommands: new Set(['exec', 'x']), harmless: new Set(), afterDashes: true }],
  ['volta', { subcommands: new Set(['run']), harmless: new Set(['--bundled-npm', '--no-yarn', '--verbose', '--quiet']) }],
  ['direnv', { subcommands: new Set(['exec']), harmless: new Set(), operands: new Map([['exec', 1]]) }],
  ['uv', { subcommands: new Set(['run', 'tool']), harmless: new Set([...UV_HARMLESS, '--frozen', '--locked', '--no-sync']) }],
  // Fetch a package and run a program it has (`npx -p x git push` runs `git`); `pnpx` is `pnpm dlx`, `bunx` `bun x`.
  ['npx', { subcommands: new Set(), harmless: NPX_HARMLESS, direct: true }],
  ['pnpx', { subcommands: new Set(), harmless: NPX_HARMLESS, direct: true }],
  ['uvx', { subcommands: new Set(), harmless: new Set(UV_HARMLESS), direct: true }],
  ['bunx', { subcommands: new Set(), harmless: new Set(['--bun', '--silent', '--verbose']), direct: true }],
  ['bun', { subcommands: new Set(['x']), harmless: new Set() }],
  ['poetry', { subcommands: new Set(['run']), harmless: new Set([...QUIET_OR_VERBOSE, '-vv', '-vvv', '-n', '--no-interaction', '--ansi', '--no-ansi']) }],
  ['pipenv', { subcommands: new Set(['run']), harmless: new Set(QUIET_OR_VERBOSE) }],
  ['pdm', { subcommands: new Set(['run']), harmless: new Set(QUIET_OR_VERBOSE) }],
  ['hatch', { subcommands: new Set(['run']), harmless: new Set([...QUIET_OR_VERBOSE, '--no-interactive']) }],
  ['rye', { subcommands: new Set(['run']), harmless: new Set(QUIET_OR_VERBOSE) }],
  ['pixi', { subcommands: new Set(['run']), harmless: new Set([...QUIET_OR_VERBOSE, '--frozen', '--locked']) }],
  ['conda', { subcommands: new Set(['run']), harmless: new Set([...QUIET_OR_VERBOSE, '--no-capture-output', '--live-stream']) }],
  ['mamba', { subcommands: new Set(['run']), harmless: new Set([...QUIET_OR_VERBOSE, '--no-capture-output', '--live-stream']) }],
  ['micromamba', { subcommands: new Set(['run']), harmless: new Set(QUIET_OR_VERBOSE) }],
  ['bundle', { subcommands: new Set(['exec']), harmless: new Set(['--verbose', '--no-color', '--keep-file-descriptors']) }],
]);

/** pnpm's and Yarn's own commands: any other word after them is a program or a script (`fallback`). */
const PACKAGE_MANAGER_COMMANDS = new Set([
  'add', 'audit', 'approve-builds', 'autoclean', 'bin', 'c', 'cache', 'cat-file', 'cat-index', 'check', 'config', 'constraints',
  'create', 'dedupe', 'deploy', 'dislink', 'dlx', 'doctor', 'env', 'exec', 'explain', 'fetch', 'find-hash', 'generate-lock-entry',
  'global', 'help', 'i', 'ignored-builds', 'import', 'info', 'init', 'install', 'install-test', 'it', 'la', 'licenses', 'link',
  'list', 'll', 'ln', 'login', 'logout', 'ls', 'm', 'multi', 'node', 'npm', 'outdated', 'owner', 'pack', 'patch', 'patch-commit',
  'patch-remove', 'plugin', 'policies', 'prune', 'publish', 'r', 'rb', 'rebuild', 'recursive', 'remove', 'restart', 'rm', 'root',
  'run', 'run-script', 'search', 'server', 'set', 'setup', 'self-update', 'stage', 'start', 'stop', 'store', 't', 'tag', 'team',
  'test', 'tst', 'un', 'uni', 'uninstall', 'unlink', 'unplug', 'up', 'update', 'upgrade', 'upgrade-interactive', 'version',
  'versions', 'why', 'workspace', 'workspaces',
]);

/**
 * How a command's words run a program through a runner:
 * - `runner`: `head` names the runner without its options (`['uv', 'run']`, `['pnpm']` before a program pnpm falls
 *   back to, `['yarn']` before `node`), and the program starts at `program` (past harmless options and a `--`; the
 *   words' length when none is named);
 * - `options`: an option that is not harmless stands before the program, or before the subcommand: it may change
 *   what runs, or take the next word as its value, so which word is the program is not known (`pnpm --filter test
 *   make …` runs `make`);
 * - `none`: not a call through a runner.
 */
export type RunnerCall = { kind: 'runner'; head: readonly string[]; program: number } | { kind: 'options' } | { kind: 'none' };

/** How `words` (literal values; `COMPUTED_WORD` for those the shell computes) run a program, if through a runner. */
export function runnerCall(words: readonly string[]): RunnerCall {
  const [first] = words;
  if (first === undefined) return { kind: 'none' };
  const tool = commandBaseName(first);
  const runner = (RUNNERS as ReadonlyMap<string, Runner>).get(tool);
  if (runner === undefined) return { kind: 'none' };
  const skip = (from: number) => {
    let index = from;
    while (index < words.length && runner.harmless.has(words[index]!)) index += 1;
    return index;
  };
  let at = skip(1);
  if (runner.direct === true) return programFrom(words, at, [first]);
  const prefixed: string[] = [];
  for (let prefix = prefixAt(runner, words, at); prefix !== undefined; prefix = prefixAt(runner, words, at)) {
    const after = afterPrefix(words, at, prefix);
    if (after === undefined) return { kind: 'options' };
    prefixed.push(...words.slice(at, after));
    at = skip(after);
  }
  const written = words[at];
  if (written === undefined) return { kind: 'none' };
  // `uv $_` may be `uv run rm -rf x` once the shell splits it.
  if (written.startsWith('-') || (written === COMPUTED_WORD && runner.fallback !== true)) return { kind: 'options' };
  const subcommand = tool === 'npm' ? (packageManagerCommand('npm', written) ?? written) : written;
  if (tool === 'yarn' && (subcommand === 'node' || subcommand === 'npm')) return { kind: 'runner', head: [first, ...prefixed], program: at };
  let head: string[];
  let next: number;
  if (subcommand === 'tool' && runner.subcommands.has('tool')) {
    const run = skip(at + 1);
    if (words[run] !== 'run') return words[run]?.startsWith('-') === true || words[run] === COMPUTED_WORD ? { kind: 'options' } : { kind: 'none' };
    head = [first, 'tool', 'run'];
    next = run + 1;
  } else if (runner.subcommands.has(subcommand)) {
    head = [first, ...prefixed, written];
    next = at + 1;
  } else if (runner.fallback === true && !PACKAGE_MANAGER_COMMANDS.has(subcommand)) {
    return { kind: 'runner', head: [first, ...prefixed], program: at };
  } else {
    return { kind: 'none' };
  }
  if (runner.afterDashes === true) {
    const dashes = words.indexOf('--', next);
    return dashes === -1 ? { kind: 'options' } : { kind: 'runner', head, program: dashes + 1 };
  }
  const operands = runner.operands?.get(subcommand) ?? 0;
  if (operands > 0) {
    next = skip(next);
    if (words.slice(next, next + operands).some((word) => word.startsWith('-'))) return { kind: 'options' };
    next += operands;
  }
  return programFrom(words, skip(next), head);
}

/** The runner's prefix at `at`, with the word that must follow it if any (`workspaces foreach`, not `workspaces list`). */
function prefixAt(runner: Runner, words: readonly string[], at: number): Prefix | undefined {
  const prefix = runner.prefixes?.get(words[at] ?? '');
  return prefix !== undefined && (prefix.then === undefined || words[at + 1] === prefix.then) ? prefix : undefined;
}

/** Where the words after a runner's prefix at `at` start, or undefined when an option or a computed word hides where. */
function afterPrefix(words: readonly string[], at: number, prefix: Prefix): number | undefined {
  let index = at + (prefix.then === undefined ? 1 : 2);
  while (index < words.length && prefix.flags?.has(words[index]!) === true) index += 1;
  const operands = words.slice(index, index + (prefix.operands ?? 0));
  if (operands.some((word) => word.startsWith('-') || word === COMPUTED_WORD)) return undefined;
  return index + operands.length;
}

/** The program at `at` (past a `--`), unless an option that is not harmless stands there. */
function programFrom(words: readonly string[], at: number, head: readonly string[]): RunnerCall {
  let program = at;
  if (words[program] === '--') program += 1;
  else if (words[program]?.startsWith('-') === true) return { kind: 'options' };
  return { kind: 'runner', head, program };
}

/** npm's options that run the command in each workspace's folder (`npm exec --workspaces -- cargo build`). */
const WORKSPACE_OPTIONS: ReadonlySet<string> = new Set(['--workspaces', '--ws', '--include-workspace-root']);

/**
 * Whether a runner may run its program in another folder than its own (`words` as in `runnerPrograms`): in each
 * package's (`pnpm recursive exec`, `yarn workspace app exec`, `yarn workspaces foreach -A exec`, `npm exec
 * --workspaces`), or where an option that is not harmless may name (`uv --directory x run`, `pnpm -C x exec`).
 */
export function runnerRunsElsewhere(words: readonly (string | undefined)[]): boolean {
  const literal = words.map((word) => word ?? COMPUTED_WORD);
  const call = runnerCall(literal);
  if (call.kind === 'none') return false;
  if (call.kind === 'options') return true;
  const runner = (RUNNERS as ReadonlyMap<string, Runner>).get(commandBaseName(literal[0]!));
  return call.head.some((word) => runner?.prefixes?.has(word) === true) || literal.slice(1, call.program).some((word) => WORKSPACE_OPTIONS.has(word));
}

/** How many guesses at the program behind a runner's options are examined for deny rules. */
const MAX_PROGRAM_GUESSES = 4;

/**
 * What a runner runs, for deny rules (`words` as `ReachableWords`: undefined where the shell computes a word): the
 * program and its words (`uv run --frozen git push` runs `git push`). Past an option that is not harmless, which
 * word is the program is not known (`uv run --with x git push`): each of the first few words that is not an option
 * starts a command then (`x git push`, `git push`), as a deny rule may catch more than meant, never less.
 */
export function runnerPrograms(words: readonly (string | undefined)[]): (string | undefined)[][] {
  const call = runnerCall(words.map((word) => word ?? COMPUTED_WORD));
  if (call.kind === 'runner') {
    if (call.program >= words.length) return [];
    const program = words.slice(call.program);
    // `corepack pnpm@9 exec …`, `npx git@2 push`: the program's name without the version asked for.
    const [name] = program;
    const bare = name === undefined || call.head.length !== 1 ? undefined : /^(.+?)@[^/@]*$/.exec(name)?.[1];
    return bare === undefined ? [program] : [program, [bare, ...program.slice(1)]];
  }
  if (call.kind === 'none') return [];
  const guesses: (string | undefined)[][] = [];
  for (let index = 1; index < words.length && guesses.length < MAX_PROGRAM_GUESSES; index += 1) {
    const word = words[index];
    if (word !== undefined && !word.startsWith('-')) guesses.push(words.slice(index));
  }
  return guesses;
}

/**
 * Runners that hand a command line to a shell, and the options that give it: `npm exec -c '…'` (`--call`), `pnpm dlx
 * -c …` (`--shell-mode`), `mise exec -c '…'` (`--command`).
 */
const SHELL_MODE_OPTIONS = new Map<string, ReadonlySet<string>>([
  ...['npm', 'npx', 'pnpm', 'pnpx'].map((runner): [string, ReadonlySet<string>] => [runner, new Set(['-c', '--call', '--shell-mode'])]),
  ...['mise', 'rtx'].map((runner): [string, ReadonlySet<string>] => [runner, new Set(['-c', '--command'])]),
]);

/**
 * The command lines a runner hands to a shell, for deny rules (`words` as in `runnerPrograms`): npm's `-c '…'` and
 * `--call='…'` take one as their value; pnpm's `-c` runs its other words as one (`pnpm dlx -c git push`). Read both
 * ways after any such option before the program, as a deny rule may catch more than meant, never less. `npm explore
 * PKG -- git push` runs the words after the package as one line.
 */
export function runnerCommandLines(words: readonly (string | undefined)[]): string[] {
  const [first] = words;
  const options = first === undefined ? undefined : SHELL_MODE_OPTIONS.get(commandBaseName(first));
  if (options === undefined) return [];
  const call = runnerCall(words.map((word) => word ?? COMPUTED_WORD));
  if (call.kind === 'none') return [];
  const end = call.kind === 'runner' ? call.program : words.length;
  const lines: string[] = [];
  const [, subcommand = ''] = call.kind === 'runner' ? call.head : [];
  if (commandBaseName(first ?? '') === 'npm' && packageManagerCommand('npm', subcommand) === 'explore') {
    const known = words.slice(end).filter((word): word is string => word !== undefined);
    if (known.length > 0) lines.push(known.join(' '));
  }
  for (let index = 1; index < end; index += 1) {
    const word = words[index];
    const equals = word?.indexOf('=') ?? -1;
    if (word !== undefined && equals !== -1 && options.has(word.slice(0, equals))) lines.push(word.slice(equals + 1));
    if (word === undefined || !options.has(word)) continue;
    const next = words[index + 1];
    if (next !== undefined) lines.push(next);
    const rest = words.slice(index + 1).filter((other): other is string => other !== undefined);
    if (rest.length > 1) lines.push(rest.join(' '));
  }
  return lines;
}
