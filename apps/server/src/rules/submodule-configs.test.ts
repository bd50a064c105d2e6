import { MemoryStore } from '@airlock/api';
import { reasonText } from '@airlock/core';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { evaluateRules, type RuleContext } from './evaluate-rules';
import { prefix, terminal } from './rule-fixtures';
import { createBuiltinTools } from '../tools';
import { buildChildEnv, PROCESS_GIT_CONFIG, withGitConfig } from '../tools/child-env';
import { toolNamed } from '../tools/test-support';
import { RuleBook } from './rule-book';
import { gitConfigFiles, includeCheckClock, includeChecks, walkBounds } from './submodule-configs';

/** What `git submodule add` writes into a submodule's config. */
const SUBMODULE_CONFIG = [
  '[core]',
  '\trepositoryformatversion = 0',
  '\tfilemode = true',
  '\tbare = false',
  '\tlogallrefupdates = true',
  '\tworktree = ../../../sub',
  '[remote "origin"]',
  '\turl = https://example.com/sub.git',
  '\tfetch = +refs/heads/*:refs/remotes/origin/*',
  '[branch "main"]',
  '\tremote = origin',
  '\tmerge = refs/heads/main',
  '',
].join('\n');

describe('a git call while a submodule or a linked worktree of the repository has a Git directory a call could write', () => {
  let workspace = '';
  let context: RuleContext;
  const write = (name: string, text: string) => {
    mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    writeFileSync(path.join(workspace, name), text);
  };
  beforeEach(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'airlock-submodules-'));
    write('.git/HEAD', 'ref: refs/heads/main\n');
    write('.git/config', '[core]\n\tbare = false\n');
    mkdirSync(path.join(workspace, 'sub'));
    context = { sessionId: 'chat-1', workspace };
  });
  afterEach(() => rmSync(workspace, { recursive: true, force: true }));

  const rules = [prefix('git status'), prefix('git commit'), prefix('git log'), prefix('cd'), prefix('touch')];
  const decided = async (command: string) => (await evaluateRules(terminal(command), rules, context)).decision;

  it('with the configs git writes, and hooks only as samples, the rules cover git as before', async () => {
    write('.git/modules/sub/HEAD', 'ref: refs/heads/main\n');
    write('.git/modules/sub/config', SUBMODULE_CONFIG);
    write('.git/modules/sub/hooks/pre-commit.sample', '#!/bin/sh\n');
    write('.git/modules/libs/x/config', SUBMODULE_CONFIG);
    write('.git/worktrees/wt/commondir', '../..\n');
    write('.git/worktrees/wt/HEAD', 'ref: refs/heads/wt\n');
    for (const command of ['git status', 'git log --oneline', 'cd sub && git commit -m x']) expect(await decided(command), command).toBe('allow');
  });

  it('a submodule config that sets core.fsmonitor: git status runs it in each populated submodule', async () => {
    write('.git/modules/sub/config', `${SUBMODULE_CONFIG}[core]\n\tfsmonitor = "touch PWNED; false"\n`);
    for (const command of ['git status', 'git log --oneline', 'cd sub && git status']) expect(await decided(command), command).toBe('ask');
  });

  it('a key that runs a program, also in a nested submodule, a name with a slash, or a config.worktree', async () => {
    const cases: [string, string][] = [
      ['.git/modules/a/modules/b/config', '[core]\n\thooksPath = ../../../../evil\n'],
      ['.git/modules/libs/x/config', '[alias]\n\tst = !touch PWNED\n'],
      ['.git/modules/sub/config.worktree', '[diff "x"]\n\ttextconv = touch PWNED\n'],
      ['.git/modules/sub/config', '[include]\n\tpath = ../../../evil.cfg\n'],
      ['.git/worktrees/wt/config.worktree', '[core]\n\tpager = touch PWNED\n'],
    ];
    for (const [file, text] of cases) {
      write('.git/modules/sub/config', SUBMODULE_CONFIG);
      write(file, text);
      expect(await decided('git status'), file).toBe('ask');
      rmSync(path.join(workspace, file));
    }
    expect(await decided('git status')).toBe('allow');
  });

  it('a hook in a submodule, a commondir in one, or a worktree commondir naming another folder', async () => {
    write('.git/modules/sub/hooks/pre-commit', '#!/bin/sh\ntouch PWNED\n');
    expect(await decided('cd sub && git commit -m x')).toBe('ask');
    rmSync(path.join(workspace, '.git/modules/sub/hooks/pre-commit'));
    write('.git/modules/sub/commondir', '../../../evil\n');
    expect(await decided('git status')).toBe('ask');
    rmSync(path.join(workspace, '.git/modules/sub/commondir'));
    write('.git/worktrees/wt/commondir', '../../../evil\n');
    expect(await decided('git status')).toBe('ask');
    write('.git/worktrees/wt/commondir', '../..\n');
    expect(await decided('git status')).toBe('allow');
  });

  it('after a command that may have written one, whether or not the repository has submodules or worktrees yet', async () => {
    write('evil/sub/config', `${SUBMODULE_CONFIG}[core]\n\tfsmonitor = "touch PWNED; false"\n`);
    const cp = (command: string) => evaluateRules(terminal(command), [...rules, prefix('cp'), prefix('mv'), prefix('git submodule')], context);
    for (const command of ['touch x && git status', 'cp -r evil .git/modules && git status', 'mv evil .git/modules; git status', 'git submodule absorbgitdirs && git status']) {
      expect((await cp(command)).decision, command).toBe('ask');
    }
    write('.git/modules/sub/config', SUBMODULE_CONFIG);
    expect(await decided('git status')).toBe('allow');
    expect(await decided('touch x && git status')).toBe('ask');
  });

  it('a folder of more entries than one slice of its listing is read whole: the walk and the hooks check find what lies past the first slices', async () => {
    for (let file = 0; file < 700; file += 1) write(`many/f${file}`, '');
    write('many/nested/.git/HEAD', 'ref: refs/heads/main\n');
    write('many/nested/.git/config', '[core]\n\tbare = false\n');
    expect(await decided('git log --submodule=diff')).toBe('allow');
    write('many/nested/.git/config', `${SUBMODULE_CONFIG}[core]\n\tfsmonitor = "touch PWNED; false"\n`);
    expect(await decided('git log --submodule=diff')).toBe('ask');
    rmSync(path.join(workspace, 'many'), { recursive: true });
    write('.git/modules/sub/config', SUBMODULE_CONFIG);
    for (let hook = 0; hook < 700; hook += 1) write(`.git/modules/sub/hooks/h${hook}.sample`, '#!/bin/sh\n');
    expect(await decided('cd sub && git commit -m x')).toBe('allow');
    write('.git/modules/sub/hooks/pre-commit', '#!/bin/sh\ntouch PWNED\n');
    expect(await decided('cd sub && git commit -m x')).toBe('ask');
  });

  it('a repository nested in the workspace, its Git directory in its work tree or named by its gitfile', async () => {
    const fsmonitor = `${SUBMODULE_CONFIG}[core]\n\tfsmonitor = "touch PWNED; false"\n`;
    write('nested/.git/HEAD', 'ref: refs/heads/main\n');
    write('nested/.git/config', '[core]\n\tbare = false\n');
    write('nested/.git/hooks/pre-commit.sample', '#!/bin/sh\n');
    write('vendor/lib/.git', 'gitdir: ../../elsewhere/lib\n');
    write('elsewhere/lib/HEAD', 'ref: refs/heads/main\n');
    write('elsewhere/lib/config', SUBMODULE_CONFIG);
    const commands = ['git status', 'cd nested && git status', 'cd vendor/lib && git log --oneline'];
    for (const command of commands) expect(await decided(command), command).toBe('allow');
    write('nested/.git/config', fsmonitor);
    for (const command of commands) expect(await decided(command), command).toBe('ask');
    write('nested/.git/config', '[core]\n\tbare = false\n');
    write('nested/.git/hooks/pre-commit', '#!/bin/sh\ntouch PWNED\n');
    expect(await decided('cd nested && git commit -m x')).toBe('ask');
    rmSync(path.join(workspace, 'nested/.git/hooks/pre-commit'));
    write('elsewhere/lib/config', fsmonitor);
    for (const command of commands) expect(await decided(command), command).toBe('ask');
    write('elsewhere/lib/config', SUBMODULE_CONFIG);
    expect(await decided('git status')).toBe('allow');
    // A gitfile naming a folder outside the workspace, or none, or a `.git` that is a link: not read, so not covered.
    for (const gitfile of ['gitdir: /etc\n', 'gitdir: ../../missing\n', 'not a gitfile\n']) {
      write('vendor/lib/.git', gitfile);
      expect(await decided('git status'), gitfile).toBe('ask');
    }
    rmSync(path.join(workspace, 'vendor/lib/.git'));
    symlinkSync('../../elsewhere/lib', path.join(workspace, 'vendor/lib/.git'));
    expect(await decided('git status')).toBe('ask');
  });

  it('an old-style section header [filter.evil], which git reads as the filter "evil"', async () => {
    write('.git/modules/sub/config', `${SUBMODULE_CONFIG}[filter.evil]\n\tclean = touch PWNED\n`);
    expect(await decided('git status')).toBe('ask');
    write('.git/modules/sub/config', `${SUBMODULE_CONFIG}[Diff.X]\n\ttextconv = touch PWNED\n`);
    expect(await decided('git status')).toBe('ask');
    write('.git/modules/sub/config', `${SUBMODULE_CONFIG}[branch.main]\n\tremote = origin\n`);
    expect(await decided('git status')).toBe('allow');
  });

  it('is not plain for a deny rule, which cannot see what such a config runs', async () => {
    const noDelete = prefix('rm -rf', { effect: 'deny' });
    const decide = async (command: string) => {
      const decision = await evaluateRules(terminal(command), [noDelete], context);
      return 'unread' in decision ? { ...decision, unread: reasonText(decision.unread) } : decision;
    };
    write('.git/modules/sub/config', SUBMODULE_CONFIG);
    expect(await decide('git status')).toStrictEqual({ decision: 'ask' });
    write('.git/modules/sub/config', `${SUBMODULE_CONFIG}[core]\n\tfsmonitor = "rm -rf ~; false"\n`);
    expect(await decide('git status')).toStrictEqual({
      decision: 'ask',
      because: noDelete,
      unread: '`git` runs what a Git directory of a submodule, worktree or nested repository sets, which a call may have written',
    });
  });

  // Found in review: the deny side judges paths as they are now, and so did not see a command before git that may
  // have planted a repository: with only a deny rule and confirmation off, such a line ran its core.fsmonitor.
  it('is not plain for a deny rule after a command that may have written a Git directory, none there yet', async () => {
    const noDelete = prefix('rm -rf', { effect: 'deny' });
    for (const command of ['cp -r payload nested && mv nested/dotgit nested/.git && git status', 'touch x; git status', 'git status & cp -r evil .git/modules']) {
      const decision = await evaluateRules(terminal(command), [noDelete], context);
      expect('unread' in decision ? reasonText(decision.unread) : decision, command).toBe('`git` runs what a Git directory of a submodule, worktree or nested repository sets, which a call may have written');
    }
    const alone = await evaluateRules(terminal('git status'), [noDelete], context);
    expect(alone).toStrictEqual({ decision: 'ask' });
  });

  it('is not for programs other than git, and an exact rule is no exception', async () => {
    write('.git/modules/sub/config', '[core]\n\tfsmonitor = touch PWNED\n');
    expect((await evaluateRules(terminal('git status'), [prefix('git status', { exact: true })], context)).decision).toBe('ask');
    expect((await evaluateRules(terminal('touch y'), rules, context)).decision).toBe('allow');
  });
});

