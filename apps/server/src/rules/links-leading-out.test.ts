import { MemoryStore } from '@airlock/api';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCommandLine } from './command-line-reader';
import { commandPathInside } from './command-path-inside';
import { evaluateRules } from './evaluate-rules';
import { RuleBook } from './rule-book';
import { prefix, SESSION, terminal } from './rule-fixtures';
import { tempFolder, toolNamed, type TempFolder } from '../tools/test-support';
import { createBuiltinTools } from '../tools';

// The command reader's worker loads the grammar once per file, here rather than inside a test's own time.
beforeAll(() => readCommandLine('true'));

/**
 * A workspace `ws` beside a project it must not reach, `other`, with links a model or a cloned repository could
 * plant: `out` and `sub/away` lead to `other`, `up` to a folder of it (so `up/..` is `other` itself), `data/key.json`
 * to a file of it, `gone` to nowhere there; `in` leads to `sub`, inside.
 */
async function plantedWorkspace(): Promise<TempFolder & { workspace: string }> {
  const folder = await tempFolder();
  const workspace = path.join(folder.path, 'ws');
  const other = path.join(folder.path, 'other');
  await mkdir(path.join(other, 'deep'), { recursive: true });
  await writeFile(path.join(other, 'Makefile'), 'test:\n\ttouch PWNED\n');
  await writeFile(path.join(other, 'secret.json'), '{"token": "s3cret"}\n');
  await mkdir(path.join(workspace, 'sub'), { recursive: true });
  await mkdir(path.join(workspace, 'data'));
  await writeFile(path.join(workspace, 'data', 'ok.json'), '{}\n');
  await symlink(other, path.join(workspace, 'out'));
  await symlink('../../other', path.join(workspace, 'sub', 'away'));
  await symlink('../other/deep', path.join(workspace, 'up'));
  await symlink(path.join(other, 'secret.json'), path.join(workspace, 'data', 'key.json'));
  await symlink(path.join(other, 'missing'), path.join(workspace, 'gone'));
  await symlink('sub', path.join(workspace, 'in'));
  return { ...folder, workspace };
}

/** For tests of where the words lead alone: no folder holds a link that leads out. */
const holdsNone = () => Promise.resolve(false);

