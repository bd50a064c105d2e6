import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCommandLine } from './command-line-reader';
import { commandPathInside } from './command-path-inside';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, SESSION, terminal } from './rule-fixtures';
import { tempFolder } from '../tools/test-support';
import type { Rule } from '@airlock/api';

// The command reader's worker loads the grammar once per file, here rather than inside a test's own time.
beforeAll(() => readCommandLine('true'));

async function decide(command: string, rules: readonly Rule[]): Promise<string> {
  return (await evaluateRules(terminal(command), rules, context)).decision;
}

describe('pytest: a rule covers its tests in the workspace, not a file a call wrote or a folder elsewhere', () => {
  it.each([
    // `git commit -m '>>> …'` (allowed by a `git commit` rule) writes the message there; pytest ran it as a doctest.
    'pytest -q --doctest-glob=COMMIT_EDITMSG .git/COMMIT_EDITMSG',
    'pytest .git/COMMIT_EDITMSG',
    'pytest -q .git/x.txt',
    'pytest ./.git/hooks',
    'pytest src/../.git/x.rst',
    'pytest .GIT/COMMIT_EDITMSG',
    'pytest -- .git/x.txt',
    'pytest .git/x.py::test_a',
    'pytest --doctest-modules src',
    'pytest --doctest-glob=*.md',
    'pytest --doctest-continue-on-failure',
    // Another folder's conftest.py and tests, as `cd there && pytest` would run them.
    'pytest -q -s /root/other',
    'pytest ../../root/other/test_x.py',
    'pytest ..',
    'pytest src/../../x',
    'pytest -- ../x',
    'pytest $HOME',
    'pytest ~/other',
    'pytest /tmp/x/test_a.py::test_b',
    'pytest -k slow ../x',
    'cd sub && pytest ../../x',
    // Plugins' options write files: `--benchmark-json=README.md` overwrites the person's.
    'pytest --benchmark-json=README.md',
    'pytest --benchmark-cprofile-dump=README',
    'pytest --benchmark-storage=file:///root/x --benchmark-autosave',
    'pytest --html=README.md',
    'pytest --cov=src --cov-report=html:/tmp/x',
    'pytest --resultlog=x',
    'pytest --junit-prefix=x',
    'pytest -k -p x',
    // Without xdist, pytest does not know `-n` and loads the conftest.py of the folder after it.
    'pytest -n ../other',
    'pytest --deselect .git/x.txt',
    'pytest -xz',
  ])('a rule for pytest asks about %j', async (command) => {
    expect(await decide(command, [prefix('pytest'), prefix('cd')])).toBe('ask');
  });

  it.each([
    'pytest',
    'pytest -x -q tests',
    'pytest -xvs tests/test_a.py::test_b',
    'pytest -k "not slow" -m unit tests',
    'pytest -k slow --tb=short --maxfail=2 -rA tests/',
    'pytest -n auto --durations=10 tests',
    'pytest -n4 --lf --color=yes',
    'pytest --ignore=tests/slow --deselect tests/a.py::test_x',
    'pytest ./tests/test_git.py',
    'pytest /work/project/tests',
    'cd sub && pytest tests',
    'pytest -- tests/test_a.py',
  ])('a rule for pytest allows %j', async (command) => {
    expect(await decide(command, [prefix('pytest'), prefix('cd')])).toBe('allow');
  });

  it('a rule that names an option covers it', async () => {
    expect(await decide('pytest --benchmark-only tests', [prefix('pytest --benchmark-only')])).toBe('allow');
    expect(await decide('pytest --benchmark-only --benchmark-json=README.md', [prefix('pytest --benchmark-only')])).toBe('ask');
  });

  it.each(['py.test', 'pytest-3', 'pytest3'])('a rule for %s, another name pytest is installed under, is judged as one for pytest', async (alias) => {
    for (const command of ['.git/COMMIT_EDITMSG', '--doctest-glob=* ../other', '../other', '-p evil', '--benchmark-json=README.md']) {
      expect(await decide(`${alias} ${command}`, [prefix(alias)])).toBe('ask');
    }
    expect(await decide(`${alias} -x -q tests`, [prefix(alias)])).toBe('allow');
  });

  it('through a runner too', async () => {
    expect(await decide('uv run pytest -q .git/COMMIT_EDITMSG', [prefix('uv run pytest')])).toBe('ask');
    expect(await decide('uv run pytest -q ../other', [prefix('uv run pytest')])).toBe('ask');
    expect(await decide('uv run pytest -q tests', [prefix('uv run pytest')])).toBe('allow');
  });
});

