import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCommandLine } from './command-line-reader';
import { commandPathInside } from './command-path-inside';
import { evaluateRules } from './evaluate-rules';
import { folderHoldsLinkOut, walkCount } from './links-below';
import { prefix, SESSION, terminal } from './rule-fixtures';
import { tempFolder, type TempFolder } from '../tools/test-support';

beforeAll(() => readCommandLine('true'));

/** A workspace `ws` beside `other`, with tests in `t` and a link inside (`tests -> t`). */
async function workspaceBeside(): Promise<TempFolder & { workspace: string; other: string }> {
  const folder = await tempFolder();
  const workspace = path.join(folder.path, 'ws');
  const other = path.join(folder.path, 'other');
  await mkdir(path.join(workspace, 't'), { recursive: true });
  await mkdir(other);
  await writeFile(path.join(workspace, 't', 'test_t.py'), 'def test_t():\n    pass\n');
  await writeFile(path.join(other, 'conftest.py'), 'open("PWNED", "w")\n');
  await symlink('t', path.join(workspace, 'tests'));
  return { ...folder, workspace, other };
}

describe('the folder a runner reads: a link below it that leads out, whoever made it', () => {
  const rules = [prefix('pytest'), prefix('vitest'), prefix('make test'), prefix('npm test'), prefix('cd'), prefix('git checkout'), prefix('tar')];
  const judge = async (workspace: string, command: string) =>
    evaluateRules(terminal(command), rules, { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) });

  it('allows a runner whose folder holds only links that lead inside', async () => {
    await using folder = await workspaceBeside();
    for (const command of ['pytest -q', 'pytest t', 'make test', 'cd t && pytest', 'npm test', 'vitest run']) {
      expect((await judge(folder.workspace, command)).decision).toBe('allow');
    }
  });

  // `git checkout links` under a rule brought `t/o -> ../../other`: `pytest -q` then ran the other folder's conftest.py.
  it('asks about a runner once a checkout has brought a link that leads out, naming the folder', async () => {
    await using folder = await workspaceBeside();
    const { workspace } = folder;
    execFileSync('git', ['init', '-q', '-b', 'main', workspace]);
    execFileSync('git', ['-C', workspace, '-c', 'user.name=P', '-c', 'user.email=p@example.com', 'commit', '-q', '--allow-empty', '-m', 'start']);
    execFileSync('git', ['-C', workspace, 'checkout', '-q', '-b', 'links']);
    await symlink('../../other', path.join(workspace, 't', 'o'));
    execFileSync('git', ['-C', workspace, 'add', 't/o']);
    execFileSync('git', ['-C', workspace, '-c', 'user.name=P', '-c', 'user.email=p@example.com', 'commit', '-q', '-m', 'link']);
    execFileSync('git', ['-C', workspace, 'checkout', '-q', 'main']);
    expect((await judge(workspace, 'pytest -q')).decision).toBe('allow');
    execFileSync('git', ['-C', workspace, 'checkout', '-q', 'links']);
    const [pytest, , makeTest] = rules;
    expect(await judge(workspace, 'pytest -q')).toStrictEqual({ decision: 'ask', within: pytest, leadsOut: { kind: 'named', text: '.' } });
    expect(await judge(workspace, 'pytest -q t')).toStrictEqual({ decision: 'ask', within: pytest, leadsOut: { kind: 'named', text: 't' } });
    expect(await judge(workspace, 'cd t && make test')).toStrictEqual({ decision: 'ask', within: makeTest, leadsOut: { kind: 'named', text: 't' } });
    expect((await judge(workspace, 'pytest tests')).decision).toBe('ask');
    expect((await judge(workspace, 'npm test')).decision).toBe('ask');
    // A test file alone is collected alone: only a file link in its folders above counts.
    expect((await judge(workspace, 'pytest t/test_t.py')).decision).toBe('allow');
    // An exact rule names the call, not what the folder holds.
    expect((await evaluateRules(terminal('pytest -q'), [prefix('pytest -q', { exact: true })], { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) })).decision).toBe('ask');
  });

  it.each([
    ['a link to a file outside', async (ws: string, other: string) => symlink(path.join(other, 'conftest.py'), path.join(ws, 't', 'conftest.py'))],
    ['a link deep down', async (ws: string) => mkdir(path.join(ws, 't', 'a', 'b', 'c'), { recursive: true }).then(() => symlink('../../../../../other', path.join(ws, 't', 'a', 'b', 'c', 'o')))],
    ['a link into .git', async (ws: string) => mkdir(path.join(ws, '.git')).then(() => symlink('../.git', path.join(ws, 't', 'g')))],
    ['a link that points nowhere, by its text', async (ws: string) => symlink('../../other/not-yet', path.join(ws, 't', 'later'))],
    ['a link that loops', async (ws: string) => symlink('loop', path.join(ws, 't', 'loop'))],
    ['a link inside that leads to a folder holding one out', async (ws: string) => mkdir(path.join(ws, 'lib')).then(() => Promise.all([symlink('../lib', path.join(ws, 't', 'lib')), symlink('../../other', path.join(ws, 'lib', 'o'))]))],
    ['a file link in a folder above a runner’s folder', async (ws: string, other: string) => symlink(path.join(other, 'conftest.py'), path.join(ws, 'conftest.py'))],
  ])('looks for %s', async (_, plant) => {
    await using folder = await workspaceBeside();
    await plant(folder.workspace, folder.other);
    expect((await judge(folder.workspace, 'cd t && pytest -q')).decision).toBe('ask');
    expect((await judge(folder.workspace, 'pytest -q t')).decision).toBe('ask');
  });

  it('does not look in node_modules, nor count the interpreter links of a virtual environment, but judges a link met there', async () => {
    await using folder = await workspaceBeside();
    const { workspace, other } = folder;
    await mkdir(path.join(workspace, '.venv', 'bin'), { recursive: true });
    await writeFile(path.join(workspace, '.venv', 'pyvenv.cfg'), 'home = /usr/bin\n');
    await symlink('/usr/bin/python3', path.join(workspace, '.venv', 'bin', 'python'));
    await symlink('python', path.join(workspace, '.venv', 'bin', 'python3.11'));
    await mkdir(path.join(workspace, 'node_modules', '.bin'), { recursive: true });
    await symlink(other, path.join(workspace, 'node_modules', 'linked'));
    // A folder link above the runner's folder is not read by it.
    await symlink(other, path.join(workspace, 'data'));
    expect((await judge(workspace, 'cd t && pytest -q')).decision).toBe('allow');
    expect((await judge(workspace, 'pytest -q')).decision).toBe('ask');
    await using clean = await workspaceBeside();
    await mkdir(path.join(clean.workspace, '.venv', 'bin'), { recursive: true });
    await writeFile(path.join(clean.workspace, '.venv', 'pyvenv.cfg'), 'home = /usr/bin\n');
    await symlink('/usr/bin/python3', path.join(clean.workspace, '.venv', 'bin', 'python'));
    expect((await judge(clean.workspace, 'pytest -q')).decision).toBe('allow');
    await symlink(other, path.join(clean.workspace, '.hidden'));
    expect((await judge(clean.workspace, 'pytest -q')).decision).toBe('ask');
  });

  it('looks in dot folders, where vitest and jest collect test files, and counts any other link of a virtual environment', async () => {
    await using folder = await workspaceBeside();
    const { workspace, other } = folder;
    await mkdir(path.join(workspace, '.hidden'));
    await symlink(path.join(other, 'conftest.py'), path.join(workspace, '.hidden', 'a.test.mjs'));
    expect((await judge(workspace, 'vitest run')).decision).toBe('ask');
    await using venv = await workspaceBeside();
    await mkdir(path.join(venv.workspace, '.venv', 'bin'), { recursive: true });
    await writeFile(path.join(venv.workspace, '.venv', 'pyvenv.cfg'), 'home = /usr/bin\n');
    await symlink(path.join(venv.other, 'conftest.py'), path.join(venv.workspace, '.venv', 'bin', 'x.test.mjs'));
    expect((await judge(venv.workspace, 'vitest run')).decision).toBe('ask');
  });

  it('counts a folder past its bounds as holding one', async () => {
    await using folder = await workspaceBeside();
    const { workspace } = folder;
    await mkdir(path.join(workspace, 'd', 'e', 'f'), { recursive: true });
    for (const name of ['a', 'b', 'c']) await writeFile(path.join(workspace, 't', name), '');
    const lookUp = (bounds: { maxEntries?: number; maxDepth?: number }) => folderHoldsLinkOut(workspace, bounds);
    expect(await lookUp({})(workspace)).toBe(false);
    expect(await lookUp({ maxEntries: 4 })(path.join(workspace, 't'))).toBe(false);
    expect(await lookUp({ maxEntries: 3 })(path.join(workspace, 't'))).toBe(true);
    expect(await lookUp({ maxDepth: 3 })(workspace)).toBe(false);
    expect(await lookUp({ maxDepth: 2 })(workspace)).toBe(true);
    // Not there: it holds nothing now.
    expect(await lookUp({})(path.join(workspace, 'missing'))).toBe(false);
    const lookUpMissing = folderHoldsLinkOut(path.join(workspace, 'no-workspace'));
    expect(await lookUpMissing(workspace)).toBe(true);
  });

  it('reads a folder of many entries a slice at a time, to the last entry and up to the bound', async () => {
    await using folder = await workspaceBeside();
    const { workspace, other } = folder;
    const many = path.join(workspace, 't', 'many');
    await mkdir(many);
    await Promise.all(Array.from({ length: 1500 }, (_, at) => writeFile(path.join(many, `f${at}.py`), '')));
    expect(await folderHoldsLinkOut(workspace)(many)).toBe(false);
    expect(await folderHoldsLinkOut(workspace, { maxEntries: 1500 })(many)).toBe(false);
    expect(await folderHoldsLinkOut(workspace, { maxEntries: 1499 })(many)).toBe(true);
    await symlink(other, path.join(many, 'zz-out'));
    expect(await folderHoldsLinkOut(workspace)(many)).toBe(true);
    // In a folder above the runner's, a file link among many entries is found too.
    await symlink(path.join(other, 'conftest.py'), path.join(many, 'conftest.py'));
    await mkdir(path.join(many, 'below'));
    expect(await folderHoldsLinkOut(workspace)(path.join(many, 'below'))).toBe(true);
  });

  it('walks a folder once in a judging, however many calls and rules ask about it (a draft rule\'s preview)', async () => {
    await using folder = await workspaceBeside();
    const { workspace } = folder;
    const judging = { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace), linkWalks: new Map() };
    const before = walkCount.walks;
    for (const command of ['pytest -q', 'make test', 'npm test', 'vitest run']) {
      expect((await evaluateRules(terminal(command), rules, judging)).decision, command).toBe('allow');
    }
    expect(walkCount.walks - before).toBe(1);
    // A call judged on its own walks anew: a call may have run since.
    expect((await judge(workspace, 'pytest -q')).decision).toBe('allow');
    expect(walkCount.walks - before).toBe(2);
  });

  it('a given `holdsLinkOut` is what decides, and a throw counts as holding one', async () => {
    const context = { sessionId: SESSION, workspace: '/work/project', leadsInside: () => Promise.resolve(true), leadsUnderGit: () => Promise.resolve(false) };
    const asked: string[] = [];
    const holdsLinkOut = (absolute: string) => {
      asked.push(absolute);
      return Promise.resolve(false);
    };
    expect((await evaluateRules(terminal('cd sub && pytest -q a b'), rules, { ...context, holdsLinkOut })).decision).toBe('allow');
    expect(asked.toSorted()).toStrictEqual(['/work/project/sub/a', '/work/project/sub/b']);
    expect((await evaluateRules(terminal('make test'), rules, { ...context, holdsLinkOut: () => Promise.reject(new Error('EIO')) })).decision).toBe('ask');
  });
});
