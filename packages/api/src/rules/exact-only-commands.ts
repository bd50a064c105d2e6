/** Names util-linux installs as links to `setarch`, each running the command given for that architecture. */
export const SETARCH_LINKS = [
  'linux32', 'linux64', 'i386', 'i486', 'i586', 'i686', 'x86_64', 'uname26', 'aarch64', 'armv7l', 'armv8l', 'ppc', 'ppc32',
  'ppc64', 'ppc64le', 's390', 's390x', 'sparc', 'sparc32', 'sparc64', 'mips', 'mips64',
] as const;

/**
 * The wrappers deny rules look behind (the server's command-wrappers.ts keys its table of their options by these
 * names): each runs the command given after its own words (`perf stat -- sh -c …`, `setarch x86_64 sh -c …`, `ccache
 * sh -c …`, `hyperfine 'sh -c …'`), so an allow rule for one must be exact as well: one list for both sides.
 */
export const FOLLOWED_WRAPPERS = [
  'sudo', 'doas', 'env', 'nice', 'ionice', 'nohup', 'setsid', 'command', 'builtin', 'exec', 'time', 'stdbuf',
  'timeout', 'chroot', 'taskset', 'flock', 'xargs', 'nsenter', 'unshare', 'strace', 'ltrace', 'unbuffer', 'coproc',
  'busybox', 'prlimit', 'setpriv', 'fakeroot', 'ssh-agent', 'dbus-run-session', 'xvfb-run', 'systemd-run', 'cgexec',
  'numactl', 'valgrind', 'catchsegv', 'torsocks', 'proxychains', 'proxychains4', 'faketime', 'chronic', 'ifne',
  'chrt', 'script', 'setarch', 'choom', 'rlwrap', 'chpst', 'softlimit', 'envdir', 'envuidgid', 'setuidgid',
  'setlock', 'pgrphack', 'fghack', 'tini', 'dumb-init', 'catatonit', 'ccache', 'sccache', 'systemd-inhibit', 'run0',
  'toybox', 'eatmydata', 'cpulimit', 'entr', 'dbus-launch', 'firejail', 'proot',
  ...SETARCH_LINKS,
  // Read by a function of their own there: `perf stat|record|trace … cmd`, `runcon CONTEXT cmd`, `hyperfine '…'`.
  'perf', 'runcon', 'hyperfine',
] as const;
export type FollowedWrapper = (typeof FOLLOWED_WRAPPERS)[number];

/**
 * Commands that run whatever they are given (shells, interpreters, wrappers that run another command, shell
 * builtins that change how later commands run): "commands starting with `python`" would be "any program".
 * An allow rule for one of them must be exact, and a proposal for one is exact.
 */
