import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, terminal } from './rule-fixtures';
import type { Rule } from '@airlock/api';

async function decide(command: string, rules: readonly Rule[]): Promise<string> {
  return (await evaluateRules(terminal(command), rules, context)).decision;
}

/** Commands a prefix rule must still allow, so that rules stay worth having. */
const stillAllowed: [string, string][] = [
  ['npm test', 'npm test'],
  ['npm test', 'npm test -- --watch=false'],
  ['npm test', 'npm test --silent -- --watch=false'],
  ['npm test', 'npm test -s'],
  ['npm test', 'npm test $HOME "${HOME}/x" $LANG ~/y'],
  ['npm test', 'echo hi; npm test "$HOME"'],
  // `shift` changes only `$1`, `$@` …, which never count as the environment's.
  ['npm test', 'shift; npm test "$HOME"'],
  ['npm run build', 'npm run build --if-present'],
  ['pnpm test', 'pnpm test -- --watch=false'],
  ['git status', 'git status'],
  ['git status', 'git status -s --no-optional-locks'],
  ['git log', 'git log --oneline -5 -- src'],
  ['make test', 'make test'],
  ['make test', 'make test -j4 -- other-goal'],
  ['tar', 'tar -xf a.tar -- file'],
  ['zip', 'zip -r out.zip src'],
  ['pytest', 'pytest -x -q tests'],
  ['gcc', 'gcc -O2 -Wall -o x x.c'],
];

describe('a prefix rule still allows', () => {
  it.each(stillAllowed)('for %s: %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('echo'), prefix('shift')])).toBe('allow');
  });
});

/**
 * Variables bash sets itself, from the line's own text or as it runs: `$_` is the last word of the command before,
 * `$BASH_COMMAND` the command being run. None is the person's environment.
 */
const SHELL_SET = [
  '_', 'BASH_COMMAND', 'BASH_ARGV', 'BASH_ARGC', 'BASH_LINENO', 'BASH_SOURCE', 'FUNCNAME', 'LINENO', 'RANDOM', 'SRANDOM',
  'SECONDS', 'EPOCHREALTIME', 'EPOCHSECONDS', 'BASHPID', 'PPID', 'OLDPWD', 'PWD', 'REPLY', 'OPTARG', 'OPTIND', 'PIPESTATUS',
  'HISTCMD', 'COMP_LINE', 'READLINE_LINE', 'BASH_REMATCH', 'DIRSTACK', 'MAPFILE', 'IFS', 'Z',
];
const SPECIAL = ['1', '9', '@', '*', '#', '?', '$', '!', '-', '0'];

describe('a variable the shell sets is not taken for the environment', () => {
  it.each([
    // The probe's lines: the first command leaves its last word in `$_`, which the second hands to npm.
    `npm test -- "--node-options=--import=data:text/javascript,import('fs').then(f=>f.writeFileSync('PWNED','ran:'+process.pid))" >/dev/null 2>&1; npm test $_`,
    'npm test -- x; npm test $_',
    "npm test $BASH_COMMAND '--' --script-shell=./evil.sh",
    "npm test $BASH_COMMAND '--' --node-options=x",
    'npm test -- --node-options=x; npm test ${_}',
    'npm test -- --node-options=x; npm test "$_"',
    'npm test -- --node-options=x; npm test x$_',
  ])('a rule for npm test asks about %j', async (command) => {
    expect(await decide(command, [prefix('npm test')])).toBe('ask');
  });

  it.each([
    ['git log', 'git log -- --output=PWNED >/dev/null; git log $_'],
    ['git diff', 'git diff -- --output=PWNED >/dev/null; git diff $_'],
    ['git log', "git log $BASH_COMMAND '--' --output=PWNED"],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([...SHELL_SET.flatMap((name) => [`$${name}`, `\${${name}}`, `"$${name}"`]), ...SPECIAL.map((name) => `$${name}`)])(
    'a rule for npm test asks about npm test %s',
    async (word) => {
      expect(await decide(`npm test ${word}`, [prefix('npm test')])).toBe('ask');
    },
  );

  it.each([
    ['read HOME', 'read HOME; npm test $HOME'],
    ['printf -v HOME -- --node-options=x', 'printf -v HOME -- --node-options=x; npm test $HOME'],
    ['getopts x: LANG', 'getopts x: LANG; npm test "$LANG"'],
  ])('after %j, which an exact rule allows, the same line asks about %j', async (exact, command) => {
    expect(await decide(command, [prefix(exact, { exact: true }), prefix('npm test')])).toBe('ask');
  });
});

describe('npm, pnpm and yarn take only a few harmless options before `--`', () => {
  it.each([
    // The probe's lines: npm reads `-name` as `--name`, and any start of an option's name as the option.
    `npm test "-node-options=--import=data:text/javascript,import('fs').then(f=>f.writeFileSync('PWNED-B','ran:'+process.pid))"`,
    'npm test "-node-options=--experimental-network-imports --import=http://127.0.0.1:7811/x.mjs"',
    'npm test -prefix=/tmp',
    'npm test -node-opt=--inspect',
    'npm test --no-no-node-options=--inspect',
    'npm test --NODE-OPTIONS=x',
    'npm test -C /tmp',
    'npm test -s -C /tmp',
    'npm test --watch',
    'npm test -- x; npm test "-$HOME"',
    'pnpm test -node-options=x',
    'yarn test -node-options=x',
  ])('asks about %j', async (command) => {
    expect(await decide(command, [prefix('npm test'), prefix('pnpm test'), prefix('yarn test')])).toBe('ask');
  });
});

describe('make reads a word with "=" as a definition, also after `--`', () => {
  it.each([
    'make test -- SHELL=/usr/bin/touch .SHELLFLAGS=PWNED-MAKE-2',
    'make test SHELL=/usr/bin/touch .SHELLFLAGS=PWNED-MAKE-1',
    `make test -- 'SHELL=/usr/bin/python3' '.SHELLFLAGS=-c__import__("os").system("touch\\x20PWNED-MAKE")'`,
    "make test 'X!=touch PWNED'",
    "make test -- 'src/x!=touch PWNED'",
    'make test -- src/*',
    'make test $HOME',
    "make test -o -- --eval='$(shell touch PWNED)'",
  ])('a rule for make test asks about %j', async (command) => {
    expect(await decide(command, [prefix('make test')])).toBe('ask');
  });
});

describe('a `--` right after an option may be its value, not the end of the options', () => {
  it.each([
    ['tar', 'tar -xf -- --to-command=sh'],
    ['tar', 'tar xf -- --to-command=sh'],
    ['sort', 'sort -o -- --compress-program=sh names.txt'],
    ['rsync', "rsync -M -- -e'sh -c id' a b:"],
    ['git log', 'git log --grep -- --output=PWNED'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });
});

describe('more spellings of options that run code', () => {
  it.each([
    ['zip', "zip -q out.zip a -T -TT'sh -c id'"],
    ['zip', "zip -q out.zip a -T --unzip-comm='sh -c id'"],
    ['gcc', 'gcc -fuse-ld=/tmp/evil x.c'],
    ['gcc', 'gcc -Wl,-plugin=/tmp/evil.so x.c'],
    ['clang', 'clang --ld-path=/tmp/evil x.c'],
    ['gcc', 'gcc @opts x.c'],
    ['go test', 'go test -C /tmp/elsewhere ./...'],
    ['go test', 'go test -vettool=/tmp/evil ./...'],
    ['go test', 'go test -- -toolexec=/tmp/evil ./...'],
    ['pytest', 'pytest --basetemp=/home'],
    ['pytest', 'pytest -p evil_plugin'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });
});
