/**
 * npm's own commands, those of npm 10 and npm 11 together: npm takes any unambiguous start of one of these or of an
 * alias below for it (`npm pub` is `npm publish`, `npm run-s` is `npm run-script`), so the table must hold every
 * name a version knows, or a start that is ambiguous in one version would look unique here.
 */
const NPM_COMMANDS = [
  'access', 'adduser', 'approve-scripts', 'audit', 'bugs', 'cache', 'ci', 'completion', 'config', 'dedupe',
  'deny-scripts', 'deprecate', 'diff', 'dist-tag', 'docs', 'doctor', 'edit', 'exec', 'explain', 'explore', 'find-dupes',
  'fund', 'get', 'help', 'help-search', 'hook', 'init', 'install', 'install-ci-test', 'install-scripts', 'install-test',
  'link', 'll', 'login', 'logout', 'ls', 'org', 'outdated', 'owner', 'pack', 'ping', 'pkg', 'prefix', 'profile',
  'prune', 'publish', 'query', 'rebuild', 'repo', 'restart', 'root', 'run', 'sbom', 'search', 'set', 'shrinkwrap',
  'stage', 'star', 'stars', 'start', 'stop', 'team', 'test', 'token', 'trust', 'undeprecate', 'uninstall', 'unpublish',
  'unstar', 'update', 'version', 'view', 'whoami',
];

/** npm's aliases, short names and accepted typos, each to the command it runs (`run-script` is `run` here). */
const NPM_ALIASES = new Map([
  ['author', 'owner'], ['home', 'docs'], ['issues', 'bugs'], ['info', 'view'], ['show', 'view'], ['find', 'search'],
  ['add', 'install'], ['unlink', 'uninstall'], ['remove', 'uninstall'], ['rm', 'uninstall'], ['r', 'uninstall'],
  ['un', 'uninstall'], ['rb', 'rebuild'], ['list', 'ls'], ['ln', 'link'], ['create', 'init'], ['i', 'install'],
  ['it', 'install-test'], ['cit', 'install-ci-test'], ['u', 'update'], ['up', 'update'], ['c', 'config'],
  ['s', 'search'], ['se', 'search'], ['tst', 'test'], ['t', 'test'], ['ddp', 'dedupe'], ['v', 'view'],
  ['run-script', 'run'], ['clean-install', 'ci'], ['clean-install-test', 'install-ci-test'], ['x', 'exec'],
  ['why', 'explain'], ['la', 'll'], ['verison', 'version'], ['ic', 'ci'], ['innit', 'init'], ['in', 'install'],
  ['ins', 'install'], ['inst', 'install'], ['insta', 'install'], ['instal', 'install'], ['isnt', 'install'],
  ['isnta', 'install'], ['isntal', 'install'], ['isntall', 'install'], ['install-clean', 'ci'],
  ['isntall-clean', 'ci'], ['hlep', 'help'], ['dist-tags', 'dist-tag'], ['upgrade', 'update'], ['udpate', 'update'],
  ['rum', 'run'], ['sit', 'install-ci-test'], ['urn', 'run'], ['ogr', 'org'], ['add-user', 'adduser'],
]);

const NPM_NAMES = [...NPM_COMMANDS, ...NPM_ALIASES.keys()];

/** pnpm's aliases: pnpm takes no abbreviation, and runs a word it does not know as a script or a program. */
const PNPM_ALIASES = new Map([
  ['i', 'install'], ['it', 'install-test'], ['rm', 'remove'], ['uninstall', 'remove'], ['un', 'remove'],
  ['uni', 'remove'], ['up', 'update'], ['upgrade', 'update'], ['ln', 'link'], ['dislink', 'unlink'], ['ls', 'list'],
  ['ll', 'list'], ['la', 'list'], ['run-script', 'run'], ['t', 'test'], ['tst', 'test'], ['rb', 'rebuild'],
  ['c', 'config'],
]);