describe('vitest and jest: a rule covers known options and tests in the workspace, not a config a call wrote or a folder elsewhere', () => {
  it.each([
    // `git commit -m …` (allowed by a `git commit` rule) writes the message there; the runner loaded it as its config.
    ['vitest', 'vitest --config=.git/COMMIT_EDITMSG'],
    ['vitest', 'vitest -c .git/COMMIT_EDITMSG'],
    ['vitest', 'vitest run --globalSetup=./.git/COMMIT_EDITMSG'],
    ['vitest', 'vitest --setupFiles src/x.ts'],
    ['vitest', 'vitest --setup-files=src/x.ts'],
    ['vitest', 'vitest --environment ./.git/x.js'],
    ['vitest', 'vitest --reporter=./.git/x.js'],
    ['vitest', 'vitest --reporter ./x.js'],
    ['vitest', 'vitest --pool=./x.js'],
    ['vitest', 'vitest --outputFile=README.md --reporter=json'],
    ['vitest', 'vitest --coverage --coverage.reportsDirectory=/tmp/x'],
    ['vitest', 'vitest --api'],
    ['vitest', 'vitest -wc x'],
    ['vitest', 'vitest init browser'],
    ['vitest', 'vitest run .git/COMMIT_EDITMSG'],
    ['vitest', 'vitest run -- .git/x.ts'],
    // Another folder's tests and config, as `cd there && vitest` would run them.
    ['vitest', 'vitest run ../other'],
    ['vitest', 'vitest --root /tmp/x'],
    ['vitest', 'vitest -r /tmp/x'],
    ['vitest', 'vitest --dir ../other'],
    ['vitest', 'vitest run ~/other'],
    ['vitest', 'vitest -t name ../other'],
    ['vitest', 'vitest -t ../other'],
    ['vitest', 'vitest $X'],
    ['vitest', 'vitest "$HOME"'],
    ['vitest run', 'vitest run ../other'],
    ['vitest', 'cd sub && vitest run ../../x'],
    ['pnpm exec vitest', 'pnpm exec vitest --config .git/COMMIT_EDITMSG'],
    ['pnpm exec vitest', 'pnpm exec vitest run ../other'],
    ['pnpm exec vitest', 'pnpm exec vitest --globalSetup=x.ts'],
    ['jest', 'jest --config .git/COMMIT_EDITMSG'],
    ['jest', 'jest -c .git/COMMIT_EDITMSG'],
    ['jest', "jest --config '{\"setupFiles\":[\"./x.js\"]}'"],
    ['jest', 'jest --rootDir /tmp/x'],
    ['jest', 'jest --roots ../other'],
    ['jest', 'jest --setupFiles=./x.js'],
    ['jest', 'jest --globalSetup ./x.js'],
    ['jest', 'jest --testEnvironment ./x.js'],
    ['jest', 'jest --test-runner=./x.js'],
    ['jest', 'jest --transform={}'],
    ['jest', 'jest --outputFile=README.md --json'],
    ['jest', 'jest --coverageDirectory=/tmp/x --coverage'],
    ['jest', 'jest --clearCache'],
    ['jest', 'jest ../other'],
    ['jest', 'jest --runTestsByPath /tmp/x/a.test.js'],
    ['jest', 'jest .git/x.test.js'],
    ['jest', 'jest -ic x'],
    ['pnpm exec jest', 'pnpm exec jest --rootDir /tmp/x'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('cd')])).toBe('ask');
  });

  it.each([
    ['vitest', 'vitest'],
    ['vitest', 'vitest run'],
    ['vitest', 'vitest run src/rules -t "asks about" --reporter=verbose'],
    ['vitest', 'vitest run --reporter dot --passWithNoTests --no-color'],
    ['vitest', 'vitest --run --pass-with-no-tests --bail 1 --maxWorkers=2 --shard=1/3'],
    ['vitest', 'vitest -u src/a.test.ts'],
    ['vitest', 'vitest run --coverage --project web'],
    ['vitest', 'vitest run ./src/git.test.ts /work/project/test'],
    ['vitest', 'cd sub && vitest run test'],
    ['vitest run', 'vitest run test/x.test.ts --testTimeout 10000'],
    ['pnpm exec vitest', 'pnpm exec vitest run test/x.test.ts'],
    ['pnpm exec vitest run', 'pnpm exec vitest run test/x.test.ts'],
    ['jest', 'jest'],
    ['jest', 'jest --ci --runInBand --silent src/a.test.js'],
    ['jest', 'jest -i -t "adds up" --coverage --testTimeout=5000'],
    ['jest', 'jest --watchAll --maxWorkers 2 --bail -u'],
    ['jest', 'jest --findRelatedTests src/a.js src/b.js'],
    ['jest', 'jest --testPathPattern "src/.*\\.test" --no-cache'],
    ['jest', 'jest -- src/a.test.js'],
    ['pnpm exec jest', 'pnpm exec jest src/a.test.js'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('cd')])).toBe('allow');
  });

  it('a rule that names an option covers it', async () => {
    expect(await decide('vitest --config vitest.e2e.ts run', [prefix('vitest --config vitest.e2e.ts')])).toBe('allow');
    expect(await decide('vitest --config vitest.e2e.ts --globalSetup=x.ts', [prefix('vitest --config vitest.e2e.ts')])).toBe('ask');
    expect(await decide('vitest init browser', [prefix('vitest init')])).toBe('allow');
  });
});

