import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { includedConfigFiles } from './git-config-includes';
import { hooksPathFolder, hooksPathFolders } from './git-hooks-path';
import { tempFolder } from './test-support';
import { workspaceGitDir } from './workspace-git-dir';

// A folder of the workspace whose name starts with `..` (`..x`, `...`) is inside it: taken for outside, what Git runs
// from it was not kept from a call's writes, nor looked at.
describe('a workspace folder named ..x is inside the workspace for the Git checks', () => {
  test('core.hooksPath naming ..hooks names a hooks folder to keep', async () => {
    await using workspace = await tempFolder();
    const config = path.join(workspace.path, '.git/config');
    await mkdir(path.dirname(config));
    for (const name of ['..hooks', '...', '..x/hooks']) {
      await writeFile(config, `[core]\n\thooksPath = ${name}\n`);
      const folder = path.join(workspace.path, name);
      expect(hooksPathFolder({ workspace: workspace.path, configFile: config, workTree: workspace.path }), name).toBe(folder);
      expect(hooksPathFolders(workspace.path, [config]), name).toStrictEqual([folder]);
    }
    await writeFile(config, '[core]\n\thooksPath = ../hooks\n');
    expect(hooksPathFolder({ workspace: workspace.path, configFile: config, workTree: workspace.path })).toBeUndefined();
  });

  test('a .git file naming a Git directory under ..x, and a commondir there, are followed', async () => {
    await using workspace = await tempFolder();
    const worktree = path.join(workspace.path, '..repo/worktrees/main');
    await mkdir(worktree, { recursive: true });
    await writeFile(path.join(workspace.path, '.git'), 'gitdir: ..repo/worktrees/main\n');
    await writeFile(path.join(worktree, 'commondir'), '../..\n');
    expect(workspaceGitDir(workspace.path)).toMatchObject({ found: { gitDir: worktree, commonDir: path.join(workspace.path, '..repo') } });
  });

  test('a config file included from under ..x is looked at, present or missing', async () => {
    await using workspace = await tempFolder();
    const at = (...parts: string[]) => path.join(workspace.path, ...parts);
    expect(spawnSync('git', ['init', '-q', workspace.path]).status).toBe(0);
    await mkdir(at('..x'));
    await writeFile(at('..x/present.cfg'), '[core]\n\tfsmonitor = ./evil.sh\n');
    await writeFile(at('.git/config'), '[include]\n\tpath = ../..x/present.cfg\n\tpath = ../..x/missing.cfg\n\tpath = ../../outside.cfg\n');
    expect(includedConfigFiles(workspace.path, [at('.git/config')])).toStrictEqual([at('..x/present.cfg'), at('..x/missing.cfg')]);
  });
});
