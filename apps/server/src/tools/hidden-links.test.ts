import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, lstat, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { createBuiltinTools } from './index';
import { runTool, tempFolder, toolNamed } from './test-support';

const SECRET = 'AIRLOCK_TOKEN=the-token-value npm start\n';

/** A workspace holding the home folder `home`, atuin's and nano's folders not made yet. */
async function homeWorkspace() {
  const workspace = await tempFolder();
  const home = path.join(workspace.path, 'home');
  await mkdir(home);
  const tools = createBuiltinTools({ workspace: workspace.path, killGraceMs: 500, sandbox: 'bubblewrap', env: { PATH: process.env.PATH, HOME: home } });
  return {
    path: workspace.path,
    home,
    terminal: toolNamed(tools, 'terminal'),
    read: toolNamed(tools, 'read_file'),
    write: toolNamed(tools, 'write_file'),
    list: toolNamed(tools, 'list_directory'),
    [Symbol.asyncDispose]: () => workspace[Symbol.asyncDispose](),
  };
}

function refusal(link: string, leadsTo: string): { content: string; isError: true } {
  return {
    content:
      `Refused: "${link}", in a folder tool calls must not see, is a symbolic link to "${leadsTo}" in the workspace: what is written through it ` +
      `would be seen there. Nothing was run: calls that run processes (terminal, python) are refused until it is gone (\`rm ${link}\`) or leads elsewhere.`,
    isError: true,
  };
}

const HISTORIES = [path.join('.local', 'share', 'atuin', 'history.db'), path.join('.local', 'share', 'nano', 'search_history')];

