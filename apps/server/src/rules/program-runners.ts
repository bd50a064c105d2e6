// The small module alone: deny rules read runners in the command reader's worker too (command-wrappers.ts).
import { commandBaseName } from '@airlock/api/rules/commands';

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
}

const RUNNERS = new Map<string, Runner>([
  ['npm', { subcommands: new Set(['exec', 'x']), harmless: NPM_HARMLESS }],
  ['pnpm', { subcommands: new Set(['exec', 'dlx']), harmless: NPM_HARMLESS, fallback: true }],
  // `yarn node x.js` runs node: the program is `node` itself (below).
  ['yarn', { subcommands: new Set(['exec', 'dlx', 'node']), harmless: NPM_HARMLESS, fallback: true }],
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
  const runner = RUNNERS.get(tool);
  if (runner === undefined) return { kind: 'none' };
  const skip = (from: number) => {
    let index = from;
    while (index < words.length && runner.harmless.has(words[index]!)) index += 1;
    return index;
  };
  const at = skip(1);
  if (runner.direct === true) return programFrom(words, at, [first]);
  const subcommand = words[at];
  if (subcommand === undefined) return { kind: 'none' };
  // `uv $_` may be `uv run rm -rf x` once the shell splits it.
  if (subcommand.startsWith('-') || (subcommand === COMPUTED_WORD && runner.fallback !== true)) return { kind: 'options' };
  if (tool === 'yarn' && subcommand === 'node') return { kind: 'runner', head: [first], program: at };
  let head: string[];
  let next: number;
  if (subcommand === 'tool' && runner.subcommands.has('tool')) {
    const run = skip(at + 1);
    if (words[run] !== 'run') return words[run]?.startsWith('-') === true || words[run] === COMPUTED_WORD ? { kind: 'options' } : { kind: 'none' };
    head = [first, 'tool', 'run'];
    next = run + 1;
  } else if (runner.subcommands.has(subcommand)) {
    head = [first, subcommand];
    next = at + 1;
  } else if (runner.fallback === true && !PACKAGE_MANAGER_COMMANDS.has(subcommand)) {
    return { kind: 'runner', head: [first], program: at };
  } else {
    return { kind: 'none' };
  }
  return programFrom(words, skip(next), head);
}

/** The program at `at` (past a `--`), unless an option that is not harmless stands there. */
function programFrom(words: readonly string[], at: number, head: readonly string[]): RunnerCall {
  let program = at;
  if (words[program] === '--') program += 1;
  else if (words[program]?.startsWith('-') === true) return { kind: 'options' };
  return { kind: 'runner', head, program };
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
  if (call.kind === 'runner') return call.program < words.length ? [words.slice(call.program)] : [];
  if (call.kind === 'none') return [];
  const guesses: (string | undefined)[][] = [];
  for (let index = 1; index < words.length && guesses.length < MAX_PROGRAM_GUESSES; index += 1) {
    const word = words[index];
    if (word !== undefined && !word.startsWith('-')) guesses.push(words.slice(index));
  }
  return guesses;
}

/** Runners that hand a command line to a shell: `npm exec -c '…'` (`--call`), `pnpm dlx -c …` (`--shell-mode`). */
const SHELL_MODE_RUNNERS = new Set(['npm', 'npx', 'pnpm', 'pnpx']);
const SHELL_MODE_OPTIONS = new Set(['-c', '--call', '--shell-mode']);

/**
 * The command lines a runner hands to a shell, for deny rules (`words` as in `runnerPrograms`): npm's `-c '…'` and
 * `--call='…'` take one as their value; pnpm's `-c` runs its other words as one (`pnpm dlx -c git push`). Read both
 * ways after any such option before the program, as a deny rule may catch more than meant, never less.
 */
export function runnerCommandLines(words: readonly (string | undefined)[]): string[] {
  const [first] = words;
  if (first === undefined || !SHELL_MODE_RUNNERS.has(commandBaseName(first))) return [];
  const call = runnerCall(words.map((word) => word ?? COMPUTED_WORD));
  if (call.kind === 'none') return [];
  const end = call.kind === 'runner' ? call.program : words.length;
  const lines: string[] = [];
  for (let index = 1; index < end; index += 1) {
    const word = words[index];
    if (word?.startsWith('--call=') === true) lines.push(word.slice('--call='.length));
    if (word === undefined || !SHELL_MODE_OPTIONS.has(word)) continue;
    const next = words[index + 1];
    if (next !== undefined) lines.push(next);
    const rest = words.slice(index + 1).filter((other): other is string => other !== undefined);
    if (rest.length > 1) lines.push(rest.join(' '));
  }
  return lines;
}
