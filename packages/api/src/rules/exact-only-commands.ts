import { EXACT_ONLY_COMMANDS, VERSIONED_PROGRAMS } from './program-traits';

/**
 * The lists of programs by trait live in one table (program-traits.ts); these are read from it. `FOLLOWED_WRAPPERS`:
 * the wrappers deny rules look behind, exact-only for allow rules as well (one list for both sides).
 * `EXACT_ONLY_COMMANDS`: commands that run whatever they are given (shells, interpreters, wrappers that run another
 * command, shell builtins that change how later commands run): an allow rule for one of them must be exact, and a
 * proposal for one is exact.
 */
export {
  BUILTIN_SUBCOMMANDS,
  CODE_RUNNERS,
  DATA_FILTERS,
  EXACT_ONLY_COMMANDS,
  FOLLOWED_WRAPPERS,
  INPUT_COMMAND_READERS,
  PLAIN_SUBCOMMANDS,
  PROJECT_FIRST_RUNNERS,
  PROJECT_RUNNERS,
  RUNS_BY_SUBCOMMAND,
  RUNS_NAMED_COMMANDS,
  SETARCH_LINKS,
  SHELLS,
  TEX_ENGINES,
  WORKING_FOLDER_PROGRAMS,
  type FollowedWrapper,
  type ProgramTraits,
  type RunnerProgram,
  type SetarchLink,
} from './program-traits';

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
const VERSIONED_INTERPRETER = new RegExp(`^(?:${VERSIONED_PROGRAMS.join('|')})[0-9._-]`);

/**
 * gdb and lldb under a prefix as well: a cross build's target (`arm-none-eabi-gdb`, `x86_64-linux-gnu-gdb`) or a
 * wrapper's (`rust-gdb`, `rust-lldb`, `cuda-gdb`), each running the shell line it is given (`-ex 'shell …'`).
 */
const PREFIXED_DEBUGGER = /(?:^|[-_.])(?:gdb|lldb)(?:$|[0-9._-])/;

/** Whether `name` (a base name) is gdb or lldb under a prefix, a version or a suffix (`arm-none-eabi-gdb`, `lldb-15`). */
export function isPrefixedDebugger(name: string): boolean {
  return PREFIXED_DEBUGGER.test(name);
}

/**
 * The target a cross build names its tools for, with the dash before the tool's name: `x86_64-linux-gnu-`,
 * `arm-none-eabi-`, and MXE's `x86_64-w64-mingw32.static-`, `i686-w64-mingw32.shared-`. One pattern for storing a rule
 * (`CROSS_WINDRES`) and judging one (the server's `TARGET_BINARY_TOOL`), so that both read the same names as the tool.
 */
export const CROSS_TARGET = /[a-z0-9_.]+(?:-[a-z0-9_.]+){1,4}-/;

/**
 * windres under a cross build's name, perhaps versioned (`x86_64-w64-mingw32-windres`), which the server's rules judge
 * as windres: exact-only as windres is, so a prefix rule for it is refused when stored rather than kept covering nothing.
 */
const CROSS_WINDRES = new RegExp(`^${CROSS_TARGET.source}windres(?:-\\d+(?:\\.\\d+)*)?$`);

/** Whether an allow rule for this command must be exact: it runs whatever it is given. `name` is a base name. */
export function isExactOnlyCommand(name: string): boolean {
  return EXACT_ONLY_COMMANDS.has(name) || VERSIONED_INTERPRETER.test(name) || isPrefixedDebugger(name) || isDynamicLoader(name) || EMULATOR.test(name) || CROSS_WINDRES.test(name);
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
 * check those words only for npm, pnpm and Yarn. No nx subcommand is listed: nx loads the plugins its `nx.json`
 * names at every command, `nx show` and `nx report` too.
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