/** Yarn's aliases, of Yarn 1 and later: `yarn up` is Yarn 1's `yarn upgrade`. */
const YARN_ALIASES = new Map([['up', 'upgrade'], ['run-script', 'run']]);

/**
 * Commands that install packages and run their install scripts as `install` does: a deny rule for `npm install`
 * also catches them (`npm ci`, `npm it`, and `pnpm add x`, `yarn add x`, which are how those two install a package).
 */
const INSTALLS = new Map([
  ['npm', new Set(['ci', 'install-test', 'install-ci-test'])],
  ['pnpm', new Set(['add', 'install-test'])],
  ['yarn', new Set(['add'])],
]);

/** npm's subcommands that run the project's script of their own name: `npm test` is `npm run test`. */
const NPM_SCRIPT_COMMANDS = new Set(['test', 'start', 'stop', 'restart']);

/**
 * The command a package manager runs for `word` as its subcommand, under its canonical name (`npm i` is `install`,
 * `npm pub` `publish`, `npm runScript` `run`, `pnpm rm` `remove`); undefined when it names none of its own.
 */
export function packageManagerCommand(manager: string, word: string): string | undefined {
  switch (manager) {
    case 'npm':
      return npmCommand(word);
    case 'pnpm':
      return PNPM_ALIASES.get(word) ?? word;
    case 'yarn':
      return YARN_ALIASES.get(word) ?? word;
    default:
      return undefined;
  }
}

/** As npm resolves its first operand: camelCase to dashes, then the command, an alias, or an unambiguous start of either. */
function npmCommand(written: string): string | undefined {
  const word = /[A-Z]/.test(written) ? written.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`) : written;
  if (NPM_COMMANDS.includes(word)) return word;
  const alias = NPM_ALIASES.get(word);
  if (alias !== undefined) return alias;
  const starts = NPM_NAMES.filter((name) => name.startsWith(word));
  if (word === '' || starts.length !== 1) return undefined;
  const [named = ''] = starts;
  return NPM_ALIASES.get(named) ?? named;
}

/**
 * What a deny rule's operands are compared as, for a package manager (`manager`): its first operand, the
 * subcommand, by its canonical name; `run <script>` as `<script>` where the manager also runs the script so (`npm
 * test`, `pnpm lint`), so that the rule catches both spellings. Other operands stay as written.
 */
export function denyRuleOperands(manager: string, operands: readonly (string | undefined)[]): (string | undefined)[] {
  const [first, ...rest] = operands;
  if (first === undefined) return [...operands];
  const command = packageManagerCommand(manager, first) ?? first;
  const [script] = rest;
  if (command === 'run' && script !== undefined && (manager !== 'npm' || NPM_SCRIPT_COMMANDS.has(script))) return rest;
  return [command, ...rest];
}

/**
 * The names each operand of a package manager's call goes by, for a deny rule (`denyRuleOperands`): as written, as
 * the command it names, `install` for the commands that install as it does, and `run` for npm's that run a script
 * (`npm test` for a rule on `npm run`). Every operand is read so, as one
 * may be the subcommand behind an option's value (`npm --prefix x pub`); a deny rule may catch more than meant.
 * `yarn` alone installs.
 */
export function denyCallOperands(manager: string, operands: readonly (string | undefined)[]): ReadonlySet<string>[] {
  if (manager === 'yarn' && operands.length === 0) return [new Set(['install'])];
  return operands.map((operand) => {
    if (operand === undefined) return new Set<string>();
    const command = packageManagerCommand(manager, operand);
    const names = new Set([operand]);
    if (command !== undefined) names.add(command);
    if (command !== undefined && INSTALLS.get(manager)?.has(command) === true) names.add('install');
    if (manager === 'npm' && command !== undefined && NPM_SCRIPT_COMMANDS.has(command)) names.add('run');
    return names;
  });
}