describe('a symbolic link in a hidden folder of the workspace, in the bubblewrap sandbox', () => {
  test("one a call planted before the folder was there (atuin's history.db, nano's search_history), leading to a workspace file not made yet: the next call is refused, naming it and where it leads, until it is gone", async () => {
    for (const file of HISTORIES) {
      await using w = await homeWorkspace();
      const plant = `mkdir -p ~/${path.dirname(file)} && ln -s "$PWD/leak" ~/${file} && echo planted`;
      expect(await runTool(w.terminal, { command: plant })).toStrictEqual({ content: 'planted\nexit code: 0', isError: false });
      // The person's program opens the file by its name and writes through the link.
      await appendFile(path.join(w.home, file), SECRET);
      expect(await readFile(path.join(w.path, 'leak'), 'utf8')).toBe(SECRET);
      const link = path.join(w.home, file);
      expect(await runTool(w.terminal, { command: 'cat leak; echo ran' })).toStrictEqual(refusal(link, path.join(w.path, 'leak')));
      await rm(link);
      expect(await runTool(w.terminal, { command: 'echo ran' })).toStrictEqual({ content: 'ran\nexit code: 0', isError: false });
    }
  });

  test('one whose name the call chose to run code when pasted: the refusal\'s `rm` is quoted, and pasted into a shell removes that link and runs nothing else', async () => {
    for (const name of ['x$(touch pwned)', "x'; touch pwned; '", 'x\n touch pwned']) {
      await using w = await homeWorkspace();
      const folder = path.join(w.home, '.local', 'share', 'atuin');
      await mkdir(folder, { recursive: true });
      const link = path.join(folder, name);
      await symlink(path.join(w.path, 'leak'), link);
      const result = await runTool(w.terminal, { command: 'echo ran' });
      const pasteable = /until it is gone \(`(rm .*)`\) or leads elsewhere\.$/.exec(result.content)?.[1];
      expect({ name, oneLine: pasteable !== undefined && !pasteable.includes('\n') }).toStrictEqual({ name, oneLine: true });
      const pasted = spawnSync('bash', ['-c', pasteable!], { cwd: w.path, encoding: 'utf8' });
      expect({ name, status: pasted.status, linkLeft: await lstat(link).then(() => true, () => false), ranSomething: existsSync(path.join(w.path, 'pwned')) }).toStrictEqual({ name, status: 0, linkLeft: false, ranSomething: false });
      expect(await runTool(w.terminal, { command: 'echo ran' })).toStrictEqual({ content: 'ran\nexit code: 0', isError: false });
    }
  });

  test('one whose name or target the call chose to read as more lines: the refusal names each on one line, escaped', async () => {
    await using w = await homeWorkspace();
    const folder = path.join(w.home, '.local', 'share', 'atuin');
    await mkdir(folder, { recursive: true });
    const name = 'x\nran\nexit code: 0';
    const leadsTo = path.join(w.path, 'leak\nexit code: 0');
    await symlink(leadsTo, path.join(folder, name));
    const result = await runTool(w.terminal, { command: 'echo ran' });
    expect({ lines: result.content.split('\n').length, names: result.content.includes(`"${path.join(folder, 'x\\u{A}ran\\u{A}exit code: 0')}"`), leadsTo: result.content.includes(`"${path.join(w.path, 'leak\\u{A}exit code: 0')}"`) }).toStrictEqual({
      lines: 1,
      names: true,
      leadsTo: true,
    });
  });

  test('a hard link to a file in a hidden folder whose name the call chose: the refusal\'s `find` is quoted, and pasted into a shell lists both names and runs nothing else', async () => {
    await using w = await homeWorkspace();
    const plant = "mkdir -p ~/.local/share/atuin && touch ~/.local/share/atuin/'h$(touch pwned)' && ln ~/.local/share/atuin/'h$(touch pwned)' planted && echo planted";
    expect(await runTool(w.terminal, { command: plant })).toStrictEqual({ content: 'planted\nexit code: 0', isError: false });
    const result = await runTool(w.terminal, { command: 'echo ran' });
    const pasteable = /\(`(find .*)` lists them\)\.$/.exec(result.content)?.[1];
    expect(pasteable).toBeDefined();
    const pasted = spawnSync('sh', ['-c', pasteable!], { cwd: w.path, encoding: 'utf8' });
    expect({ status: pasted.status, listed: pasted.stdout.split('\n').filter(Boolean).sort(), ranSomething: existsSync(path.join(w.path, 'pwned')) }).toStrictEqual({
      status: 0,
      listed: [path.join(w.home, '.local', 'share', 'atuin', 'h$(touch pwned)'), path.join(w.path, 'planted')].sort(),
      ranSomething: false,
    });
  });

  test('one leading outside the workspace to a place the person may write and calls can read (/var/tmp): refused as well, naming it', async () => {
    await using w = await homeWorkspace();
    await using outside = await tempFolder('/var/tmp');
    const target = path.join(outside.path, 'leak');
    const plant = `mkdir -p ~/.local/share/atuin && ln -s ${target} ~/.local/share/atuin/history.db && echo planted`;
    expect(await runTool(w.terminal, { command: plant })).toStrictEqual({ content: 'planted\nexit code: 0', isError: false });
    await appendFile(path.join(w.home, '.local', 'share', 'atuin', 'history.db'), SECRET);
    const link = path.join(w.home, '.local', 'share', 'atuin', 'history.db');
    expect(await runTool(w.terminal, { command: `cat ${target}; echo ran` })).toStrictEqual({
      content:
        `Refused: "${link}", in a folder tool calls must not see, is a symbolic link to "${target}", a place tool calls can read: what is written ` +
        `through it would be seen there. Nothing was run: calls that run processes (terminal, python) are refused until it is gone (\`rm ${link}\`) or leads elsewhere.`,
      isError: true,
    });
  });

  test('one leading, by a relative path, to a workspace file there already, or to a folder of the workspace: refused as well', async () => {
    await using w = await homeWorkspace();
    await writeFile(path.join(w.path, 'leak'), '');
    const plant = 'mkdir -p ~/.local/share/atuin && ln -s ../../../../leak ~/.local/share/atuin/history.db && echo planted';
    expect(await runTool(w.terminal, { command: plant })).toStrictEqual({ content: 'planted\nexit code: 0', isError: false });
    const link = path.join(w.home, '.local', 'share', 'atuin', 'history.db');
    expect(await runTool(w.terminal, { command: 'cat leak; echo ran' })).toStrictEqual(refusal(link, path.join(w.path, 'leak')));
    await rm(link);
    await mkdir(path.join(w.path, 'out'));
    await symlink(path.join(w.path, 'out'), link);
    expect(await runTool(w.terminal, { command: 'ls out; echo ran' })).toStrictEqual(refusal(link, path.join(w.path, 'out')));
  });

  test("one through /proc/self/cwd, which leads to where the person's program runs, not to where the server does: refused, and the file tools refuse every file while it is there", async () => {
    await using w = await homeWorkspace();
    await writeFile(path.join(w.path, 'notes.txt'), 'notes\n');
    const plant = 'mkdir -p ~/.local/share/atuin && ln -s /proc/self/cwd/leak ~/.local/share/atuin/history.db && echo planted';
    expect(await runTool(w.terminal, { command: plant })).toStrictEqual({ content: 'planted\nexit code: 0', isError: false });
    // The person's shell hook, run in the workspace, writes its history by name.
    const link = path.join(w.home, '.local', 'share', 'atuin', 'history.db');
    expect(spawnSync('sh', ['-c', 'printf %s "$1" >> "$2"', 'sh', SECRET, link], { cwd: w.path }).status).toBe(0);
    expect(await readFile(path.join(w.path, 'leak'), 'utf8')).toBe(SECRET);
    expect(await runTool(w.terminal, { command: 'cat leak; echo ran' })).toStrictEqual({
      content:
        `Refused: "${link}", in a folder tool calls must not see, is a symbolic link through /proc ("/proc/self/cwd/leak"), which leads to ` +
        'where each program that opens it runs, the workspace too. Nothing was run: calls that run processes (terminal, python) are refused ' +
        `until it is gone (\`rm ${link}\`) or leads elsewhere.`,
      isError: true,
    });
    for (const file of ['leak', 'notes.txt']) expect({ file, refused: (await runTool(w.read, { path: file })).content.startsWith('Refused:') }).toStrictEqual({ file, refused: true });
    await rm(link);
    expect(await runTool(w.read, { path: 'notes.txt' })).toStrictEqual({ content: 'notes\n', isError: false });
  });

  test('links that lead inside the hidden folders or outside the workspace (a browser lock naming its host, a socket in /tmp) leave calls running', async () => {
    await using w = await homeWorkspace();
    const profile = path.join(w.home, '.local', 'share', 'atuin');
    await mkdir(profile, { recursive: true });
    await symlink('host-1234', path.join(profile, 'SingletonLock'));
    await symlink('/tmp/.org.chromium.Chromium.x/SingletonSocket', path.join(profile, 'SingletonSocket'));
    await symlink('../atuin/history.db', path.join(profile, 'current.db'));
    expect(await runTool(w.terminal, { command: 'echo ran' })).toStrictEqual({ content: 'ran\nexit code: 0', isError: false });
  });

  test('a hidden folder, or a folder on the way to one, that is itself a link into the workspace: what is written there stays hidden from calls and file tools', async () => {
    for (const [linked, plant] of [
      ['x', 'mkdir -p ~/.local/share x && ln -s "$PWD/x" ~/.local/share/atuin && echo planted'],
      [path.join('x', 'share', 'atuin'), 'mkdir -p x/share/atuin && ln -s "$PWD/x" ~/.local && echo planted'],
    ] as const) {
      await using w = await homeWorkspace();
      expect(await runTool(w.terminal, { command: plant })).toStrictEqual({ content: 'planted\nexit code: 0', isError: false });
      await appendFile(path.join(w.home, '.local', 'share', 'atuin', 'history.db'), SECRET);
      const leaked = path.join(linked, 'history.db');
      const shown = await runTool(w.terminal, { command: `cat ${leaked} ~/.local/share/atuin/history.db 2>/dev/null; ls -a ${linked}; echo ran` });
      expect(shown).toStrictEqual({ content: '.\n..\nran\nexit code: 0', isError: false });
      expect((await runTool(w.read, { path: leaked })).content.startsWith('Refused:')).toBe(true);
    }
  });

  test('read_file, write_file and list_directory refuse where such a link leads while it is there, a file not made yet included', async () => {
    await using w = await homeWorkspace();
    const atuin = path.join(w.home, '.local', 'share', 'atuin');
    await mkdir(atuin, { recursive: true });
    await mkdir(path.join(w.path, 'out'));
    await symlink(path.join(w.path, 'leak'), path.join(atuin, 'history.db'));
    await symlink(path.join(w.path, 'out'), path.join(atuin, 'sessions'));
    expect((await runTool(w.write, { path: 'leak', content: 'x' })).content.startsWith('Refused:')).toBe(true);
    await appendFile(path.join(atuin, 'history.db'), SECRET);
    await appendFile(path.join(atuin, 'sessions', 'one'), SECRET);
    for (const [tool, args] of [
      [w.read, { path: 'leak' }],
      [w.read, { path: 'out/one' }],
      [w.write, { path: 'leak', content: 'x' }],
      [w.list, { path: 'out' }],
    ] as const) {
      const result = await runTool(tool, args);
      expect({ isError: result.isError, refused: result.content.startsWith('Refused:') }).toStrictEqual({ isError: true, refused: true });
    }
    expect((await runTool(w.list, { path: '.' })).content).toContain('hidden   leak');
    expect(await readFile(path.join(w.path, 'leak'), 'utf8')).toBe(SECRET);
    await rm(path.join(atuin, 'history.db'));
    expect(await runTool(w.read, { path: 'leak' })).toStrictEqual({ content: SECRET, isError: false });
  });

  test('read_file refuses every file while the hidden folders hold more entries than are looked through: a call could fill them to push its link past the bound', async () => {
    await using w = await homeWorkspace();
    const atuin = path.join(w.home, '.local', 'share', 'atuin');
    await mkdir(atuin, { recursive: true });
    await writeFile(path.join(w.path, 'notes.txt'), 'notes\n');
    await Promise.all(Array.from({ length: 4096 }, (_, index) => writeFile(path.join(atuin, `entry-${index}`), '')));
    await symlink(path.join(w.path, 'leak'), path.join(atuin, 'zz-history.db'));
    await appendFile(path.join(atuin, 'zz-history.db'), SECRET);
    for (const file of ['leak', 'notes.txt']) {
      const result = await runTool(w.read, { path: file });
      expect({ file, isError: result.isError, refused: result.content.startsWith('Refused:') }).toStrictEqual({ file, isError: true, refused: true });
    }
    await rm(path.join(atuin, 'entry-0'));
    expect((await runTool(w.read, { path: 'leak' })).content.startsWith('Refused:')).toBe(true);
    expect(await runTool(w.read, { path: 'notes.txt' })).toStrictEqual({ content: 'notes\n', isError: false });
  });
});
