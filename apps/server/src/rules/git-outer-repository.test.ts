import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCommandLine } from './command-line-reader';
import { all, decisions, gitDirectory } from './git-test-layouts';
import { tempFolder, type TempFolder } from '../tools/test-support';

// The command reader's worker loads the grammar once per file, here rather than inside a test's own time.
beforeAll(() => readCommandLine('true'));

/**
 * A repository `mono` whose folder `app` is the workspace, beside `private` (a changed `prod.env`, an untracked
 * `new.env`), as the review laid it out; with `own`, the workspace has a repository of its own at its root too.
 */
async function outerRepository(own: boolean): Promise<TempFolder & { workspace: string }> {
  const folder = await tempFolder();
  const mono = path.join(folder.path, 'mono');
  const workspace = path.join(mono, 'app');
  await mkdir(path.join(workspace, 'src'), { recursive: true });
  await mkdir(path.join(mono, 'private'));
  await gitDirectory(mono);
  if (own) await gitDirectory(workspace);
  await writeFile(path.join(workspace, 'readme'), 'readme\n');
  await writeFile(path.join(workspace, 'src', 'a.ts'), '\n');
  await writeFile(path.join(mono, 'private', 'prod.env'), 'SECRET=1\n');
  await writeFile(path.join(mono, 'private', 'new.env'), 'NEW=1\n');
  return { ...folder, workspace };
}

/** Lines that read files of the whole work tree, or name one outside the workspace: git finds `mono`'s repository. */
const READS_OUTSIDE = [
  // The review's lines: each printed `private/prod.env`, or its change, or added `new.env`.
  'git blame ../private/prod.env',
  'git show HEAD:../private/prod.env',
  'git diff',
  'git log -p -- ../private',
  'git show -- ../private',
  'git ls-files ..',
  'git add ../private/new.env',
  // `<rev>:<path>` is read from the top of the work tree, `./` and `../` from where git runs.
  'git show HEAD:private/prod.env',
  'git show :private/prod.env',
  'git show :0:private/prod.env',
  'git show main:private/prod.env',
  'git diff HEAD:private/prod.env HEAD:app/readme',
  'git blame HEAD -- ../private/prod.env',
  'git log -L 1,1:../private/prod.env',
  'git log -L1,1:../private/prod.env',
  // The pathspec magic that names the top (`:/`, `:(top)`), or everything but what it excludes.
  'git ls-files :/',
  "git ls-files ':(top)private'",
  'git diff -- :/private',
  "git diff -- ':(top,glob)private/*'",
  "git diff -- ':!readme'",
  "git diff -- ':(exclude)readme'",
  'git add :/',
  'git grep SECRET -- :/',
  "git grep SECRET -- ':(top)private'",
  // No pathspec: the whole work tree's diff, or a commit's whole diff (`:/init` finds one by its message).
  'git diff --cached',
  'git diff HEAD',
  'git diff main HEAD',
  'git diff --stat',
  'git log -p',
  'git log --stat -3',
  'git log --patch --oneline',
  'git log -S SECRET',
  'git log -p --full-diff -- src',
  'git show',
  'git show HEAD',
  'git show --stat',
  'git show :/init',
  // A hexadecimal revision may be a blob's name (`git rev-parse HEAD:private/prod.env` gives it).
  'git show 8178c76d627cade75005b40711b92f4177bc6cfc',
  'git show 8178c76d -- src',
  'git status -v',
  'git status --verbose',
  'git add -A',
  'git add --all',
  'git add -u',
  'git add -p',
  // The control: asked before.
  'git diff -- ../private',
];

/** Lines that stay inside the workspace, or show only commit messages or names. */
const STAYS_INSIDE = [
  'git status',
  'git status --short',
  'git log',
  'git log --oneline -5',
  'git log --author "$USER" --oneline',
  'git log -p -- .',
  'git log -p readme',
  'git log --stat -- src',
  'git log -L 1,5:readme',
  'git shortlog -s',
  'git diff -- .',
  'git diff readme',
  'git diff HEAD -- src',
  'git diff --cached -- src readme',
  "git diff -- . ':!readme'",
  'git show HEAD:app/readme',
  'git show HEAD:./readme',
  'git show :./readme',
  'git show -s',
  'git show --no-patch --format=%s main',
  'git show HEAD -- .',
  'git show --stat HEAD -- src',
  'git blame readme',
  'git blame -L 1,5 src/a.ts',
  'git ls-files',
  'git ls-files src',
  'git add readme',
  'git add .',
  'git add -A .',
  'git add -- src',
  'git grep SECRET',
  'git grep SECRET -- src',
  'git rev-parse --show-toplevel',
  'git describe --always',
  'git commit -m "fix: the reader"',
];