export const EXACT_ONLY_COMMANDS: ReadonlySet<string> = new Set([
  // shells
  'sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'fish', 'csh', 'tcsh', 'ash', 'busybox', 'pwsh', 'powershell', 'cmd',
  // interpreters and runners of any package
  'python', 'python2', 'python3', 'pypy', 'pypy3', 'node', 'nodejs', 'deno', 'bun', 'bunx', 'npx', 'pnpx', 'perl',
  'ruby', 'irb', 'php', 'lua', 'luajit', 'tclsh', 'wish', 'Rscript', 'R', 'julia', 'java', 'jshell', 'osascript',
  'awk', 'gawk', 'mawk', 'nawk', 'sed', 'gsed', 'expect', 'dotnet', 'uvx', 'pipx',
  // wrappers: run the command that follows
  'env', 'sudo', 'doas', 'su', 'runuser', 'pkexec', 'xargs', 'parallel', 'nice', 'ionice', 'nohup', 'setsid',
  'time', 'timeout', 'stdbuf', 'unbuffer', 'watch', 'chroot', 'nsenter', 'unshare', 'bwrap', 'firejail',
  'flock', 'taskset', 'chrt', 'strace', 'ltrace', 'gdb', 'script', 'ssh', 'find', 'coproc',
  // shell builtins that run words as code or change how the next commands run
  'eval', 'exec', 'command', 'builtin', 'source', '.', 'alias', 'trap', 'set', 'shopt', 'enable', 'hash',
  'export', 'declare', 'typeset', 'readonly', 'local', 'unset', 'fc', 'bind',
  // editors and pagers that can run a shell
  'vi', 'vim', 'nvim', 'emacs', 'ed', 'ex', 'less', 'more', 'man',
  // the same under the names Debian's alternatives and vim's links give them (`view -es -c '!…'` is vim)
  'view', 'rview', 'vimdiff', 'rvim', 'gvim', 'gview', 'gvimdiff', 'rgvim', 'rgview', 'evim', 'eview', 'vimx', 'nvi',
  'editor', 'sensible-editor', 'pager', 'sensible-pager', 'most', 'pg',
  // more that run their arguments as code (`let` evaluates arithmetic, which runs `$(…)` in a subscript), and
  // builtins that set variables, whose values later words would take on
  'let', 'read', 'mapfile', 'readarray', 'getopts', 'py', 'ipython', 'ipython3', 'bpython', 'rbash', 'rzsh', 'rksh',
  'compgen', 'complete',
  // more wrappers that run the command that follows, or a command line given to them
  'prlimit', 'setpriv', 'fakeroot', 'sg', 'newgrp', 'ssh-agent', 'dbus-run-session', 'xvfb-run', 'systemd-run',
  'cgexec', 'numactl', 'valgrind', 'catchsegv', 'torsocks', 'proxychains', 'proxychains4', 'faketime', 'chronic',
  'ifne', 'sem', 'run-parts', 'at', 'batch', 'tmux', 'screen', 'xdg-open', 'open',
  // installs the commands it reads (a file, or its input with `-`) for cron to run later, outside any sandbox
  'crontab',
  // programs whose arguments are a language that can run a shell command (`sqlite3 db '.shell …'`, `dc -e '!…'`)
  'sqlite3', 'dc', 'mysql', 'mariadb', 'psql', 'gnuplot', 'm4',
  // TypeScript and other runners of any script (`tsx -e …`)
  'tsx', 'ts-node', 'ts-node-esm', 'esno', 'vite-node', 'jiti', 'babel-node', 'node-dev', 'nodemon',
  // more that run the program they are given (`eatmydata rm …`, `cpulimit -l 5 rm …`, `proot rm …`), or a script or
  // command line (`cmake -P x.cmake`, `cmake -E env rm …`, `entr -s '…'`)
  'toybox', 'eatmydata', 'cpulimit', 'entr', 'dbus-launch', 'proot', 'cmake',
  // more that run code or a command line they are given or read (`erl -eval …`, `… | erl`, `guile -c`, duckdb's
  // `.shell`, lldb's `platform shell`), or the command that follows (`capsh -- -c …`, `fakeroot-sysv sh -c …`, with
  // none the shell on their input; `luit`, `heaptrack`, `memusage`, `sotruss`, `pg_virtualenv`, `dotenv run`)
  'erl', 'erlc', 'escript', 'guile', 'duckdb', 'lldb', 'capsh', 'fakeroot-sysv', 'fakeroot-tcp', 'luit', 'heaptrack',
  'memusage', 'sotruss', 'pg_virtualenv', 'dotenv',
  ...FOLLOWED_WRAPPERS,
]);

/**
 * The dynamic loader, which runs the program named by its first operand (`ld.so /bin/rm …`,
 * `/lib64/ld-linux-x86-64.so.2 …`, `ld-musl-x86_64.so.1 …`), by any of the names it is installed under.
 */
const DYNAMIC_LOADER = /^(?:ld\.so(?:\.[0-9]+)?|ld-linux[\w.-]*\.so(?:\.[0-9]+)*|ld-musl-[\w.-]*\.so(?:\.[0-9]+)*|ld64\.so(?:\.[0-9]+)*)$/;

/** QEMU's user-mode emulators, each running the program it is given for its architecture (`qemu-x86_64 /bin/rm …`). */
const EMULATOR = /^qemu-[\w.-]+$/;

/** Whether `name` (a base name) is the dynamic loader, which runs the program named after its options. */
export function isDynamicLoader(name: string): boolean {
  return DYNAMIC_LOADER.test(name);
}

/** Shells and interpreters also installed under a versioned or suffixed name: `python3.11`, `perl5.36.0`, `bash-5.2`. */
const VERSIONED_INTERPRETER =
  /^(?:vi|vim|nvim|view|emacs|less|sh|bash|dash|zsh|ksh|mksh|fish|csh|tcsh|ash|pwsh|python|pypy|node|nodejs|deno|bun|perl|ruby|irb|php|lua|luajit|tclsh|wish|julia|java|awk|gawk|sed|Rscript)[0-9._-]/;

