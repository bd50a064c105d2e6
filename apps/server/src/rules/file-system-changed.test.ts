import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCommandLine } from './command-line-reader';
import { commandPathInside } from './command-path-inside';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, rule, SESSION, terminal } from './rule-fixtures';
import { tempFolder } from '../tools/test-support';

beforeAll(() => readCommandLine('true'));

describe('a path after a command on the line that may change the file system: judged as one that may lead anywhere', () => {
  // Rules a person may well hold: each alone is theirs, none for a line that swaps a folder for a link first.
  const rules = [
    prefix('rm'),
    prefix('ln'),
    prefix('cp'),
    prefix('mkdir'),
    prefix('git checkout'),
    prefix('git status'),
    prefix('npm run build'),
    prefix('./make-links.sh', { exact: true }),
    prefix('cd'),
    prefix('pytest'),
    prefix('vitest'),
    prefix('jq'),
    prefix('go test'),
    prefix('make test'),
    prefix('ls'),
    prefix('cat'),
    prefix('grep'),
    prefix('sleep'),
    prefix('tee'),
  ];
  const decide = async (command: string) => (await evaluateRules(terminal(command), rules, context)).decision;

  it.each([
    'rm -rf t && ln -s ../outside t && pytest t',
    'rm -rf t; ln -s ../outside t; pytest t',
    'ln -s .git docs && pytest docs/COMMIT_EDITMSG',
    'cp -r /tmp/x t && jq . t/a.json',
    'cp -r /tmp/x t && go test ./t/...',
    'npm run build && vitest run dist',
    './make-links.sh && pytest t',
    'git status && rm -rf t && ls && pytest t',
    // The folder a `cd` enters too: the branch may hold `tools` as a link out, whose Makefile `make test` runs.
    'git checkout other && cd tools && make test',
    // Run while pytest starts: in the background, or in its pipeline.
    'pytest t & rm -rf t; ln -s ../outside t',
    'pytest t & sleep 1 && rm -rf t && ln -s ../outside t',
    'ls && pytest t | ln -sfn ../outside t',
    'jq . t/a.json | rm -rf t',
    'pytest t | tee log',
    // git after a command that may have written a Git directory it reads (a nested repository's hooks).
    'pytest t; git checkout other',
    // A runner with no operand collects the folder it runs in, following a link the line made there (`t2`); make
    // reads its Makefile there, which `npm run build` or a checkout may have replaced.
    'ln -s ../outside t2 && pytest -q',
    'rm -rf t && ln -s ../outside t && pytest -q',
    'pytest -q t & rm -rf t && ln -s ../outside t && pytest -q',
    'ln -s ../outside t2 & pytest',
    'pytest & ln -s ../outside t2',
    'pytest | ln -s ../outside t2',
    'ln -s ../outside t2; vitest',
    'ln -s ../outside t2 && go test',
    'rm Makefile && ln -s ../outside/Makefile Makefile && make test',
    'npm run build && make test',
    'git checkout other && make test',
    'cd sub && ln -s ../../outside t2 && pytest',
    // A program of the workspace is looked up from the folder it runs in.
    'ln -s ../outside t2 && ./make-links.sh',
    'cd .git && ./make-links.sh',
  ])('asks about %j', async (command) => {
    expect(await decide(command)).toBe('ask');
  });

  it.each([
    // Commands that only read and print, or move the shell, change nothing a later path names.
    'ls t && pytest t',
    'cat t/a.txt && grep -r x t && jq . t/a.json',
    'cd sub && pytest .',
    // mkdir makes only folders where nothing was: a path through one leads where it led before.
    'mkdir -p t/x && pytest t',
    // A command after the paths, once they have been read.
    'pytest t && rm -rf t',
    'pytest t; rm -rf t',
    'pytest t | grep passed',
    'pytest && rm -rf t',
    // The folder a runner collects, before anything on the line may have changed it.
    'pytest -q',
    'ls && cat a.txt && make test',
    'mkdir -p t && cd t && pytest',
  ])('allows %j', async (command) => {
    expect(await decide(command)).toBe('allow');
  });

  it('with links looked up, a folder there now is no sign of where it leads once the line has replaced it', async () => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    await mkdir(path.join(workspace, 't'), { recursive: true });
    await mkdir(path.join(folder.path, 'outside'));
    await writeFile(path.join(folder.path, 'outside', 'conftest.py'), 'open("PWNED", "w")\n');
    await symlink('t', path.join(workspace, 'inside'));
    // Exact rules name the links made, whose targets a prefix rule for `ln` does not cover: what is said is where pytest looks.
    const links = ['ln -s ../outside t', 'ln -s ../outside t2', 'ln -s ../../outside t2'].map((line) => prefix(line, { exact: true }));
    const judge = (command: string) => evaluateRules(terminal(command), [...links, ...rules], { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) });
    const replaced = await judge('rm -rf t && ln -s ../outside t && pytest t');
    expect(replaced).toMatchObject({ decision: 'ask', leadsOut: { kind: 'named', text: 't' } });
    expect((await judge('ls t && pytest t inside')).decision).toBe('allow');
    expect(await judge('ln -s ../outside t2 && pytest -q')).toMatchObject({ decision: 'ask', leadsOut: { kind: 'named', text: '.' } });
    expect(await judge('cd t && ln -s ../../outside t2 && pytest -q')).toMatchObject({ decision: 'ask', leadsOut: { kind: 'named', text: 't' } });
    expect((await judge('ls && cd t && pytest -q')).decision).toBe('allow');
  });

  it('an exact rule names no more where its program runs than a prefix rule does', async () => {
    const exact = [prefix('ln -s ../outside t2', { exact: true }), prefix('pytest -q', { exact: true }), prefix('make test', { exact: true })];
    expect((await evaluateRules(terminal('ln -s ../outside t2 && pytest -q'), exact, context)).decision).toBe('ask');
    expect((await evaluateRules(terminal('ln -s ../outside t2; make test'), exact, context)).decision).toBe('ask');
    expect((await evaluateRules(terminal('pytest -q && make test'), exact, context)).decision).toBe('ask');
    expect((await evaluateRules(terminal('make test'), exact, context)).decision).toBe('allow');
  });

  it('a deny rule still judges such a line whole: where a path leads is no part of what runs', async () => {
    const deny = rule({ effect: 'deny', match: { kind: 'command-prefix', tokens: ['git', 'push'], exact: false } });
    const decided = await evaluateRules(terminal('npm run build && pytest tests'), [...rules, deny], context);
    expect(decided.decision).toBe('ask');
    expect(decided).not.toHaveProperty('because');
  });
});
