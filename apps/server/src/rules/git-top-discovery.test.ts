import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCommandLine } from './command-line-reader';
import { all, decisions as judgedUnder, gitDirectory } from './git-test-layouts';
import { tempFolder, type TempFolder } from '../tools/test-support';

// The command reader's worker loads the grammar once per file, here rather than inside a test's own time.
beforeAll(() => readCommandLine('true'));

/**
 * A repository `mono` whose folder `app` is the workspace, beside `private/prod.env`; with `own`, the workspace has a
 * repository of its own at its root too.
 */
async function outerRepository(own: boolean): Promise<TempFolder & { workspace: string; mono: string }> {
  const folder = await tempFolder();
  const mono = path.join(folder.path, 'mono');
  const workspace = path.join(mono, 'app');
  await mkdir(path.join(workspace, 'sub'), { recursive: true });
  await mkdir(path.join(mono, 'private'));
  await gitDirectory(mono);
  if (own) await gitDirectory(workspace);
  await writeFile(path.join(workspace, 'readme'), 'readme\n');
  await writeFile(path.join(mono, 'private', 'prod.env'), 'SECRET=1\n');
  return { ...folder, workspace, mono };
}

/** What the rule book decides for each line under the prefix rules "Always allow" proposes for git, and `cd`. */
const decisions = (workspace: string, lines: readonly string[]) => judgedUnder(workspace, lines, ['cd']);

/** Lines that print the larger repository's `private/prod.env` when git finds its repository. */
const READS = ['git diff', 'git show HEAD:private/prod.env'];

describe('the workspace’s .git read as git reads it (found with git 2.39)', () => {
  /** `HEAD`, `objects` and `refs` in the workspace's `.git`, and what `make` adds. */
  async function judged(head: string, make: (dotGit: string) => Promise<void> = async () => undefined): Promise<Record<string, string>> {
    await using folder = await outerRepository(false);
    const dotGit = path.join(folder.workspace, '.git');
    await mkdir(path.join(dotGit, 'objects'), { recursive: true });
    await mkdir(path.join(dotGit, 'refs'));
    await writeFile(path.join(dotGit, 'HEAD'), head);
    await make(dotGit);
    return await decisions(folder.workspace, READS);
  }

  it('passes by a HEAD whose space after ref: is one git’s isspace does not take (\\f, \\v, U+00A0): git goes on up', async () => {
    for (const head of ['ref:\frefs/heads/main\n', 'ref:\vrefs/heads/main\n', 'ref:\u00a0refs/heads/main\n']) {
      expect(await judged(head)).toStrictEqual(all(READS, 'ask'));
    }
  });

  it('takes a HEAD with git’s spaces (space, tab, line ends) after ref: for the workspace’s own', async () => {
    expect(await judged('ref: \t\r\nrefs/heads/main\n')).toStrictEqual(all(READS, 'allow'));
  });

  it('reads a commondir up to a NUL byte, as git does: `../../.git\\0x` is the larger repository’s', async () => {
    await using folder = await outerRepository(true);
    // A repository in `sub` whose common directory git takes for `mono/.git`; the workspace's own lies between.
    const dotGit = path.join(folder.workspace, 'sub', '.git');
    await gitDirectory(path.join(folder.workspace, 'sub'));
    await writeFile(path.join(dotGit, 'commondir'), '../../../.git\0x');
    const lines = ['cd sub && git diff', 'cd sub && git show HEAD:private/prod.env'];
    expect(await decisions(folder.workspace, lines)).toStrictEqual(all(lines, 'ask'));
  });

  it('reads a gitfile up to a NUL byte, as git does: `gitdir: ../.git\\0junk` is the larger repository’s', async () => {
    await using folder = await outerRepository(false);
    await writeFile(path.join(folder.workspace, '.git'), 'gitdir: ../.git\0junk\n');
    expect(await decisions(folder.workspace, READS)).toStrictEqual(all(READS, 'ask'));
  });

  it('keeps a commondir or gitfile that leads inside for the workspace’s own', async () => {
    await using folder = await outerRepository(false);
    await gitDirectory(path.join(folder.workspace, 'store'));
    await writeFile(path.join(folder.workspace, '.git'), 'gitdir: store/.git\n');
    expect(await decisions(folder.workspace, READS)).toStrictEqual(all(READS, 'allow'));
  });
});