describe('a link inside the workspace that leads out: no command rule covers what is done through it', () => {
  const rules = [prefix('cd'), prefix('pushd'), prefix('make test'), prefix('git'), prefix('jq')];
  const decide = async (workspace: string, command: string) =>
    (await evaluateRules(terminal(command), rules, { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) })).decision;

  it.each([
    // Run in `other`: its Makefile, its repository's configuration.
    'cd out && make test',
    'cd out/deep && make test',
    'cd sub/away && make test',
    'cd sub && cd away && make test',
    'cd gone && make test',
    'pushd out && make test',
    'git -C out status',
    'git -C sub -C away status',
    'cd sub && git -C away status',
    // Files of `other` read into the output.
    'jq . out/secret.json',
    'jq . data/key.json',
    "jq -n --rawfile a data/key.json '$a'",
    'cd sub && jq . away/secret.json',
    // `up/..` is `other`, not the workspace: the program hands the kernel the link, not the tidied path.
    'jq . up/../secret.json',
    'cd up/.. && make test',
    // A glob may match such a link: its matches are not listed.
    'jq . data/*.json',
  ])('asks about %j', async (command) => {
    await using folder = await plantedWorkspace();
    expect(await decide(folder.workspace, command)).toBe('ask');
  });

  it('asks about a cd or git -C into a folder not there when the rules are evaluated: the line makes it, perhaps a link', async () => {
    await using folder = await plantedWorkspace();
    const more = [...rules, prefix('ln'), prefix('mkdir')];
    // What the folders hold below is not looked at here (`links-below.test.ts`): only where the `cd`s lead.
    const judge = async (command: string) =>
      (await evaluateRules(terminal(command), more, { sessionId: SESSION, workspace: folder.workspace, leadsInside: commandPathInside(folder.workspace), holdsLinkOut: holdsNone })).decision;
    expect(await judge('ln -s ../other new && cd new && make test')).toBe('ask');
    expect(await judge('ln -s ../other sub/new && git -C sub/new status')).toBe('ask');
    expect(await judge('ln -s ../other new && pushd new/ && make test')).toBe('ask');
    expect(await judge('mkdir new && cd new && make test')).toBe('ask');
    expect(await judge(`ln -s ../other new && cd ${folder.workspace}/new && make test`)).toBe('ask');
    // A folder that is there is judged by where it leads, as before.
    expect(await judge('mkdir -p sub/x && cd sub && make test')).toBe('allow');
  });

  it('asks about an absolute path through such a link', async () => {
    await using folder = await plantedWorkspace();
    expect(await decide(folder.workspace, `jq . ${folder.workspace}/out/secret.json`)).toBe('ask');
    expect(await decide(folder.workspace, `cd ${folder.workspace}/out && make test`)).toBe('ask');
    expect(await decide(folder.workspace, `git -C ${folder.workspace}/out status`)).toBe('ask');
  });

  it.each([
    'cd in && make test',
    'cd sub && make test',
    'cd in && git status',
    'git -C in status',
    'git -C sub status',
    'jq . data/ok.json',
    'jq . in/../data/ok.json',
    // Not made yet: judged by the nearest folder that is.
    'cd sub && jq . new/x.json',
    'cd sub/ && make test',
    'make test',
  ])('still allows %j, whose links lead inside', async (command) => {
    await using folder = await plantedWorkspace();
    // What the folders hold below is not looked at here (`links-below.test.ts`): only where the words lead.
    expect((await evaluateRules(terminal(command), rules, { sessionId: SESSION, workspace: folder.workspace, leadsInside: commandPathInside(folder.workspace), holdsLinkOut: holdsNone })).decision).toBe('allow');
  });

  // `make test` reads the folder it runs in, which holds links that lead out (`out`, `sub/away`).
  it.each(['make test', 'cd in && make test', 'cd sub && make test'])('asks about %j, whose folder holds a link that leads out', async (command) => {
    await using folder = await plantedWorkspace();
    expect(await decide(folder.workspace, command)).toBe('ask');
  });

  it('the server’s rule book looks the links up', async () => {
    await using folder = await plantedWorkspace();
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace: folder.workspace, log: () => undefined });
    for (const command of ['cd', 'make test', 'git']) {
      await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: command.split(' '), exact: false }, scope: { kind: 'global' }, source: 'user' });
    }
    const tool = toolNamed(createBuiltinTools({ workspace: folder.workspace, sandbox: 'none' }), 'terminal');
    const verdict = (command: string) => rules.evaluate(SESSION, { id: 'c1', name: 'terminal', arguments: { command } }, tool, { preview: true });
    expect(await verdict('cd out && make test')).toMatchObject({ effect: 'ask', onlyWhenConfirming: true });
    expect(await verdict('git -C out status')).toMatchObject({ effect: 'ask', onlyWhenConfirming: true });
    // `in` is `sub`, which holds `away`: make's folder holds a link that leads out.
    expect(await verdict('cd in && make test')).toMatchObject({ effect: 'ask', onlyWhenConfirming: true });
    expect(await verdict('git -C in status')).toMatchObject({ effect: 'allow' });
  });

  it("highlight's -B, a search it runs itself, following links below, is never covered by a prefix rule (found in review)", async () => {
    // `highlight -B'*.c' -d out` reads every file the wildcard matches in the folder before its last `/` and in each
    // folder below, following links to files and folders, `node_modules`' too (checked with highlight 3.41): no word
    // of the call names what it reads, and a look for links below leaves `node_modules` out.
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    const outside = path.join(folder.path, 'outside');
    await mkdir(path.join(outside, 'deep'), { recursive: true });
    await writeFile(path.join(outside, 'deep', 'key.c'), 'int key = 42;\n');
    await mkdir(path.join(workspace, 'src'), { recursive: true });
    await writeFile(path.join(workspace, 'src', 'main.c'), 'int main(void) { return 0; }\n');
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
    for (const name of ['highlight', 'cat']) {
      await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: [name], exact: false }, scope: { kind: 'global' }, source: 'user' });
    }
    const tool = toolNamed(createBuiltinTools({ workspace, sandbox: 'none' }), 'terminal');
    const verdict = async (command: string) => (await rules.evaluate(SESSION, { id: 'c1', name: 'terminal', arguments: { command } }, tool, { preview: true }))?.effect;
    const searches = [
      "highlight -B'*.c' -d out",
      "highlight -B 'src/*.c' -d out",
      'highlight -B*.c -d out',
      "highlight -lB'*.c' -d out",
      "highlight --batch-recursive='*.c' -d out",
      "highlight --bat '*.c' -d out",
    ];
    await mkdir(path.join(workspace, 'node_modules'));
    await symlink(path.join(outside, 'deep'), path.join(workspace, 'node_modules', 'pkg'));
    for (const command of searches) expect(await verdict(command), command).toBe('ask');
    for (const command of ['highlight -O ansi src/main.c', 'cat src/*.c']) expect(await verdict(command), command).toBe('allow');
    await symlink(path.join(outside, 'deep', 'key.c'), path.join(workspace, 'link.c'));
    await symlink(outside, path.join(workspace, 'src', 'vendor'));
    for (const command of [...searches, 'highlight link.c', 'cat link.c', 'cat *.c']) expect(await verdict(command), command).toBe('ask');
  });

  it("highlight's -B is covered by no rule, an exact one or one that names it, which a link arriving below later would not change (found in review)", async () => {
    // Stored while no link existed, `highlight --batch-recursive=*.c -d out2` (exact) and `highlight -B*.c -d out`
    // covered the same call after `src/vendor -> /outside` appeared, and highlight 3.41 wrote the outside file's text
    // into out2/: the rule names a wildcard, not what it matches below.
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    const outside = path.join(folder.path, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'key.c'), 'int key = 42;\n');
    await mkdir(path.join(workspace, 'src'), { recursive: true });
    await writeFile(path.join(workspace, 'src', 'main.c'), 'int main(void) { return 0; }\n');
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
    for (const [command, exact] of [
      ['highlight --batch-recursive=*.c -d out2', true],
      ['highlight -B*.c -d out', false],
      ['timeout 60 highlight -B*.c -d out', true],
      ['highlight -O ansi src/main.c', true],
    ] as const) {
      await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: command.split(' '), exact }, scope: { kind: 'global' }, source: 'user' });
    }
    const searches = ["highlight --batch-recursive='*.c' -d out2", "highlight -B'*.c' -d out", "timeout 60 highlight -B'*.c' -d out"];
    const tool = toolNamed(createBuiltinTools({ workspace, sandbox: 'none' }), 'terminal');
    const verdict = async (command: string) => (await rules.evaluate(SESSION, { id: 'c1', name: 'terminal', arguments: { command } }, tool, { preview: true }))?.effect;
    await symlink(outside, path.join(workspace, 'src', 'vendor'));
    for (const command of searches) expect(await verdict(command), command).not.toBe('allow');
    await rm(path.join(workspace, 'src', 'vendor'));
    for (const command of searches) expect(await verdict(command), command).not.toBe('allow');
    expect(await verdict('highlight -O ansi src/main.c')).toBe('allow');
  });

  it('a reader that follows the links below its operands is covered only while none leads out, node_modules’ and .git’s too (found in review)', async () => {
    // Checked with the real programs (GNU grep 3.8, ripgrep, ugrep, ag, ack, Info-ZIP 3.0, GNU tar): each of these
    // printed or packed `outside/s.txt` through `src/vendor -> ../../outside`, and the plain forms did not.
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    const outside = path.join(folder.path, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 's.txt'), 'key=s3cret\n');
    await mkdir(path.join(workspace, 'src'), { recursive: true });
    await mkdir(path.join(workspace, 'docs'));
    await writeFile(path.join(workspace, 'src', 'a.txt'), 'key=ok\n');
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
    for (const name of ['grep', 'rg', 'ugrep', 'ag', 'ack', 'zip', 'tar', 'cp', 'cd']) {
      await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: [name], exact: false }, scope: { kind: 'global' }, source: 'user' });
    }
    const tool = toolNamed(createBuiltinTools({ workspace, sandbox: 'none' }), 'terminal');
    const verdict = async (command: string) => (await rules.evaluate(SESSION, { id: 'c1', name: 'terminal', arguments: { command } }, tool, { preview: true }))?.effect;
    const following = [
      'grep -R key src',
      'grep -R key .',
      'grep -R key',
      'grep -nR key src',
      'grep -R -e key',
      'grep --dereference-recursive key src',
      'grep --deref key src',
      'cd src && grep -R key',
      'rg -L key src',
      'rg -L key',
      'rg --follow key src',
      'rg -iL key src',
      'ugrep -R key src',
      'ugrep -R key',
      'ugrep -rS key src',
      'ugrep --dereference-recursive key src',
      'ugrep -d dereference-recurse key src',
      'ugrep --directories=dereference-recurse key src',
      // ugrep -r follows links to files below, not to folders; the look for links tells neither from the other.
      'ugrep -r key src',
      'ugrep key src',
      'ag -f key src',
      'ag --follow key',
      'ack --follow key src',
      'zip -r o.zip src',
      'zip -qr o.zip .',
      'zip --recurse-paths o.zip src',
      'tar -chf o.tar src',
      'tar --dereference -cf o.tar src',
      'tar -cf o.tar -h -C src .',
    ];
    const plain = [
      'grep -r key src',
      'grep -R key docs',
      'grep key src/a.txt',
      'rg key src',
      'rg -L key docs',
      'ugrep -rp key src',
      'ag key src',
      'ack key src',
      'zip -r -y o.zip src',
      'zip -r o.zip docs',
      'zip o.zip src/a.txt',
      'tar -cf o.tar src',
      'tar -chf o.tar docs',
    ];
    for (const command of [...following, ...plain]) expect(await verdict(command), command).toBe('allow');
    // An archive unpacked before it may bring such a link, below src or as src itself, which grep -r follows too.
    expect(await verdict('tar -xf x.tar && grep -R key src')).toBe('ask');
    expect(await verdict('tar -xf x.tar && grep -r key src')).toBe('ask');
    await symlink('../../outside', path.join(workspace, 'src', 'vendor'));
    for (const command of following) expect(await verdict(command), command).toBe('ask');
    for (const command of plain) expect(await verdict(command), command).toBe('allow');
    // `npm link` leaves such a link in node_modules, which these programs search too (ripgrep with `--no-ignore`), and
    // `cp -rL` copies.
    await rm(path.join(workspace, 'src', 'vendor'));
    await mkdir(path.join(workspace, 'docs', 'node_modules'));
    await symlink(outside, path.join(workspace, 'docs', 'node_modules', 'pkg'));
    for (const command of ['grep -R key docs', 'grep -R key .', 'rg -L --no-ignore key docs', 'zip -r o.zip docs', 'tar -chf o.tar .', 'cp -rL docs d2']) {
      expect(await verdict(command), command).toBe('ask');
    }
    for (const command of ['grep -R key src', 'grep -r key docs', 'zip -r -y o.zip docs', 'cp -r docs d2']) expect(await verdict(command), command).toBe('allow');
    await rm(path.join(workspace, 'docs', 'node_modules'), { recursive: true });
    await mkdir(path.join(workspace, '.git', 'info'), { recursive: true });
    await symlink(outside, path.join(workspace, '.git', 'info', 'o'));
    expect(await verdict('grep -R key .')).toBe('ask');
    expect(await verdict('grep -R key src')).toBe('allow');
  });

  /**
   * A workspace whose `src/s.txt` leads to `outside/s.txt`, with a prefix rule for `name`: how the rule book judges a
   * call of it there. Checked with ugrep 3.11 and Info-ZIP 3.0 in such a folder.
   */
  async function fileLinkVerdict(folder: TempFolder, name: string): Promise<(command: string) => Promise<string | undefined>> {
    const workspace = path.join(folder.path, 'ws');
    const outside = path.join(folder.path, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 's.txt'), 'key=s3cret\n');
    await mkdir(path.join(workspace, 'src'), { recursive: true });
    await mkdir(path.join(workspace, 'docs'));
    await writeFile(path.join(workspace, 'src', 'a.txt'), 'key=ok\n');
    await symlink('../../outside/s.txt', path.join(workspace, 'src', 's.txt'));
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
    await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: [name], exact: false }, scope: { kind: 'global' }, source: 'user' });
    const tool = toolNamed(createBuiltinTools({ workspace, sandbox: 'none' }), 'terminal');
    return async (command) => (await rules.evaluate(SESSION, { id: 'c1', name: 'terminal', arguments: { command } }, tool, { preview: true }))?.effect;
  }

  it('ugrep searching below a folder follows a link to a file there, -r alone or a folder named, unless -p (found in review)', async () => {
    // Each of these printed `outside/s.txt`; with `-p`/`--no-dereference`, or in `docs`, none did.
    await using folder = await tempFolder();
    const verdict = await fileLinkVerdict(folder, 'ugrep');
    for (const command of ['ugrep -r key src', 'ugrep key src', 'ugrep -r key', 'ugrep --recursive key src', 'ugrep -d recurse key src', 'ugrep -rn key src']) {
      expect(await verdict(command), command).toBe('ask');
    }
    for (const command of ['ugrep -rp key src', 'ugrep -r --no-dereference key src', 'ugrep -p -R key src', 'ugrep -r key docs']) expect(await verdict(command), command).toBe('allow');
  });

  it('zip keeps the links below as links with y in a group of short options or --symlinks by any start of it (found in review)', async () => {
    // Each of the allowed stored `src/s.txt` as a link (unzip -Z: lrwxrwxrwx); `-bty` takes `ty` as -b's folder and packed the file.
    await using folder = await tempFolder();
    const verdict = await fileLinkVerdict(folder, 'zip');
    for (const command of ['zip -r o.zip src', 'zip -r -bty o.zip src']) expect(await verdict(command), command).toBe('ask');
    for (const command of ['zip -r -y o.zip src', 'zip -ry o.zip src', 'zip -yr o.zip src', 'zip -r --symlinks o.zip src', 'zip -r --sy o.zip src']) {
      expect(await verdict(command), command).toBe('allow');
    }
  });

  it('diff comparing folders follows the links in them, below them with -r, unless --no-dereference (found in review)', async () => {
    // Checked with GNU diffutils 3.8: `diff -r a b`, `diff a b` and `diff a/notes b` each printed `outside/secret`
    // through `b/notes -> ../../outside/secret`, and `sdiff a b` too; with `--no-dereference` none did.
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    const outside = path.join(folder.path, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'secret'), 'key=s3cret\n');
    for (const name of ['a', 'b', 'c']) {
      await mkdir(path.join(workspace, name), { recursive: true });
      await writeFile(path.join(workspace, name, 'notes'), 'mine\n');
    }
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
    for (const name of ['diff', 'colordiff', 'sdiff', 'tar']) {
      await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: [name], exact: false }, scope: { kind: 'global' }, source: 'user' });
    }
    const tool = toolNamed(createBuiltinTools({ workspace, sandbox: 'none' }), 'terminal');
    const verdict = async (command: string) => (await rules.evaluate(SESSION, { id: 'c1', name: 'terminal', arguments: { command } }, tool, { preview: true }))?.effect;
    const following = [
      'diff -r a b',
      'diff --recursive a b',
      'diff --recur a b',
      'diff -ru a b',
      'diff -r -N a b',
      'diff -Nr b a',
      'diff a b',
      'diff a/notes b',
      'diff --from-file=b a',
      'diff -r -- a b',
      'colordiff -r a b',
      'sdiff a b',
    ];
    const plain = ['diff -r --no-dereference a b', 'diff --no-dereference a b', 'colordiff -r --no-dereference a b', 'diff -r a c', 'diff a/notes c/notes', 'diff -u a/notes c/notes'];
    for (const command of [...following, ...plain]) expect(await verdict(command), command).toBe('allow');
    await rm(path.join(workspace, 'b', 'notes'));
    await symlink('../../outside/secret', path.join(workspace, 'b', 'notes'));
    for (const command of following) expect(await verdict(command), command).toBe('ask');
    for (const command of plain) expect(await verdict(command), command).toBe('allow');
    // An archive unpacked before it may bring such a link below the folders -r reads, or as a file named (found in review).
    expect(await verdict('tar -xf x.tar && diff -r a c')).toBe('ask');
    expect(await verdict('tar -xf x.tar && diff a/notes c/notes')).toBe('ask');
    // Deeper down, only -r reads it: without it, diff reports the common folder and does not go in.
    await rm(path.join(workspace, 'b', 'notes'));
    await mkdir(path.join(workspace, 'b', 'deeper'));
    await mkdir(path.join(workspace, 'c', 'deeper'));
    await symlink('../../../outside/secret', path.join(workspace, 'b', 'deeper', 'notes'));
    for (const command of ['diff -r a b', 'diff -r c b', 'colordiff -r a b']) expect(await verdict(command), command).toBe('ask');
    for (const command of ['diff a b', 'diff c b', 'diff --from-file=b a', 'sdiff a b']) expect(await verdict(command), command).toBe('allow');
  });

  it('says why: where the line leaves the workspace, and the rule that covers it only inside', async () => {
    await using folder = await plantedWorkspace();
    const judge = (command: string) => evaluateRules(terminal(command), rules, { sessionId: SESSION, workspace: folder.workspace, leadsInside: commandPathInside(folder.workspace) });
    const [cd, , makeTest, git, jq] = rules;
    expect(await judge('cd out && make test')).toStrictEqual({ decision: 'ask', within: makeTest, leadsOut: { kind: 'moved', text: 'cd out' } });
    expect(await judge('cd sub && cd away && make test')).toStrictEqual({ decision: 'ask', within: makeTest, leadsOut: { kind: 'moved', text: 'cd away' } });
    expect(await judge('git -C out status')).toStrictEqual({ decision: 'ask', within: git, leadsOut: { kind: 'named', text: 'out' } });
    expect(await judge('jq . data/ok.json && jq . data/key.json')).toStrictEqual({ decision: 'ask', within: jq, leadsOut: { kind: 'named', text: 'data/key.json' } });
    expect(await judge('jq . data/*.json')).toStrictEqual({ decision: 'ask', within: jq, leadsOut: { kind: 'named', text: 'data/*.json' } });
    expect(await judge('git grep --no-index token out')).toStrictEqual({ decision: 'ask', within: git, leadsOut: { kind: 'named', text: 'out' } });
    expect(await judge('cd in && make test')).toStrictEqual({ decision: 'ask', within: makeTest, leadsOut: { kind: 'named', text: 'in' } });
    expect(await judge('make test')).toStrictEqual({ decision: 'ask', within: makeTest, leadsOut: { kind: 'named', text: '.' } });
    const holdingNone = { sessionId: SESSION, workspace: folder.workspace, leadsInside: commandPathInside(folder.workspace), holdsLinkOut: holdsNone };
    expect(await evaluateRules(terminal('cd in && make test'), rules, holdingNone)).toMatchObject({ decision: 'allow', rules: [cd, makeTest] });
  });

  it('the rule book’s ask names the rule and says why, for the card, and leaves confirmation off as it is', async () => {
    await using folder = await plantedWorkspace();
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace: folder.workspace, log: () => undefined });
    const added = [];
    for (const command of ['cd', 'make test', 'git']) {
      added.push(await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: command.split(' '), exact: false }, scope: { kind: 'global' }, source: 'user' }));
    }
    const [, makeTest, git] = added;
    const tool = toolNamed(createBuiltinTools({ workspace: folder.workspace, sandbox: 'none' }), 'terminal');
    const verdict = (command: string) => rules.evaluate(SESSION, { id: 'c1', name: 'terminal', arguments: { command } }, tool);
    expect(await verdict('cd out && make test')).toStrictEqual({
      effect: 'ask',
      ruleId: makeTest!.rule.id,
      description: [
        { code: 'cd out' },
        { text: ' may leave the workspace, and the rule (Allow commands starting with ' },
        { code: 'make test' },
        { text: ' everywhere) covers commands run inside it only' },
      ],
      onlyWhenConfirming: true,
    });
    expect(await verdict('git -C out status')).toStrictEqual({
      effect: 'ask',
      ruleId: git!.rule.id,
      description: [
        { code: 'out' },
        { text: ' may lead outside the workspace (by its text or a link), and the rule (Allow commands starting with ' },
        { code: 'git' },
        { text: ' everywhere) covers what a command names inside it only' },
      ],
      onlyWhenConfirming: true,
    });
  });
});