describe('git in a workspace that lies in a larger repository: nothing of the work tree outside it is read', () => {
  it('asks about reads of files outside the workspace and of the whole work tree', async () => {
    await using folder = await outerRepository(false);
    expect(await decisions(folder.workspace, READS_OUTSIDE, ['git grep'])).toStrictEqual(all(READS_OUTSIDE, 'ask'));
  });

  it('allows reads of the workspace, commit messages and names', async () => {
    await using folder = await outerRepository(false);
    expect(await decisions(folder.workspace, STAYS_INSIDE, ['git grep'])).toStrictEqual(all(STAYS_INSIDE, 'allow'));
  });

  it('judges git run in a folder inside by where git finds the top from there', async () => {
    await using folder = await outerRepository(false);
    await gitDirectory(path.join(folder.workspace, 'src'));
    // `src` holds a repository of its own: its top is `src`, inside.
    const nested = ['git -C src diff', 'cd src && git log -p', 'git -C src show HEAD:a.ts'];
    const outer = ['git diff', 'git show HEAD:app/../private/prod.env'];
    expect(await decisions(folder.workspace, [...nested, ...outer], ['cd', 'git'])).toStrictEqual({ ...all(nested, 'allow'), ...all(outer, 'ask') });
  });

  it('a rule for git alone, or for cat-file, asks about a blob of outside read by its path', async () => {
    await using folder = await outerRepository(false);
    const lines = ['git cat-file -p HEAD:private/prod.env', 'git ls-tree HEAD :/private', 'git cat-file -p 8178c76d'];
    expect(await decisions(folder.workspace, lines, ['git'])).toStrictEqual(all(lines, 'ask'));
  });
  it('checks the word after an option that takes no value for the command it is given to (blame -n, shortlog -n)', async () => {
    await using folder = await outerRepository(false);
    // `-n` is `--show-number` for blame and `--numbered` for shortlog: the word after it is their path, not a count.
    const lines = ['git blame -n ../private/prod.env', 'git blame -e -n ../private/prod.env', 'git blame -n -s ../private/prod.env', 'git annotate -n ../private/prod.env', 'git shortlog -n ../private'];
    const inside = ['git blame -n readme', 'git log -n 3 --oneline', 'git log --since 2.weeks --oneline', 'git blame --since 2.weeks readme'];
    expect(await decisions(folder.workspace, [...lines, ...inside], ['git annotate'])).toStrictEqual({ ...all(lines, 'ask'), ...all(inside, 'allow') });
  });
  it('asks about a dry run of commit that prints its diff, as it does about git status -v', async () => {
    await using folder = await outerRepository(false);
    // `--dry-run` prints `git status`; with `-v` the diff of all that would be committed, of the whole work tree.
    const lines = [
      'git commit --dry-run -v', 'git commit -v --dry-run', 'git commit --dry-run -v -a', 'git commit --dry-run --verbose',
      'git commit -av --dry-run', 'git commit --dry-run -vv', 'git commit --dry --verb', 'git status --verb', 'git status --v',
    ];
    const inside = ['git commit --dry-run', 'git commit --dry-run -a', 'git commit --dry-run -m "move v"', 'git commit -m "fix: move" --dry-run', 'git commit -Cv --dry-run'];
    expect(await decisions(folder.workspace, [...lines, ...inside])).toStrictEqual({ ...all(lines, 'ask'), ...all(inside, 'allow') });
    await using own = await outerRepository(true);
    expect(await decisions(own.workspace, lines)).toStrictEqual(all(lines, 'allow'));
  });
  it('asks about a commit that prints hunks or a diff: --patch, --interactive, --long with -v', async () => {
    await using folder = await outerRepository(false);
    // `--patch` prints each hunk of the whole work tree before it reads an answer, from closed input too; `--interactive`
    // does on the answers a pipe gives it (`printf '6\n*\n'`: its diff command); `--long` is a dry run as `--dry-run` is.
    const lines = [
      'git commit -p', 'git commit --patch -m x', 'git commit --patc -m x', 'git commit -sp', 'git commit -qp -m x',
      'git commit --interactive', 'git commit --inter', 'git commit --long -v -a', 'git commit --lon -va',
    ];
    // `-mp` is the message `p`; `-v` alone adds the diff to the message the editor gets, which the terminal sets to `true`;
    // `--short` and `--porcelain` are dry runs whose `-v` prints no diff (git 2.39).
    const inside = ['git commit -mp', 'git commit -a -m x', 'git commit -v -m x', 'git commit -v', 'git commit --short -v -a', 'git commit --porcelain -va'];
    expect(await decisions(folder.workspace, [...lines, ...inside])).toStrictEqual({ ...all(lines, 'ask'), ...all(inside, 'allow') });
    await using own = await outerRepository(true);
    expect(await decisions(own.workspace, lines)).toStrictEqual(all(lines, 'allow'));
  });
  it('takes a word before -- for a revision, though a file or folder of its name is in the workspace', async () => {
    await using folder = await outerRepository(false);
    await writeFile(path.join(folder.workspace, 'HEAD'), '');
    await writeFile(path.join(folder.workspace, '@'), '');
    await mkdir(path.join(folder.workspace, 'main'));
    // git reads each word before `--` as a revision: each prints a whole commit, or the diff of the whole work tree.
    const lines = ['git show HEAD --', 'git log -p HEAD --', 'git diff HEAD --', 'git show main --', 'git log -p @ --', 'git log -p readme --'];
    // Without `--`, git refuses a word that names both a revision and a file; after it, a word limits.
    const inside = ['git show HEAD', 'git diff main', 'git log -p readme', 'git show HEAD -- .', 'git log -p @ -- src', 'git diff HEAD -- readme'];
    expect(await decisions(folder.workspace, [...lines, ...inside])).toStrictEqual({ ...all(lines, 'ask'), ...all(inside, 'allow') });
    await using own = await outerRepository(true);
    await writeFile(path.join(own.workspace, 'HEAD'), '');
    expect(await decisions(own.workspace, lines)).toStrictEqual(all(lines, 'allow'));
  });
  it('asks about git format-patch unless a pathspec inside limits it: it prints, or writes into the workspace, whole diffs', async () => {
    await using folder = await outerRepository(false);
    // `HEAD:app`, a tree, is taken for the start of the range: every commit from the root is printed. `--range-diff`
    // compares the two series' whole diffs, past the pathspec (git 2.39).
    const lines = [
      'git format-patch -1 --stdout', 'git format-patch --root --stdout', 'git format-patch --stdout -1 HEAD', 'git format-patch -1',
      'git format-patch -3 -o out', 'git format-patch --stdout HEAD:app', 'git format-patch -1 --stdout --range-diff=old -- .',
    ];
    const inside = ['git format-patch -1 --stdout -- .', 'git format-patch -3 --stdout readme', 'git format-patch -1 -o out -- src', 'git format-patch -1 --stdout --interdiff=old -- .'];
    expect(await decisions(folder.workspace, [...lines, ...inside], ['git format-patch'])).toStrictEqual({ ...all(lines, 'ask'), ...all(inside, 'allow') });
    await using own = await outerRepository(true);
    expect(await decisions(own.workspace, lines, ['git format-patch'])).toStrictEqual(all(lines, 'allow'));
  });
  it('asks about git cat-file with a batch option: the names come from its input, or are every object, none from the line', async () => {
    await using folder = await outerRepository(false);
    const lines = [
      'git cat-file --batch-all-objects --batch', 'git cat-file --batch --batch-all-objects', "git cat-file --batch-a '--batch=%(objectname)'",
      'echo HEAD:private/prod.env | git cat-file --batch', 'echo HEAD:private/prod.env | git cat-file --batch-check',
      'echo contents HEAD:private/prod.env | git cat-file --batch-command', 'echo HEAD:app/readme | git cat-file --batch',
    ];
    const inside = ['git cat-file -p HEAD:app/readme', 'git cat-file -t HEAD', 'echo HEAD:app/readme | git cat-file --textconv HEAD:app/readme'];
    const rules = ['git cat-file', 'echo'];
    expect(await decisions(folder.workspace, [...lines, ...inside], rules)).toStrictEqual({ ...all(lines, 'ask'), ...all(inside, 'allow') });
    await using own = await outerRepository(true);
    expect(await decisions(own.workspace, lines, rules)).toStrictEqual(all(lines, 'allow'));
  });
  it('asks about git stash when it prints a stash’s patch, or hunks: a stash holds changes of the whole work tree', async () => {
    await using folder = await outerRepository(false);
    // `git stash show` and `list` take no pathspec (git 2.39); `list` runs `git log`, whose `-c` prints the stash's
    // diff (a merge); `-c stash.showPatch` makes a patch `show`'s default; `push -p` prints each hunk before it reads.
    const lines = [
      'git stash show -p', 'git stash show --patch', 'git stash show -p stash@{0}', 'git stash show -u -p', 'git stash show --include-untracked -p',
      'git stash show --only-untracked --patch', 'git stash show -U1', 'git stash show --word-diff', 'git stash list -p', 'git stash list -c',
      'git stash list --stat', 'git -c stash.showPatch=true stash show', 'git -c Stash.ShowPatch stash show stash@{1}', 'git stash -p',
      'git stash push -p', 'git stash push --patch -m x', 'git stash save -p',
    ];
    const inside = [
      'git stash', 'git stash show', 'git stash show stash@{1}', 'git stash show --stat', 'git stash show -u', 'git stash show --name-only --include-untracked',
      'git stash list', 'git stash list --oneline', 'git stash push -m p', 'git stash push -mp', 'git stash apply', 'git stash pop',
    ];
    expect(await decisions(folder.workspace, [...lines, ...inside], ['git stash', 'git'])).toStrictEqual({ ...all(lines, 'ask'), ...all(inside, 'allow') });
    // A `-c` on a git line is asked about in any workspace (`git -c x.y=1 status` too), and so is one after `stash list`.
    const ownLines = lines.filter((line) => !line.includes(' -c'));
    await using own = await outerRepository(true);
    expect(await decisions(own.workspace, ownLines, ['git stash', 'git'])).toStrictEqual(all(ownLines, 'allow'));
  });
  it('asks about git range-diff under a rule for git: it prints both series’ diffs whole, past a pathspec (git 2.39)', async () => {
    await using folder = await outerRepository(false);
    const lines = ['git range-diff old~1..old HEAD~2..HEAD~1', 'git range-diff main...side -- .', 'git range-diff HEAD~3 HEAD~1 HEAD'];
    expect(await decisions(folder.workspace, lines, ['git'])).toStrictEqual(all(lines, 'ask'));
    await using own = await outerRepository(true);
    expect(await decisions(own.workspace, lines, ['git'])).toStrictEqual(all(lines, 'allow'));
  });
  it('asks about git add given only pathspecs that exclude: it adds everything else, of the whole work tree', async () => {
    await using folder = await outerRepository(false);
    const lines = ["git add ':!x'", "git add ':(exclude)src'", "git add ':^src'", "git add -- ':!readme'", "git add ':!readme' ':^src'"];
    const inside = ["git add . ':!readme'", "git add src ':^src/a.ts'", "git add -- src ':(exclude)src/a.ts'"];
    expect(await decisions(folder.workspace, [...lines, ...inside])).toStrictEqual({ ...all(lines, 'ask'), ...all(inside, 'allow') });
  });
});

