import { lstat, mkdir, mkdtemp, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { removeOwnFolder, scratchBase, withScratchFolder } from './scratch-folder';
import { tempFolder } from './test-support';

describe('the server’s temporary folders for tools', () => {
  afterEach(() => vi.unstubAllEnvs());

  test('are made outside the workspace when TMPDIR lies in it, and in TMPDIR otherwise', async () => {
    await using workspace = await tempFolder('/var/tmp');
    const inside = path.join(workspace.path, '.tmp');
    await mkdir(inside);
    vi.stubEnv('TMPDIR', inside);
    expect(await scratchBase(workspace.path)).toBe('/tmp');
    await using elsewhere = await tempFolder('/var/tmp');
    vi.stubEnv('TMPDIR', elsewhere.path);
    expect(await scratchBase(workspace.path)).toBe(elsewhere.path);
    let used: string | undefined;
    await withScratchFolder(workspace.path, 'airlock-test-', async (folder) => {
      used = folder;
      await writeFile(path.join(folder, 'made'), 'x');
    });
    expect(path.dirname(used!)).toBe(elsewhere.path);
    expect(await readdir(elsewhere.path)).toStrictEqual([]);
  });

  test('are removed without following a link: a link to a folder elsewhere is unlinked, what it leads to kept', async () => {
    await using outside = await tempFolder();
    const victim = path.join(outside.path, 'victim');
    await mkdir(victim);
    for (let file = 0; file < 5; file++) await writeFile(path.join(victim, `f${file}`), 'keep');
    const folder = await mkdtemp(path.join(outside.path, 'scratch-'));
    const made = await lstat(folder);
    await mkdir(path.join(folder, 'sub', 'deeper'), { recursive: true });
    await writeFile(path.join(folder, 'sub', 'deeper', 'file'), 'x');
    await symlink(victim, path.join(folder, 'sub', 'link'));
    await symlink(path.join(victim, 'f0'), path.join(folder, 'file-link'));
    await removeOwnFolder(folder, made);
    expect(await readdir(outside.path)).toStrictEqual(['victim']);
    expect(await readdir(victim)).toStrictEqual(['f0', 'f1', 'f2', 'f3', 'f4']);
  });

  test('leave alone a folder that is no longer the one made: the link or folder now at its path is not the server’s', async () => {
    await using outside = await tempFolder();
    const victim = path.join(outside.path, 'victim');
    await mkdir(victim);
    await writeFile(path.join(victim, 'keep'), 'keep');
    const folder = await mkdtemp(path.join(outside.path, 'scratch-'));
    const made = await lstat(folder);
    await rename(folder, path.join(outside.path, 'moved'));
    await symlink(victim, folder);
    await removeOwnFolder(folder, made);
    expect(await readdir(victim)).toStrictEqual(['keep']);
    await rm(folder);
    await mkdir(folder);
    await writeFile(path.join(folder, 'other'), 'x');
    await removeOwnFolder(folder, made);
    expect(await readdir(folder)).toStrictEqual(['other']);
  });
});
