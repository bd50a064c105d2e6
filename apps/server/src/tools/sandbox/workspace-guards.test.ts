import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempFolder } from '../test-support';
import { closeGuards, missingGitPaths, openWorkspaceGuards } from './workspace-guards';

function guardsOf(workspace: string) {
  const guards = openWorkspaceGuards(workspace);
  closeGuards(guards);
  return guards.map(({ path: guarded, readOnly }) => ({ path: path.relative(workspace, guarded), readOnly }));
}

describe('workspace guards', () => {
  test('an existing repository’s config and hooks are held read-only with .git bound over itself, and .airlock read-only', async () => {
    await using workspace = await tempFolder();
    await mkdir(path.join(workspace.path, '.git/hooks'), { recursive: true });
    await writeFile(path.join(workspace.path, '.git/config'), '');
    await mkdir(path.join(workspace.path, '.airlock'));
    expect(guardsOf(workspace.path)).toStrictEqual([
      { path: '.git', readOnly: false },
      { path: '.git/config', readOnly: true },
      { path: '.git/hooks', readOnly: true },
      { path: '.airlock', readOnly: true },
    ]);
  });

  test('the hooks folder core.hooksPath names is held read-only and the folders on the way bound over themselves; husky’s .husky/_ holds .husky', async () => {
    await using workspace = await tempFolder();
    await mkdir(path.join(workspace.path, '.git'));
    await mkdir(path.join(workspace.path, 'tools/git/hooks'), { recursive: true });
    await mkdir(path.join(workspace.path, '.husky/_'), { recursive: true });
    await writeFile(path.join(workspace.path, '.git/config'), '[core]\n\thooksPath = tools/git/hooks\n');
    expect(guardsOf(workspace.path)).toStrictEqual([
      { path: '.git', readOnly: false },
      { path: '.git/config', readOnly: true },
      { path: 'tools', readOnly: false },
      { path: 'tools/git', readOnly: false },
      { path: 'tools/git/hooks', readOnly: true },
    ]);
    await writeFile(path.join(workspace.path, '.git/config'), '[core]\n\thooksPath = .husky/_\n');
    expect(guardsOf(workspace.path).slice(2)).toStrictEqual([{ path: '.husky', readOnly: true }]);
    await writeFile(path.join(workspace.path, '.git/config'), '[core]\n\thooksPath = ../outside\n');
    expect(guardsOf(workspace.path).slice(2)).toStrictEqual([]);
  });

  test('a .git file is held read-only, and the Git directory it names bound over itself with the folders on the way; a worktree’s config and hooks are held where its commondir leads, and its commondir read-only', async () => {
    await using workspace = await tempFolder();
    const worktree = path.join(workspace.path, '.bare/worktrees/main');
    await mkdir(worktree, { recursive: true });
    await mkdir(path.join(workspace.path, '.bare/hooks'));
    await writeFile(path.join(workspace.path, '.bare/config'), '');
    await writeFile(path.join(workspace.path, '.git'), 'gitdir: .bare\n');
    expect(guardsOf(workspace.path)).toStrictEqual([
      { path: '.git', readOnly: true },
      { path: '.bare', readOnly: false },
      { path: '.bare/config', readOnly: true },
      { path: '.bare/hooks', readOnly: true },
    ]);
    await writeFile(path.join(workspace.path, '.git'), 'gitdir: .bare/worktrees/main\n');
    await writeFile(path.join(worktree, 'commondir'), '../..\n');
    expect(guardsOf(workspace.path)).toStrictEqual([
      { path: '.git', readOnly: true },
      { path: '.bare', readOnly: false },
      { path: '.bare/worktrees', readOnly: false },
      { path: '.bare/worktrees/main', readOnly: false },
      { path: '.bare/worktrees/main/commondir', readOnly: true },
      { path: '.bare/config', readOnly: true },
      { path: '.bare/hooks', readOnly: true },
    ]);
  });

  test('a .git folder’s own config, config.worktree and hooks are held, and masked when missing, whatever a commondir in it names (a call running alongside can write one)', async () => {
    await using workspace = await tempFolder();
    await using elsewhere = await tempFolder();
    const git = path.join(workspace.path, '.git');
    await mkdir(path.join(git, 'hooks'), { recursive: true });
    await writeFile(path.join(git, 'config'), '');
    await writeFile(path.join(git, 'config.worktree'), '');
    await mkdir(path.join(workspace.path, 'evil'));
    const missing = (folder: string) => ['config', 'config.worktree', 'hooks'].map((name) => path.relative(workspace.path, path.join(folder, name)));
    for (const [commondir, evil] of [
      ['../evil', path.join(workspace.path, 'evil')],
      [elsewhere.path, undefined],
    ] as const) {
      await writeFile(path.join(git, 'commondir'), `${commondir}\n`);
      expect(guardsOf(workspace.path)).toStrictEqual([
        { path: '.git', readOnly: false },
        ...(evil === undefined ? [] : [{ path: 'evil', readOnly: false }]),
        { path: '.git/config', readOnly: true },
        { path: '.git/config.worktree', readOnly: true },
        { path: '.git/hooks', readOnly: true },
        { path: '.git/commondir', readOnly: true },
      ]);
      expect(missingGitPaths(workspace.path).map((masked) => path.relative(workspace.path, masked.path))).toStrictEqual([
        ...missing(git),
        ...(evil === undefined ? [] : missing(evil)),
      ]);
    }
  });

  test('nothing is held where nothing is, nor a link, a fifo, or a file where a folder belongs (and the other way round); a .git folder is bound over itself', async () => {
    await using workspace = await tempFolder();
    await using elsewhere = await tempFolder();
    expect(guardsOf(workspace.path)).toStrictEqual([]);
    await mkdir(path.join(workspace.path, '.git'));
    await symlink(elsewhere.path, path.join(workspace.path, '.git/hooks'));
    execFileSync('mkfifo', [path.join(workspace.path, '.git/config')]);
    await writeFile(path.join(workspace.path, '.airlock'), '');
    expect(guardsOf(workspace.path)).toStrictEqual([{ path: '.git', readOnly: false }]);
  });

  test('a .git file leading outside the workspace, or naming nothing, is held read-only all the same', async () => {
    await using workspace = await tempFolder();
    await using elsewhere = await tempFolder();
    await writeFile(path.join(workspace.path, '.git'), `gitdir: ${elsewhere.path}\n`);
    expect(guardsOf(workspace.path)).toStrictEqual([{ path: '.git', readOnly: true }]);
    await writeFile(path.join(workspace.path, '.git'), 'not a gitdir line\n');
    expect(guardsOf(workspace.path)).toStrictEqual([{ path: '.git', readOnly: true }]);
    expect(missingGitPaths(workspace.path)).toStrictEqual([]);
  });

  test('a workspace file the repository config includes is held read-only with the folders on the way bound over themselves, and masked when missing (for one in a missing folder, that folder)', async () => {
    await using workspace = await tempFolder();
    const at = (...parts: string[]) => path.join(workspace.path, ...parts);
    await mkdir(at('.git/hooks'), { recursive: true });
    await writeFile(at('.git/config.worktree'), '');
    await writeFile(at('.git/config'), '[include]\n\tpath = ../.gitconfig\n[includeIf "onbranch:main"]\n\tpath = ../tools/git/shared\n');
    // After the config, config.worktree and hooks of .git, which are candidates always.
    const relative = (masked: { path: string; folder: boolean }[]) => masked.slice(3).map((entry) => ({ ...entry, path: path.relative(workspace.path, entry.path) }));
    expect(relative(missingGitPaths(workspace.path))).toStrictEqual([
      { path: '.gitconfig', folder: false },
      { path: 'tools', folder: true },
    ]);
    await mkdir(at('tools/git'), { recursive: true });
    await writeFile(at('tools/git/shared'), '[include]\n\tpath = more\n[core]\n\thooksPath = tools/git\n');
    await writeFile(at('.gitconfig'), '');
    expect(relative(missingGitPaths(workspace.path))).toStrictEqual([{ path: 'tools/git/more', folder: false }]);
    expect(guardsOf(workspace.path)).toStrictEqual([
      { path: '.git', readOnly: false },
      { path: '.git/config', readOnly: true },
      { path: '.git/config.worktree', readOnly: true },
      { path: '.git/hooks', readOnly: true },
      { path: 'tools', readOnly: false },
      // The hooks folder a file included names.
      { path: 'tools/git', readOnly: true },
      { path: '.gitconfig', readOnly: true },
      { path: 'tools/git/shared', readOnly: true },
    ]);
  });

  test('a .git that is a link is not held, nor what lies under it', async () => {
    await using workspace = await tempFolder();
    await using elsewhere = await tempFolder();
    await mkdir(path.join(elsewhere.path, 'hooks'));
    await writeFile(path.join(elsewhere.path, 'config'), '');
    await symlink(elsewhere.path, path.join(workspace.path, '.git'));
    expect(guardsOf(workspace.path)).toStrictEqual([]);
  });
});