describe('rspec, phpunit and tox: a rule covers known options and tests in the workspace', () => {
  it.each([
    ['rspec', 'rspec ../other/x_spec.rb'],
    ['rspec', 'rspec /tmp/x/x_spec.rb:12'],
    ['rspec', 'rspec .git/COMMIT_EDITMSG'],
    ['rspec', 'rspec -r ./.git/COMMIT_EDITMSG'],
    ['rspec', 'rspec --require=./x.rb'],
    ['rspec', 'rspec -I /tmp/x'],
    ['rspec', 'rspec -f my_formatter'],
    ['rspec', 'rspec -fmy_formatter'],
    ['rspec', 'rspec --format=./.git/x'],
    ['rspec', 'rspec --out README.md'],
    ['rspec', 'rspec --default-path ../other'],
    ['rspec', 'rspec --options .git/COMMIT_EDITMSG'],
    ['rspec', 'rspec --init'],
    ['rspec', 'rspec --pattern "../**/*_spec.rb"'],
    ['bundle exec rspec', 'bundle exec rspec -r ./.git/COMMIT_EDITMSG'],
    ['bundle exec rspec', 'bundle exec rspec ../other'],
    ['phpunit', 'phpunit ../other'],
    ['phpunit', 'phpunit .git/x.php'],
    ['phpunit', 'phpunit -c .git/COMMIT_EDITMSG'],
    ['phpunit', 'phpunit --configuration=/tmp/x.xml'],
    ['phpunit', 'phpunit --bootstrap ./x.php'],
    ['phpunit', 'phpunit -d auto_prepend_file=x.php'],
    ['phpunit', 'phpunit --log-junit README.md'],
    ['phpunit', 'phpunit --coverage-html /tmp/x'],
    ['tox', 'tox -c ../other'],
    ['tox', 'tox -c .git/COMMIT_EDITMSG'],
    ['tox', 'tox --root /tmp/x'],
    ['tox', 'tox -x "testenv.commands=id"'],
    ['tox', 'tox -e py -- -p plugin'],
    ['tox', 'tox -e py -- ../other'],
    ['tox', 'tox exec -e py -- id'],
    ['tox', 'tox devenv venv'],
    ['tox', 'tox run ../other'],
    ['tox', 'tox $X'],
    ['tox', 'tox --installpkg ../x.whl'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('cd')])).toBe('ask');
  });

  it.each([
    ['rspec', 'rspec'],
    ['rspec', 'rspec spec/models/user_spec.rb:12 --fail-fast -fd'],
    ['rspec', 'rspec --format documentation --tag focus -e "creates a user" spec'],
    ['rspec', 'rspec --only-failures --order rand --seed 1234 -cb'],
    ['bundle exec rspec', 'bundle exec rspec spec/a_spec.rb --format=progress'],
    ['phpunit', 'phpunit'],
    ['phpunit', 'phpunit tests/Unit --filter testAdds --stop-on-failure --testdox'],
    ['phpunit', 'phpunit --testsuite=unit --colors=always --no-coverage'],
    ['tox', 'tox'],
    ['tox', 'tox -e py311,lint -q'],
    ['tox', 'tox run -e py -r'],
    ['tox', 'tox -epy -p --parallel-live'],
    ['tox', 'tox list'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('cd')])).toBe('allow');
  });
});

