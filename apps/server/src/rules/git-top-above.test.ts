import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitTopAboveWorkspace } from './git-top-above';
import { tempFolder } from '../tools/test-support';

/** A Git directory in `folder` as git tells one (`HEAD`, `objects`, `refs`), with a `.git/commondir` that is a FIFO. */
async function gitDirectoryWithFifo(folder: string, fifo: 'commondir' | 'gitfile'): Promise<void> {
  if (fifo === 'gitfile') {
    execFileSync('mkfifo', [path.join(folder, '.git')]);
    return;
  }
  await mkdir(path.join(folder, '.git', 'objects'), { recursive: true });
  await mkdir(path.join(folder, '.git', 'refs'), { recursive: true });
  await writeFile(path.join(folder, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  execFileSync('mkfifo', [path.join(folder, '.git', 'commondir')]);
}

/** A Git directory as git tells one in `folder`: `HEAD`, `objects`, `refs`. */
async function gitDirectory(folder: string): Promise<void> {
  await mkdir(path.join(folder, '.git', 'objects'), { recursive: true });
  await mkdir(path.join(folder, '.git', 'refs'), { recursive: true });
  await writeFile(path.join(folder, '.git', 'HEAD'), 'ref: refs/heads/main\n');
}

/** A repository `mono` in `root` whose folder `app` is the workspace, with a folder `sub`; with `own`, a repository of its own. */
async function nested(root: string, own = true): Promise<{ workspace: string; sub: string }> {
  const workspace = path.join(root, 'mono', 'app');
  const sub = path.join(workspace, 'sub');
  await mkdir(sub, { recursive: true });
  await gitDirectory(path.join(root, 'mono'));
  if (own) await gitDirectory(workspace);
  return { workspace, sub };
}

describe('gitTopAboveWorkspace', () => {
  // A FIFO that no one writes holds an open of it for reading until someone does: read on the server's thread, it held
  // every client, each later judging too. An allowed `tar -x` can put one in the workspace (found in review).
  it.each(['commondir', 'gitfile'] as const)('is not held by a FIFO in a .git of the workspace (%s): git dies on it, and the lookup goes on', async (fifo) => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'app');
    const sub = path.join(workspace, 'sub');
    await mkdir(sub, { recursive: true });
    await gitDirectoryWithFifo(sub, fifo);
    expect(gitTopAboveWorkspace(workspace)(sub)).toBeUndefined();
  });

  // git reads `commondir` and a gitfile as C strings: up to the first NUL byte (found in review, git 2.39).
  it('reads a commondir up to a NUL byte: `../../../.git\\0x` in `sub/.git` leads to the larger repository', async () => {
    await using folder = await tempFolder();
    const { workspace, sub } = await nested(folder.path);
    await gitDirectory(sub);
    await writeFile(path.join(sub, '.git', 'commondir'), '../../../.git\0x');
    expect(gitTopAboveWorkspace(workspace)(sub)?.top).toBe(path.join(folder.path, 'mono'));
  });

  it('reads a gitfile up to a NUL byte: `gitdir: ../../.git\\0junk` in `sub` leads to the larger repository', async () => {
    await using folder = await tempFolder();
    const { workspace, sub } = await nested(folder.path);
    await writeFile(path.join(sub, '.git'), 'gitdir: ../../.git\0junk\n');
    expect(gitTopAboveWorkspace(workspace)(sub)?.top).toBe(path.join(folder.path, 'mono'));
  });

  // git's discovery looks, in each folder, at its `.git` and then at the folder itself: an ordinary `HEAD` and
  // `commondir` make it a bare repository, whose paths are read from the top of its tree (found in review, git 2.39).
  it('takes a folder that is itself a Git directory for a bare repository read from its top: `HEAD` and `commondir` in `sub`', async () => {
    await using folder = await tempFolder();
    const { workspace, sub } = await nested(folder.path, false);
    await writeFile(path.join(sub, 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(path.join(sub, 'commondir'), '../../.git\n');
    const mono = path.join(folder.path, 'mono');
    expect(gitTopAboveWorkspace(workspace)(sub)).toMatchObject({ top: mono, pathsFromTop: true });
    expect(gitTopAboveWorkspace(workspace)(path.join(sub, 'deeper'))).toMatchObject({ top: mono, pathsFromTop: true });
    expect(gitTopAboveWorkspace(workspace)(sub)?.holds(path.join(sub, 'HEAD'))).toBe(false);
    // At the workspace's root, and with the workspace's own repository: the folder is looked at before going up.
    await writeFile(path.join(workspace, 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(path.join(workspace, 'commondir'), '../.git\n');
    expect(gitTopAboveWorkspace(workspace)(workspace)).toMatchObject({ top: mono, pathsFromTop: true });
    await gitDirectory(workspace);
    expect(gitTopAboveWorkspace(workspace)(sub)).toMatchObject({ top: mono, pathsFromTop: true });
    expect(gitTopAboveWorkspace(workspace)(workspace)).toBeUndefined();
  });

  it('takes a workspace in no larger repository whose root names another repository in `commondir` for a bare one read from there', async () => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'app');
    const other = path.join(folder.path, 'other');
    await mkdir(workspace);
    await gitDirectory(other);
    expect(gitTopAboveWorkspace(workspace)(workspace)).toBeUndefined();
    await writeFile(path.join(workspace, 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(path.join(workspace, 'commondir'), `${path.join(other, '.git')}\n`);
    expect(gitTopAboveWorkspace(workspace)(workspace)).toMatchObject({ top: other, pathsFromTop: true });
  });

  it('goes on up past a folder that is no Git directory (a HEAD with no objects or refs), and judges a larger repository as before', async () => {
    await using folder = await tempFolder();
    const { workspace, sub } = await nested(folder.path, false);
    await writeFile(path.join(sub, 'HEAD'), 'ref: refs/heads/main\n');
    const found = gitTopAboveWorkspace(workspace)(sub);
    expect(found?.top).toBe(path.join(folder.path, 'mono'));
    expect(found?.pathsFromTop).toBeUndefined();
    expect(found?.holds(path.join(sub, 'HEAD'))).toBe(true);
  });

  // git sets a repository's work tree from its config's `core.worktree` (found in review, git 2.39): a repository
  // inside the workspace whose work tree holds the larger repository reads its files as the larger one does.
  describe('core.worktree', () => {
    async function vendor(root: string, config: string): Promise<{ workspace: string; vendor: string; mono: string }> {
      const { workspace } = await nested(root, false);
      const folder = path.join(workspace, 'vendor');
      await gitDirectory(folder);
      await writeFile(path.join(folder, '.git', 'config'), config);
      return { workspace, vendor: folder, mono: path.join(root, 'mono') };
    }
    const withWorktree = (worktree: string) => `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ${worktree}\n`;

    it('takes a work tree that holds the workspace for a larger repository’s', async () => {
      await using folder = await tempFolder();
      const { workspace, vendor: from, mono } = await vendor(folder.path, withWorktree('../../..'));
      const found = gitTopAboveWorkspace(workspace)(from);
      expect(found?.top).toBe(mono);
      expect(found?.pathsFromTop).toBeUndefined();
      expect(gitTopAboveWorkspace(workspace)(path.join(from, 'deeper'))?.top).toBe(mono);
    });

    it('reads it from config.worktree with extensions.worktreeConfig', async () => {
      await using folder = await tempFolder();
      const { workspace, vendor: from, mono } = await vendor(folder.path, '[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n');
      expect(gitTopAboveWorkspace(workspace)(from)).toBeUndefined();
      await writeFile(path.join(from, '.git', 'config.worktree'), '[core]\n\tworktree = ../../..\n');
      expect(gitTopAboveWorkspace(workspace)(from)?.top).toBe(mono);
    });

    it('reads paths from the top of a work tree the folder lies outside, or of a repository with core.bare', async () => {
      await using folder = await tempFolder();
      const elsewhere = path.join(folder.path, 'elsewhere');
      await mkdir(elsewhere);
      const { workspace, vendor: from } = await vendor(folder.path, withWorktree(elsewhere));
      expect(gitTopAboveWorkspace(workspace)(from)).toMatchObject({ top: elsewhere, pathsFromTop: true });
      await writeFile(path.join(from, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n');
      expect(gitTopAboveWorkspace(workspace)(from)).toMatchObject({ top: from, pathsFromTop: true });
    });

    it('keeps a work tree and repository inside the workspace for its own, and passes by what git does not read', async () => {
      await using folder = await tempFolder();
      const { workspace, vendor: from } = await vendor(folder.path, withWorktree('../../other'));
      await mkdir(path.join(workspace, 'other'));
      // The folder lies outside that work tree, but both it and the repository are the workspace's.
      expect(gitTopAboveWorkspace(workspace)(from)).toBeUndefined();
      // git reads core.worktree only from a config that sets core.repositoryformatversion.
      await writeFile(path.join(from, '.git', 'config'), '[core]\n\tworktree = ../../..\n');
      expect(gitTopAboveWorkspace(workspace)(from)).toBeUndefined();
      await writeFile(path.join(from, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = false\n');
      expect(gitTopAboveWorkspace(workspace)(from)).toBeUndefined();
    });

    it('reads it for the workspace’s own repository, and not for a linked worktree’s but from config.worktree', async () => {
      await using folder = await tempFolder();
      const { workspace } = await nested(folder.path, true);
      const mono = path.join(folder.path, 'mono');
      // Relative to the Git directory: `app/.git/../..` is `mono`.
      await writeFile(path.join(workspace, '.git', 'config'), withWorktree('../..'));
      expect(gitTopAboveWorkspace(workspace)(workspace)?.top).toBe(mono);
      // A gitfile to a linked worktree of the workspace's repository, whose common config names a work tree.
      const linked = path.join(workspace, '.git', 'worktrees', 'sub');
      await mkdir(linked, { recursive: true });
      await writeFile(path.join(linked, 'HEAD'), 'ref: refs/heads/main\n');
      await writeFile(path.join(linked, 'commondir'), '../..\n');
      await writeFile(path.join(workspace, 'sub', '.git'), `gitdir: ${linked}\n`);
      expect(gitTopAboveWorkspace(workspace)(path.join(workspace, 'sub'))).toBeUndefined();
    });
  });
});
