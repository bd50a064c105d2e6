import { isExactOnlyCommand } from '@airlock/api';
import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, rule, terminal } from './rule-fixtures';

describe('any program after a cd that may leave the workspace: no command rule covers it', () => {
  // The person's rules for moving about and for the project's own builds and tests: each alone is theirs, not the
  // Makefile, scripts or conftest.py of a folder they never saw.
  const rules = [
    prefix('cd'),
    prefix('pushd'),
    prefix('popd'),
    prefix('source env.sh', { exact: true }),
    prefix('make test'),
    prefix('npm test'),
    prefix('pytest'),
    prefix('./configure'),
    prefix('uv run pytest'),
    prefix('ls'),
  ];
  const decideLine = async (command: string, more = rules) => (await evaluateRules(terminal(command), more, context)).decision;

  it.each([
    // Each runs code of the folder it runs in: a Makefile, package.json's scripts, conftest.py, ./configure itself.
    'cd ~/other && make test',
    'cd ~/other && npm test',
    'cd /tmp/x; ./configure',
    'cd "$X" && pytest',
    'cd .. && make test',
    'cd -P /tmp && npm test',
    'pushd /tmp/x && npm test',
    // Home, the folder before, one from the stack, and wherever a sourced file leads.
    'cd && make test',
    'cd - && pytest',
    'popd && make test',
    'pushd +1 && ./configure',
    'source env.sh && make test',
    // Judged by the cds before it: from `sub`, `../..` climbs out.
    'cd sub && cd ../.. && make test',
    // Every command after the cd, also one the cd does not come right before, or behind a runner, or one that reads
    // no code of the folder: what a command does there is not judged.
    'cd /tmp && make test && npm test',
    'cd /tmp && uv run pytest',
    'cd /tmp && ls',
    'cd /tmp && cd x && make test',
  ])('asks about %j', async (command) => {
    expect(await decideLine(command)).toBe('ask');
  });

  it('an exact rule for a command names its words, not the folder it runs in', async () => {
    const exact = [prefix('cd'), prefix('make test', { exact: true }), prefix('./configure', { exact: true })];
    expect(await decideLine('cd ~/other && make test', exact)).toBe('ask');
    expect(await decideLine('cd /tmp/x; ./configure', exact)).toBe('ask');
    expect(await decideLine('cd sub && make test', exact)).toBe('allow');
    expect(await decideLine('cd sub; ./configure', exact)).toBe('allow');
  });

  it.each([
    'cd sub && make test',
    'cd ./sub/dir; ./configure',
    'cd /work/project/sub && npm test',
    'cd sub && cd x && pytest',
    'pushd sub && pytest',
    'cd sub && uv run pytest',
    // A cd after the command moves nothing it does; a line with no cd is not touched.
    'make test && cd /tmp',
    'npm test',
  ])('still allows %j', async (command) => {
    expect(await decideLine(command)).toBe('allow');
  });

  it('an exact rule for the whole line, cd and all, still allows that line and no other', async () => {
    const line = rule({ tool: 'terminal', match: { kind: 'exact-arguments', arguments: { command: 'cd ~/other && make test' } } });
    expect(await decideLine('cd ~/other && make test', [line])).toBe('allow');
    expect(await decideLine('cd ~/other && make test', [...rules, line])).toBe('allow');
    expect(await decideLine('cd ~/other && npm test', [...rules, line])).toBe('ask');
  });

  it('says why the line is asked: the command that may leave the workspace, and the rule of the command after it', async () => {
    const ruleFor = (tokens: string) => rules.find((candidate) => candidate.match.kind === 'command-prefix' && candidate.match.tokens.join(' ') === tokens)!;
    const judge = (command: string) => evaluateRules(terminal(command), rules, context);
    expect(await judge('cd /tmp && ls')).toStrictEqual({ decision: 'ask', within: ruleFor('ls'), leadsOut: { kind: 'moved', text: 'cd /tmp' } });
    expect(await judge('cd sub && cd ../.. && make test')).toStrictEqual({ decision: 'ask', within: ruleFor('make test'), leadsOut: { kind: 'moved', text: 'cd ../..' } });
    expect(await judge('popd && pytest')).toStrictEqual({ decision: 'ask', within: ruleFor('pytest'), leadsOut: { kind: 'moved', text: 'popd' } });
    expect(await judge('cd "$X" && npm test')).toStrictEqual({ decision: 'ask', within: ruleFor('npm test'), leadsOut: { kind: 'moved', text: 'cd $X' } });
    expect(await judge('ls && cd /tmp && cd x && make test')).toStrictEqual({ decision: 'ask', within: ruleFor('make test'), leadsOut: { kind: 'moved', text: 'cd /tmp' } });
    expect(await judge('cd /tmp && cd x')).toStrictEqual({ decision: 'ask', within: ruleFor('cd'), leadsOut: { kind: 'moved', text: 'cd /tmp' } });
    // A command no rule covers anywhere is asked about as before, with no reason of this kind.
    expect(await judge('cd /tmp && rm x')).toStrictEqual({ decision: 'ask' });
  });

  it.each([
    // Each runs what the project of the folder it runs in defines: a Taskfile, a justfile, a Rakefile, a build.gradle,
    // a pom.xml, a pixi.toml's tasks, a pyproject's scripts, a package.json's binaries.
    'just test',
    'rake test',
    'task build',
    'gradle test',
    'mvn test',
    'sbt test',
    'mix test',
    'tox',
    'nox',
    'nx test app',
    'gmake test',
    'pipenv run test',
    'pdm run test',
    'hatch run test',
    'bundle exec rake',
    'deno task test',
    'npx vitest',
    'pixi run test',
    'rye run test',
    'conda run tests',
    'mamba run tests',
  ])('a rule for %j, exact or not, does not cover it run in .git, where a call may have written the project it reads', async (command) => {
    // deno and npx run whatever they are given: only an exact rule names them.
    for (const exact of isExactOnlyCommand(command.split(' ')[0]!) ? [true] : [false, true]) {
      const own = [prefix('cd'), prefix(command, { exact })];
      expect(await decideLine(`cd .git/hooks && ${command}`, own), `${command} exact: ${exact}`).toBe('ask');
      expect(await decideLine(`cd src && ${command}`, own), `${command} exact: ${exact}`).toBe('allow');
    }
  });

  it('a deny rule still denies after such a cd', async () => {
    const deny = prefix('make', { effect: 'deny' });
    expect(await decideLine('cd ~/other && make test', [...rules, deny])).toBe('deny');
    expect(await decideLine('cd sub && make test', [...rules, deny])).toBe('deny');
  });
});