describe('eslint and prettier: a rule covers known options and files in the workspace, not a module a call names or a folder elsewhere', () => {
  it.each([
    // ESLint 10.15 ran `-f ./fmt.cjs` (a formatter is a module) and `../other/b.js` the other folder's eslint.config.cjs.
    ['eslint', 'eslint -f ./fmt.cjs src'],
    ['eslint', 'eslint --format=./fmt.cjs src'],
    ['eslint', 'eslint -f compact src'],
    ['eslint', 'eslint --plugin evil src'],
    ['eslint', 'eslint -c ./x.js src'],
    ['eslint', 'eslint --config=.git/COMMIT_EDITMSG src'],
    ['eslint', 'eslint --parser ./p.js src'],
    ['eslint', 'eslint --parser-options=babelOptions:{configFile:./x.js} src'],
    ['eslint', 'eslint --rule x:error src'],
    ['eslint', 'eslint -o /root/.bashrc src'],
    ['eslint', 'eslint --output-file=README.md src'],
    ['eslint', 'eslint --cache --cache-location /tmp/x src'],
    ['eslint', 'eslint --inspect-config'],
    ['eslint', 'eslint --init'],
    ['eslint', 'eslint --mcp'],
    ['eslint', 'eslint ../other/b.js'],
    ['eslint', 'eslint /tmp/x'],
    ['eslint', 'eslint --print-config ../other/b.js'],
    ['eslint', 'eslint .git/x/y.js'],
    ['eslint', 'cd .. && eslint'],
    ['pnpm exec eslint', 'pnpm exec eslint ../other'],
    // Prettier 3.10.1 loaded `--plugin ./p.cjs`, and for `../other/b.js` the other folder's prettier.config.cjs.
    ['prettier', 'prettier --plugin ./p.cjs a.js'],
    ['prettier', 'prettier --plugin=./p.cjs --check a.js'],
    ['prettier', 'prettier --config ./c.js a.js'],
    ['prettier', 'prettier --cache --cache-location /tmp/x a.js'],
    ['prettier', 'prettier --parser ./p.js a.js'],
    ['prettier', 'prettier ../other/b.js'],
    ['prettier', 'prettier --write /root/.bashrc'],
    ['prettier', 'prettier --write .git/hooks/pre-commit'],
    ['prettier', 'prettier --stdin-filepath ../other/b.js'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('cd')])).toBe('ask');
  });

  it.each([
    ['eslint', 'eslint'],
    ['eslint', 'eslint src --fix --max-warnings 0 -f json'],
    ['eslint', 'eslint . --format=stylish --cache --quiet --no-warn-ignored'],
    ['eslint', 'eslint --ext .ts,.tsx --ignore-pattern dist src'],
    ['eslint', 'eslint --print-config src/a.ts'],
    ['pnpm exec eslint', 'pnpm exec eslint src'],
    ['prettier', 'prettier --check .'],
    ['prettier', 'prettier --write src "**/*.md" --log-level warn'],
    ['prettier', 'prettier -c --single-quote --print-width 100 --parser typescript src/a.ts'],
    ['prettier', 'prettier -l --no-semi --ignore-unknown src'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('cd')])).toBe('allow');
  });

  it('a rule that names an option covers it', async () => {
    expect(await decide('eslint -c eslint.strict.js src', [prefix('eslint -c eslint.strict.js')])).toBe('allow');
    expect(await decide('prettier --plugin prettier-plugin-x --check .', [prefix('prettier --plugin prettier-plugin-x')])).toBe('allow');
  });
});