/** Whether an allow rule for this command must be exact: it runs whatever it is given. `name` is a base name. */
export function isExactOnlyCommand(name: string): boolean {
  return EXACT_ONLY_COMMANDS.has(name) || VERSIONED_INTERPRETER.test(name) || isDynamicLoader(name) || EMULATOR.test(name);
}

/**
 * A program path that is some other program whatever its last part says: `/proc/self/exe` is the shell that runs it
 * (`… | base64 -d | /proc/self/exe` is bash reading a line), `/proc/<pid>/exe`, `/proc/<pid>/fd/N`,
 * `/proc/<pid>/map_files/…`, and any other name under a `proc` folder, and `/dev/fd/N`, `/dev/stdin` and any other
 * name under `/dev`, wherever the path climbs from (`../../proc/self/exe`).
 */
const PROCESS_PROGRAM = /(?:^|\/)proc\/+[^/]|^\/+dev\/|(?:^|\/)dev\/+(?:fd\/|std(?:in|out|err)(?:\/|$))/;

/** Whether an allow rule for the command `word` (a path or a name) must be exact: `isExactOnlyCommand`, or `PROCESS_PROGRAM`. */
export function isExactOnlyProgram(word: string): boolean {
  return isExactOnlyCommand(commandBaseName(word)) || PROCESS_PROGRAM.test(word);
}

/**
 * Commands a person may allow by prefix, but whose proposal is exact: they delete, overwrite, change rights,
 * stop processes or talk to the network, so "commands starting with `rm`" is rarely what an "Always allow" meant.
 */
export const PROPOSE_EXACT_COMMANDS: ReadonlySet<string> = new Set([
  'rm', 'rmdir', 'shred', 'dd', 'mkfs', 'truncate', 'mv', 'cp', 'ln', 'tee', 'install', 'chmod', 'chown', 'chgrp',
  'kill', 'pkill', 'killall', 'curl', 'wget', 'scp', 'sftp', 'rsync', 'nc', 'ncat', 'socat', 'telnet', 'ftp',
  'git-shell', 'systemctl', 'reboot', 'shutdown', 'mount', 'umount',
  // tools with subcommands, each of which runs containers, deploys, installs or runs build plugins chosen by options
  'docker', 'podman', 'kubectl', 'helm', 'gh', 'terraform', 'brew', 'apt', 'apt-get', 'mvn', 'gradle', 'gradlew', 'mvnw',
]);

/**
 * The commands "Always allow" proposes by their name alone ("commands starting with `ls`"): they read and print,
 * and none has an argument that makes it run another program or write a file. Any other command is proposed
 * exactly as it was asked for (tools with subcommands aside: `npm test`, `git status`), since many programs run
 * code given in an argument (`tar --to-command=…`, `zip -TT …`, `sort --compress-program=…`, `rg --pre …`), and
 * a rule for their name would let that through. A person may still write a prefix rule for any of them.
 */
export const PREFIX_PROPOSED_COMMANDS: ReadonlySet<string> = new Set([
  'ls', 'cat', 'head', 'tail', 'wc', 'grep', 'egrep', 'fgrep', 'pwd', 'echo', 'printf', 'true', 'false', 'date',
  'du', 'df', 'stat', 'diff', 'cmp', 'md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum',
  'cksum', 'basename', 'dirname', 'realpath', 'readlink', 'which', 'whoami', 'id', 'uname', 'cut', 'tr', 'nl',
  'column', 'jq', 'ps', 'free', 'uptime', 'nproc', 'seq', 'sleep', 'printenv', 'tac', 'rev', 'fold', 'fmt', 'paste',
  'join', 'comm', 'od', 'hexdump', 'strings', 'base64', 'tty', 'groups', 'test', '[', 'pgrep',
]);

