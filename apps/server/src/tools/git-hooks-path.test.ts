import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { hooksFoldersToKeep, hooksPathFolder, hooksPathSetting } from './git-hooks-path';
import { tempFolder } from './test-support';

/** core.hooksPath as Git itself reads it from a config file holding `text`. */
async function gitReads(text: string): Promise<string | undefined> {
  await using folder = await tempFolder();
  const file = path.join(folder.path, 'config');
  await writeFile(file, text);
  const result = spawnSync('git', ['config', '--file', file, '--get', 'core.hooksPath'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.replace(/\n$/, '') : undefined;
}

describe('hooksPathSetting', () => {
  test.each([
    ['[core]\n\thooksPath = .husky/_\n', '.husky/_'],
    ['[CORE]\n\tHOOKSPATH=.githooks', '.githooks'],
    ['[core] hooksPath = x\n', 'x'],
    ['[core]\n\thooksPath = "a b" ; comment\n', 'a b'],
    ['[core]\n\thooksPath = a \t b # comment\n', 'a   b'],
    ['[core]\n\thooksPath = a\\\n/b\n', 'a/b'],
    ['[core]\n\thooksPath = "h#1"\n', 'h#1'],
    ['[core]\r\n\thooksPath = crlf\r\n', 'crlf'],
    ['[core]\n\thooksPath = first\n[user]\n\tname = x\n[core]\n\thooksPath = last\n', 'last'],
    ['[core]\n\tpager = "less \\\n\thooksPath = no"\n\thooksPath = yes\n', 'yes'],
  ])('%j names %j, as Git reads it', async (text, expected) => {
    expect(hooksPathSetting(text)).toBe(expected);
    expect(await gitReads(text)).toBe(expected);
  });

  test.each([
    '[core "sub"]\n\thooksPath = x\n',
    '[core.sub]\n\thooksPath = x\n',
    '[user]\n\thooksPath = x\n',
    '[core]\n\t# hooksPath = x\n',
    '[core]\n\tworktree = hooksPath\n',
    '',
  ])('%j names none, as Git reads it', async (text) => {
    expect(hooksPathSetting(text)).toBeUndefined();
    expect(await gitReads(text)).toBeUndefined();
  });
});

describe('hooksPathFolder', () => {
  test('a relative path starts at the work tree; one outside the workspace, the workspace itself and none give nothing', async () => {
    await using workspace = await tempFolder();
    const configFile = path.join(workspace.path, 'config');
    const folderFor = async (value: string | undefined) => {
      await writeFile(configFile, value === undefined ? '[core]\n\tbare = false\n' : `[core]\n\thooksPath = ${value}\n`);
      return hooksPathFolder({ workspace: workspace.path, configFile, workTree: workspace.path });
    };
    expect(await folderFor('.husky/_')).toBe(path.join(workspace.path, '.husky/_'));
    expect(await folderFor(path.join(workspace.path, 'hooks'))).toBe(path.join(workspace.path, 'hooks'));
    expect(await folderFor('a/../hooks')).toBe(path.join(workspace.path, 'hooks'));
    expect(await folderFor('../elsewhere')).toBeUndefined();
    expect(await folderFor('.')).toBeUndefined();
    expect(await folderFor('/usr/share/hooks')).toBeUndefined();
    expect(await folderFor('~/hooks')).toBe(path.relative(workspace.path, path.join(os.homedir(), 'hooks')).startsWith('..') ? undefined : path.join(os.homedir(), 'hooks'));
    expect(await folderFor(undefined)).toBeUndefined();
  });

  test('a config that is a link is not read', async () => {
    await using workspace = await tempFolder();
    await mkdir(path.join(workspace.path, 'real'));
    await writeFile(path.join(workspace.path, 'real/config'), '[core]\n\thooksPath = hooks\n');
    await symlink(path.join(workspace.path, 'real/config'), path.join(workspace.path, 'config'));
    expect(hooksPathFolder({ workspace: workspace.path, configFile: path.join(workspace.path, 'config'), workTree: workspace.path })).toBeUndefined();
  });
});

describe('hooksFoldersToKeep', () => {
  test("husky's .husky/_ keeps .husky too, since its hooks run the scripts there", () => {
    expect(hooksFoldersToKeep('/w/.husky/_')).toStrictEqual(['/w/.husky', '/w/.husky/_']);
    expect(hooksFoldersToKeep('/w/.githooks')).toStrictEqual(['/w/.githooks']);
  });
});