describe('rspec, phpunit and tox: an abbreviated long option is judged as the option it stands for', () => {
  it.each([
    // Ruby's OptionParser takes a start of each word of a name, in any case, `_` for `-`.
    ['rspec', 'rspec --requ=../x.rb'],
    ['rspec', 'rspec --req ./.git/COMMIT_EDITMSG'],
    ['rspec', 'rspec --REQUIRE=./x.rb'],
    ['rspec', 'rspec --form my_formatter'],
    ['rspec', 'rspec --form=./.git/x'],
    ['rspec', 'rspec --d-p ../other'],
    ['rspec', 'rspec --def ../other'],
    ['rspec', 'rspec --opt .git/COMMIT_EDITMSG'],
    ['rspec', 'rspec --dep x.log'],
    // Ambiguous: `--options`, `--order`, `--out`, `--only-failures`; `--fail-fast`, `--format`, `--force-color` ….
    ['rspec', 'rspec --o x'],
    ['rspec', 'rspec --f d'],
    ['tox', 'tox --conf ../other'],
    ['tox', 'tox --con ../other'],
    ['tox', 'tox --wor /tmp/x'],
    ['tox', 'tox --ro /tmp/x'],
    ['tox', 'tox --over testenv.commands=id'],
    ['tox', 'tox --installp ../x.whl'],
    ['tox', 'tox --resu /tmp/x.json'],
    ['tox', 'tox --p'],
    ['phpunit', 'phpunit --conf=/tmp/x.xml'],
    ['phpunit', 'phpunit --boot ./x.php'],
    ['phpunit', 'phpunit --log-j README.md'],
    ['phpunit', 'phpunit --testdox-h /tmp/x'],
    ['phpunit', 'phpunit --prin X'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('ask');
  });

  it.each([
    ['rspec', 'rspec --form d --fail-f spec'],
    ['rspec', 'rspec --only --ord rand --dry'],
    ['rspec', 'rspec --FORMAT=progress --next_failure'],
    ['tox', 'tox --recr -e py'],
    ['tox', 'tox --parallel-l --colo no'],
    ['phpunit', 'phpunit --stop-on-fail --filt testAdds --no-cov'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule)])).toBe('allow');
  });
});

describe('go: a rule covers packages in the workspace only', () => {
  it.each([
    // "Always allow" on `go test ./...` proposes this rule.
    ['go test', 'go test ../other/...'],
    ['go test', 'go test /tmp/x/...'],
    ['go test', 'go test ~/x'],
    ['go test', 'go test -run TestA $HOME/x'],
    ['go build', 'go build ../other'],
    ['go vet', 'go vet ../x'],
    ['go fmt', 'go fmt ../x'],
    ['go test', 'cd sub && go test ../../x/...'],
  ])('a rule for %s asks about %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('cd')])).toBe('ask');
  });

  it.each([
    ['go test', 'go test ./...'],
    ['go test', 'go test -run TestA ./pkg/... example.com/mod/x'],
    ['go test', 'cd sub && go test ./...'],
    ['go test', 'go test /work/project/pkg'],
  ])('a rule for %s allows %j', async (rule, command) => {
    expect(await decide(command, [prefix(rule), prefix('cd')])).toBe('allow');
  });
});

