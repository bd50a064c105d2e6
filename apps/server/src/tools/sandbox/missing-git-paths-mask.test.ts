import { mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempFolder } from '../test-support';
import { checkGitMetadata, gitMetadataReport, snapshotGitMetadata } from '../git-metadata-snapshot';
import { maskMissingGitPaths } from './missing-git-paths-mask';
import { closeGuards, missingGitPaths, openWorkspaceGuards } from './workspace-guards';

/** The mask for a call starting now, its guards closed at once as bubblewrap's start would. */
function maskNow(workspace: string) {
  const guards = openWorkspaceGuards(workspace);
  try {
    return maskMissingGitPaths(missingGitPaths(workspace), guards);
  } finally {
    closeGuards(guards);
  }
}

describe('maskMissingGitPaths', () => {
  test('the folder made for the mask is removed when the last call masking it is over, not before; calls in between mask it too', async () => {
    await using workspace = await tempFolder();
    const git = path.join(workspace.path, '.git');
    await mkdir(git);
    await writeFile(path.join(git, 'config'), '');
    const hooks = path.join(git, 'hooks');
    const worktreeConfig = { path: path.join(git, 'config.worktree'), folder: false };
    const first = maskNow(workspace.path);
    expect(first?.paths).toStrictEqual([worktreeConfig, { path: hooks, folder: true }]);
    await mkdir(hooks); // the mount point bubblewrap makes
    const guards = openWorkspaceGuards(workspace.path);
    expect(guards.map((guard) => guard.path)).toContain(hooks);
    const second = maskMissingGitPaths(missingGitPaths(workspace.path), guards);
    expect(second?.paths).toStrictEqual([worktreeConfig, { path: hooks, folder: true }]);
    expect(guards.map((guard) => guard.path)).not.toContain(hooks);
    closeGuards(guards);
    first!.release();
    first!.release();
    expect(await readdir(git)).toContain('hooks');
    second!.release();
    expect(await readdir(git)).toStrictEqual(['config']);
  });

  test('a .git folder without a config or config.worktree gets them masked, the empty files made for them removed after; no mask where all exist or .git is no folder', async () => {
    await using workspace = await tempFolder();
    await using elsewhere = await tempFolder();
    const config = path.join(workspace.path, '.git/config');
    const worktreeConfig = path.join(workspace.path, '.git/config.worktree');
    await mkdir(path.join(workspace.path, '.git/hooks'), { recursive: true });
    const masked = [
      { path: config, folder: false },
      { path: worktreeConfig, folder: false },
    ];
    const mask = maskNow(workspace.path);
    expect(mask?.paths).toStrictEqual(masked);
    // the mount points bubblewrap makes
    await writeFile(config, '');
    await writeFile(worktreeConfig, '');
    const second = maskNow(workspace.path);
    expect(second?.paths).toStrictEqual(masked);
    mask!.release();
    expect((await readdir(path.join(workspace.path, '.git'))).sort()).toStrictEqual(['config', 'config.worktree', 'hooks']);
    second!.release();
    expect(await readdir(path.join(workspace.path, '.git'))).toStrictEqual(['hooks']);
    await writeFile(config, '[core]\n');
    await writeFile(worktreeConfig, '[core]\n');
    expect(maskNow(workspace.path)).toBeUndefined();
    await rm(path.join(workspace.path, '.git'), { recursive: true });
    expect(maskNow(workspace.path)).toBeUndefined();
    await symlink(elsewhere.path, path.join(workspace.path, '.git'));
    expect(maskNow(workspace.path)).toBeUndefined();
  });

  test("an empty file the person renamed over a masked file's mount point meanwhile is theirs, and stays when the call is over", async () => {
    await using workspace = await tempFolder();
    const git = path.join(workspace.path, '.git');
    await mkdir(path.join(git, 'hooks'), { recursive: true });
    await writeFile(path.join(git, 'config'), '');
    const worktreeConfig = path.join(git, 'config.worktree');
    const mask = maskNow(workspace.path);
    expect(mask?.paths).toStrictEqual([{ path: worktreeConfig, folder: false }]);
    await writeFile(`${worktreeConfig}.lock`, '');
    await rename(`${worktreeConfig}.lock`, worktreeConfig);
    mask!.release();
    expect((await readdir(git)).sort()).toStrictEqual(['config', 'config.worktree', 'hooks']);
  });

  test("a call that ends while another masks the missing .git/hooks does not report the other's mount point as a hooks folder made", async () => {
    await using workspace = await tempFolder();
    const git = path.join(workspace.path, '.git');
    await mkdir(path.join(git, 'objects'), { recursive: true });
    await mkdir(path.join(git, 'refs'), { recursive: true });
    await writeFile(path.join(git, 'config'), '');
    await writeFile(path.join(git, 'HEAD'), 'ref: refs/heads/main\n');
    // The first call starts with no hooks folder; a second starts alongside and masks it, its mount point made.
    const before = await snapshotGitMetadata(workspace.path);
    const other = maskNow(workspace.path);
    await mkdir(path.join(git, 'hooks'));
    expect(gitMetadataReport(await checkGitMetadata(workspace.path, before))).toBeUndefined();
    // A hook in it is another matter, and so is the folder once no call masks it.
    other?.release();
    await mkdir(path.join(git, 'hooks'));
    expect(gitMetadataReport(await checkGitMetadata(workspace.path, before))).toMatch(/\.git\/hooks was made: Git runs a hook there/);
  });
});