/**
 * The git subcommands "Always allow" proposes by name (`git status`, `git log`): they show, or add to the history
 * without taking anything from it. Any other is proposed exact: many run what their arguments name (`git rebase -x`,
 * `git bisect run`, `git difftool -x`, `git grep --open-files-in-pager`, `git submodule foreach`, `git config
 * alias.x '!…'`, `git clone -u`), and others have forms that throw work away or rewrite what others have (`git reset
 * --hard`, `git checkout -- .`, `git restore .`, `git switch -f`, `git clean`, `git stash drop`, `git branch -D`, `git
 * tag -d`, `git rm`, `git push --force`; `merge`, `pull`, `cherry-pick` and `revert` also run the repository's merge
 * hooks), which a rule for the subcommand would let through after the harmless form was allowed.
 */
export const GIT_PREFIX_SUBCOMMANDS: ReadonlySet<string> = new Set([
  'status', 'log', 'diff', 'show', 'add', 'commit', 'rev-parse', 'ls-files', 'blame', 'shortlog', 'describe', 'fetch',
  'init', 'remote',
]);

/**
 * Per tool with subcommands, the subcommands "Always allow" proposes by name (`npm test`, `cargo build`, `go test`):
 * they test, build, check, format, list or show. Any other subcommand is proposed exact, since many fetch and run
 * what their arguments name (`npm create x`, `npm explore x -- sh -c …`, `npm pkg set scripts.test=…`, `uv pip
 * install`, `uv lock` and `uv sync`, which build packages, and `uv tree`, which locks the project as `uv lock` does
 * unless given `--frozen`, `poetry self add`, `composer global require`, `composer
 * exec`, `go tool x`, `go generate`, `cargo install`, `rustup run stable …`) or publish and push (`npm publish`,
 * `cargo publish`, also from a `--dry-run`). `run` and `run-script` are listed where they run one of the project's
 * scripts by its name (`npm run build` → `npm run build`). A tool not listed here has every subcommand proposed exact.
 * `make` is apart: its targets are the Makefile's, proposed by name (`make test`). The scripts and tasks of
 * composer, turbo and nx are not listed: they hand the words after them to the tool the script runs (`composer test
 * x.php`, `turbo run test -- --config …`, `nx test app --setupFile=…`), which may run a file they name, and the rules
 * check those words only for npm, pnpm and Yarn.
 */
export const PREFIX_SUBCOMMANDS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['git', GIT_PREFIX_SUBCOMMANDS],
  ['npm', new Set(['test', 't', 'tst', 'run', 'run-script', 'ls', 'list', 'outdated', 'view', 'info', 'why', 'explain'])],
  ['pnpm', new Set(['test', 't', 'tst', 'run', 'ls', 'list', 'outdated', 'why'])],
  ['yarn', new Set(['test', 'run', 'list', 'info', 'why', 'outdated'])],
  ['cargo', new Set(['test', 't', 'build', 'b', 'check', 'c', 'clippy', 'fmt', 'bench', 'tree', 'metadata', 'run'])],
  ['go', new Set(['test', 'build', 'vet', 'fmt', 'list', 'version', 'doc'])],
  ['pip', new Set(['list', 'show', 'freeze', 'check'])],
  ['pip3', new Set(['list', 'show', 'freeze', 'check'])],
  ['poetry', new Set(['show', 'check'])],
  ['composer', new Set(['show', 'outdated', 'validate', 'why', 'why-not', 'depends', 'licenses', 'status'])],
  ['rustup', new Set(['show', 'which', 'check'])],
  ['turbo', new Set(['ls'])],
  ['nx', new Set(['show', 'report'])],
]);

/** Commands with subcommands: with an option before the subcommand (`git -C dir status`) the proposal is exact. */
export const SUBCOMMAND_COMMANDS: ReadonlySet<string> = new Set([
  'npm', 'pnpm', 'yarn', 'git', 'cargo', 'go', 'docker', 'podman', 'kubectl', 'helm', 'pip', 'pip3', 'uv', 'poetry',
  'gh', 'terraform', 'make', 'mvn', 'gradle', 'brew', 'apt', 'apt-get', 'composer', 'rustup', 'turbo', 'nx', 'tsc',
]);

/** Subcommands that take the name of what to run next: `npm run build` is proposed as `npm run build`. */
export const RUNNER_SUBCOMMANDS: ReadonlySet<string> = new Set(['run', 'run-script']);

/** `/usr/bin/rm` → `rm`. */
export function commandBaseName(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash === -1 ? word : word.slice(slash + 1);
}