describe('test runners and a link inside the workspace that leads out', () => {
  it.each(['pytest out', 'pytest out/test_x.py', 'pytest sub/away', 'go test ./out/...', 'pytest in/../.git/x.txt', 'vitest run out', 'jest sub/away'])('asks about %j', async (command) => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    const other = path.join(folder.path, 'other');
    await mkdir(other);
    await writeFile(path.join(other, 'conftest.py'), 'open("PWNED", "w")\n');
    await mkdir(path.join(workspace, 'sub'), { recursive: true });
    await symlink(other, path.join(workspace, 'out'));
    await symlink('../../other', path.join(workspace, 'sub', 'away'));
    await symlink('sub', path.join(workspace, 'in'));
    await mkdir(path.join(workspace, 'clean'));
    const rules = [prefix('pytest'), prefix('go test'), prefix('vitest'), prefix('jest')];
    const judge = async (line: string) => (await evaluateRules(terminal(line), rules, { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) })).decision;
    expect(await judge(command)).toBe('ask');
    expect(await judge('pytest clean')).toBe('allow');
    // `sub` holds `away`, which pytest's collection follows.
    expect(await judge('pytest sub')).toBe('ask');
  });
});

describe('test runners and a link the repository holds that leads into .git', () => {
  it.each([
    'pytest docs/COMMIT_EDITMSG',
    'pytest docs/hooks',
    'pytest docs',
    'pytest -q upper/COMMIT_EDITMSG',
    'pytest /WORKSPACE/docs/COMMIT_EDITMSG',
    'pytest sub/git/COMMIT_EDITMSG',
    'cd docs && pytest hooks',
    'cd sub && pytest git',
    'vitest run docs/x.test.ts',
    'jest --testTimeout 5 docs',
    'rspec docs/COMMIT_EDITMSG',
    'phpunit docs/x.php',
    // With no operand a runner collects the folder it runs in: judged as `pytest docs` is.
    'cd docs && pytest',
    'cd docs; pytest -q',
    'pushd docs && pytest',
    'cd sub/git && vitest',
    'cd docs && make test',
    'cd .git && pytest',
    'cd sub && cd git && jest',
  ])('asks about %j', async (command) => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    await mkdir(path.join(workspace, '.git', 'hooks'), { recursive: true });
    await mkdir(path.join(workspace, 'sub'), { recursive: true });
    await mkdir(path.join(workspace, 'tests'), { recursive: true });
    await writeFile(path.join(workspace, '.git', 'COMMIT_EDITMSG'), '>>> open("PWNED", "w")\n');
    // Checked in as links: git keeps a link as its target's text.
    await symlink('.git', path.join(workspace, 'docs'));
    await symlink('.git', path.join(workspace, 'upper'));
    await symlink('../.git', path.join(workspace, 'sub', 'git'));
    const rules = [prefix('pytest'), prefix('vitest'), prefix('jest'), prefix('rspec'), prefix('phpunit'), prefix('cd'), prefix('pushd'), prefix('make test'), prefix('ls')];
    const judge = (line: string) => evaluateRules(terminal(line), rules, { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) });
    expect((await judge(command.replace('/WORKSPACE', workspace))).decision).toBe('ask');
    expect((await judge('ls tests && cd tests && pytest .')).decision).toBe('allow');
    expect((await judge('cd tests && pytest')).decision).toBe('allow');
    expect((await judge('ls tests && cd tests && make test')).decision).toBe('allow');
    // `sub` holds `git`, a link into .git that pytest's collection follows.
    expect((await judge('cd sub && pytest')).decision).toBe('ask');
  });

  it.each(['cd .git && pytest', 'cd .git/hooks; make test', 'cd src/.GIT && vitest'])('by the text of the `cd`s alone, asks about %j', async (command) => {
    const rules = [prefix('pytest'), prefix('vitest'), prefix('make test'), prefix('cd')];
    expect(await decide(command, rules)).toBe('ask');
    expect(await decide('cd src && pytest', rules)).toBe('allow');
    expect(await decide('cd src/git && make test', rules)).toBe('allow');
  });

  it('names a word that leads out of the workspace as the reason, not as under .git', async () => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    await mkdir(workspace);
    const decided = await evaluateRules(terminal('pytest ../other'), [prefix('pytest')], { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) });
    expect(decided).toMatchObject({ decision: 'ask', leadsOut: { kind: 'named', text: '../other' } });
  });
});
