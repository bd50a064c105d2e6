import { reasonText } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, rule, terminal } from './rule-fixtures';

const noDelete = prefix('rm -rf', { effect: 'deny', reason: 'never delete trees' });

/** The decision, with why the line is not judged whole as one sentence (a word of the call as a code span). */
async function decide(command: string, rules = [noDelete]): Promise<Record<string, unknown>> {
  const decision = await evaluateRules(terminal(command), rules, context);
  return 'unread' in decision ? { ...decision, unread: reasonText(decision.unread) } : decision;
}

/** `bash -c '…'` around `inner`, `levels` deep, each level quoted for the one around it. */
function nestedShell(inner: string, levels: number): string {
  let line = inner;
  for (let level = 0; level < levels; level++) line = `bash -c '${line.replaceAll("'", `'\\''`)}'`;
  return line;
}

// Lines the deny rule for `rm -rf` cannot see whole: the reader refused them, or they run a command that is not plain.
const unreadable: [string, string][] = [
  ['{rm,-rf,victim}', '{rm,-rf,victim}'],
  ['/bin/r[m] -rf victim', '/bin/r[m] -rf victim'],
  ['"$(echo rm)" -rf victim', '"$(echo rm)" -rf victim'],
  ['70,000 characters, then rm -rf', `echo ${'a'.repeat(70_000)}; rm -rf victim`],
  ['nice 5,000 times, then rm -rf', `${'nice '.repeat(5000)}rm -rf victim`],
  ['bash -c nested 5 deep', nestedShell('rm -rf victim', 5)],
  ['bash -c nested 6 deep', nestedShell('rm -rf victim', 6)],
  ["echo 'rm -rf victim' | bash", "echo 'rm -rf victim' | bash"],
  // Found in review: cron runs what crontab installs, later and outside the sandbox, as at and batch do.
  ['a decoded crontab', 'echo KiAqICogKiAqIHJtIC1yZiB2aWN0aW0K | base64 -d | crontab -'],
];

// Lines that run `rm -rf` through something the deny side may learn to look through: caught, or asked.
const wrapped = [
  'uv run rm -rf victim',
  'parallel rm -rf ::: x',
  'firejail rm -rf x',
  "git -c alias.x='!rm -rf x' x",
  "git rebase -x 'rm -rf x' main",
  `sh -c 'eval "$1"' _ 'rm -rf x'`,
  'rm -rf$IFS x',
];

describe('a command deny rule and a line it cannot judge whole', () => {
  it.each(unreadable)('%s is asked about, naming the deny rule', async (_name, line) => {
    expect(await decide(line)).toMatchObject({ decision: 'ask', because: noDelete, unread: expect.any(String) });
  });

  it.each(wrapped)('%s is denied or asked about naming the deny rule, never left to run unasked', async (line) => {
    const decision = await decide(line);
    expect(decision.decision === 'deny' || ('because' in decision && decision.because === noDelete), JSON.stringify(decision)).toBe(true);
  });

  it('says what it could not read', async () => {
    expect(await decide(`echo ${'a'.repeat(70_000)}`)).toMatchObject({ unread: expect.stringContaining('longer than') });
    expect(await decide('firejail ls')).toMatchObject({ unread: '`firejail` runs whatever it is given' });
    expect(await decide('uv run ls')).toMatchObject({ unread: '`uv` runs another program' });
    expect(await decide('rm -r$X x')).toMatchObject({ unread: '`rm` is given a word the shell computes' });
    expect(await decide('$CMD x')).toMatchObject({ unread: 'a command whose name the shell computes' });
  });

  it('git options and subcommands that run other commands are not plain', async () => {
    for (const line of ["git -c alias.x='!echo hi' x", "git rebase -x 'make' main", "git rebase --exec 'make' main"]) {
      expect(await decide(line), line).toMatchObject({ decision: 'ask', because: noDelete, unread: '`git` is given words that may run other code' });
    }
    for (const line of ['git bisect run make', 'git -C sub bisect run make', "git submodule foreach 'echo hi'", 'git difftool']) {
      expect(await decide(line), line).toMatchObject({ decision: 'ask', because: noDelete, unread: '`git` runs a command it is given' });
    }
  });

  it('a line of plain commands is a plain ask: with confirmation off it runs', async () => {
    for (const line of ['ls -la', 'echo hi && pwd', 'rm x', 'rm -r x', 'git status', 'git log --oneline -5', 'npm test', 'cat src/*.ts', 'ls "$HOME"']) {
      expect(await decide(line), line).toStrictEqual({ decision: 'ask' });
    }
  });

  it('a line allowed by the rules stays allowed, and one denied stays denied', async () => {
    const echo = prefix('echo');
    expect(await decide('echo hi', [noDelete, echo])).toMatchObject({ decision: 'allow', rule: echo });
    expect(await decide('echo hi | bash', [noDelete, echo])).toMatchObject({ decision: 'ask', because: noDelete });
    expect(await decide('rm -rf victim')).toStrictEqual({ decision: 'deny', rule: noDelete });
    expect(await decide('ls; bash -c "rm -fr victim"')).toStrictEqual({ decision: 'deny', rule: noDelete });
  });

  it('with no command deny rule for the tool, nothing changes: a plain ask', async () => {
    expect(await decide('{rm,-rf,victim}', [])).toStrictEqual({ decision: 'ask' });
    expect(await decide('{rm,-rf,victim}', [prefix('echo')])).toStrictEqual({ decision: 'ask' });
    const otherTool = rule({ effect: 'deny', match: { kind: 'host', host: 'example.com' } });
    expect(await decide('{rm,-rf,victim}', [otherTool])).toStrictEqual({ decision: 'ask' });
  });
});

describe('a deny rule for git and a git call it cannot read', () => {
  const noPush = prefix('git push', { effect: 'deny' });

  it.each([
    // An alias from the repository's configuration (written by an earlier call), or from the environment.
    'git p origin main',
    'git -C sub p',
    'git --config-env=alias.p=PUSH p',
    'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p',
    'env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p',
    // A package the runner fetches runs under a name of its own.
    'npx -y gitpush-cli',
    'uvx --from x y',
  ])('%s is asked about, naming the deny rule', async (line) => {
    expect(await decide(line, [noPush])).toMatchObject({ decision: 'ask', because: noPush, unread: expect.any(String) });
  });

  it('git status, log and commit are judged as before', async () => {
    for (const line of ['git status', 'git log --oneline', 'git commit -m x']) {
      expect(await decide(line, [noPush]), line).toStrictEqual({ decision: 'ask' });
    }
    const git = prefix('git');
    for (const line of ['git status', 'git log --oneline', 'git commit -m x']) {
      expect(await decide(line, [noPush, git]), line).toStrictEqual({ decision: 'allow', rule: git, rules: [git] });
    }
  });
});

describe('a command deny rule and the program it names installed under another name', () => {
  const noPush = prefix('git push', { effect: 'deny', reason: 'never push' });
  const noHardReset = prefix('git reset --hard', { effect: 'deny' });
  const noInstall = prefix('npm install', { effect: 'deny' });
  const noPip = prefix('pip install', { effect: 'deny' });

  it.each([
    // git runs the subcommand its program's name says: its exec-path holds one such program per subcommand.
    ['/usr/lib/git-core/git-push origin main', noPush],
    ['git-push origin main', noPush],
    ['/usr/lib/git-core/git-reset --hard', noHardReset],
    ['/usr/lib/node_modules/npm/bin/npm-cli.js install ./localpkg', noInstall],
    ['pip3 install evil', noPip],
    ['pip3.11 install evil', noPip],
    ['/usr/bin/pip-3.11 install evil', noPip],
  ])('%s is denied', async (line, denying) => {
    expect(await decide(line, [noPush, noHardReset, noInstall, noPip])).toStrictEqual({ decision: 'deny', rule: denying });
  });

  it('git-send-pack, which pushes, is denied by the rule for git push as git send-pack is', async () => {
    expect(await decide('/usr/lib/git-core/git-send-pack origin main', [noPush])).toStrictEqual({ decision: 'deny', rule: noPush });
  });

  it('a name that holds the program as a part is asked about, naming the deny rule', async () => {
    expect(await decide('node_modules/.bin/npm-install-helper x', [noInstall])).toStrictEqual({
      decision: 'ask',
      because: noInstall,
      unread: '`npm-install-helper` may be `npm`, which a deny rule names, under another name',
    });
  });

  it('other subcommands under those names are plain, as under the program name, and other programs are not touched', async () => {
    expect(await decide('/usr/lib/git-core/git-status', [noPush])).toStrictEqual({ decision: 'ask' });
    expect(await decide('pip3 list', [noPip])).toStrictEqual({ decision: 'ask' });
    expect(await decide('npm-check-updates', [noPush])).toStrictEqual({ decision: 'ask' });
  });
});

describe('a command deny rule and a program it does not know that runs a command it is given', () => {
  const noPush = prefix('git push', { effect: 'deny' });

  it.each([
    // No table is complete: a denied program's name in a word given to another program is asked about.
    ["lighttpd-angel --httpd='rm -rf v lighttpd'", '`rm`, which a deny rule names, stands in a word given to `lighttpd-angel`'],
    ["some-tool --on-exit='/bin/rm -rf v'", '`rm`, which a deny rule names, stands in a word given to `some-tool`'],
    ["some-tool --hook='r'm", '`rm`, which a deny rule names, stands in a word given to `some-tool`'],
    ['some-tool x,rm', '`rm`, which a deny rule names, stands in a word given to `some-tool`'],
    ['echo rm', '`rm`, which a deny rule names, stands in a word given to `echo`'],
    // What the deny side looks behind is not plain, even where it finds nothing denied.
    ['linux64 ls', '`linux64` runs whatever it is given'],
    ['ccache gcc -c a.c', '`ccache` runs whatever it is given'],
    ["scp -o 'ProxyCommand=nc %h %p' h:x .", '`scp` is given words that may run other code'],
    ['scp -S ./ssh-wrapper h:x .', '`scp` is given words that may run other code'],
    ["hyperfine 'sleep 1'", '`hyperfine` runs whatever it is given'],
    ['pyenv exec python -V', '`pyenv` runs another program'],
    ['corepack pnpm install', '`corepack` runs another program'],
  ])('%s is asked about: %s', async (line, why) => {
    expect(await decide(line)).toStrictEqual({ decision: 'ask', because: noDelete, unread: why });
  });

  it('a denied program named in a word of a runner is asked about under a git push rule', async () => {
    expect(await decide("some-tool --cmd='git push'", [noPush])).toStrictEqual({
      decision: 'ask',
      because: noPush,
      unread: '`git`, which a deny rule names, stands in a word given to `some-tool`',
    });
  });

  it('lines that name no denied program stay plain: with confirmation off they run', async () => {
    for (const line of ['git status', 'ls', 'ls -la src', 'git log --oneline -5', 'git commit -m fix', 'npm test', 'scp a h:b', 'wget https://example.com/', 'pnpm recursive install', 'yarn workspaces list']) {
      expect(await decide(line, [noPush]), line).toStrictEqual({ decision: 'ask' });
    }
    for (const line of ['ls -la', 'echo hi', 'git status', 'rmdir x', 'scp -o ConnectTimeout=5 a h:b']) {
      expect(await decide(line), line).toStrictEqual({ decision: 'ask' });
    }
  });
});

describe('a command deny rule and a pattern or an escape that becomes the program it names', () => {
  const noPush = prefix('git push', { effect: 'deny' });

  it.each([
    // The probe's lines: with confirmation off each ran unasked and deleted the folder.
    'ld.so /bin/r[m] -rf v2',
    '/lib64/ld-linux-x86-64.so.2 /usr/bin/r[m] -rf v3; ls',
    'cmake -E env /bin/r? -rf v2',
    "printf 'rule r\\n command = \\x72m -rf v4\\nbuild x: r\\n' | ninja -f /dev/stdin",
    'cat build.txt | ninja -f /dev/stdin',
    // Loaders and runners no table knew.
    'ld-musl-x86_64.so.1 /bin/r? -rf v',
    'qemu-x86_64 /bin/r? -rf v',
    'eatmydata /bin/r? -rf v',
    'cpulimit -l 5 /bin/r? -rf v',
    'entr -n /bin/r? -rf v',
    'proot /bin/r? -rf v',
    'dbus-launch /bin/r? -rf v',
    'cmake -P x.cmake',
    // A program no table knows: the pattern or the escape in its words is enough.
    'some-runner /bin/r[m] -rf v',
    'some-runner /usr/bin/r? -rf v',
    'some-runner /bin/r* -rf v',
    'some-runner /bin/{rm,x} -rf v',
    'some-runner {r,x}m -rf v',
    "some-runner --cmd='/bin/r[m] -rf v'",
    "printf '\\162m -rf v' | some-runner",
    "echo -e '\\0162m -rf v' | some-runner",
    "printf '\\u0072m -rf v' | some-runner",
    "printf $'\\\\x72m -rf v' | some-runner",
  ])('%s is denied or asked about naming the deny rule, never left to run unasked', async (line) => {
    const decision = await decide(line);
    expect(decision.decision === 'deny' || ('because' in decision && decision.because === noDelete), JSON.stringify(decision)).toBe(true);
  });

  it('says which word it could not read', async () => {
    expect(await decide('some-runner /bin/r[m] -rf v')).toStrictEqual({
      decision: 'ask',
      because: noDelete,
      unread: 'a word given to `some-runner` is a pattern that may name `rm`, which a deny rule names',
    });
    expect(await decide("printf '\\x72m -rf v' | some-runner")).toStrictEqual({
      decision: 'ask',
      because: noDelete,
      unread: 'a word given to `printf` holds an escape (`\\x72`) that may spell a program a deny rule names',
    });
    expect(await decide('ld.so /usr/bin/gi[t] push', [noPush])).toMatchObject({ decision: 'ask', because: noPush });
    expect(await decide('some-runner /usr/bin/gi? push', [noPush])).toMatchObject({ decision: 'ask', because: noPush });
  });

  it('the loader and cmake -E are looked behind: what they run is denied', async () => {
    for (const line of ['ld.so /bin/rm -rf v', 'ld.so --library-path /x /bin/rm -rf v', 'cmake -E env A=1 rm -rf v', 'cmake -E chdir x rm -rf v', 'toybox rm -rf v']) {
      expect(await decide(line), line).toStrictEqual({ decision: 'deny', rule: noDelete });
    }
  });

  it('patterns and escapes that cannot become a denied program stay plain: with confirmation off they run', async () => {
    for (const line of ['ls *.txt', 'ls src/*', 'ls -la src/*.ts', 'cat a?.txt', 'ls /usr/bin/*', "grep -l x *.md | wc -l", "printf '%s\\n' a b", "echo -e '\\033[1m'", "echo -e 'a\\tb\\n'", 'echo {src,test}/x']) {
      expect(await decide(line), line).toStrictEqual({ decision: 'ask' });
    }
    expect(await decide('ls r*', [noPush])).toStrictEqual({ decision: 'ask' });
  });

  it('with no command deny rule for the tool, a pattern or an escape is a plain ask', async () => {
    expect(await decide('some-runner /bin/r[m] -rf v', [])).toStrictEqual({ decision: 'ask' });
    expect(await decide("printf '\\x72m' | some-runner", [prefix('echo')])).toStrictEqual({ decision: 'ask' });
  });
});