// Which Git directories git reads, seen with git 2.39 (strace of the files it opens, and a core.fsmonitor that
// writes a file): `git status` and `git diff` run the core.fsmonitor of a submodule the index records, not of a
// repository nested in the work tree that the index does not record; `git log -p --submodule=diff` reads the latter
// when a commit has a gitlink at its path.
describe('a git call judged by the Git directories it reads, in a repository git made', () => {
  let workspace = '';
  let home = '';
  const git = (folder: string, ...args: string[]) => execFileSync('git', ['-C', folder, '-c', 'user.name=P', '-c', 'user.email=p@example.com', ...args], { stdio: 'pipe' });
  const repository = (folder: string) => {
    mkdirSync(folder, { recursive: true });
    git(folder, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(folder, 'file.txt'), 'x');
    git(folder, 'add', 'file.txt');
    git(folder, 'commit', '-q', '-m', 'start');
  };
  const fsmonitor = (gitDir: string) => writeFileSync(path.join(gitDir, 'config'), '[core]\n\tbare = false\n\tfsmonitor = "touch PWNED; false"\n');
  const rules = [prefix('git status'), prefix('git diff'), prefix('git log'), prefix('git fetch'), prefix('git checkout'), prefix('cd')];
  const decided = async (command: string) => (await evaluateRules(terminal(command), rules, { sessionId: 'chat-1', workspace })).decision;
  beforeEach(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'airlock-git-reads-'));
    home = mkdtempSync(path.join(tmpdir(), 'airlock-git-home-'));
    // The person's own Git config is read too (a key there may widen what git reads): an empty one here.
    vi.stubEnv('HOME', home);
    repository(workspace);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it('a remote defined by a file of the Git directory (remotes/<name>, branches/<name>), which a call may have written: git fetch evil reached a repository outside the workspace', async () => {
    // Found in review: Git still reads these older remote files, the sandbox holds them read-only only when they exist
    // as a call starts, and git makes neither by itself, so `mkdir -p .git/remotes && cp .git/COMMIT_EDITMSG
    // .git/remotes/evil` after `git commit -m 'URL: /home/me/private'` could write one. Then `git fetch evil` under a
    // rule for `git fetch` fetched that repository, force-updating a local branch by its `Pull:` line, and `git push
    // evil` would send this one to its URL, where the rules ask about a URL or path the call names.
    const other = mkdtempSync(path.join(tmpdir(), 'airlock-git-other-'));
    try {
      repository(other);
      // Older templates made an empty `branches` folder: no remote, no reason.
      mkdirSync(path.join(workspace, '.git/branches'), { recursive: true });
      expect(await decided('git fetch origin')).toBe('allow');
      mkdirSync(path.join(workspace, '.git/remotes'), { recursive: true });
      writeFileSync(path.join(workspace, '.git/remotes/evil'), `URL: ${other}\nPull: +refs/heads/main:refs/heads/kept\n`);
      // git reads it: the other repository's branch is listed.
      expect(git(workspace, 'ls-remote', 'evil').toString()).toContain('refs/heads/main');
      for (const command of ['git fetch evil', 'git fetch origin', 'git status']) expect(await decided(command), command).toBe('ask');
      expect((await evaluateRules(terminal('git push evil'), [prefix('git push')], { sessionId: 'chat-1', workspace })).decision).toBe('ask');
      rmSync(path.join(workspace, '.git/remotes'), { recursive: true });
      writeFileSync(path.join(workspace, '.git/branches/evil'), `${other}\n`);
      expect(git(workspace, 'ls-remote', 'evil').toString()).toContain('refs/heads/main');
      expect(await decided('git fetch evil')).toBe('ask');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("another repository's object store named by objects/info/alternates, which a call may have written: git log --alternate-refs -p printed a repository outside the workspace", async () => {
    // Found in review: `objects/info` is no part of what the sandbox holds read-only, and `cp .git/COMMIT_EDITMSG
    // .git/objects/info/alternates` after `git commit -m '/home/me/private/.git/objects'` could write one. Then `git
    // log --alternate-refs -p` under a rule for `git log` printed the other repository's history and files, where the
    // rules ask about `git diff --no-index` reading a file outside.
    const other = mkdtempSync(path.join(tmpdir(), 'airlock-git-other-'));
    try {
      repository(other);
      git(other, 'commit', '-q', '--allow-empty', '-m', 'private');
      const info = path.join(workspace, '.git/objects/info');
      mkdirSync(info, { recursive: true });
      expect(await decided('git log --alternate-refs -p')).toBe('allow');
      // Blank lines and comments name no store.
      writeFileSync(path.join(info, 'alternates'), '# none\n\n');
      expect(await decided('git log --alternate-refs -p')).toBe('allow');
      writeFileSync(path.join(info, 'alternates'), `${other}/.git/objects\n`);
      // git reads it: the other repository's commit is shown.
      expect(git(workspace, 'log', '--alternate-refs', '--format=%s').toString()).toContain('private');
      for (const command of ['git log --alternate-refs -p', 'git log', 'git status']) expect(await decided(command), command).toBe('ask');
      rmSync(path.join(info, 'alternates'));
      writeFileSync(path.join(info, 'http-alternates'), 'https://example.com/x.git/objects\n');
      expect(await decided('git log')).toBe('ask');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('a workspace of more entries than the walk reads (a node_modules): git status is covered, a command that may go anywhere is not', async () => {
    // The walk's bound made small, as writing 50,000 files takes half a minute on a busy disk.
    const { entries } = walkBounds;
    walkBounds.entries = 500;
    try {
      for (let folder = 0; folder < 6; folder += 1) {
        const packages = path.join(workspace, 'node_modules', `p${folder}`);
        mkdirSync(packages, { recursive: true });
        for (let file = 0; file < 100; file += 1) writeFileSync(path.join(packages, String(file)), '');
      }
      for (const command of ['git status', 'git diff', 'git log --oneline', 'cd node_modules && git status']) expect(await decided(command), command).toBe('allow');
      for (const command of ['git fetch', 'git checkout main', 'git diff --submodule=diff HEAD']) expect(await decided(command), command).toBe('ask');
    } finally {
      walkBounds.entries = entries;
    }
  });

  it('a planted core.fsmonitor in a submodule the index records, its Git directory in its work tree, or in one it records in turn', async () => {
    repository(path.join(workspace, 'sub'));
    repository(path.join(workspace, 'sub/inner'));
    git(path.join(workspace, 'sub'), 'add', 'inner');
    git(workspace, 'add', 'sub');
    for (const command of ['git status', 'git diff', 'cd sub && git status']) expect(await decided(command), command).toBe('allow');
    fsmonitor(path.join(workspace, 'sub/inner/.git'));
    for (const command of ['git status', 'git diff', 'cd sub && git status', 'cd sub/inner && git log']) expect(await decided(command), command).toBe('ask');
    const noDelete = prefix('rm -rf', { effect: 'deny' });
    const denied = await evaluateRules(terminal('git status'), [noDelete], { sessionId: 'chat-1', workspace });
    expect('unread' in denied ? reasonText(denied.unread) : denied).toBe('`git` runs what a Git directory of a submodule, worktree or nested repository sets, which a call may have written');
  });

  it('a repository nested in the work tree that the index does not record: read by git started there, or going into a commit\'s gitlinks', async () => {
    repository(path.join(workspace, 'nested'));
    fsmonitor(path.join(workspace, 'nested/.git'));
    for (const command of ['git status', 'git status -uall', 'git diff', 'git log -p']) expect(await decided(command), command).toBe('allow');
    for (const command of ['cd nested && git status', 'cd nested/deeper && git status', 'git log -p --submodule=diff', 'git diff HEAD~1 --submodule=log', 'git fetch', 'git checkout --recurse-submodules main']) {
      expect(await decided(command), command).toBe('ask');
    }
    // Behind a wrapper, judged by the walk, as one may start git elsewhere (`env -C nested git status`).
    for (const command of ['timeout 5 git status', 'env -C nested git status']) expect(await decided(command), command).toBe('ask');
    // A key of the workspace's config or the person's that sends `git status` or `git diff` into a commit's gitlinks.
    for (const [file, text] of [[path.join(workspace, '.git/config'), '[diff]\n\tsubmodule = diff\n'], [path.join(home, '.gitconfig'), '[status]\n\tsubmoduleSummary = true\n']] as const) {
      writeFileSync(file, text, { flag: 'a' });
      expect(await decided('git status'), text).toBe('ask');
      writeFileSync(file, '');
    }
  });

  it('a repository a call makes inside the workspace\'s own Git directory, which git started there finds first', async () => {
    // Seen with git 2.39: `cd .git/x && git status` ran `.git/x/.git`'s core.fsmonitor, and `cd .git && git status`
    // that of `.git/.git`; the sandbox holds only `.git/config`, `hooks` and a few more read-only, and the walk goes
    // into no `.git`.
    for (const folder of ['.git/objects/x', '.git/refs/x', '.git/logs/x', '.git/info/x']) {
      repository(path.join(workspace, folder));
      fsmonitor(path.join(workspace, folder, '.git'));
    }
    // Just made, with no index yet: git status runs its core.fsmonitor all the same.
    git(workspace, 'init', '-q', '.git/x');
    fsmonitor(path.join(workspace, '.git/x/.git'));
    git(workspace, 'init', '-q', '.git/.git');
    fsmonitor(path.join(workspace, '.git/.git'));
    for (const command of ['cd .git/x && git status', 'cd .git/objects/x && git status', 'cd .git/refs/x && git log', 'cd .git/logs/x && git diff', 'cd .git/info/x && git status', 'cd .git && git status', 'cd .git/objects && git status']) {
      expect(await decided(command), command).toBe('ask');
    }
    expect(await decided('git status')).toBe('allow');
  });

  it('a workspace that is the home folder: the person\'s Git config there is read by every git call, as a call may have written it', async () => {
    vi.stubEnv('HOME', workspace);
    expect(await decided('git status')).toBe('allow');
    for (const [file, text] of [['.gitconfig', '[core]\n\tfsmonitor = "touch PWNED; false"\n'], ['.config/git/config', '[core]\n\tpager = touch PWNED\n'], ['.gitconfig', '[include]\n\tpath = elsewhere\n']] as const) {
      mkdirSync(path.dirname(path.join(workspace, file)), { recursive: true });
      writeFileSync(path.join(workspace, file), text);
      for (const command of ['git status', 'git log --oneline']) expect(await decided(command), `${file}: ${command}`).toBe('ask');
      writeFileSync(path.join(workspace, file), '');
    }
    // Outside the workspace, it is the person's own, which no call writes: read as before.
    vi.stubEnv('HOME', home);
    writeFileSync(path.join(home, '.gitconfig'), '[core]\n\tpager = less\n');
    expect(await decided('git status')).toBe('allow');
  });

  it("a workspace that is the home folder: the ask names the person's config and the key that runs something, on the card and under a deny rule", async () => {
    vi.stubEnv('HOME', workspace);
    const cases = [
      ['.gitconfig', '[credential]\n\thelper = store\n', '~/.gitconfig', 'credential.helper'],
      ['.gitconfig', '[alias]\n\tst = status\n', '~/.gitconfig', 'alias.st'],
      ['.config/git/config', '[core]\n\teditor = vim\n', '~/.config/git/config', 'core.editor'],
      ['.gitconfig', '[include]\n\tpath = more.inc\n', '~/.gitconfig', 'include.path'],
    ] as const;
    const judged = async () => (await evaluateRules(terminal('git status'), rules, { sessionId: 'chat-1', workspace })) as { gitConfig?: unknown };
    for (const [file, text, shown, key] of cases) {
      mkdirSync(path.dirname(path.join(workspace, file)), { recursive: true });
      writeFileSync(path.join(workspace, file), text);
      expect(await judged(), text).toMatchObject({ decision: 'ask', uncovered: 'git' });
      expect((await judged()).gitConfig, text).toStrictEqual({ file: shown, key });
      const deny = prefix('git push', { effect: 'deny' });
      const denied = await evaluateRules(terminal('git status'), [deny], { sessionId: 'chat-1', workspace });
      expect(denied).toMatchObject({ decision: 'ask', because: deny });
      const said = reasonText('unread' in denied ? denied.unread : []);
      expect(said).toContain(shown);
      expect(said).toContain(key);
      expect(said).not.toContain('submodule');
      rmSync(path.join(workspace, file));
    }
    // The person's config outside the workspace including a file of it: that file, and its key; none while it is not there.
    vi.stubEnv('HOME', home);
    writeFileSync(path.join(home, '.gitconfig'), `[include]\n\tpath = ${path.join(workspace, 'more.inc')}\n`);
    expect((await judged()).gitConfig).toStrictEqual({ file: 'more.inc' });
    writeFileSync(path.join(workspace, 'more.inc'), '[core]\n\tpager = less\n');
    expect((await judged()).gitConfig).toStrictEqual({ file: 'more.inc', key: 'core.pager' });
    rmSync(path.join(workspace, 'more.inc'));
    vi.stubEnv('HOME', workspace);
    // The card the rule book shows for it.
    writeFileSync(path.join(workspace, '.gitconfig'), '[credential]\n\thelper = store\n');
    const book = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
    await book.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['git', 'status'], exact: false }, scope: { kind: 'global' }, source: 'user' });
    const tool = toolNamed(createBuiltinTools({ workspace, sandbox: 'none' }), 'terminal');
    const verdict = await book.evaluate('chat-1', { id: 'c1', name: 'terminal', arguments: { command: 'git status' } }, tool);
    expect(verdict).toMatchObject({ effect: 'ask', onlyWhenConfirming: true });
    const card = reasonText(verdict?.description ?? []);
    expect(card).toContain('~/.gitconfig');
    expect(card).toContain('credential.helper');
    expect(card).not.toContain('submodule');
  });

  it('a Git config git reads, the person\'s or the repository\'s, that includes a file in the workspace a call may write', async () => {
    // A workspace that is a dotfiles repository the person's ~/.gitconfig includes: git reads the included file for
    // every repository, and runs the core.fsmonitor a call wrote there.
    const shared = path.join(workspace, 'shared.gitconfig');
    writeFileSync(shared, '[user]\n\tname = P\n');
    const planted = '[core]\n\tfsmonitor = "touch PWNED; false"\n';
    const cases = [
      [path.join(home, '.gitconfig'), `[include]\n\tpath = ${shared}\n`],
      [path.join(home, '.gitconfig'), `[includeIf "gitdir:/nowhere/"]\n\tpath = ${shared}\n`],
      // Relative to the including file, through a file outside the workspace that includes in turn.
      [path.join(home, '.gitconfig'), '[include]\n\tpath = more.inc\n'],
      // The repository's own config, relative to its folder.
      [path.join(workspace, '.git/config'), '[include]\n\tpath = ../shared.gitconfig\n'],
    ] as const;
    writeFileSync(path.join(home, 'more.inc'), `[include]\n\tpath = ~/${path.relative(home, shared)}\n`);
    for (const [file, text] of cases) {
      writeFileSync(file, text, { flag: 'a' });
      expect(await decided('git status'), text).toBe('allow');
      writeFileSync(shared, planted);
      for (const command of ['git status', 'git log --oneline']) expect(await decided(command), `${text}: ${command}`).toBe('ask');
      writeFileSync(shared, '[user]\n\tname = P\n');
      writeFileSync(file, file.endsWith('.gitconfig') ? '' : '[core]\n\tbare = false\n');
    }
    // Included through a link into the workspace, and not there yet: a call may make it.
    symlinkSync(workspace, path.join(home, 'dots'));
    writeFileSync(path.join(home, '.gitconfig'), '[include]\n\tpath = ~/dots/git.inc\n');
    expect(await decided('git status')).toBe('ask');
    // A file outside the workspace, not there: git skips it, as no call writes there.
    writeFileSync(path.join(home, '.gitconfig'), '[include]\n\tpath = ~/missing.inc\n');
    expect(await decided('git status')).toBe('allow');
  });

  it('an included file in a folder of the workspace whose name starts with two dots (..x) lies in the workspace', async () => {
    symlinkSync(workspace, path.join(home, 'dots'));
    mkdirSync(path.join(workspace, '..x'));
    writeFileSync(path.join(workspace, '..x', 'git.inc'), '[core]\n\tfsmonitor = "touch PWNED; false"\n');
    // Named through a link in the workspace, or directly.
    symlinkSync(path.join('..x', 'git.inc'), path.join(workspace, 'git.inc'));
    for (const included of ['~/dots/git.inc', '~/dots/..x/git.inc']) {
      writeFileSync(path.join(home, '.gitconfig'), `[include]\n\tpath = ${included}\n`);
      expect(await decided('git status'), included).toBe('ask');
    }
  });

  it('an included file reached again through a link in another folder is looked at again: its relative includes lead elsewhere from there', async () => {
    // Git reads a relative include from the folder of the path it was given: through ~/alias.cfg, real/a.cfg's
    // ws/evil.cfg is ~/ws/evil.cfg, in the workspace; through real/a.cfg itself, a file outside that is not there.
    mkdirSync(path.join(home, 'real'));
    writeFileSync(path.join(home, 'real', 'a.cfg'), '[include]\n\tpath = ws/evil.cfg\n');
    symlinkSync(path.join('real', 'a.cfg'), path.join(home, 'alias.cfg'));
    symlinkSync(workspace, path.join(home, 'ws'));
    writeFileSync(path.join(workspace, 'evil.cfg'), '[core]\n\tfsmonitor = "touch PWNED; false"\n');
    writeFileSync(path.join(home, '.gitconfig'), '[include]\n\tpath = real/a.cfg\n[include]\n\tpath = alias.cfg\n');
    expect(await decided('git status')).toBe('ask');
  });

  it('an include through a link to a folder and up (lnk/../local.cfg) is read where the kernel leads it, as git reads it: beside where the link leads, here in the workspace', async () => {
    mkdirSync(path.join(workspace, 'sub'));
    symlinkSync(path.join(workspace, 'sub'), path.join(home, 'lnk'));
    writeFileSync(path.join(home, '.gitconfig'), '[include]\n\tpath = lnk/../local.cfg\n');
    // Not there yet: a call may make it.
    expect(await decided('git status')).toBe('ask');
    writeFileSync(path.join(workspace, 'local.cfg'), '[core]\n\tfsmonitor = "touch PWNED; false"\n');
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
    const origin = execFileSync('git', ['-C', workspace, 'config', '--show-origin', 'core.fsmonitor'], { env, encoding: 'utf8' });
    expect(origin).toBe(`file:${home}/lnk/../local.cfg\ttouch PWNED; false\n`);
    expect(await decided('git status')).toBe('ask');
  });

  it('reads each included file once, and at most a bounded number of them: files outside that include one another many times over are judged at once', async () => {
    const outside = mkdtempSync(path.join(tmpdir(), 'airlock-git-includes-'));
    try {
      // Each level names the next eight times: followed path by path, 8^9 reads.
      for (let level = 0; level < 9; level += 1) writeFileSync(path.join(outside, `l${level}.inc`), '[include]\n' + `\tpath = l${level + 1}.inc\n`.repeat(8));
      writeFileSync(path.join(workspace, '.git/config'), `[core]\n\tbare = false\n[include]\n\tpath = ${path.join(outside, 'l0.inc')}\n`);
      expect(await decided('git status')).toBe('allow');
      // More files than are read: asked.
      for (let file = 0; file < 300; file += 1) writeFileSync(path.join(outside, `wide${file}.inc`), '[user]\n\tname = P\n');
      writeFileSync(path.join(outside, 'l0.inc'), Array.from({ length: 300 }, (_, file) => `[include]\n\tpath = wide${file}.inc\n`).join(''));
      expect(await decided('git status')).toBe('ask');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('the include check takes its time before it reads, not after: a check that outlasts two seconds of a config changed just before it is not kept', async () => {
    const { now } = includeCheckClock;
    try {
      writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = P\n');
      const changedAt = statSync(path.join(home, '.gitconfig'), { bigint: true }).ctimeNs;
      const made = includeChecks.made;
      // One second past the change before the check is under way, three once it is.
      includeCheckClock.now = () => changedAt + (includeChecks.made > made ? 3_000_000_000n : 1_000_000_000n);
      expect(await decided('git status')).toBe('allow');
      includeCheckClock.now = () => BigInt(Date.now() + 60_000) * 1_000_000n;
      expect(await decided('git status')).toBe('allow');
      expect(includeChecks.made - made).toBe(2);
    } finally {
      includeCheckClock.now = now;
    }
  });

  it('the include check is made once while each config it read stays as it was, and again once one changes or a link on the way leads elsewhere', async () => {
    const outside = mkdtempSync(path.join(tmpdir(), 'airlock-git-includes-'));
    const { now } = includeCheckClock;
    // Kept once two seconds past the latest change of the files read: a clock far ahead.
    includeCheckClock.now = () => BigInt(Date.now() + 60_000) * 1_000_000n;
    try {
      const shared = path.join(workspace, 'shared.gitconfig');
      const planted = '[core]\n\tfsmonitor = "touch PWNED; false"\n';
      writeFileSync(shared, '[user]\n\tname = P\n');
      writeFileSync(path.join(outside, 'a.inc'), `[include]\n\tpath = ${shared}\n`);
      writeFileSync(path.join(outside, 'b.inc'), '[user]\n\tname = Q\n');
      symlinkSync(path.join(outside, 'b.inc'), path.join(outside, 'now.inc'));
      writeFileSync(path.join(home, '.gitconfig'), `[include]\n\tpath = ${path.join(outside, 'a.inc')}\n[include]\n\tpath = ${path.join(outside, 'now.inc')}\n`);
      const made = includeChecks.made;
      for (const command of ['git status', 'git log --oneline', 'git status']) expect(await decided(command), command).toBe('allow');
      expect(includeChecks.made - made).toBe(1);
      // The included file of the workspace written: checked again, and asked.
      writeFileSync(shared, planted);
      for (const command of ['git status', 'git status']) expect(await decided(command), command).toBe('ask');
      expect(includeChecks.made - made).toBe(2);
      writeFileSync(shared, '[user]\n\tname = P\n');
      expect(await decided('git status')).toBe('allow');
      // A link on the way now leading to a file that includes it: the same files as before, but another path.
      unlinkSync(path.join(outside, 'now.inc'));
      writeFileSync(path.join(outside, 'c.inc'), '[include]\n\tpath = ~/dots/late.inc\n');
      symlinkSync(path.join(outside, 'c.inc'), path.join(outside, 'now.inc'));
      symlinkSync(workspace, path.join(home, 'dots'));
      expect(await decided('git status')).toBe('ask');
      expect(includeChecks.made - made).toBe(4);
      // Kept answers are answers: nothing changed, nothing made again.
      expect(await decided('git status')).toBe('ask');
      expect(includeChecks.made - made).toBe(4);
      // A file outside, not there, below a folder not there: skipped, as git skips it; once a link leads that folder
      // into the workspace, a call may write it.
      writeFileSync(path.join(home, '.gitconfig'), '[include]\n\tpath = ~/later/x.inc\n');
      expect(await decided('git status')).toBe('allow');
      expect(await decided('git status')).toBe('allow');
      expect(includeChecks.made - made).toBe(5);
      symlinkSync(workspace, path.join(home, 'later'));
      expect(await decided('git status')).toBe('ask');
    } finally {
      includeCheckClock.now = now;
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("finds the Git configs git reads for every repository as git does from its environment (GIT_CONFIG_GLOBAL, XDG_CONFIG_HOME, GIT_CONFIG_SYSTEM, GIT_CONFIG_NOSYSTEM, GIT_CONFIG_COUNT)", () => {
    const files = {
      dot: path.join(home, '.gitconfig'),
      config: path.join(home, '.config/git/config'),
      xdg: path.join(home, 'xdg/git/config'),
      global: path.join(home, 'global.cfg'),
      system: path.join(home, 'system.cfg'),
    };
    for (const [name, file] of Object.entries(files)) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, `[user]\n\tname = ${name}\n`);
    }
    const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home };
    const cases: Record<string, string>[] = [
      base,
      { ...base, XDG_CONFIG_HOME: path.join(home, 'xdg') },
      { ...base, GIT_CONFIG_GLOBAL: files.global, XDG_CONFIG_HOME: path.join(home, 'xdg') },
      { ...base, GIT_CONFIG_SYSTEM: files.system },
      { ...base, GIT_CONFIG_SYSTEM: files.system, GIT_CONFIG_NOSYSTEM: '1' },
      { ...base, GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: 'touch PWNED', GIT_CONFIG_KEY_1: 'diff.x.textconv', GIT_CONFIG_VALUE_1: 'cat' },
    ];
    for (const env of cases) {
      const origins = new Set(
        execFileSync('git', ['config', '--list', '--show-origin'], { cwd: home, env })
          .toString()
          .split('\n')
          .flatMap((line) => (line.startsWith('file:') ? [line.slice('file:'.length).split('\t')[0]!] : [])),
      );
      const found = gitConfigFiles(env, home);
      expect(found.files.filter((file) => existsSync(file)), JSON.stringify(env)).toStrictEqual([...origins]);
      expect(found.given.map(({ setting }) => `${setting.section}.${setting.subsection ? 'x.' : ''}${setting.key}`)).toStrictEqual(env.GIT_CONFIG_COUNT === undefined ? [] : ['core.fsmonitor', 'diff.x.textconv']);
    }
  });

  it("the server's own Git settings in its environment do not reach a call's git, and are not looked at: the configs looked at are those the call's git reads", async () => {
    const planted = '[core]\n\tfsmonitor = "touch PWNED; false"\n';
    mkdirSync(path.join(workspace, 'xdg/git'), { recursive: true });
    writeFileSync(path.join(workspace, 'xdg/git/config'), planted);
    writeFileSync(path.join(workspace, 'planted.cfg'), planted);
    const cases: Record<string, string>[] = [
      { XDG_CONFIG_HOME: path.join(workspace, 'xdg') },
      { GIT_CONFIG_GLOBAL: path.join(workspace, 'planted.cfg') },
      { GIT_CONFIG_SYSTEM: path.join(workspace, 'planted.cfg') },
      { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: 'touch PWNED' },
    ];
    for (const variables of cases) {
      for (const [name, value] of Object.entries(variables)) vi.stubEnv(name, value);
      // What a call's git is given (run-tool-process.ts), and what it reads with it.
      const env = withGitConfig(buildChildEnv({ source: process.env, cwd: workspace }), PROCESS_GIT_CONFIG);
      const read = spawnSync('git', ['config', '--show-origin', '--get-all', 'core.fsmonitor'], { cwd: workspace, env }).stdout.toString();
      expect(read, JSON.stringify(variables)).toBe('');
      expect(await decided('git status'), JSON.stringify(variables)).toBe('allow');
      vi.unstubAllEnvs();
      vi.stubEnv('HOME', home);
    }
    // The person's config the call's git does read, in the workspace: asked, as before.
    vi.stubEnv('HOME', workspace);
    writeFileSync(path.join(workspace, '.gitconfig'), planted);
    expect(await decided('git status')).toBe('ask');
  });

  it('a call whose own words name another Git directory, work tree, index, config or program for git is asked, whatever the folder is called', async () => {
    // A Git directory not named .git, with a planted core.fsmonitor: git reads its config when told to use it.
    git(workspace, 'init', '-q', '--bare', 'some/folder');
    writeFileSync(path.join(workspace, 'some/folder/config'), '[core]\n\tbare = false\n\tfsmonitor = "touch PWNED; false"\n');
    writeFileSync(path.join(workspace, 'x.cfg'), '[core]\n\tfsmonitor = "touch PWNED; false"\n');
    const lines = [
      'git --git-dir=some/folder status', 'git --git-dir some/folder status', 'git -C some --git-dir=folder status', 'git --work-tree=. --git-dir=some/folder status',
      'GIT_DIR=some/folder git status', 'env GIT_DIR=some/folder git status', 'export GIT_DIR=some/folder; git status', 'GIT_WORK_TREE=. GIT_DIR=some/folder git status',
      'GIT_COMMON_DIR=some/folder git status', 'GIT_INDEX_FILE=x.cfg git status', 'GIT_EXEC_PATH=. git status', 'GIT_SSH_COMMAND="touch PWNED" git fetch',
      'GIT_EXTERNAL_DIFF="touch PWNED" git diff', 'GIT_CONFIG_GLOBAL=./x.cfg git status', 'GIT_CONFIG_SYSTEM=./x.cfg git status',
      'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0="touch PWNED" git status', 'GIT_CONFIG_PARAMETERS="\'core.fsmonitor\'=\'touch PWNED\'" git status',
      'git -c core.fsmonitor="touch PWNED" status', 'git --config-env=core.fsmonitor=HOME status', 'git --exec-path=. status', 'timeout 5 git --git-dir=some/folder status',
    ];
    const deny = prefix('git push', { effect: 'deny' });
    for (const line of lines) {
      expect(await decided(line), line).toBe('ask');
      expect(await evaluateRules(terminal(line), [deny], { sessionId: 'chat-1', workspace }), line).toMatchObject({ decision: 'ask', because: deny });
    }
  });

  it('a bare repository or a Git directory git starts in, and a folder above it', async () => {
    git(workspace, 'init', '-q', '--bare', 'tools/bare.git');
    expect(await decided('cd tools/bare.git && git log')).toBe('allow');
    mkdirSync(path.join(workspace, 'src/hooks'), { recursive: true });
    writeFileSync(path.join(workspace, 'src/HEAD'), 'a project file\n');
    writeFileSync(path.join(workspace, 'src/hooks/use-thing.ts'), 'export {};\n');
    expect(await decided('cd src/hooks && git log')).toBe('allow');
    writeFileSync(path.join(workspace, 'tools/bare.git/config'), '[core]\n\tbare = true\n\tpager = touch PWNED\n');
    for (const command of ['cd tools/bare.git && git log', 'cd tools/bare.git/refs && git log']) expect(await decided(command), command).toBe('ask');
    expect(await decided('git status')).toBe('allow');
    // Seen with git 2.39: `cd tools/bare.git && git fetch` ran the reference-transaction hook its hooksPath names.
    writeFileSync(path.join(workspace, 'tools/bare.git/config'), '[core]\n\tbare = true\n\thooksPath = evil\n');
    expect(await decided('cd tools/bare.git && git fetch')).toBe('ask');
  });
});
