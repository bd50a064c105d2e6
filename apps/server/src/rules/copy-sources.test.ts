import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCommandLine } from './command-line-reader';
import { commandPathInside } from './command-path-inside';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, rule, SESSION, terminal } from './rule-fixtures';
import { tempFolder } from '../tools/test-support';

beforeAll(() => readCommandLine('true'));

// A copy reads its sources: under a rule for `cp`, `cp ../other/conftest.py .` brought another folder's code in, and
// a later `pytest -q` ran it.
describe('a copy whose source lies outside the workspace', () => {
  const rules = [prefix('cp'), prefix('mv'), prefix('install'), prefix('rsync'), prefix('cd'), prefix('pytest'), prefix('rm')];
  const decide = async (command: string) => (await evaluateRules(terminal(command), rules, context)).decision;

  it.each([
    'cp ../other/conftest.py .',
    'cp -r ../other/x .',
    'cp -a ../other/x .',
    'cp -R -- ../other/x x',
    'cp a.txt ../other/b.txt src/',
    'cp -t . ../other/conftest.py',
    'cp --target-directory=. ../other/conftest.py',
    'cp --target . ../other/conftest.py',
    'cp -T ../other/x x',
    'cp /etc/passwd p',
    'cp ~/.ssh/id_rsa key',
    'cp $HOME/.ssh/id_rsa key',
    'cp ../oth*/conftest.py .',
    'cp -S .bak ../other/x .',
    'cp "$X" .',
    'cp $X .',
    'cp ../other/conftest.py',
    'cd sub && cp ../../other/x .',
    'cd /tmp && cp x ~/y',
    'mv ../other/conftest.py .',
    'mv -t . ../other/x',
    'install ../other/conftest.py conftest.py',
    'install -m 644 ../other/conftest.py conftest.py',
    'install -D -t lib ../other/x',
    'rsync ../other/conftest.py .',
    'rsync -a ../other/pkg/ pkg',
    'rsync -av --delete ../other/ .',
    'rsync ../other/',
    'rsync -a --files-from=/tmp/list src/ dst/',
    'rsync -a --files-from /tmp/list src/ dst/',
    'rsync -a --link-dest=../other src/ dst/',
    'rsync -a --exclude-from ../other/ex src/ dst/',
    "rsync -a -f 'merge ../other/rules' src/ dst/",
    'rsync -a --filter=._../other/rules src/ dst/',
    'rsync -T /tmp/x ../other/x .',
    'rsync --temp-dir /tmp/x ../other/x .',
    // The program install runs on the file it installs.
    'install -s --strip-program=/bin/sh x.sh y',
    'install -s --strip-prog /bin/sh x.sh y',
    // Under rules for each command of the line, then a runner.
    'cp ../other/conftest.py . && pytest -q',
  ])('asks about %j', async (command) => {
    expect(await decide(command)).toBe('ask');
  });

  it.each([
    'cp t/test_a.py t/test_b.py',
    'cp -r src dist',
    'cp src/*.ts dist',
    'cp a.txt ../other/b.txt',
    'cp a.txt /tmp/',
    'cp a.txt ~/backup/',
    'cp -t /tmp a.txt',
    'cp -S ../x a b',
    'mv a.txt b.txt',
    'mv a.txt ../other/',
    'install -d ../other/x',
    'install -m 644 a.sh /usr/local/bin/a',
    'install -g staff -o me a b',
    'rsync -a src/ dst/',
    'rsync -av --exclude node_modules src/ ../backup/',
    'rsync -a --exclude-from=.rsyncignore src/ dst/',
    "rsync -a -f '- *.o' src/ dst/",
    'rsync -a -T /tmp/x src/ dst/',
  ])('allows %j', async (command) => {
    expect(await decide(command)).toBe('allow');
  });

  it('says which source leads out', async () => {
    expect(await evaluateRules(terminal('cp -r ../other/x .'), rules, context)).toMatchObject({ decision: 'ask', leadsOut: { kind: 'named', text: '../other/x' } });
  });

  it('an exact rule names the source it reads', async () => {
    expect((await evaluateRules(terminal('cp ../other/x .'), [prefix('cp ../other/x .', { exact: true })], context)).decision).toBe('allow');
  });

  it('deny rules still judge the line whole', async () => {
    const pushDeny = rule({ effect: 'deny', match: { kind: 'command-prefix', tokens: ['git', 'push'], exact: false } });
    const decided = await evaluateRules(terminal('cp ../other/x .'), [...rules, pushDeny], context);
    expect(decided.decision).toBe('ask');
    expect(decided).not.toHaveProperty('because');
  });

  it('with links looked up, a source that leads out by a link is asked about', async () => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    const other = path.join(folder.path, 'other');
    await mkdir(path.join(workspace, 'sub'), { recursive: true });
    await mkdir(other, { recursive: true });
    await writeFile(path.join(workspace, 'sub', 'a.py'), 'a\n');
    await writeFile(path.join(other, 'conftest.py'), 'a\n');
    await symlink('../other', path.join(workspace, 'up'));
    await symlink('../other/conftest.py', path.join(workspace, 'c.py'));
    await symlink('sub', path.join(workspace, 'in'));
    const judge = async (command: string) =>
      (await evaluateRules(terminal(command), rules, { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) })).decision;
    expect(await judge('cp up/conftest.py .')).toBe('ask');
    expect(await judge('cp c.py d.py')).toBe('ask');
    expect(await judge('rsync -a up/ x/')).toBe('ask');
    expect(await judge('cp *.py sub/')).toBe('ask');
    expect(await judge('cp in/a.py b.py')).toBe('allow');
    expect(await judge('cp -r sub copy')).toBe('allow');
    // Following the links below a source copies what they lead to.
    await mkdir(path.join(workspace, 'tree'));
    await symlink('../../other', path.join(workspace, 'tree', 'o'));
    expect(await judge('cp -r tree copy')).toBe('allow');
    expect(await judge('cp -rL tree copy')).toBe('ask');
    expect(await judge('cp -r --dereference tree copy')).toBe('ask');
    expect(await judge('rsync -aL tree/ copy/')).toBe('ask');
    expect(await judge('rsync -a --copy-links tree/ copy/')).toBe('ask');
  });

  it('with links looked up, a glob source is judged by the folder before it, which every match lies below', async () => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    const other = path.join(folder.path, 'other');
    await mkdir(path.join(workspace, 'sub'), { recursive: true });
    await mkdir(other, { recursive: true });
    await writeFile(path.join(workspace, 'sub', 'a.py'), 'a\n');
    await writeFile(path.join(other, 'conftest.py'), 'a\n');
    await symlink('../other', path.join(workspace, 'up'));
    await symlink('sub', path.join(workspace, 'in'));
    const judge = async (command: string) =>
      (await evaluateRules(terminal(command), rules, { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) })).decision;
    expect(await judge('cp sub/*.py .')).toBe('allow');
    expect(await judge('cp in/*.py .')).toBe('allow');
    expect(await judge('cp -r sub/* copy/')).toBe('allow');
    expect(await judge('cp up/*.py .')).toBe('ask');
    expect(await judge('cp sub/../*.py .')).toBe('ask');
    expect(await judge('cp ~/*.py .')).toBe('ask');
    expect(await judge('cp {sub,up}/*.py .')).toBe('ask');
    expect(await judge('cp sub/.*.py .')).toBe('ask');
    expect(await judge('rm -f sub/x && cp sub/*.py .')).toBe('ask');
    // `up` is in the workspace's folder, which `*` reads.
    expect(await judge('cp * copy/')).toBe('ask');
    await symlink('../../other/conftest.py', path.join(workspace, 'sub', 'conftest.py'));
    expect(await judge('cp sub/*.py .')).toBe('ask');
  });
});