describe('commandPathInside', () => {
  it('follows links as the kernel does, and counts what it cannot tell as outside', async () => {
    await using folder = await plantedWorkspace();
    const { workspace } = folder;
    const inside = commandPathInside(workspace);
    const answers = await Promise.all(
      ['sub', 'in', 'in/new/file', 'sub/away', 'out/deep', 'up/..', 'gone', 'gone/x', 'sub/new/..', 'data/key.json', `../ws/sub`, 'sub/', 'in/', 'sub/new/', 'data/ok.json/', 'out/'].map(async (relative) => [relative, await inside(`${workspace}/${relative}`)]),
    );
    expect(Object.fromEntries(answers)).toStrictEqual({
      sub: true,
      in: true,
      'in/new/file': true,
      'sub/away': false,
      'out/deep': false,
      'up/..': false,
      // A link to nowhere: a write through it lands where it points.
      gone: false,
      'gone/x': false,
      // Where `..` of a folder not made yet leads depends on what is made there.
      'sub/new/..': false,
      'data/key.json': false,
      '../ws/sub': true,
      // A folder to move to must be there, a folder, and lead inside.
      'sub/': true,
      'in/': true,
      'sub/new/': false,
      'data/ok.json/': false,
      'out/': false,
    });
    expect(await inside(`${workspace}/${'x/'.repeat(2100)}`)).toBe(false);
    expect(await inside('relative/path')).toBe(false);
    expect(await commandPathInside(path.join(workspace, 'not-there'))(`${workspace}/sub`)).toBe(false);
  });
});
