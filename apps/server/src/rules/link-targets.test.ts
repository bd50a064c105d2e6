import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCommandLine } from './command-line-reader';
import { commandPathInside } from './command-path-inside';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, rule, SESSION, terminal } from './rule-fixtures';
import { tempFolder } from '../tools/test-support';

beforeAll(() => readCommandLine('true'));

// A link is a path later calls follow: `ln -s ../other t2`, then `pytest -q` collects t2 and runs ../other/conftest.py;
// `ln -s ../other/.git .git`, then `git status` runs that repository's core.fsmonitor.
describe('a link a command makes: its target judged as a path, from the folder the link is in', () => {
  const rules = [prefix('ln'), prefix('link'), prefix('cp'), prefix('rm'), prefix('cd'), prefix('git status'), prefix('pytest')];
  const decide = async (command: string) => (await evaluateRules(terminal(command), rules, context)).decision;

  it.each([
    'ln -s ../other t2',
    'ln -sf ../other t2',
    'ln -sfn ../other t2',
    'ln -s -- ../other t2',
    'ln --symbolic ../other t2',
    'ln --sym ../other t2',
    'ln -s ../other',
    'ln -s /etc t2',
    'ln -s ~/other t2',
    // From the folder the link is in, not the working folder.
    'ln -s ../../other sub/t2',
    'ln -st sub ../../other',
    'ln -s -t sub ../../other',
    'ln -s --target-directory=sub ../../other',
    'ln -s --target sub ../../other',
    'ln -s a ../../other sub',
    'cd sub && ln -s ../../other t2',
    // A hard link, and `ln -r`, from the working folder.
    'ln -r ../other t2',
    'ln --relative ../other sub/t2',
    'ln ../other/x y',
    'link ../other/x y',
    'cp -s /etc/passwd p',
    'cp --symbolic-link ../other/x y',
    'cp -as ../other/x y',
    'cp -l ../other/x y',
    'cp --link ../other/x y',
    'cp -lt sub ../../other/x',
    // A link made outside, or named .git or under it, or leading into it.
    'ln -s x ../other/t',
    'ln -s ../other/.git .git',
    'ln -s x .git',
    'ln -s x .GIT/hooks/pre-commit',
    'ln -s hooks/x .git',
    'ln -s .git docs',
    'ln -s .git/hooks h',
    'ln .git/config cfg',
    'cp -l .git/config cfg',
    'ln -s sub/../.git docs',
    // A word the shell expands.
    'ln -s "$X" t2',
    'ln -s $HOME/x t2',
    'ln -s ../oth* t2',
    'ln -s a "$X"',
    'cp $X y',
    // A relative text that climbs: it leads inside from here, and out once the link is moved up (mv t/o o).
    'ln -s ../other t/o',
    'ln -s ../lib/a.txt sub/b',
    'ln -sf ../../x sub/deep/y',
    'ln -st sub ../a',
    'ln -sr lib sub/b',
    // Under rules for each command of the line.
    'rm -rf .git && ln -s ../other/.git .git && git status',
    'ln -s ../other t2 && pytest -q',
  ])('asks about %j', async (command) => {
    expect(await decide(command)).toBe('ask');
  });

  it.each([
    'ln -s lib/a.txt b',
    'ln -s a.txt sub/b',
    'ln -srT sub/a sub/b',
    'ln -s /work/project/lib b',
    'ln a b',
    'ln -r lib/a sub/b',
    'link a b',
    'cp -s /work/project/a b',
    'cp -l a b',
    'cp -r src dist',
    'cp src/*.ts dist',
    'ln -s git-hooks hooks',
  ])('allows %j', async (command) => {
    expect(await decide(command)).toBe('allow');
  });

  it('says which target leads out', async () => {
    expect(await evaluateRules(terminal('ln -s ../other t2'), rules, context)).toMatchObject({ decision: 'ask', leadsOut: { kind: 'named', text: '../other' } });
  });

  it('says which climbing text would lead out once the link is moved', async () => {
    expect(await evaluateRules(terminal('ln -s ../lib/a.txt sub/b'), rules, context)).toMatchObject({ decision: 'ask', leadsOut: { kind: 'named', text: '../lib/a.txt' } });
  });

  it('an exact rule names the link it makes', async () => {
    expect((await evaluateRules(terminal('ln -s ../other t2'), [prefix('ln -s ../other t2', { exact: true })], context)).decision).toBe('allow');
  });

  it('deny rules still judge the line whole, and catch what they name beside such a link', async () => {
    const pushDeny = rule({ effect: 'deny', match: { kind: 'command-prefix', tokens: ['git', 'push'], exact: false } });
    const decided = await evaluateRules(terminal('ln -s ../other t2'), [...rules, pushDeny], context);
    expect(decided.decision).toBe('ask');
    expect(decided).not.toHaveProperty('because');
    const rmDeny = rule({ effect: 'deny', match: { kind: 'command-prefix', tokens: ['rm', '-rf'], exact: false } });
    expect((await evaluateRules(terminal('ln -s ../other t2 && rm -rf x'), [...rules, rmDeny], context)).decision).toBe('deny');
  });

  it('with links looked up, where the folder the link is made in leads decides', async () => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    const other = path.join(folder.path, 'other');
    await mkdir(path.join(workspace, 'sub'), { recursive: true });
    await mkdir(path.join(workspace, '.git', 'hooks'), { recursive: true });
    await mkdir(path.join(other, 'deep'), { recursive: true });
    await writeFile(path.join(workspace, 'sub', 'a.txt'), 'a\n');
    await symlink('sub', path.join(workspace, 'in'));
    await symlink('../other/deep', path.join(workspace, 'up'));
    await symlink('.git', path.join(workspace, 'docs'));
    const judge = async (command: string) =>
      (await evaluateRules(terminal(command), rules, { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) })).decision;
    // `up/..` is the other folder itself, and `docs` is .git.
    expect(await judge('ln -s ../x up/y')).toBe('ask');
    expect(await judge('ln -s x up')).toBe('ask');
    expect(await judge('ln -s docs/hooks h')).toBe('ask');
    expect(await judge('ln -s x docs/y')).toBe('ask');
    expect(await judge('ln -st docs ../x')).toBe('ask');
    // `in` is sub: the link is made there, and its target read from there.
    expect(await judge('ln -s a.txt in/b')).toBe('allow');
    expect(await judge('ln -s lib sub/new')).toBe('allow');
    expect(await judge('ln -s ../lib sub/new')).toBe('ask');
    expect(await judge('ln -s ../../x in/b')).toBe('ask');
  });
});