describe('a folder of the workspace that is itself a Git directory (a bare repository: an ordinary HEAD and commondir)', () => {
  it('asks about reads of the larger repository’s tree from the workspace’s root, where git takes no path from the folder', async () => {
    await using folder = await outerRepository(false);
    await writeFile(path.join(folder.workspace, 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(path.join(folder.workspace, 'commondir'), '../.git\n');
    // `.` is the whole tree there, not a folder of the workspace.
    const lines = ['git log -p .', 'git show HEAD .', 'git show HEAD:private/prod.env', 'git diff HEAD~1 HEAD'];
    expect(await decisions(folder.workspace, lines)).toStrictEqual(all(lines, 'ask'));
  });

  it('asks about a blob of another repository a workspace in none names in its root commondir', async () => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'app');
    await mkdir(workspace);
    await gitDirectory(path.join(folder.path, 'other'));
    const lines = ['git show HEAD:key', 'git log -p .'];
    expect(await decisions(workspace, lines)).toStrictEqual(all(lines, 'allow'));
    await writeFile(path.join(workspace, 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(path.join(workspace, 'commondir'), `${path.join(folder.path, 'other', '.git')}\n`);
    expect(await decisions(workspace, lines)).toStrictEqual(all(lines, 'ask'));
  });

  it('asks about reads a pathspec limits there too: git takes it from the top of the larger repository’s tree', async () => {
    await using folder = await outerRepository(false);
    await writeFile(path.join(folder.workspace, 'sub', 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(path.join(folder.workspace, 'sub', 'commondir'), '../../.git\n');
    // Found with git 2.39: each printed a file outside the workspace, `.` and `readme` being paths from the top of mono.
    const lines = ['cd sub && git log -p -- .', 'cd sub && git show HEAD -- .', 'cd sub && git diff HEAD~1 HEAD -- readme'];
    expect(await decisions(folder.workspace, lines)).toStrictEqual(all(lines, 'ask'));
  });

  it('keeps judging a HEAD file with no objects or refs beside it as before: no Git directory', async () => {
    await using folder = await outerRepository(true);
    await writeFile(path.join(folder.workspace, 'HEAD'), 'ref: refs/heads/main\n');
    const lines = ['git log -p .', 'git show HEAD:private/prod.env', 'git diff'];
    expect(await decisions(folder.workspace, lines)).toStrictEqual(all(lines, 'allow'));
  });
});

describe('a repository whose core.worktree holds the workspace: git reads the larger repository’s files', () => {
  const lines = ['cd vendor && git diff --cached', 'cd vendor && git show :private/prod.env', 'cd vendor && git add -A'];

  it('asks about reads of the whole work tree and of paths from its top, from a repository inside the workspace', async () => {
    await using folder = await outerRepository(false);
    const vendor = path.join(folder.workspace, 'vendor');
    await gitDirectory(vendor);
    // As `git init vendor && git -C vendor config core.worktree ../../..` writes it.
    await writeFile(path.join(vendor, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ../../..\n');
    expect(await decisions(folder.workspace, lines)).toStrictEqual(all(lines, 'ask'));
  });

  it('asks the same of the workspace’s own repository', async () => {
    await using folder = await outerRepository(true);
    await writeFile(path.join(folder.workspace, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n\tworktree = ../..\n');
    expect(await decisions(folder.workspace, [...READS, 'git show :private/prod.env'])).toStrictEqual(all([...READS, 'git show :private/prod.env'], 'ask'));
  });

  it('keeps allowing them where git reads no core.worktree, or none is set', async () => {
    await using folder = await outerRepository(false);
    const vendor = path.join(folder.workspace, 'vendor');
    await gitDirectory(vendor);
    await writeFile(path.join(vendor, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = false\n');
    expect(await decisions(folder.workspace, lines)).toStrictEqual(all(lines, 'allow'));
    // Without core.repositoryformatversion git does not read core.worktree (checked with git 2.39).
    await writeFile(path.join(vendor, '.git', 'config'), '[core]\n\tworktree = ../../..\n');
    expect(await decisions(folder.workspace, lines)).toStrictEqual(all(lines, 'allow'));
  });
});
