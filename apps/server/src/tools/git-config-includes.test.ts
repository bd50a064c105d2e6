import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { includedConfigFiles, includePaths } from './git-config-includes';
import { readConfigFile } from './git-config-file';
import { tempFolder } from './test-support';

/** The files Git itself reads `test.key` from in the repository at `workspace`, as real paths. */
function filesGitReads(workspace: string): string[] {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspace, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
  const result = spawnSync('git', ['config', '--show-origin', '--get-all', 'test.key'], { cwd: workspace, env, encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return result.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.slice('file:'.length, line.indexOf('\t')))
    // Resolved by the kernel, as git opens it: `link/../x` leads beside where the link leads, not to `x`.
    .map((named) => realpathSync.native(named.startsWith('/') ? named : `${workspace}/${named}`));
}

describe('includedConfigFiles', () => {
  test('is bounded whatever the files hold: a value written a hundred thousand times is looked up once, at most 1 MiB is read in all, and values past the first 256 are not looked up, nor a file more than 32 folders down', async () => {
    await using folder = await tempFolder();
    const workspace = folder.path;
    const at = (...parts: string[]) => path.join(workspace, ...parts);
    expect(spawnSync('git', ['init', '-q', workspace]).status).toBe(0);
    const read = { bytes: 0, files: 0 };
    const counted = (file: string, maxBytes: number) => {
      const config = readConfigFile(file, maxBytes);
      read.files += 1;
      read.bytes += config?.bytes ?? 0;
      return config;
    };
    // A chain of files of about 1 MiB each, each including the next a hundred thousand times.
    const lines = (value: string) => `\tpath = ${value}\n`.repeat(Math.floor(1_000_000 / (value.length + 9)));
    await writeFile(at('.git/config'), '[include]\n\tpath = f0\n');
    for (let i = 0; i < 12; i++) await writeFile(at('.git', `f${i}`), `[include]\n${lines(`f${i + 1}`)}`);
    // f1 is found in f0, and not read: the two would pass 1 MiB.
    expect(includedConfigFiles(workspace, [at('.git/config')], counted)).toStrictEqual([at('.git', 'f0'), at('.git', 'f1')]);
    expect(read.bytes).toBeLessThanOrEqual(1024 * 1024);
    // 300 places outside the workspace before one inside: the one inside is past the values looked up.
    await writeFile(at('.git/config'), `[include]\n${Array.from({ length: 300 }, (_, i) => `\tpath = /nowhere/x${i}\n`).join('')}\tpath = ../shared.gitconfig\n`);
    expect(includedConfigFiles(workspace, [at('.git/config')])).toStrictEqual([]);
    await writeFile(at('.git/config'), `[include]\n${Array.from({ length: 200 }, (_, i) => `\tpath = /nowhere/x${i}\n`).join('')}\tpath = ../shared.gitconfig\n`);
    expect(includedConfigFiles(workspace, [at('.git/config')])).toStrictEqual([at('shared.gitconfig')]);
    // A file 33 folders down is not followed (each folder on the way would be held for every call); 32 down is.
    const deep = (folders: number) => path.join(...Array.from({ length: folders }, () => 'a'), 'x.cfg');
    await mkdir(at(path.dirname(deep(33))), { recursive: true });
    await writeFile(at('.git/config'), `[include]\n\tpath = ../${deep(33)}\n\tpath = ../${deep(32)}\n`);
    expect(includedConfigFiles(workspace, [at('.git/config')])).toStrictEqual([at(deep(32))]);
  });

  test('finds the files Git reads as repository config through include.path and includeIf.*.path, relative to each including file, with those missing in the workspace', async () => {
    await using folder = await tempFolder();
    const workspace = folder.path;
    const at = (...parts: string[]) => path.join(workspace, ...parts);
    const key = (name: string) => `[test]\n\tkey = ${name}\n`;
    expect(spawnSync('git', ['init', '-q', workspace]).status).toBe(0);
    await mkdir(at('sub'));
    await mkdir(at('real'));
    await writeFile(
      at('.git/config'),
      `${key('config')}[include]\n\tpath = ../.gitconfig\n[includeIf "gitdir:**"]\n\tpath = c.gitconfig\n[include]\n\tpath = /nowhere/outside.gitconfig\n\tpath = %(prefix)/etc/x\n`,
    );
    await writeFile(at('.gitconfig'), `${key('root')}[INCLUDE] Path = "sub/a.gitconfig" ; comment\n\tpath = link.gitconfig\n\tpath = missing/m.gitconfig\n`);
    await writeFile(at('sub/a.gitconfig'), `${key('a')}[include]\n\tpath = ../b.gitconfig\n`);
    await writeFile(at('b.gitconfig'), key('b'));
    await writeFile(at('.git/c.gitconfig'), key('c'));
    await writeFile(at('real/target'), key('linked'));
    await symlink('real/target', at('link.gitconfig'));
    const found = includedConfigFiles(workspace, [at('.git/config')]);
    expect(found).toStrictEqual([at('.gitconfig'), at('.git/c.gitconfig'), at('sub/a.gitconfig'), at('real/target'), at('missing/m.gitconfig'), at('b.gitconfig')]);
    expect(filesGitReads(workspace).sort()).toStrictEqual([at('.git/config'), ...found.filter((file) => !file.includes('missing'))].sort());
  });

  test('a relative include is read from the folder of the path Git names, as the kernel resolves it, and includes are followed through files outside the workspace', async () => {
    await using folder = await tempFolder();
    await using elsewhere = await tempFolder();
    const workspace = folder.path;
    const at = (...parts: string[]) => path.join(workspace, ...parts);
    const key = (name: string) => `[test]\n\tkey = ${name}\n`;
    expect(spawnSync('git', ['init', '-q', workspace]).status).toBe(0);
    await mkdir(at('real'));
    await mkdir(at('deep/er'), { recursive: true });
    // A link to a file elsewhere: its relative include is read beside the link, not beside the file it leads to.
    await writeFile(at('real/a.cfg'), `${key('a')}[include]\n\tpath = b.cfg\n`);
    await symlink('real/a.cfg', at('alias.cfg'));
    await writeFile(at('b.cfg'), key('b'));
    await writeFile(at('real/b.cfg'), key('not read'));
    // A link to a folder, then `..`: beside where the link leads, not beside the link.
    await symlink('deep/er', at('lnk'));
    await writeFile(at('deep/c.cfg'), key('c'));
    await writeFile(at('c.cfg'), key('not read'));
    // A file outside the workspace that includes files of it, by an absolute path and through a link of its own.
    await symlink(workspace, path.join(elsewhere.path, 'ws'));
    await writeFile(path.join(elsewhere.path, 'team.cfg'), `${key('team')}[include]\n\tpath = ${at('d.cfg')}\n\tpath = ws/e.cfg\n\tpath = ws/lnk/../missing.cfg\n`);
    await writeFile(at('d.cfg'), key('d'));
    await writeFile(at('e.cfg'), key('e'));
    await writeFile(at('.git/config'), `${key('config')}[include]\n\tpath = ../alias.cfg\n\tpath = ../lnk/../c.cfg\n\tpath = ${elsewhere.path}/team.cfg\n`);
    const found = includedConfigFiles(workspace, [at('.git/config')]);
    expect(found).toStrictEqual([at('real/a.cfg'), at('deep/c.cfg'), at('b.cfg'), at('d.cfg'), at('e.cfg'), at('deep/missing.cfg')]);
    const read = filesGitReads(workspace);
    expect(read.sort()).toStrictEqual([at('.git/config'), path.join(elsewhere.path, 'team.cfg'), ...found.filter((file) => !file.includes('missing'))].sort());
    // Made by a call, the missing one is read too, where it was found.
    await writeFile(at('deep/missing.cfg'), key('missing'));
    expect(filesGitReads(workspace)).toContain(at('deep/missing.cfg'));
  });

  test('a missing include reached through a dangling link is the file the link points to; one going up from a missing folder is that folder, which a call would make to choose where it leads', async () => {
    await using folder = await tempFolder();
    const at = (...parts: string[]) => path.join(folder.path, ...parts);
    expect(spawnSync('git', ['init', '-q', folder.path]).status).toBe(0);
    await mkdir(at('sub'));
    await symlink('sub/target.cfg', at('dangling.cfg'));
    await writeFile(at('.git/config'), '[include]\n\tpath = ../dangling.cfg\n\tpath = ../missing/../up.cfg\n');
    expect(includedConfigFiles(folder.path, [at('.git/config')])).toStrictEqual([at('sub/target.cfg'), at('missing')]);
  });

  test('an include loop ends, each file once; a file outside the workspace, or under a link or a file on the way, is none', async () => {
    await using folder = await tempFolder();
    await using elsewhere = await tempFolder();
    const at = (...parts: string[]) => path.join(folder.path, ...parts);
    await mkdir(at('.git'));
    await writeFile(at('.git/config'), '[include]\n\tpath = ../a\n');
    await writeFile(at('a'), '[include]\n\tpath = b\n');
    await writeFile(at('b'), '[include]\n\tpath = a\n\tpath = .git/config\n');
    expect(includedConfigFiles(folder.path, [at('.git/config')])).toStrictEqual([at('a'), at('b')]);
    await symlink(elsewhere.path, at('out'));
    await writeFile(at('file'), '');
    await writeFile(at('a'), `[include]\n\tpath = out/x\n\tpath = file/x\n\tpath = ${elsewhere.path}/y\n\tpath = ../../x\n`);
    expect(includedConfigFiles(folder.path, [at('.git/config')])).toStrictEqual([at('a')]);
  });
});

describe('includePaths', () => {
  test.each([
    ['[include]\n\tpath = a\n[includeIf "onbranch:main"]\n\tpath = b\n[includeif "gitdir:~/x/"] path = "c d"\n', ['a', 'b', 'c d']],
    ['[include "x"]\n\tpath = a\n[includeIf]\n\tpath = b\n[core]\n\tpath = c\n[include]\n\tpath\n\tpath =\n', []],
    ['[core]\n\tpager = "less \\\n[include]\n\tpath = no"\n', []],
  ])('%j gives %j', (text, expected) => {
    expect(includePaths(text)).toStrictEqual(expected);
  });
});