describe('a .git in the workspace that git does not take for its repository', () => {
  /** The workspace's `.git` laid out by `make`, in `mono`'s repository: what `git diff` and `git show HEAD:…` are judged. */
  async function judged(make: (dotGit: string, folder: { path: string; workspace: string }) => Promise<void>): Promise<Record<string, string>> {
    await using folder = await outerRepository(false);
    const dotGit = path.join(folder.workspace, '.git');
    await make(dotGit, folder);
    return await decisions(folder.workspace, ['git diff', 'git show HEAD:private/prod.env']);
  }
  const asked = all(['git diff', 'git show HEAD:private/prod.env'], 'ask');
  const allowed = all(['git diff', 'git show HEAD:private/prod.env'], 'allow');
  const folders = async (dotGit: string) => {
    await mkdir(path.join(dotGit, 'objects'), { recursive: true });
    await mkdir(path.join(dotGit, 'refs'));
  };

  it('passes by one whose HEAD is neither a symbolic ref nor an object id: git goes on up to the larger repository', async () => {
    for (const head of ['junk\n', 'ref: heads/main\n', '8178c76d\n', '']) {
      expect(await judged(async (dotGit) => {
        await folders(dotGit);
        await writeFile(path.join(dotGit, 'HEAD'), head);
      })).toStrictEqual(asked);
    }
    // A HEAD that is a folder, or a link that does not lead to `refs/…`.
    expect(await judged(async (dotGit) => {
      await folders(dotGit);
      await mkdir(path.join(dotGit, 'HEAD'));
    })).toStrictEqual(asked);
    expect(await judged(async (dotGit, folder) => {
      await folders(dotGit);
      await writeFile(path.join(folder.path, 'head'), 'ref: refs/heads/main\n');
      await symlink(path.join(folder.path, 'head'), path.join(dotGit, 'HEAD'));
    })).toStrictEqual(asked);
  });

  it('passes by one whose objects or refs is a file git cannot enter', async () => {
    expect(await judged(async (dotGit) => {
      await mkdir(path.join(dotGit, 'refs'), { recursive: true });
      await writeFile(path.join(dotGit, 'objects'), '');
      await writeFile(path.join(dotGit, 'HEAD'), 'ref: refs/heads/main\n');
    })).toStrictEqual(asked);
  });

  it('takes a HEAD with an object id, or a symbolic ref with spaces, for the workspace’s own repository', async () => {
    for (const head of [`${'8178c76d'.repeat(5)}\n`, `${'AB'.repeat(32)}`, 'ref:\trefs/heads/main\n']) {
      expect(await judged(async (dotGit) => {
        await folders(dotGit);
        await writeFile(path.join(dotGit, 'HEAD'), head);
      })).toStrictEqual(allowed);
    }
  });

  it('takes a gitfile or link for the larger repository where it leads to its .git, and for the workspace’s own elsewhere', async () => {
    expect(await judged(async (dotGit) => writeFile(dotGit, 'gitdir: ../.git\n'))).toStrictEqual(asked);
    expect(await judged(async (dotGit, folder) => writeFile(dotGit, `gitdir: ${path.join(folder.path, 'mono', '.git')}\n`))).toStrictEqual(asked);
    // A link to the larger repository's `.git`.
    expect(await judged(async (dotGit) => symlink('../.git', dotGit))).toStrictEqual(asked);
    // A worktree of the larger repository shares its history.
    expect(await judged(async (dotGit, folder) => {
      const worktree = path.join(folder.path, 'mono', '.git', 'worktrees', 'app');
      await mkdir(worktree, { recursive: true });
      await writeFile(path.join(worktree, 'HEAD'), 'ref: refs/heads/main\n');
      await writeFile(path.join(worktree, 'commondir'), '../..\n');
      await writeFile(dotGit, `gitdir: ${worktree}\n`);
    })).toStrictEqual(asked);
    expect(await judged(async (dotGit, folder) => {
      await gitDirectory(path.join(folder.workspace, 'store'));
      await writeFile(dotGit, 'gitdir: store/.git\n');
    })).toStrictEqual(allowed);
  });
});