// tar reads what it archives: under rules for `tar` and `pytest`, `tar -cf x.tar -C ../other conftest.py`, then
// `tar -xf x.tar` and `pytest -q`, ran the other folder's conftest.py unasked (found in review).
describe('a tar call that may read outside the workspace', () => {
  const rules = [prefix('tar'), prefix('bsdtar'), prefix('pytest'), prefix('echo')];
  const decide = async (command: string) => (await evaluateRules(terminal(command), rules, context)).decision;

  it.each([
    'tar -cf x.tar -C ../other conftest.py',
    'tar cf x.tar -C ../other conftest.py',
    'tar -cf x.tar -C../other conftest.py',
    'tar --create --file=x.tar --directory=../other conftest.py',
    'tar --create --file x.tar --directory ../other conftest.py',
    'tar -cf x.tar ../other/conftest.py',
    'tar -cf x.tar /etc/passwd',
    'tar -cf x.tar -T ../other/list',
    'tar -xf ../other/x.tar',
    'tar -cf x.tar $DIR',
    'echo ../other/conftest.py | tar -cf x.tar -T -',
    'tar -cf x.tar -T- < list',
    'tar --create --file=x.tar --files-from=- < list',
    'tar --create --file x.tar --files-from - < list',
    'tar cfT x.tar - < list',
    // A list in the workspace names files anywhere (found in review).
    'tar -cf x.tar -T list',
    'tar -cf x.tar --files-fr=list',
    'bsdtar -cf x.tar -T list',
    // An option's value in the next word is taken whatever it starts with: `tar -cf -x/../../x.tar src` wrote the
    // archive above the workspace (found in review, with the real program).
    'tar -cf -x/../../x.tar src',
    'tar -xf -x/../../other/x.tar',
    'tar -c --file -/../../x.tar src',
    'tar -cf x.tar -C -x/../../other conftest.py',
  ])('%s is asked about', async (command) => {
    expect(await decide(command)).toBe('ask');
  });

  it.each(['tar -cf x.tar src', 'tar czf x.tgz -C src .', 'tar -xf x.tar', 'tar -xzf x.tgz -C out', 'tar --list --file=x.tar', 'tar -cf - src', 'tar -cfT x.tar src', 'tar -cf -x/out.tar src'])('%s is allowed', async (command) => {
    expect(await decide(command)).toBe('allow');
  });
});
