import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempFolder } from './test-support';
import { workspaceGitDir } from './workspace-git-dir';

describe('workspaceGitDir', () => {
  test('a .git folder is the Git directory and holds the config', async () => {
    await using workspace = await tempFolder();
    const git = path.join(workspace.path, '.git');
    await mkdir(git);
    expect(workspaceGitDir(workspace.path)).toStrictEqual({ found: { gitDir: git, gitFile: undefined, commonDir: git } });
  });

  test('a .git file is followed to the folder it names inside the workspace, relative to the workspace or absolute', async () => {
    await using workspace = await tempFolder();
    const repo = path.join(workspace.path, 'sub/.repo');
    await mkdir(repo, { recursive: true });
    for (const line of ['gitdir: sub/.repo\n', `gitdir: ${repo}`, 'gitdir: ./sub/../sub/.repo  \n']) {
      await writeFile(path.join(workspace.path, '.git'), line);
      expect(workspaceGitDir(workspace.path)).toStrictEqual({ found: { gitDir: repo, gitFile: { path: path.join(workspace.path, '.git'), content: Buffer.from(line) }, commonDir: repo } });
    }
  });

  test('a worktree’s commondir names where the config and hooks are; none when that is outside', async () => {
    await using workspace = await tempFolder();
    const worktree = path.join(workspace.path, '.bare/worktrees/main');
    await mkdir(worktree, { recursive: true });
    await writeFile(path.join(workspace.path, '.git'), 'gitdir: .bare/worktrees/main\n');
    await writeFile(path.join(worktree, 'commondir'), '../..\n');
    expect(workspaceGitDir(workspace.path)).toMatchObject({ found: { gitDir: worktree, commonDir: path.join(workspace.path, '.bare') } });
    await writeFile(path.join(worktree, 'commondir'), '../../..\n');
    expect(workspaceGitDir(workspace.path)).toMatchObject({ found: { gitDir: worktree, commonDir: undefined } });
  });

  test('a .git file leading outside the workspace, to the workspace itself, through a link or nowhere is not followed, and said so', async () => {
    await using workspace = await tempFolder();
    await using elsewhere = await tempFolder();
    await symlink(elsewhere.path, path.join(workspace.path, 'link'));
    for (const named of [elsewhere.path, '../x', '.', 'link', 'missing']) {
      await writeFile(path.join(workspace.path, '.git'), `gitdir: ${named}\n`);
      expect(workspaceGitDir(workspace.path)).toStrictEqual({ outside: named });
    }
  });

  test('no Git directory for no .git, a .git link, or a file that names none', async () => {
    await using workspace = await tempFolder();
    await using elsewhere = await tempFolder();
    expect(workspaceGitDir(workspace.path)).toBeUndefined();
    await writeFile(path.join(workspace.path, '.git'), 'not a gitdir line\n');
    expect(workspaceGitDir(workspace.path)).toBeUndefined();
    await writeFile(path.join(workspace.path, '.git'), 'gitdir: \n');
    expect(workspaceGitDir(workspace.path)).toBeUndefined();
    await symlink(elsewhere.path, path.join(workspace.path, 'git-link'));
    await rename(path.join(workspace.path, 'git-link'), path.join(workspace.path, '.git'));
    expect(workspaceGitDir(workspace.path)).toBeUndefined();
  });
});