describe('git in a workspace that is its repository’s top (inside a larger one or not): nothing changes', () => {
  it('allows what the larger repository’s case asks about, but for paths that lead out', async () => {
    await using folder = await outerRepository(true);
    const leadOut = ['git blame ../private/prod.env', 'git diff -- ../private', 'git log -L 1,1:../private/prod.env'];
    // `git grep … -- :/` was asked before, in any workspace: grep's paths are looked up as files, and `:/` is none.
    const inside = READS_OUTSIDE.filter((line) => !leadOut.includes(line) && !line.includes('../') && !line.startsWith('git grep SECRET -- :/'));
    expect(await decisions(folder.workspace, [...inside, ...STAYS_INSIDE], ['git grep'])).toStrictEqual({ ...all(inside, 'allow'), ...all(STAYS_INSIDE, 'allow') });
    expect(await decisions(folder.workspace, ['git diff -- ../private'])).toStrictEqual({ 'git diff -- ../private': 'ask' });
  });

  it('in a workspace with no repository above it, bare reads stay allowed', async () => {
    await using folder = await tempFolder();
    const lines = ['git diff', 'git log -p', 'git show', 'git add -A', 'git show HEAD:private/prod.env', 'git ls-files :/'];
    expect(await decisions(folder.path, lines, ['git grep'])).toStrictEqual(all(lines, 'allow'));
  });
});
