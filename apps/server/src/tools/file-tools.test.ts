import type { Dir } from 'node:fs';
import { chmod, link, lstat, mkdir, readdir, readFile, readlink, rename, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import type { AnyTool } from '@airlock/core';
import { describe, expect, test, vi } from 'vitest';
import { resolveToolsOptions } from './builtin-tools-options';
import { createBuiltinTools, type BuiltinToolsOptions } from './index';
import { createListDirectoryTool } from './list-directory-tool';
import { createReadFileTool } from './read-file-tool';
import { runTool, tempFolder, toolNamed } from './test-support';
import { WorkspacePaths, type WorkspaceFolder } from './workspace-paths';
import { createWriteFileTool } from './write-file-tool';

/** A workspace `<parent>/ws` with neighbours that must stay out of reach: `<parent>/ws-evil` and `<parent>/outside.txt`. */
async function fixture(options: Partial<BuiltinToolsOptions> = {}) {
  const parent = await tempFolder();
  const ws = path.join(parent.path, 'ws');
  await mkdir(path.join(ws, 'sub'), { recursive: true });
  await mkdir(`${ws}-evil`);
  await writeFile(path.join(parent.path, 'outside.txt'), 'outside secret\n');
  await writeFile(`${ws}-evil/secret.txt`, 'evil secret\n');
  await writeFile(path.join(ws, 'sub', 'notes.txt'), 'one\ntwo\nthree\nfour\nfive\n');
  const tools = createBuiltinTools({ workspace: ws, ...options });
  return {
    parent: parent.path,
    ws,
    read: toolNamed(tools, 'read_file'),
    write: toolNamed(tools, 'write_file'),
    list: toolNamed(tools, 'list_directory'),
    [Symbol.asyncDispose]: () => parent[Symbol.asyncDispose](),
  };
}

describe('read_file', () => {
  test('reads a file, or a range of its lines', async () => {
    await using f = await fixture();
    expect(await runTool(f.read, { path: 'sub/notes.txt' })).toStrictEqual({ content: 'one\ntwo\nthree\nfour\nfive\n', isError: false });
    expect(await runTool(f.read, { path: 'sub/notes.txt', offset: 2, limit: 2 })).toStrictEqual({
      content: 'two\nthree\n[… showing lines 2–3; more lines follow: read again with offset 4 …]',
      isError: false,
    });
    expect(await runTool(f.read, { path: `${f.ws}/sub/notes.txt`, offset: 5 })).toStrictEqual({ content: 'five\n', isError: false });
    expect(await runTool(f.read, { path: 'sub/notes.txt', offset: 9 })).toStrictEqual({
      content: 'Error: "sub/notes.txt" has only 5 lines; offset 9 is past its end.',
      isError: true,
    });
  });

  test('says a file is empty, at any offset, and tells a FIFO from a file without waiting on it', async () => {
    await using f = await fixture();
    await writeFile(path.join(f.ws, 'empty.txt'), '');
    execFileSync('mkfifo', [path.join(f.ws, 'pipe')]);
    expect(await runTool(f.read, { path: 'empty.txt' })).toStrictEqual({ content: '(empty file)', isError: false });
    expect(await runTool(f.read, { path: 'empty.txt', offset: 3 })).toStrictEqual({ content: '(empty file)', isError: false });
    expect(await runTool(f.read, { path: 'pipe' })).toStrictEqual({ content: 'Error: "pipe" is not a regular file.', isError: true });
  });

  test('stops at the size cap with a marker', async () => {
    await using f = await fixture({ maxReadBytes: 10 });
    await writeFile(path.join(f.ws, 'long.txt'), `${'x'.repeat(30)}\nnext\n`);
    expect(await runTool(f.read, { path: 'long.txt' })).toStrictEqual({
      content: `${'x'.repeat(10)}\n[… truncated: the 10-byte cap was reached in line 1; read again with a later offset …]`,
      isError: false,
    });
  });

  test('refuses directories and binary files', async () => {
    await using f = await fixture();
    await writeFile(path.join(f.ws, 'blob.bin'), Buffer.from([1, 0, 2, 3]));
    expect(await runTool(f.read, { path: 'sub' })).toStrictEqual({ content: 'Error: "sub" is a directory; use list_directory.', isError: true });
    expect(await runTool(f.read, { path: 'blob.bin' })).toStrictEqual({
      content: 'Error: "blob.bin" looks like a binary file (4 bytes); it is not shown.',
      isError: true,
    });
    expect(await runTool(f.read, { path: 'missing.txt' })).toStrictEqual({ content: 'Error: "missing.txt": no such file or directory', isError: true });
    // Described, not quoted: the system's message would name the workspace's path on the host.
    const long = `${'n'.repeat(300)}/x.txt`;
    expect(await runTool(f.read, { path: long })).toStrictEqual({ content: `Error: "${long}": a name in the path is too long`, isError: true });
    expect((await runTool(f.list, { path: 'n'.repeat(300) })).content).not.toContain(f.ws);
  });
});

describe('confinement to the workspace', () => {
  test('every way out is refused with "outside the workspace"', async () => {
    await using f = await fixture();
    await symlink(f.parent, path.join(f.ws, 'up'));
    await symlink(path.join(f.parent, 'outside.txt'), path.join(f.ws, 'outside-link.txt'));
    await symlink(path.join(f.parent, 'not-yet-there.txt'), path.join(f.ws, 'dangling.txt'));
    const attempts: [typeof f.read, Record<string, string>][] = [
      [f.read, { path: '../outside.txt' }],
      [f.read, { path: 'sub/../../outside.txt' }],
      [f.read, { path: path.join(f.parent, 'outside.txt') }],
      [f.read, { path: `${f.ws}-evil/secret.txt` }],
      [f.read, { path: '../ws-evil/secret.txt' }],
      [f.read, { path: 'up/outside.txt' }],
      [f.read, { path: 'outside-link.txt' }],
      [f.read, { path: '/proc/self/environ' }],
      [f.read, { path: '/etc/passwd' }],
      [f.write, { path: '../outside.txt', content: 'overwritten' }],
      [f.write, { path: 'up/new.txt', content: 'escaped' }],
      [f.write, { path: 'outside-link.txt', content: 'overwritten' }],
      [f.write, { path: 'dangling.txt', content: 'created outside' }],
      [f.write, { path: `${f.ws}-evil/new.txt`, content: 'escaped' }],
      [f.list, { path: '..' }],
      [f.list, { path: 'up' }],
      [f.list, { path: '/proc/self' }],
    ];
    for (const [tool, args] of attempts) {
      const result = await runTool(tool, args);
      expect({ args, isError: result.isError, refused: result.content.includes('outside the workspace') }).toStrictEqual({
        args,
        isError: true,
        refused: true,
      });
    }
    expect(await readFile(path.join(f.parent, 'outside.txt'), 'utf8')).toBe('outside secret\n');
    expect(await readdir(f.parent)).toStrictEqual(['outside.txt', 'ws', 'ws-evil']);
    expect(await readdir(`${f.ws}-evil`)).toStrictEqual(['secret.txt']);
  });

  test('a symbolic link that stays inside is neither read nor written through: the refusal names where it leads', async () => {
    await using f = await fixture();
    await symlink(path.join(f.ws, 'sub', 'notes.txt'), path.join(f.ws, 'notes-link.txt'));
    await symlink('sub', path.join(f.ws, 'sub-link'));
    // The card names the link: a read would send the model what it leads to, a write would land there.
    expect(await runTool(f.read, { path: 'notes-link.txt', limit: 1 })).toStrictEqual({
      content:
        'Refused: "notes-link.txt" is a symbolic link to sub/notes.txt; read_file reads through no link, so that the path shown is the file read. ' +
        'Nothing was read. If that is the file you mean, read "sub/notes.txt".',
      isError: true,
    });
    expect((await runTool(f.read, { path: 'sub-link/notes.txt', offset: 5 })).content).toMatch(/^Refused: "sub-link" is a symbolic link to sub;.* read "sub\/notes.txt"\.$/);
    expect(await runTool(f.read, { path: 'sub/notes.txt', offset: 5 })).toStrictEqual({ content: 'five\n', isError: false });
    expect(await runTool(f.write, { path: 'notes-link.txt', content: 'rewritten\n' })).toStrictEqual({
      content:
        'Refused: "notes-link.txt" is a symbolic link to sub/notes.txt; write_file writes through no link, so that the path shown is the file written. ' +
        'Nothing was written. If that is the file you mean, write to "sub/notes.txt".',
      isError: true,
    });
    expect((await runTool(f.write, { path: 'sub-link/notes.txt', content: 'rewritten\n' })).content).toMatch(/^Refused: "sub-link" is a symbolic link to sub;/);
    expect(await readFile(path.join(f.ws, 'sub', 'notes.txt'), 'utf8')).toBe('one\ntwo\nthree\nfour\nfive\n');
    expect(await readlink(path.join(f.ws, 'notes-link.txt'))).toBe(path.join(f.ws, 'sub', 'notes.txt'));
  });

  test("a clone's link to a private file of the workspace sends nothing of it under the link's name", async () => {
    await using f = await fixture();
    await writeFile(path.join(f.ws, '.env'), 'API_KEY=secret-of-the-workspace\n');
    await mkdir(path.join(f.ws, 'docs'));
    await symlink('../.env', path.join(f.ws, 'docs', 'setup.md'));
    const result = await runTool(f.read, { path: 'docs/setup.md' });
    expect(result.content).not.toContain('secret-of-the-workspace');
    expect(result).toStrictEqual({
      content:
        'Refused: "docs/setup.md" is a symbolic link to .env; read_file reads through no link, so that the path shown is the file read. ' +
        'Nothing was read. If that is the file you mean, read ".env".',
      isError: true,
    });
  });

  test('a workspace given through a symbolic link is confined by its real path', async () => {
    await using f = await fixture();
    const alias = path.join(f.parent, 'alias');
    await symlink(f.ws, alias);
    const read = toolNamed(createBuiltinTools({ workspace: alias }), 'read_file');
    expect(await runTool(read, { path: `${alias}/sub/notes.txt`, offset: 5 })).toStrictEqual({ content: 'five\n', isError: false });
    expect((await runTool(read, { path: `${alias}/../outside.txt` })).content).toBe('Refused: "' + alias + '/../outside.txt" is outside the workspace.');
  });
});

describe('write_file', () => {
  test('creates parent folders and writes atomically, leaving no temporary file', async () => {
    await using f = await fixture();
    expect(await runTool(f.write, { path: 'a/b/c.txt', content: 'héllo\n' })).toStrictEqual({ content: 'Created a/b/c.txt (7 bytes).', isError: false });
    expect(await readFile(path.join(f.ws, 'a', 'b', 'c.txt'), 'utf8')).toBe('héllo\n');
    expect(await readdir(path.join(f.ws, 'a', 'b'))).toStrictEqual(['c.txt']);
  });

  test('replaces a file keeping its permissions', async () => {
    await using f = await fixture();
    const script = path.join(f.ws, 'run.sh');
    await writeFile(script, 'old');
    await chmod(script, 0o750);
    expect((await runTool(f.write, { path: 'run.sh', content: 'new' })).content).toBe('Replaced run.sh (3 bytes).');
    expect([await readFile(script, 'utf8'), (await stat(script)).mode & 0o777]).toStrictEqual(['new', 0o750]);
    expect(await readdir(f.ws)).toStrictEqual(['run.sh', 'sub']);
  });

  test('replaces a set-user-ID or set-group-ID file without those bits: what it writes never runs as the file’s owner', async () => {
    await using f = await fixture();
    const program = path.join(f.ws, 'tool');
    await writeFile(program, 'old');
    await chmod(program, 0o6755);
    expect((await runTool(f.write, { path: 'tool', content: 'new' })).content).toBe('Replaced tool (3 bytes).');
    expect((await stat(program)).mode & 0o7777).toBe(0o755);
  });

  test('refuses content over the cap and writes nothing', async () => {
    await using f = await fixture({ maxWriteBytes: 10 });
    expect(await runTool(f.write, { path: 'big.txt', content: 'x'.repeat(11) })).toStrictEqual({
      content: 'Error: the content is 11 bytes; write_file accepts at most 10. Nothing was written.',
      isError: true,
    });
    await expect(lstat(path.join(f.ws, 'big.txt'))).rejects.toThrow('ENOENT');
  });

  test('refuses to replace a directory', async () => {
    await using f = await fixture();
    expect(await runTool(f.write, { path: 'sub', content: 'x' })).toStrictEqual({ content: 'Error: "sub" is a directory.', isError: true });
  });

  test('refuses a path ending in "/" and creates nothing', async () => {
    await using f = await fixture();
    expect(await runTool(f.write, { path: 'new-folder/', content: 'x' })).toStrictEqual({
      content: 'Error: "new-folder/" names a folder (it ends with "/"); give a file\'s path. Nothing was written.',
      isError: true,
    });
    await expect(lstat(path.join(f.ws, 'new-folder'))).rejects.toThrow('ENOENT');
  });

  test('refuses a path ending in "/." or "/..", which names a folder too, and neither creates nor replaces a file there', async () => {
    await using f = await fixture();
    await writeFile(path.join(f.ws, 'run.sh'), 'old');
    const refusals = [];
    for (const requested of ['new-folder/.', 'new-folder/inner/..', 'run.sh/.', 'run.sh/x/..']) {
      refusals.push(await runTool(f.write, { path: requested, content: 'x' }));
    }
    expect(refusals).toStrictEqual([
      { content: 'Error: "new-folder/." names a folder (it ends with "/."); give a file\'s path. Nothing was written.', isError: true },
      { content: 'Error: "new-folder/inner/.." names a folder (it ends with "/.."); give a file\'s path. Nothing was written.', isError: true },
      { content: 'Error: "run.sh/." names a folder (it ends with "/."); give a file\'s path. Nothing was written.', isError: true },
      { content: 'Error: "run.sh/x/.." names a folder (it ends with "/.."); give a file\'s path. Nothing was written.', isError: true },
    ]);
    await expect(lstat(path.join(f.ws, 'new-folder'))).rejects.toThrow('ENOENT');
    expect(await readFile(path.join(f.ws, 'run.sh'), 'utf8')).toBe('old');
  });
});

describe('list_directory', () => {
  test('leaves no descriptor open, listed or refused', async () => {
    await using f = await fixture();
    await symlink(f.parent, path.join(f.ws, 'up'));
    const open = async () => (await readdir('/proc/self/fd')).length;
    const before = await open();
    for (let i = 0; i < 50; i++) {
      expect((await runTool(f.list, { path: 'sub' })).isError).toBe(false);
      expect((await runTool(f.list, { path: 'up' })).content).toContain('outside the workspace');
      expect((await runTool(f.list, { path: 'sub/notes.txt' })).isError).toBe(true);
    }
    // A listed folder is closed without being waited for: soon after, not necessarily by the answer.
    await vi.waitFor(async () => expect(await open()).toBeLessThanOrEqual(before + 2));
  });

  test('lists entries with type and size', async () => {
    await using f = await fixture();
    await symlink('sub/notes.txt', path.join(f.ws, 'link'));
    await writeFile(path.join(f.ws, 'a.txt'), 'abc');
    expect(await runTool(f.list, {})).toStrictEqual({
      content: ['.: 3 entries', 'file     a.txt  (3 bytes)', 'symlink  link -> sub/notes.txt', 'dir      sub/'].join('\n'),
      isError: false,
    });
    expect((await runTool(f.list, { path: 'sub' })).content).toBe('sub: 1 entry\nfile     notes.txt  (24 bytes)');
  });

  test('shows names and link targets escaped, on one line each: a line break or control in a name forges no entry', async () => {
    await using f = await fixture();
    await rm(path.join(f.ws, 'sub'), { recursive: true });
    await writeFile(path.join(f.ws, 'a\nfile     README.md  (10 bytes)'), 'x');
    await writeFile(path.join(f.ws, 'b\r\tc\u001B[2Kd\u202Ee'), '');
    await symlink('/etc/shadow\nfile     x', path.join(f.ws, 'link'));
    expect(await runTool(f.list, {})).toStrictEqual({
      content: [
        '.: 3 entries',
        'file     a\\u{A}file     README.md  (10 bytes)  (1 bytes)',
        'file     b\\u{D}\\u{9}c\\u{1B}[2Kd\\u{202E}e  (0 bytes)',
        'symlink  link -> /etc/shadow\\u{A}file     x',
      ].join('\n'),
      isError: false,
    });
  });

  test('caps the number of entries', async () => {
    await using f = await fixture({ maxDirectoryEntries: 2 });
    await Promise.all(['a', 'b', 'c', 'd'].map((name) => writeFile(path.join(f.ws, 'sub', name), '')));
    const result = await runTool(f.list, { path: 'sub' });
    expect(result.content.split('\n')).toHaveLength(4);
    expect(result.content.split('\n').slice(0, 1).concat(result.content.split('\n').slice(3))).toStrictEqual([
      'sub: 5 entries',
      '[… 3 more entries not shown …]',
    ]);
  });
});

/** A workspace holding the server's own secrets, as when it is started from $HOME with the default data folder. */
async function homeFixture() {
  const f = await fixture();
  const dataDir = path.join(f.ws, '.local', 'share', 'airlock');
  const tokenFile = path.join(f.ws, '.airlock-token');
  await mkdir(dataDir, { recursive: true });
  await writeFile(path.join(dataDir, 'airlock.db'), 'database secret\n');
  await writeFile(tokenFile, 'token secret\n');
  const tools = createBuiltinTools({ workspace: f.ws, hiddenPaths: [dataDir, tokenFile] });
  return {
    ...f,
    dataDir,
    tokenFile,
    read: toolNamed(tools, 'read_file'),
    write: toolNamed(tools, 'write_file'),
    list: toolNamed(tools, 'list_directory'),
  };
}

async function expectRefused(attempts: [AnyTool, Record<string, string>][]): Promise<void> {
  for (const [tool, args] of attempts) {
    const result = await runTool(tool, args);
    expect({ tool: tool.name, args, isError: result.isError, refused: result.content.startsWith('Refused:') }).toStrictEqual({
      tool: tool.name,
      args,
      isError: true,
      refused: true,
    });
  }
}

describe('hidden paths inside the workspace', () => {
  test("an editor's copies of a hidden file (token~, .token.swp, #token#) are refused as the file is", async () => {
    await using f = await homeFixture();
    for (const copy of ['.airlock-token~', '..airlock-token.swp', '#.airlock-token#']) await writeFile(path.join(f.ws, copy), 'token secret\n');
    await expectRefused([
      [f.read, { path: '.airlock-token~' }],
      [f.read, { path: '..airlock-token.swp' }],
      [f.read, { path: '#.airlock-token#' }],
    ]);
  });

  test('are refused by name, through a symbolic link and through a hard link', async () => {
    await using f = await homeFixture();
    await symlink('.airlock-token', path.join(f.ws, 'readme.md'));
    await symlink('.local/share/airlock/airlock.db', path.join(f.ws, 'notes.txt'));
    await symlink('.local/share/airlock', path.join(f.ws, 'data-link'));
    await link(f.tokenFile, path.join(f.ws, 'hard.txt'));
    await expectRefused([
      [f.read, { path: '.airlock-token' }],
      [f.read, { path: '.local/share/airlock/airlock.db' }],
      [f.read, { path: 'readme.md' }],
      [f.read, { path: 'notes.txt' }],
      [f.read, { path: 'hard.txt' }],
      [f.read, { path: 'data-link/airlock.db' }],
      [f.list, { path: '.local/share/airlock' }],
      [f.list, { path: 'data-link' }],
      [f.write, { path: 'readme.md', content: 'attacker token\n' }],
      [f.write, { path: '.airlock-token', content: 'attacker token\n' }],
      [f.write, { path: 'hard.txt', content: 'attacker token\n' }],
      [f.write, { path: '.local/share/airlock/airlock.db', content: 'x' }],
      [f.write, { path: 'data-link/new/file.txt', content: 'x' }],
    ]);
    expect(await readFile(f.tokenFile, 'utf8')).toBe('token secret\n');
    expect(await readdir(f.dataDir)).toStrictEqual(['airlock.db']);
    // The parent may name the entry; it never says what is inside.
    expect((await runTool(f.list, { path: '.local/share' })).content).toBe('.local/share: 1 entry\nhidden   airlock');
  });

  test('stay refused after a folder holding them, or the file itself, is moved', async () => {
    await using f = await homeFixture();
    await rename(path.join(f.ws, '.local', 'share'), path.join(f.ws, '.local', 'moved'));
    await rename(f.tokenFile, path.join(f.ws, 'token-moved'));
    await expectRefused([
      [f.read, { path: '.local/moved/airlock/airlock.db' }],
      [f.read, { path: 'token-moved' }],
      [f.list, { path: '.local/moved/airlock' }],
      [f.write, { path: '.local/moved/airlock/airlock.db', content: 'x' }],
      [f.write, { path: '.local/moved/airlock/new/file.txt', content: 'x' }],
      [f.write, { path: 'token-moved', content: 'x' }],
    ]);
    expect(await readdir(path.join(f.ws, '.local', 'moved', 'airlock'))).toStrictEqual(['airlock.db']);
    expect(await readFile(path.join(f.ws, 'token-moved'), 'utf8')).toBe('token secret\n');
  });

  test('hide all of it when one is the workspace itself (start-up refuses that data folder)', async () => {
    await using f = await fixture();
    await writeFile(path.join(f.ws, 'airlock.db'), 'database secret\n');
    const tools = createBuiltinTools({ workspace: f.ws, hiddenPaths: [f.ws] });
    await expectRefused([
      [toolNamed(tools, 'list_directory'), { path: '.' }],
      [toolNamed(tools, 'read_file'), { path: 'airlock.db' }],
      [toolNamed(tools, 'write_file'), { path: 'airlock.db', content: 'x' }],
      [toolNamed(tools, 'write_file'), { path: 'new.txt', content: 'x' }],
    ]);
    expect(await readFile(path.join(f.ws, 'airlock.db'), 'utf8')).toBe('database secret\n');
    expect(await readdir(f.ws)).toStrictEqual(['airlock.db', 'sub']);
  });

  test("reach no browser profile of the server's home folder, one made after the tools neither", async () => {
    await using f = await fixture();
    const profile = path.join('.config', 'chromium', 'Default');
    await mkdir(path.join(f.ws, profile), { recursive: true });
    await writeFile(path.join(f.ws, profile, 'History'), 'http://airlock.localhost:7700/#token=the-token-value');
    await symlink(path.join(profile, 'History'), path.join(f.ws, 'history-link'));
    const tools = createBuiltinTools({ workspace: f.ws, env: { HOME: f.ws } });
    const [read, write, list] = (['read_file', 'write_file', 'list_directory'] as const).map((name) => toolNamed(tools, name)) as [AnyTool, AnyTool, AnyTool];
    const attempts = (folder: string): [AnyTool, Record<string, string>][] => [
      [read, { path: path.join(folder, 'Default', 'History') }],
      [list, { path: folder }],
      [list, { path: path.join(folder, 'Default') }],
      [write, { path: path.join(folder, 'Default', 'History'), content: 'x' }],
    ];
    await expectRefused([...attempts(path.join('.config', 'chromium')), [read, { path: 'history-link' }]]);
    await mkdir(path.join(f.ws, '.cache', 'google-chrome', 'Default', 'Cache'), { recursive: true });
    await expectRefused(attempts(path.join('.cache', 'google-chrome')));
    expect((await runTool(list, { path: '.config' })).content).toBe('.config: 1 entry\nhidden   chromium');
    expect(await readFile(path.join(f.ws, profile, 'History'), 'utf8')).toBe('http://airlock.localhost:7700/#token=the-token-value');
  });

  test("reach no other Airlock's default data folder in the server's home folder (XDG_DATA_HOME's too), one made after the tools neither", async () => {
    await using f = await fixture();
    const folders = [path.join('.local', 'share', 'airlock'), path.join('data', 'airlock')];
    await mkdir(path.join(f.ws, folders[0]!), { recursive: true });
    await writeFile(path.join(f.ws, folders[0]!, 'airlock.db'), 'another instance\'s chats');
    const tools = createBuiltinTools({ workspace: f.ws, env: { HOME: f.ws, XDG_DATA_HOME: path.join(f.ws, 'data') } });
    const [read, write, list] = (['read_file', 'write_file', 'list_directory'] as const).map((name) => toolNamed(tools, name)) as [AnyTool, AnyTool, AnyTool];
    const attempts = (folder: string): [AnyTool, Record<string, string>][] => [
      [read, { path: path.join(folder, 'airlock.db') }],
      [list, { path: folder }],
      [write, { path: path.join(folder, 'airlock.db'), content: 'x' }],
    ];
    await expectRefused(attempts(folders[0]!));
    // Another instance started later, XDG_DATA_HOME set.
    await mkdir(path.join(f.ws, folders[1]!), { recursive: true });
    await writeFile(path.join(f.ws, folders[1]!, 'airlock.db'), 'another instance\'s chats');
    await expectRefused(attempts(folders[1]!));
    expect(await readFile(path.join(f.ws, folders[0]!, 'airlock.db'), 'utf8')).toBe("another instance's chats");
  });

  test("reach no Airlock config folder in the server's home folder (XDG_CONFIG_HOME's too), where the terminal client's token file is kept", async () => {
    await using f = await fixture();
    const tokens = [path.join('.config', 'airlock', 'token'), path.join('conf', 'airlock', 'token')];
    for (const token of tokens) {
      await mkdir(path.dirname(path.join(f.ws, token)), { recursive: true });
      await writeFile(path.join(f.ws, token), 'the-token-value');
    }
    const tools = createBuiltinTools({ workspace: f.ws, env: { HOME: f.ws, XDG_CONFIG_HOME: path.join(f.ws, 'conf') } });
    const [read, list] = (['read_file', 'list_directory'] as const).map((name) => toolNamed(tools, name)) as [AnyTool, AnyTool];
    await expectRefused(tokens.flatMap((token): [AnyTool, Record<string, string>][] => [[read, { path: token }], [list, { path: path.dirname(token) }]]));
  });

  test("reach no shell or interpreter history in the server's home folder (where HISTFILE and ZDOTDIR say too), one written after the tools neither", async () => {
    await using f = await fixture();
    const line = 'AIRLOCK_TOKEN=the-token-value npm start\n';
    const env = { HOME: f.ws, HISTFILE: path.join(f.ws, 'shell', 'hist'), ZDOTDIR: path.join(f.ws, 'zsh') };
    const histories = ['.bash_history', path.join('.local', 'share', 'fish', 'fish_history'), path.join('shell', 'hist'), path.join('zsh', '.zsh_history')];
    const write = async (file: string) => {
      await mkdir(path.dirname(path.join(f.ws, file)), { recursive: true });
      await writeFile(path.join(f.ws, file), line);
    };
    for (const file of histories.slice(0, 3)) await write(file);
    const tools = createBuiltinTools({ workspace: f.ws, env });
    const [read, overwrite, list] = (['read_file', 'write_file', 'list_directory'] as const).map((name) => toolNamed(tools, name)) as [AnyTool, AnyTool, AnyTool];
    const attempts = (file: string): [AnyTool, Record<string, string>][] => [
      [read, { path: file }],
      [overwrite, { path: file, content: 'x' }],
    ];
    for (const file of histories.slice(0, 3)) await expectRefused(attempts(file));
    // The atuin folder, which holds every shell's commands, is hidden whole, and so is fish's, which saves by rename.
    await mkdir(path.join(f.ws, '.local', 'share', 'atuin'), { recursive: true });
    await expectRefused([[list, { path: path.join('.local', 'share', 'atuin') }], [list, { path: path.join('.local', 'share', 'fish') }]]);
    // A shell started after the server writes its history as it exits.
    await write(histories[3]!);
    await expectRefused(attempts(histories[3]!));
    expect(await readFile(path.join(f.ws, '.bash_history'), 'utf8')).toBe(line);
  });

  test("reach no editor's swap, undo or backup folder in the server's home folder (XDG_STATE_HOME's too), where a hidden file's copy is kept under its %-encoded path, one made after the tools neither", async () => {
    await using f = await fixture();
    const copy = `${f.ws.replaceAll('/', '%')}%.bash_history`;
    const copies = [path.join('.local', 'state', 'nvim', 'swap', `${copy}.swp`), path.join('.vim', 'undo', copy), path.join('state', 'vim', 'backup', `${copy}~`)];
    const write = async (file: string) => {
      await mkdir(path.dirname(path.join(f.ws, file)), { recursive: true });
      await writeFile(path.join(f.ws, file), 'AIRLOCK_TOKEN=the-token-value npm start\n');
    };
    await write(copies[0]!);
    await write(copies[1]!);
    const tools = createBuiltinTools({ workspace: f.ws, env: { HOME: f.ws, XDG_STATE_HOME: path.join(f.ws, 'state') } });
    const [read, list] = (['read_file', 'list_directory'] as const).map((name) => toolNamed(tools, name)) as [AnyTool, AnyTool];
    const attempts = (file: string): [AnyTool, Record<string, string>][] => [
      [read, { path: file }],
      [list, { path: path.dirname(file) }],
    ];
    for (const file of copies.slice(0, 2)) await expectRefused(attempts(file));
    // An editor makes its folder when it first needs one.
    await write(copies[2]!);
    await expectRefused(attempts(copies[2]!));
    expect((await runTool(list, { path: '.vim' })).content).toBe('.vim: 1 entry\nhidden   undo');
  });

  test("reach no vim cache folder, Emacs backup or auto-save folder (plain, Doom, Spacemacs, no-littering), vim undodir, viminfo, neovim ShaDa, nano or less history in the server's home folder (XDG_CACHE_HOME's, XDG_CONFIG_HOME's and XDG_STATE_HOME's too), one made after the tools neither", async () => {
    await using f = await fixture();
    const copy = `${f.ws.replaceAll('/', '%')}%.bash_history`;
    const emacsCopy = `${f.ws.replaceAll('/', '!')}!.bash_history`;
    const env = { HOME: f.ws, XDG_CACHE_HOME: path.join(f.ws, 'cache'), XDG_CONFIG_HOME: path.join(f.ws, 'conf'), XDG_STATE_HOME: path.join(f.ws, 'state') };
    const states = [
      path.join('.cache', 'vim', 'swap', `${copy}.swp`),
      path.join('cache', 'vim', 'undo', copy),
      path.join('.emacs.d', 'backups', `${emacsCopy}~`),
      path.join('.emacs.d', 'auto-save-list', '.saves-1234-host~'),
      path.join('conf', 'emacs', 'auto-save', `#${emacsCopy}#`),
      path.join('.emacs.d', '.local', 'cache', 'backup', `${emacsCopy}~`),
      path.join('.emacs.d', '.local', 'cache', 'autosave', `#${emacsCopy}#`),
      path.join('.config', 'emacs', '.local', 'cache', 'autosave', `#${emacsCopy}#`),
      path.join('.emacs.d', '.cache', 'auto-save', `#${emacsCopy}#`),
      path.join('.emacs.d', 'var', 'backup', `${emacsCopy}~`),
      path.join('.emacs.d', 'var', 'auto-save', `#${emacsCopy}#`),
      path.join('.emacs.d', 'autosave', `#${emacsCopy}#`),
      path.join('.vim', 'undodir', copy),
      '.viminfo',
      path.join('.vim', 'viminfo'),
      path.join('state', 'vim', 'viminfo'),
      path.join('.local', 'state', 'nvim', 'shada', 'main.shada'),
      path.join('.local', 'share', 'nvim', 'shada', 'main.shada'),
      path.join('.local', 'share', 'nano', 'search_history'),
      '.lesshst',
      path.join('state', 'lesshst'),
    ];
    const write = async (file: string) => {
      await mkdir(path.dirname(path.join(f.ws, file)), { recursive: true });
      await writeFile(path.join(f.ws, file), 'AIRLOCK_TOKEN=the-token-value npm start\n');
    };
    const later = ['.viminfo', path.join('.emacs.d', 'var', 'backup', `${emacsCopy}~`)];
    for (const file of states.filter((state) => !later.includes(state))) await write(file);
    const tools = createBuiltinTools({ workspace: f.ws, env });
    const [read, list] = (['read_file', 'list_directory'] as const).map((name) => toolNamed(tools, name)) as [AnyTool, AnyTool];
    // The files hidden alone (viminfo, less's history) are refused; the folder they are in is listed, marking them hidden.
    const alone = new Set(['.viminfo', path.join('.vim', 'viminfo'), path.join('state', 'vim', 'viminfo'), '.lesshst', path.join('state', 'lesshst')]);
    const attempts = (file: string): [AnyTool, Record<string, string>][] => [
      [read, { path: file }],
      ...(alone.has(file) ? [] : [[list, { path: path.dirname(file) }] as [AnyTool, Record<string, string>]]),
    ];
    for (const file of states.filter((state) => !later.includes(state))) await expectRefused(attempts(file));
    // An editor writes its state when it first exits, after the server started.
    for (const file of later) await write(file);
    for (const file of later) await expectRefused(attempts(file));
    expect((await runTool(list, { path: path.join('state', 'vim') })).content).toBe(`${path.join('state', 'vim')}: 1 entry\nhidden   viminfo`);
  });

  test("reach none of the other editors' copies and histories in the server's home folder (VS Code's and its forks' local history and hot exit backups, the JetBrains editors' local history, one installed after the tools too, micro's, Sublime Text's, Kate's, Midnight Commander's, joe's, helix's, vim's temporary viminfo)", async () => {
    await using f = await fixture();
    const env = { HOME: f.ws, XDG_CONFIG_HOME: path.join(f.ws, 'conf') };
    const states = [
      path.join('conf', 'Code', 'User', 'History', '-5f3a2b1c', 'AbCd.bash_history'),
      path.join('.config', 'VSCodium', 'Backups', '0123abcd', 'file', '-7e3c9a1f'),
      path.join('.config', 'Cursor', 'User', 'History', '-5f3a2b1c', 'AbCd.bash_history'),
      path.join('.cache', 'JetBrains', 'IntelliJIdea2024.1', 'LocalHistory', 'changes.storageData'),
      path.join('.config', 'micro', 'backups', `${f.ws.replaceAll('/', '%')}%.bash_history`),
      path.join('.config', 'micro', 'buffers', 'history'),
      path.join('conf', 'sublime-text', 'Local', 'Session.sublime_session'),
      path.join('.local', 'share', 'kate', 'stash', '.bash_history-0'),
      path.join('.local', 'share', 'mc', 'history'),
      path.join('.config', 'mc', 'filepos'),
      '.joe_state',
      path.join('.cache', 'helix', 'helix.log'),
      '.viminfz.tmp',
    ];
    const write = async (file: string) => {
      await mkdir(path.dirname(path.join(f.ws, file)), { recursive: true });
      await writeFile(path.join(f.ws, file), 'AIRLOCK_TOKEN=the-token-value npm start\n');
    };
    for (const file of states) await write(file);
    const tools = createBuiltinTools({ workspace: f.ws, env });
    const [read, list] = (['read_file', 'list_directory'] as const).map((name) => toolNamed(tools, name)) as [AnyTool, AnyTool];
    const alone = new Set(['.joe_state', '.viminfz.tmp', path.join('.config', 'mc', 'filepos')]);
    const attempts = (file: string): [AnyTool, Record<string, string>][] => [
      [read, { path: file }],
      ...(alone.has(file) ? [] : [[list, { path: path.dirname(file) }] as [AnyTool, Record<string, string>]]),
    ];
    for (const file of states) await expectRefused(attempts(file));
    // A JetBrains editor installed, or updated to a new version, after the server started.
    const later = path.join('.cache', 'JetBrains', 'PyCharm2025.2', 'LocalHistory', 'content.dat');
    await write(later);
    await expectRefused(attempts(later));
    expect((await runTool(list, { path: path.join('.cache', 'JetBrains', 'PyCharm2025.2') })).content).toBe(`${path.join('.cache', 'JetBrains', 'PyCharm2025.2')}: 1 entry\nhidden   LocalHistory`);
  });

  test("refuse a hard link in the workspace to a file in a hidden folder (atuin's history.db, the server's data folder), read or written, while it has that other name, and any file while the hidden folders hold more entries than are looked through", async () => {
    await using f = await homeFixture();
    const atuin = path.join(f.ws, '.local', 'share', 'atuin');
    await mkdir(atuin);
    await writeFile(path.join(atuin, 'history.db'), 'AIRLOCK_TOKEN=the-token-value npm start\n');
    const tools = createBuiltinTools({ workspace: f.ws, env: { HOME: f.ws }, hiddenPaths: [f.dataDir, f.tokenFile] });
    const [read, write] = (['read_file', 'write_file'] as const).map((name) => toolNamed(tools, name)) as [AnyTool, AnyTool];
    await link(path.join(atuin, 'history.db'), path.join(f.ws, 'planted'));
    await link(path.join(f.dataDir, 'airlock.db'), path.join(f.ws, 'sub', 'planted-db'));
    await expectRefused([
      [read, { path: 'planted' }],
      [read, { path: 'sub/planted-db' }],
      [write, { path: 'planted', content: 'x' }],
    ]);
    expect(await readFile(path.join(atuin, 'history.db'), 'utf8')).toBe('AIRLOCK_TOKEN=the-token-value npm start\n');
    await rm(path.join(f.ws, 'planted'));
    await writeFile(path.join(f.ws, 'planted'), 'a file of its own\n');
    expect(await runTool(read, { path: 'planted' })).toStrictEqual({ content: 'a file of its own\n', isError: false });
    // Two names of a file of the workspace's own are read as any file is, until the hidden folders hold more entries
    // than are looked through: then no file is taken as the workspace's own, as a symbolic link there past the bound
    // may lead to any (hidden-links.test.ts).
    await link(path.join(f.ws, 'planted'), path.join(f.ws, 'planted-too'));
    expect(await runTool(read, { path: 'planted-too' })).toStrictEqual({ content: 'a file of its own\n', isError: false });
    await Promise.all(Array.from({ length: 4097 }, (_, index) => writeFile(path.join(atuin, `entry-${index}`), '')));
    await expectRefused([
      [read, { path: 'planted-too' }],
      [read, { path: 'sub/notes.txt' }],
    ]);
  });

  test("reach none of the copies of VS Code's remote servers and of a fork found by its user-data layout, one installed after the tools too, nor the chat's copies of the files it edits", async () => {
    await using f = await fixture();
    const tools = createBuiltinTools({ workspace: f.ws, env: { HOME: f.ws } });
    const [read, list] = (['read_file', 'list_directory'] as const).map((name) => toolNamed(tools, name)) as [AnyTool, AnyTool];
    const write = async (file: string, text = 'AIRLOCK_TOKEN=the-token-value npm start\n') => {
      await mkdir(path.dirname(path.join(f.ws, file)), { recursive: true });
      await writeFile(path.join(f.ws, file), text);
    };
    const attempts = (file: string): [AnyTool, Record<string, string>][] => [
      [read, { path: file }],
      [list, { path: path.dirname(file) }],
    ];
    const states = [
      path.join('.vscode-server', 'data', 'User', 'History', '-5f3a2b1c', 'AbCd.bash_history'),
      path.join('.cursor-server', 'data', 'Backups', '0123abcd', 'file', '-7e3c9a1f'),
      path.join('.config', 'Code', 'User', 'workspaceStorage', '0a1b2c3d', 'chatEditingSessions', 'e4f5', 'contents', '9a8b7c'),
    ];
    for (const file of states) await write(file);
    for (const file of states) await expectRefused(attempts(file));
    // A fork installed after the tools were made: known by its layout alone.
    const later = path.join('.config', 'Kiro', 'User', 'History', '-5f3a2b1c', 'AbCd.bash_history');
    await write(later);
    await write(path.join('.config', 'Kiro', 'User', 'settings.json'), '{}\n');
    await expectRefused(attempts(later));
    expect((await runTool(list, { path: path.join('.config', 'Kiro', 'User') })).content).toBe(`${path.join('.config', 'Kiro', 'User')}: 2 entries\nhidden   History\nfile     settings.json  (3 bytes)`);
  });

  test("reach none of the copies of a fork found by its layout among thousands of entries of the config folder, nor of one whose User folder is made after its folder was looked into", async () => {
    await using f = await fixture();
    const tools = createBuiltinTools({ workspace: f.ws, env: { HOME: f.ws } });
    const [read, list] = (['read_file', 'list_directory'] as const).map((name) => toolNamed(tools, name)) as [AnyTool, AnyTool];
    const write = async (file: string) => {
      await mkdir(path.dirname(path.join(f.ws, file)), { recursive: true });
      await writeFile(path.join(f.ws, file), file.endsWith('.json') ? '{}\n' : 'AIRLOCK_TOKEN=the-token-value npm start\n');
    };
    await Promise.all(Array.from({ length: 2_000 }, (_, index) => mkdir(path.join(f.ws, '.config', `app-${index}`), { recursive: true })));
    const crowded = path.join('.config', 'Forked Editor', 'User', 'History', '-5f3a2b1c', 'AbCd.bash_history');
    await write(crowded);
    await write(path.join('.config', 'Forked Editor', 'User', 'settings.json'));
    await expectRefused([[read, { path: crowded }], [list, { path: path.dirname(crowded) }]]);
    // An editor's first start: its folder, looked into before its User folder is there, then the rest.
    await mkdir(path.join(f.ws, '.local', 'share', 'starting-editor'), { recursive: true });
    expect(await runTool(read, { path: 'sub/notes.txt', offset: 5 })).toStrictEqual({ content: 'five\n', isError: false });
    const started = path.join('.local', 'share', 'starting-editor', 'User', 'History', '-1a2b', 'EfGh.env');
    await write(started);
    await write(path.join('.local', 'share', 'starting-editor', 'User', 'settings.json'));
    await expectRefused([[read, { path: started }], [list, { path: path.dirname(started) }]]);
  });

  test('leave the rest of the workspace usable', async () => {
    await using f = await homeFixture();
    expect(await runTool(f.read, { path: 'sub/notes.txt', offset: 5 })).toStrictEqual({ content: 'five\n', isError: false });
    expect(await runTool(f.write, { path: '.local/other/new.txt', content: 'ok\n' })).toStrictEqual({
      content: 'Created .local/other/new.txt (3 bytes).',
      isError: false,
    });
  });
});

/** Paths whose check is followed, before the tool uses its result, by `between`: another process changing the workspace. */
class InterleavedPaths extends WorkspacePaths {
  constructor(
    workspace: string,
    readonly between: () => Promise<void>,
  ) {
    super(workspace);
  }

  override async resolve(requested: string): Promise<string> {
    const resolved = await super.resolve(requested);
    await this.between();
    return resolved;
  }

  /** write_file's check: the path's names, read before any folder is opened. */
  override async names(requested: string): Promise<string[]> {
    const names = await super.names(requested);
    await this.between();
    return names;
  }

  /** Checks nothing before it opens: the change comes just before the open, and what was opened must be proven. */
  override async openFolderForListing(requested: string, bufferSize: number): Promise<{ folder: WorkspaceFolder; dir: Dir }> {
    await this.between();
    return super.openFolderForListing(requested, bufferSize);
  }
}

/**
 * Runs read_file, write_file (an existing file and a new one in a new folder) and list_directory on `sub/…` with
 * `sub` swapped, between each tool's check and its use, for a link to `target` (which shows the folder `outside`):
 * each must be refused as outside the workspace, show nothing of it, and leave it as it was.
 */
async function expectSwappedFolderRefused(f: Awaited<ReturnType<typeof fixture>>, outside: string, target: string): Promise<void> {
  const swap = async () => {
    await rename(path.join(f.ws, 'sub'), path.join(f.ws, 'sub-before'));
    await symlink(target, path.join(f.ws, 'sub'));
  };
  const restore = async () => {
    await rm(path.join(f.ws, 'sub'));
    await rename(path.join(f.ws, 'sub-before'), path.join(f.ws, 'sub'));
  };
  const options = resolveToolsOptions({ workspace: f.ws });
  const paths = new InterleavedPaths(f.ws, swap);
  const attempts: [AnyTool, Record<string, string>][] = [
    [createReadFileTool(options, paths), { path: 'sub/notes.txt' }],
    [createWriteFileTool(options, paths), { path: 'sub/notes.txt', content: 'overwritten' }],
    [createWriteFileTool(options, paths), { path: 'sub/new/file.txt', content: 'escaped' }],
    [createListDirectoryTool(options, paths), { path: 'sub' }],
  ];
  for (const [tool, args] of attempts) {
    const result = await runTool(tool, args);
    await restore();
    const seen = { tool: tool.name, args, isError: result.isError, refused: result.content.includes('outside the workspace'), leaked: result.content.includes('outside secret') };
    expect(seen).toStrictEqual({ tool: tool.name, args, isError: true, refused: true, leaked: false });
  }
  expect(await readdir(outside)).toStrictEqual(['notes.txt']);
  expect(await readFile(path.join(outside, 'notes.txt'), 'utf8')).toBe('outside secret\n');
}

/** A folder `<parent>/outside` holding notes.txt, "outside secret". */
async function outsideFolder(f: Awaited<ReturnType<typeof fixture>>): Promise<string> {
  const outside = path.join(f.parent, 'outside');
  await mkdir(outside);
  await writeFile(path.join(outside, 'notes.txt'), 'outside secret\n');
  return outside;
}

describe('a folder swapped for a link between the check and the use', () => {
  test('is refused by read_file, write_file and list_directory', async () => {
    await using f = await fixture();
    const outside = await outsideFolder(f);
    await expectSwappedFolderRefused(f, outside, outside);
  });
});

/**
 * A process in user and mount namespaces of its own, where `source` is bind-mounted on `target` (there only), as any
 * program running as the server's user can set up. Undefined where this system does not let it make them.
 */
async function mountedElsewhere(source: string, target: string) {
  const child = spawn('unshare', ['-Urm', 'sh', '-c', 'mount --bind "$1" "$2" && echo ready && exec sleep 600', 'sh', source, target], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const ready = await new Promise<boolean>((resolve) => {
    child.stdout.once('data', () => resolve(true));
    child.once('exit', () => resolve(false));
    child.once('error', () => resolve(false));
  });
  if (!ready) return undefined;
  return {
    /** `target` as that process sees it, reached from here. */
    seen: `/proc/${child.pid}/root${target}`,
    [Symbol.dispose]: () => child.kill('SIGKILL'),
  };
}

describe("a link into another process's mount namespace", () => {
  test('is refused, whatever is mounted at the end of it', async (context) => {
    await using f = await homeFixture();
    const outside = path.join(f.parent, 'outside');
    await mkdir(path.join(f.dataDir, 'keys'));
    await writeFile(path.join(f.dataDir, 'keys', 'server-key.pem'), 'key\n');
    await mkdir(outside);
    await writeFile(path.join(outside, 'outside-secret.txt'), 'outside secret\n');
    for (const [source, shown] of [
      [outside, 'outside-secret.txt'],
      [path.join(f.dataDir, 'keys'), 'server-key.pem'],
    ] as const) {
      using elsewhere = await mountedElsewhere(source, path.join(f.ws, 'sub'));
      if (elsewhere === undefined) return context.skip('this system does not let a process make user and mount namespaces');
      await rm(path.join(f.ws, 'x'), { force: true });
      await symlink(elsewhere.seen, path.join(f.ws, 'x'));
      const result = await runTool(f.list, { path: 'x' });
      expect({ source, refused: result.content.includes('outside the workspace'), shows: result.content.includes(shown) }).toStrictEqual({
        source,
        refused: true,
        shows: false,
      });
    }
  });

  test('swapped in between the check and the use, is refused by read_file, write_file and list_directory', async (context) => {
    await using f = await fixture();
    const outside = await outsideFolder(f);
    // An empty folder here; the outside one there.
    await mkdir(path.join(f.ws, 'mnt'));
    using elsewhere = await mountedElsewhere(outside, path.join(f.ws, 'mnt'));
    if (elsewhere === undefined) return context.skip('this system does not let a process make user and mount namespaces');
    await expectSwappedFolderRefused(f, outside, elsewhere.seen);
  });
});

describe('read_file bounds', () => {
  test('keeps about the cap in memory for a file of empty lines', async () => {
    await using f = await fixture();
    await writeFile(path.join(f.ws, 'newlines.txt'), '\n'.repeat(1024 * 1024));
    const before = process.memoryUsage().heapUsed;
    const result = await runTool(f.read, { path: 'newlines.txt' });
    const grown = process.memoryUsage().heapUsed - before;
    expect({ length: result.content.length, isError: result.isError }).toStrictEqual({ length: 1024 * 1024, isError: false });
    // One object per line would be over a hundred megabytes.
    expect(grown).toBeLessThan(32 * 1024 * 1024);
  });

  test('does not scan past its scan cap to reach an offset', async () => {
    await using f = await fixture({ maxScanBytes: 1024 });
    await writeFile(path.join(f.ws, 'lines.txt'), `${'x'.repeat(99)}\n`.repeat(100));
    expect(await runTool(f.read, { path: 'lines.txt', offset: 50 })).toStrictEqual({
      content:
        'Error: "lines.txt": line 50 was not reached in the first 1024 bytes, which is as far as read_file looks for an offset; ' +
        'use the terminal (tail, sed -n) for lines this far in.',
      isError: true,
    });
    expect(await runTool(f.read, { path: 'lines.txt', offset: 5, limit: 1 })).toStrictEqual({
      content: `${'x'.repeat(99)}\n[… showing lines 5–5; more lines follow: read again with offset 6 …]`,
      isError: false,
    });
  });

  test('answers for an offset in a huge sparse file instead of reading all of it', async () => {
    await using f = await fixture();
    const sparse = path.join(f.ws, 'sparse.txt');
    await writeFile(sparse, 'a\n'.repeat(4096));
    await truncate(sparse, 1024 ** 4);
    const result = await runTool(f.read, { path: 'sparse.txt', offset: 5000 });
    expect({ isError: result.isError, notReached: result.content.includes('line 5000 was not reached') }).toStrictEqual({
      isError: true,
      notReached: true,
    });
  });
});
