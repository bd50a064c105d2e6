// The small module alone: this file is loaded in the command reader's worker, which needs nothing else of the API.
import { Buffer } from 'node:buffer';
import { commandBaseName, isDynamicLoader, SETARCH_LINKS, SHELLS, type FollowedWrapper } from '@airlock/api/rules/commands';
import { gitAliasCommands } from './git-arguments';
import { runnerCommandLines, runnerPrograms, runnerRunsElsewhere } from './program-runners';

/** A command's words as deny rules see them: the value where known, undefined where the shell computes it. */
export type ReachableWords = readonly (string | undefined)[];

/** How a command that runs another one reads its own options (getopt style, options ending at the first operand). */
interface Options {
  /** Options whose value is the rest of the word or else the next word (`-u root`, `-uroot`, `--user root`, `--user=root`). */
  valueOptions?: readonly string[];
  /** Short options whose value, if any, is only ever attached (`xargs -i{}`, `watch -d`): the rest of the word. */
  attachedValueOptions?: readonly string[];
  /** Options whose value is a command line (`env -S 'rm -rf /'`, `env -S'rm -rf /'`, `flock x -c 'rm -rf /'`). */
  commandLineOptions?: readonly string[];
  /** Words before the wrapped command that are not options (`timeout 5 rm`). */
  positionals?: number;
  /** Also skips `NAME=value` words (`env A=1 rm`). */
  assignments?: boolean;
  /** A lone `-` is an option too (`su - root`). */
  loneDash?: boolean;
  /** Options naming the folder the wrapped command runs in, the last given counting (`env -C sub cmd`). */
  folderOptions?: readonly string[];
  /**
   * Options after which the wrapped command runs in a folder its words do not name (a new root, a login's home):
   * `elsewhere` lists them; `elsewhereUnless`, when given, makes it run there unless one of those is given
   * (`chroot` always; `systemd-run` but as a scope or given its folder).
   */
  elsewhereOptions?: readonly string[];
  elsewhereUnless?: readonly string[];
}

/** Keyed by the names of `FOLLOWED_WRAPPERS`, which allow rules take as exact-only: a wrapper listed here alone does not type-check. */
const WRAPPERS = new Map<FollowedWrapper, Options>([
  ['sudo', {
    // `-h` alone is help, but `-h host` names a host: taken as a value, to find the command after it.
    valueOptions: ['-a', '-C', '-c', '-D', '-g', '-h', '-p', '-R', '-r', '-T', '-t', '-U', '-u', '--chdir', '--chroot', '--close-from', '--command-timeout', '--group', '--host', '--login-class', '--other-user', '--prompt', '--role', '--type', '--user'],
    folderOptions: ['-D', '--chdir'],
    elsewhereOptions: ['-i', '--login', '-R', '--chroot'],
  }],
  ['doas', { valueOptions: ['-u', '-C'] }],
  ['env', { valueOptions: ['-u', '-C', '-P', '--unset', '--chdir'], assignments: true, commandLineOptions: ['-S', '--split-string'], folderOptions: ['-C', '--chdir'] }],
  ['nice', { valueOptions: ['-n', '--adjustment'] }],
  ['ionice', { valueOptions: ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata', '--pid', '--pgid', '--uid'] }],
  ['nohup', {}],
  ['setsid', {}],
  ['command', {}],
  ['builtin', {}],
  ['exec', { valueOptions: ['-a'] }],
  ['time', { valueOptions: ['-f', '-o', '--format', '--output'] }],
  ['stdbuf', { valueOptions: ['-i', '-o', '-e', '--input', '--output', '--error'] }],
  ['timeout', { valueOptions: ['-s', '-k', '--signal', '--kill-after'], positionals: 1 }],
  ['chroot', { valueOptions: ['--userspec', '--groups'], positionals: 1, elsewhereUnless: [] }],
  ['taskset', { positionals: 1 }],
  ['flock', { valueOptions: ['-w', '-E', '--timeout', '--wait', '--conflict-exit-code'], commandLineOptions: ['-c', '--command'], positionals: 1 }],
  ['xargs', {
    valueOptions: ['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
    attachedValueOptions: ['-i', '-e', '-l'],
  }],
  ['nsenter', {
    valueOptions: ['-t', '-S', '-G', '--target', '--setuid', '--setgid'],
    attachedValueOptions: ['-m', '-u', '-i', '-n', '-p', '-U', '-C', '-T', '-r', '-w'],
    // `-w` and `--wd` alone: the target's folder.
    folderOptions: ['-w', '--wd'],
    elsewhereOptions: ['-r', '--root'],
  }],
  ['unshare', {
    valueOptions: ['-R', '-w', '-S', '-G', '--root', '--wd', '--setuid', '--setgid', '--map-user', '--map-group', '--map-users', '--map-groups', '--propagation', '--monotonic', '--boottime', '--load-interp'],
    attachedValueOptions: ['-m', '-u', '-i', '-n', '-p', '-U', '-C', '-T'],
    folderOptions: ['-w', '--wd'],
    // A new root: `/` of it unless `-w` names one there.
    elsewhereOptions: ['-R', '--root'],
  }],
  ['strace', { valueOptions: ['-a', '-b', '-e', '-E', '-I', '-o', '-O', '-p', '-P', '-s', '-S', '-u', '-X', '--output', '--user', '--env', '--attach', '--string-limit', '--trace-path', '--columns'] }],
  ['ltrace', { valueOptions: ['-a', '-A', '-D', '-e', '-F', '-l', '-n', '-o', '-p', '-s', '-u', '-x', '--output', '--library'] }],
  ['unbuffer', {}],
  ['coproc', {}],
  ['busybox', {}],
  ['prlimit', { valueOptions: ['-p', '--pid', '-o', '--output'], attachedValueOptions: ['-c', '-d', '-e', '-f', '-i', '-l', '-m', '-n', '-q', '-r', '-s', '-t', '-u', '-v', '-x', '-y'] }],
  ['setpriv', {
    valueOptions: ['--reuid', '--regid', '--ruid', '--euid', '--rgid', '--egid', '--groups', '--inh-caps', '--ambient-caps', '--bounding-set', '--securebits', '--pdeathsig', '--selinux-label', '--apparmor-profile', '--landlock-access', '--landlock-rule', '--seccomp-filter'],
  }],
  ['fakeroot', { valueOptions: ['-l', '--lib', '--faked', '-i', '-s', '-b'] }],
  ['ssh-agent', { valueOptions: ['-a', '-E', '-O', '-P', '-t'] }],
  ['dbus-run-session', { valueOptions: ['--config-file', '--dbus-daemon'] }],
  ['xvfb-run', { valueOptions: ['-e', '-f', '-n', '-p', '-s', '-w', '--error-file', '--auth-file', '--server-num', '--xauth-protocol', '--server-args', '--wait'] }],
  ['systemd-run', {
    valueOptions: ['-p', '--property', '-u', '--unit', '-E', '--setenv', '-M', '--machine', '-H', '--host', '--description', '--slice', '--working-directory', '--uid', '--gid', '--nice', '--on-active', '--on-boot', '--on-startup', '--on-unit-active', '--on-unit-inactive', '--on-calendar', '--timer-property', '--path-property', '--socket-property', '--service-type'],
    folderOptions: ['--working-directory'],
    // A service starts in `/`, or the user's home folder under `--user`; a scope where it was started.
    elsewhereUnless: ['--scope', '-d', '--same-dir', '--working-directory'],
  }],
  ['cgexec', { valueOptions: ['-g'] }],
  ['numactl', { valueOptions: ['-i', '-N', '-m', '-C', '-p', '--interleave', '--cpunodebind', '--membind', '--physcpubind', '--preferred'] }],
  ['valgrind', {}],
  ['catchsegv', {}],
  ['torsocks', { valueOptions: ['-u', '-p', '-a', '-P', '--user', '--pass', '--address', '--port'] }],
  ['proxychains', { valueOptions: ['-f'] }],
  ['proxychains4', { valueOptions: ['-f'] }],
  // `-m` and `-f` are switches; `-p PID` and `--date-prog PROG` take a value; then the time, then the command.
  ['faketime', { valueOptions: ['-p', '--date-prog'], positionals: 1 }],
  ['chronic', {}],
  ['ifne', {}],
  ['chrt', { valueOptions: ['-T', '-P', '-D', '--sched-runtime', '--sched-period', '--sched-deadline'], positionals: 1 }],
  ['script', {
    valueOptions: ['-E', '--echo', '-I', '--log-in', '-O', '--log-out', '-B', '--log-io', '-T', '--log-timing', '-m', '--logging-format', '-o', '--output-limit'],
    commandLineOptions: ['-c', '--command'],
  }],
  // util-linux `setarch ARCH [options] cmd`, and its links named for an architecture (`linux64 rm -rf x`): switches only.
  ['setarch', { positionals: 1 }],
  ...SETARCH_LINKS.map((name): [FollowedWrapper, Options] => [name, {}]),
  ['choom', { valueOptions: ['-n', '-p', '--adjust', '--pid'] }],
  ['rlwrap', {
    valueOptions: ['-b', '-C', '-D', '-e', '-f', '-g', '-H', '-l', '-M', '-O', '-P', '-q', '-s', '-S', '-t', '-w', '-z', '--break-chars', '--command-name', '--histsize', '--extra-char-after-completion', '--file', '--forget-matching', '--history-filename', '--logfile', '--multi-line-ext', '--only-cook', '--prompt-text', '--quote-characters', '--set-term-name', '--substitute-prompt', '--filter', '--wait-before-prompt'],
    attachedValueOptions: ['-a', '-d', '-m', '-p'],
  }],
  // runit's and daemontools' process-state tools: `chpst -u user cmd`, `envdir dir cmd`, `setuidgid user cmd`.
  ['chpst', { valueOptions: ['-u', '-U', '-b', '-e', '-/', '-C', '-n', '-l', '-L', '-m', '-d', '-o', '-p', '-f', '-c', '-r', '-t'], folderOptions: ['-C'], elsewhereOptions: ['-/'] }],
  ['softlimit', { valueOptions: ['-a', '-c', '-d', '-f', '-l', '-m', '-o', '-p', '-r', '-s', '-t'] }],
  ['envdir', { positionals: 1 }],
  ['envuidgid', { positionals: 1 }],
  ['setuidgid', { positionals: 1 }],
  ['setlock', { positionals: 1 }],
  ['pgrphack', {}],
  ['fghack', {}],
  // s6's and s6-overlay's: `s6-setuidgid user cmd`, `s6-envdir [-c x] dir cmd`, `s6-setlock [-t ms] file cmd`,
  // `with-contenv cmd`; and the user-switching `gosu user cmd`, `su-exec user cmd`, `pkexec [--user u] cmd`.
  ['s6-setuidgid', { positionals: 1 }],
  ['s6-envuidgid', { valueOptions: ['-D'], positionals: 1 }],
  ['s6-applyuidgid', { valueOptions: ['-u', '-g', '-G'] }],
  ['s6-envdir', { valueOptions: ['-c'], positionals: 1 }],
  ['s6-softlimit', { valueOptions: ['-a', '-c', '-d', '-f', '-l', '-m', '-o', '-p', '-r', '-s', '-t'] }],
  ['s6-setsid', { valueOptions: ['-d'] }],
  ['s6-setlock', { valueOptions: ['-t', '-d'], positionals: 1 }],
  ['s6-fghack', {}],
  ['with-contenv', {}],
  ['gosu', { positionals: 1 }],
  ['su-exec', { positionals: 1 }],
  ['pkexec', { valueOptions: ['--user'] }],
  // Init processes for containers: `tini -- cmd`, `dumb-init cmd`, `catatonit -- cmd`.
  ['tini', { valueOptions: ['-e', '-p'] }],
  ['dumb-init', { valueOptions: ['-r', '--rewrite'] }],
  ['catatonit', {}],
  // Compiler caches run the compiler named next (`ccache gcc …`), whatever program it is.
  ['ccache', { valueOptions: ['-d', '--dir', '-F', '--max-files', '-M', '--max-size', '-o', '--set-config', '-k', '--get-config', '-X', '--recompress'] }],
  ['sccache', {}],
  ['systemd-inhibit', { valueOptions: ['--what', '--who', '--why', '--mode'] }],
  // Another user than root starts in that user's home folder.
  ['run0', { valueOptions: ['-u', '--user', '-g', '--group', '-D', '--chdir', '--nice', '--setenv', '--property', '--description', '--slice', '--unit', '--machine', '--background'], folderOptions: ['-D', '--chdir'], elsewhereOptions: ['-u', '--user'] }],
  // busybox and toybox run the applet named next: `toybox rm -rf x`.
  ['toybox', {}],
  ['eatmydata', {}],
  ['cpulimit', { valueOptions: ['-l', '-p', '-e', '-P', '--limit', '--pid', '--exe', '--path'] }],
  // `entr -s` hands its operand to a shell: the command is that one word, which the deny side reads as a line too.
  ['entr', {}],
  ['dbus-launch', { valueOptions: ['--autolaunch', '--config-file'] }],
  ['firejail', { folderOptions: ['--private-cwd'], elsewhereOptions: ['--chroot'] }],
  ['proot', {
    valueOptions: ['-r', '-b', '-m', '-w', '-k', '-q', '-R', '-S', '--rootfs', '--bind', '--mount', '--cwd', '--pwd', '--kernel-release', '--qemu'],
    folderOptions: ['-w', '--cwd', '--pwd'],
    elsewhereOptions: ['-r', '-R', '-S', '--rootfs'],
  }],
  // `cross-env A=1 B=2 cmd`; `env-cmd -f .env -e prod cmd` (its `--use-shell` hands the command to a shell: not plain).
  ['cross-env', { assignments: true }],
  ['env-cmd', { valueOptions: ['-f', '--file', '-r', '--rc-file', '-e', '--environments'] }],
  // Bumblebee's primusrun and the x86 emulators box64 and box86 run the command given, with no options of their own.
  ['primusrun', {}],
  ['box64', {}],
  ['box86', {}],
]);

/** The dynamic loader's options (`ld.so --library-path x /bin/rm …`): the program follows them. */
const DYNAMIC_LOADER: Options = {
  valueOptions: ['--library-path', '--inhibit-rpath', '--audit', '--preload', '--argv0', '--glibc-hwcaps-prepend', '--glibc-hwcaps-mask'],
};

/** `cmake -E` commands that run the command after them: `env [--unset=X] [NAME=value]… cmd`, `time cmd`, `chdir DIR cmd`. */
const CMAKE_ENV: Options = { assignments: true };


/** `su [options] [-] [user [shell arguments]]`, and `runuser` alike unless it is given `-u user` and a command. */
const SU: Options = {
  valueOptions: ['-s', '-g', '-G', '-w', '--shell', '--group', '--supp-group', '--whitelist-environment'],
  commandLineOptions: ['-c', '--command', '--session-command'],
  loneDash: true,
};
const RUNUSER: Options = { ...SU, valueOptions: [...(SU.valueOptions ?? []), '-u', '--user'] };

/** procps `watch`: its options end at the first other word; the rest is run by `sh -c`, or as words given `-x`. */
const WATCH: Options = { valueOptions: ['-n', '-q', '--interval', '--equexit'], attachedValueOptions: ['-d'] };

/** Shell options that take the next word as their value (`bash -o pipefail`, `bash +O extglob`, `bash --rcfile x`). */
const SHELL_VALUE_LETTERS = new Set(['o', 'O']);
const SHELL_LONG_VALUE_OPTIONS = new Set(['--rcfile', '--init-file']);
const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** What a command runs directly besides itself: commands to check as they are, and command lines to parse. */
export interface InnerCommands {
  words: ReachableWords[];
  commandLines: string[];
}

/**
 * What `words` runs directly, one step in: the command behind a wrapper (`sudo rm`, `env A=1 rm`, `timeout 5 rm`,
 * `xargs rm`) or a runner (`uv run rm`, `pnpm exec rm`, `npx rm`: `runnerPrograms`), each command after `find -exec
 * … ;`, what a git alias defined on the line names (`git -c alias.p=push p`), and the command lines it hands to a
 * shell (`bash -c '…'`, `eval …`, `watch …`, `env -S …`, `npm exec -c '…'`). What those run in
 * turn is for the caller to ask, once for each: this never recurses, and takes time in the number of words. Option
 * spellings beyond the tables above make it find less; this serves deny rules only.
 */
export function innerCommands(words: ReachableWords): InnerCommands {
  const found: InnerCommands = { words: [], commandLines: [] };
  const inner = unwrapOnce(words, found);
  if (inner !== undefined && inner.length > 0) found.words.push(inner);
  // What a runner runs (`uv run git push`, `pnpm exec rm -rf x`, `pnpm git push`) is a command of its own.
  found.words.push(...runnerPrograms(words));
  found.commandLines.push(...runnerCommandLines(words));
  return found;
}

function unwrapOnce(words: ReachableWords, found: InnerCommands): ReachableWords | undefined {
  const first = words[0];
  if (first === undefined) return undefined;
  const name = commandBaseName(first);
  const args = words.slice(1);
  switch (name) {
    case 'eval':
      pushKnownWords(args[0] === '--' ? args.slice(1) : args, found);
      return undefined;
    case 'watch':
      return watch(args, found);
    case 'find':
      findExec(args, found);
      return undefined;
    case 'su':
    case 'runuser':
      return su(name, args, found);
    case 'sg':
      sg(args, found);
      return undefined;
    case 'perf':
      return perf(args, found);
    case 'runcon': {
      // `runcon CONTEXT cmd`, or `runcon -t TYPE cmd` with no context word.
      const { index, options } = skipOptions(args, RUNCON, found);
      return args.slice(options.size === 0 ? index + 1 : index);
    }
    case 'ssh':
    case 'scp':
    case 'sftp':
      sshCommands(name, args, found);
      return undefined;
    case 'wget':
      wgetAskpass(args, found);
      return undefined;
    case 'hyperfine':
      hyperfine(args, found);
      return undefined;
    case 'parallel':
    case 'sem':
      parallel(name, args, found);
      return undefined;
    case 'cmake':
      return cmakeCommand(args);
    case 'git': {
      // `git -c alias.p=push p`: what the alias names is a command of its own.
      const aliased = gitAliasCommands(words);
      found.words.push(...aliased.words);
      found.commandLines.push(...aliased.commandLines);
      return undefined;
    }
    default:
      break;
  }
  const shell = shellName(name);
  if (shell !== undefined) {
    if (shell === 'pwsh' || shell === 'powershell') powerShellCommandLine(args, found);
    else shellCommandLine(args, found);
    return undefined;
  }
  const wrapper = (WRAPPERS as ReadonlyMap<string, Options>).get(name) ?? (isDynamicLoader(name) ? DYNAMIC_LOADER : undefined);
  if (wrapper === undefined) return undefined;
  return args.slice(skipOptions(args, wrapper, found).index);
}

function cmakeCommand(args: ReachableWords): ReachableWords | undefined {
  if (args[0] !== '-E') return undefined;
  const rest = args.slice(2);
  if (args[1] === 'env') return rest.slice(skipOptions(rest, CMAKE_ENV, { words: [], commandLines: [] }).index);
  if (args[1] === 'time') return rest;
  return args[1] === 'chdir' ? rest.slice(1) : undefined;
}

/** The words the shell would join into one command line (`eval a b`), leaving out those it computes. */
function pushKnownWords(words: ReachableWords, found: InnerCommands): void {
  const known = words.filter((word): word is string => word !== undefined);
  if (known.length > 0) found.commandLines.push(known.join(' '));
}

function watch(args: ReachableWords, found: InnerCommands): ReachableWords | undefined {
  const { index, options } = skipOptions(args, WATCH, found);
  const rest = args.slice(index);
  if (options.has('-x') || options.has('--exec')) return rest;
  pushKnownWords(rest, found);
  return undefined;
}

function su(name: string, args: ReachableWords, found: InnerCommands): ReachableWords | undefined {
  const { index, options } = skipOptions(args, name === 'su' ? SU : RUNUSER, found);
  const rest = args.slice(index);
  if (name === 'runuser' && (options.has('-u') || options.has('--user'))) return rest;
  // The first word is the user; the rest go to that user's shell (`su root -c 'rm -rf /'`).
  shellCommandLine(rest.slice(1), found);
  return undefined;
}

/** `sg [-] [group [-c] command]`: the command is a line for `/bin/sh -c`, with or without `-c`. */
function sg(args: ReachableWords, found: InnerCommands): void {
  let rest = args[0] === '-' ? args.slice(1) : args;
  rest = rest.slice(1);
  if (rest[0] === '-c') rest = rest.slice(1);
  pushKnownWords(rest, found);
}

/** perf's options for the subcommands that run a command (`perf stat -e x -- cmd`); `--pre` and `--post` run a line each. */
const PERF: Options = {
  valueOptions: [
    '-e', '--event', '-p', '--pid', '-t', '--tid', '-C', '--cpu', '-r', '--repeat', '-o', '--output', '-x', '--field-separator',
    '-G', '--cgroup', '-I', '--interval-print', '-D', '--delay', '-M', '--metrics', '-u', '--uid', '-m', '--mmap-pages', '-c',
    '--count', '-F', '--freq', '-j', '--branch-filter', '--call-graph', '--filter', '--log-fd', '--clockid', '-k', '--affinity',
    '--duration', '--max-stack', '--min-stack', '--timeout', '--interval-count', '--filter-pids', '--td-level', '--for-each-cgroup',
    '--control', '--switch-output-event', '--expr',
  ],
  commandLineOptions: ['--pre', '--post'],
};
/** perf's subcommands that run the command given after their options; others do so after a `record` (`perf sched record cmd`). */
const PERF_RUNS = new Set(['stat', 'record', 'trace', 'ftrace']);

function perf(args: ReachableWords, found: InnerCommands): ReachableWords | undefined {
  const at = args.findIndex((word) => word === undefined || !word.startsWith('-'));
  const subcommand = args[at];
  if (at === -1 || subcommand === undefined) return undefined;
  let from = at + 1;
  if (!PERF_RUNS.has(subcommand)) {
    const record = args.indexOf('record', from);
    if (record === -1 || record > from + 2) return undefined;
    from = record + 1;
  }
  return args.slice(skipOptions(args, PERF, found, from).index);
}

const RUNCON: Options = { valueOptions: ['-u', '-r', '-t', '-l', '--user', '--role', '--type', '--range'] };

/** OpenSSH's short options that take a value, per program (its getopt strings). */
const SSH_VALUE_LETTERS = new Map([
  ['ssh', 'BbcDEeFIiJLlmOoPpQRSWw'],
  ['scp', 'cDFiJloPSX'],
  ['sftp', 'BbcDFiJloPRsSX'],
]);
/** ssh_config keywords whose value is a command line the local shell runs (`-o ProxyCommand=…`), in either spelling. */
const SSH_COMMAND_KEYWORD = /^\s*(?:proxycommand|localcommand|knownhostscommand)\s*(?:=\s*|\s+)(.*)$/is;

/**
 * The commands OpenSSH's programs run on this machine: `-o ProxyCommand=…`, `LocalCommand`, `KnownHostsCommand`;
 * scp's and sftp's `-S program` (run in place of ssh) and `-D line` (a local SFTP server). Options are read in every
 * word up to a `--`, as ssh also reads them after the host.
 */
function sshCommands(name: string, args: ReachableWords, found: InnerCommands): void {
  const letters = SSH_VALUE_LETTERS.get(name) ?? '';
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index];
    if (word === '--') return;
    if (word === undefined || !word.startsWith('-')) continue;
    for (let at = 1; at < word.length; at += 1) {
      const letter = word[at] ?? '';
      if (!letters.includes(letter)) continue;
      const attached = word.slice(at + 1);
      const value = attached === '' ? args[index + 1] : attached;
      if (attached === '') index += 1;
      if (value === undefined) break;
      const keyword = letter === 'o' ? SSH_COMMAND_KEYWORD.exec(value) : null;
      if (keyword !== null && keyword[1]!.trim().toLowerCase() !== 'none') found.commandLines.push(keyword[1]!);
      if (name !== 'ssh' && letter === 'S') found.words.push([value]);
      if (name !== 'ssh' && letter === 'D') found.commandLines.push(value);
      break;
    }
  }
}

/** wget's `--use-askpass=program` (also as `-e use_askpass=…`), which it runs to ask for a password. */
function wgetAskpass(args: ReachableWords, found: InnerCommands): void {
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index];
    if (word === '--') return;
    if (word === undefined) continue;
    const next = args[index + 1];
    const long = /^--use-a[a-z-]*(?:=(.*))?$/s.exec(word);
    if (long !== null && '--use-askpass'.startsWith(word.split('=', 1)[0]!)) {
      const value = long[1] ?? next;
      if (value !== undefined) found.commandLines.push(value);
      continue;
    }
    const command = word === '-e' || word === '--execute' ? next : /^(?:-e|--execute=)(.*)$/s.exec(word)?.[1];
    const askpass = command === undefined ? null : /^\s*use_?askpass\s*=\s*(.*)$/is.exec(command);
    if (askpass !== null) found.commandLines.push(askpass[1]!);
  }
}

/** hyperfine's options; each other word is a command it runs through a shell, as are the values of these. */
const HYPERFINE: Options = {
  valueOptions: [
    '-w', '--warmup', '-m', '--min-runs', '-M', '--max-runs', '-r', '--runs', '-S', '--shell', '-P', '--parameter-scan', '-D',
    '--parameter-step-size', '-L', '--parameter-list', '--style', '--sort', '-u', '--time-unit', '--export-asciidoc',
    '--export-csv', '--export-json', '--export-markdown', '--export-orgmode', '--output', '-n', '--command-name', '--input',
  ],
  commandLineOptions: ['-s', '--setup', '-p', '--prepare', '--conclude', '-c', '--cleanup', '--reference'],
};

/** GNU parallel's options that take a value (`-j 4`, `--results out`), and sem's, which are the same. */
const PARALLEL: Options = {
  valueOptions: [
    '-a', '--arg-file', '--arg-file-sep', '--arg-sep', '--basefile', '--bf', '--block', '--block-size', '-C', '--colsep',
    '--delay', '-d', '--delimiter', '-E', '--env', '--halt', '--header', '-I', '-j', '-P', '--jobs', '--joblog', '-L',
    '--max-lines', '--load', '--memfree', '--memsuspend', '-n', '--max-args', '-N', '--nice', '--results', '--res',
    '--retries', '--return', '-S', '--sshlogin', '--sshloginfile', '--slf', '-s', '--max-chars', '--tagstring',
    '--tag-string', '--tmpdir', '--timeout', '--transferfile', '--tf', '--workdir', '--wd', '--rpl', '--termseq', '--id',
    '--semaphoretimeout', '--st', '--limit', '--hostgroups', '--ssh', '--sqlmaster', '--sqlworker', '--seqreplace',
  ],
  attachedValueOptions: ['-e', '-i', '-l'],
};
/** What starts parallel's arguments (`:::`), or the files of its arguments (`::::`), `+` linking them to the ones before. */
const PARALLEL_SEPARATORS: ReadonlySet<string> = new Set([':::', '::::', ':::+', '::::+']);
/** A replacement string, put for the argument: `{}`, `{.}`, `{/}`, `{//}`, `{/.}`, `{#}`, `{%}`, `{2}`, `{2.}` …. */
const PARALLEL_REPLACEMENT = /\{(?:\d*(?:\.|\/|\/\/|\/\.)?|#|%)\}/g;
/** At most this many of parallel's arguments each make a line of their own; past it, one line takes them all. */
const MAX_PARALLEL_LINES = 64;

/**
 * `parallel [options] [command] ::: args`: a shell runs the command's words joined with each argument, quoted, put for
 * a replacement string or else appended (`parallel sh -c ::: 'rm -rf x'` runs `sh -c 'rm -rf x'`); with no command,
 * each argument is a command line (`parallel ::: 'rm -rf x'`). Arguments from files (`::::`) or the input are not
 * known here. `sem [options] command` runs its command.
 */
function parallel(name: string, args: ReachableWords, found: InnerCommands): void {
  const start = skipOptions(args, PARALLEL, found).index;
  const end = args.findIndex((word, index) => index >= start && word !== undefined && PARALLEL_SEPARATORS.has(word));
  const command = args.slice(start, end === -1 ? undefined : end).filter((word): word is string => word !== undefined);
  const inputs: string[] = [];
  let fromFiles = false;
  for (const word of end === -1 ? [] : args.slice(end)) {
    if (word !== undefined && PARALLEL_SEPARATORS.has(word)) fromFiles = word.startsWith('::::');
    else if (word !== undefined && !fromFiles) inputs.push(word);
  }
  if (command.length === 0) {
    found.commandLines.push(...inputs);
    return;
  }
  const line = command.join(' ');
  if (name === 'sem' || inputs.length === 0) {
    found.commandLines.push(line);
    return;
  }
  const quoted = inputs.map((input) => `'${input.replaceAll("'", "'\\''")}'`);
  for (const input of quoted.slice(0, MAX_PARALLEL_LINES)) {
    const replaced = line.replace(PARALLEL_REPLACEMENT, () => input);
    found.commandLines.push(replaced === line ? `${line} ${input}` : replaced);
  }
  if (quoted.length > MAX_PARALLEL_LINES) found.commandLines.push(`${line} ${quoted.join(' ')}`);
}

function hyperfine(args: ReachableWords, found: InnerCommands): void {
  let index = 0;
  while (index < args.length) {
    index = skipOptions(args, HYPERFINE, found, index).index;
    const command = args[index];
    if (command !== undefined) found.commandLines.push(command);
    index += 1;
  }
}

/** An option as a wrapper was given it: as written (a long one before its `=`), and its value (undefined: none, or computed). */
interface GivenOption {
  written: string;
  value: string | undefined;
}

/**
 * Where the command a wrapper or runner wraps runs, as `words` say: `here`, where the wrapper runs; `named`, the folder
 * its words name, relative to there (`env -C sub`, `sudo --chdir=sub`, `cmake -E chdir sub`); `elsewhere`, a folder
 * its words do not name, or one the shell computes (`sudo -i`, `chroot root`, a service of `systemd-run`, `unshare -R`,
 * `find -execdir`, each package of `pnpm recursive exec` or `yarn workspaces foreach`, a runner's option that may
 * name one: `uv --directory x run`, `pnpm -C x exec`).
 */
export type WrappedFolder = { kind: 'here' } | { kind: 'named'; folder: string } | { kind: 'elsewhere' };

export function wrappedFolder(words: ReachableWords): WrappedFolder {
  const first = words[0];
  if (first === undefined) return { kind: 'elsewhere' };
  const name = commandBaseName(first);
  const args = words.slice(1);
  if (name === 'cmake') {
    if (args[0] !== '-E' || args[1] !== 'chdir') return { kind: 'here' };
    return args[2] === undefined ? { kind: 'elsewhere' } : { kind: 'named', folder: args[2] };
  }
  if (name === 'find') return args.some((word) => word === '-execdir' || word === '-okdir') ? { kind: 'elsewhere' } : { kind: 'here' };
  if (runnerRunsElsewhere(words)) return { kind: 'elsewhere' };
  const spec = (WRAPPERS as ReadonlyMap<string, Options>).get(name);
  if (spec === undefined) return { kind: 'here' };
  const { given } = skipOptions(args, spec, { words: [], commandLines: [] });
  // GNU getopt takes a start of a long option's name for it: a start of one of these counts as it.
  const isOne = (written: string, options: readonly string[] = []) => options.includes(written) || (written.startsWith('--') && written.length > 2 && options.some((option) => option.startsWith(written)));
  if (given.some(({ written }) => isOne(written, spec.elsewhereOptions))) return { kind: 'elsewhere' };
  if (spec.elsewhereUnless !== undefined && !given.some(({ written }) => isOne(written, spec.elsewhereUnless))) return { kind: 'elsewhere' };
  const folder = given.findLast(({ written }) => isOne(written, spec.folderOptions));
  if (folder === undefined) return { kind: 'here' };
  return folder.value === undefined ? { kind: 'elsewhere' } : { kind: 'named', folder: folder.value };
}

/**
 * Where the wrapped command starts in `args`, past the wrapper's options, `--`, assignments and positionals;
 * and the options seen (`-x` for each letter of a group, `--name` for a long one). Command lines given to
 * options go to `found`. `from`: where in `args` to start.
 */
function skipOptions(args: ReachableWords, spec: Options, found: InnerCommands, from = 0): { index: number; options: Set<string>; given: GivenOption[] } {
  const options = new Set<string>();
  const given: GivenOption[] = [];
  let positionals = spec.positionals ?? 0;
  let optionsEnded = false;
  let index = from;
  while (index < args.length) {
    const word = args[index];
    if (!optionsEnded && word !== undefined) {
      if (word === '--') {
        optionsEnded = true;
        index += 1;
        continue;
      }
      if (word === '-' && spec.loneDash === true) {
        options.add(word);
        index += 1;
        continue;
      }
      if (word.startsWith('--')) {
        index += longOption(word, args[index + 1], spec, options, found, given);
        continue;
      }
      if (word.startsWith('-') && word.length > 1) {
        index += shortOptions(word, args[index + 1], spec, options, found, given);
        continue;
      }
    }
    if (spec.assignments === true && word !== undefined && ASSIGNMENT.test(word)) {
      index += 1;
      continue;
    }
    if (positionals > 0) {
      positionals -= 1;
      index += 1;
      continue;
    }
    break;
  }
  return { index, options, given };
}

/**
 * How many words `--name`, `--name=value` or `--name value` takes. GNU getopt takes any unambiguous start of a long
 * option for it (`nice --adj 5`, `env --split-str=…`): a start of exactly one of the options with a value is read as it.
 */
function longOption(word: string, next: string | undefined, spec: Options, options: Set<string>, found: InnerCommands, given: GivenOption[]): number {
  const equals = word.indexOf('=');
  const written = equals === -1 ? word : word.slice(0, equals);
  // Among the switches the wrapper is known to take too: `sudo --login` is not a start of `--login-class`.
  const known = [...(spec.valueOptions ?? []), ...(spec.commandLineOptions ?? []), ...(spec.folderOptions ?? []), ...(spec.elsewhereOptions ?? [])];
  const name = longOptionNamed(written, known) ?? written;
  const attached = equals === -1 ? undefined : word.slice(equals + 1);
  options.add(name);
  if (spec.commandLineOptions?.includes(name) === true) {
    const line = attached ?? next;
    if (line !== undefined) found.commandLines.push(line);
  } else if (spec.valueOptions?.includes(name) !== true) {
    given.push({ written, value: attached });
    return 1;
  }
  given.push({ written, value: attached ?? next });
  return attached === undefined ? 2 : 1;
}

/**
 * The long option of `options` that `written` names: itself, or the only one it is a start of (`--adj` for
 * `--adjustment`), as GNU getopt reads it; undefined when it names none or several.
 */
export function longOptionNamed(written: string, options: Iterable<string>): string | undefined {
  if (!written.startsWith('--') || written.length < 3) return undefined;
  const starts = [...options].filter((option) => option.startsWith('--') && option.startsWith(written));
  return starts.includes(written) ? written : starts.length === 1 ? starts[0] : undefined;
}

/** How many words a group of short options takes (`-nu root`, `-n5`, `-S'rm -rf /'`): the first letter with a value ends it. */
function shortOptions(word: string, next: string | undefined, spec: Options, options: Set<string>, found: InnerCommands, given: GivenOption[]): number {
  for (let at = 1; at < word.length; at += 1) {
    const name = `-${word[at] ?? ''}`;
    const attached = word.slice(at + 1);
    options.add(name);
    if (spec.commandLineOptions?.includes(name) === true) {
      const line = attached === '' ? next : attached;
      if (line !== undefined) found.commandLines.push(line);
      return attached === '' ? 2 : 1;
    }
    if (spec.valueOptions?.includes(name) === true) {
      given.push({ written: name, value: attached === '' ? next : attached });
      return attached === '' ? 2 : 1;
    }
    if (spec.attachedValueOptions?.includes(name) === true) {
      given.push({ written: name, value: attached === '' ? undefined : attached });
      return 1;
    }
    given.push({ written: name, value: undefined });
  }
  return 1;
}

/** The shell `name` is, also under a versioned name (`bash-5.2`, `ksh93`, `pwsh-7.4`), or undefined. */
function shellName(name: string): string | undefined {
  if (SHELLS.has(name)) return name;
  const bare = name.replace(/-?[0-9][0-9.]*$/, '');
  return SHELLS.has(bare) ? bare : undefined;
}

/** PowerShell's parameters that take the next word as their value (pwsh takes any start of a name, in any case). */
const POWERSHELL_VALUE_PARAMETERS = [
  'configurationname', 'configurationfile', 'custompipename', 'executionpolicy', 'ep', 'inputformat', 'if', 'outputformat',
  'of', 'o', 'settingsfile', 'windowstyle', 'w', 'workingdirectory', 'wd',
];

/**
 * `pwsh [parameters] -Command words…`: the words after `-Command` (any start of it down to `-c`, in any case) are the
 * line; `-CommandWithArgs` (`-cwa`) takes the next word as the line, `-EncodedCommand` (`-e`, `-ec`) the next word as
 * the line in UTF-16 and base64. After `-File`, the words are the script's. A word not known is read past, so a line
 * is found after a parameter this table does not know too.
 */
function powerShellCommandLine(args: ReachableWords, found: InnerCommands): void {
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index];
    if (word === undefined || !/^(?:--?|\/)[a-z]/i.test(word)) continue;
    const key = word.replace(/^(?:--?|\/)/, '').toLowerCase();
    const next = args[index + 1];
    if (key === 'cwa' || (key.length > 'command'.length && 'commandwithargs'.startsWith(key))) {
      if (next !== undefined) found.commandLines.push(next);
      return;
    }
    if ('command'.startsWith(key)) {
      if (next !== '-') pushKnownWords(args.slice(index + 1), found);
      return;
    }
    if (key === 'ec' || 'encodedcommand'.startsWith(key)) {
      if (next !== undefined) found.commandLines.push(Buffer.from(next, 'base64').toString('utf16le'));
      return;
    }
    if ('file'.startsWith(key)) return;
    if (POWERSHELL_VALUE_PARAMETERS.some((parameter) => parameter.startsWith(key) && (key.length > 1 || parameter.length <= 2))) index += 1;
  }
}

/** `bash [options] -c 'line' [name [args]]`: the line is the first word that is not an option or an option's value. */
function shellCommandLine(args: ReachableWords, found: InnerCommands): void {
  let takesCommand = false;
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index];
    if (word === undefined) return;
    if (word === '--' || word === '-') {
      const line = args[index + 1];
      if (takesCommand && line !== undefined) found.commandLines.push(line);
      return;
    }
    if (word.startsWith('--')) {
      const equals = word.indexOf('=');
      const name = equals === -1 ? word : word.slice(0, equals);
      if (name === '--command') {
        // fish
        const line = equals === -1 ? args[index + 1] : word.slice(equals + 1);
        if (line !== undefined) found.commandLines.push(line);
        return;
      }
      if (equals === -1 && SHELL_LONG_VALUE_OPTIONS.has(name)) index += 1;
      continue;
    }
    if ((word.startsWith('-') || word.startsWith('+')) && word.length > 1) {
      for (const letter of word.slice(1)) {
        if (letter === 'c' && word.startsWith('-')) takesCommand = true;
        if (SHELL_VALUE_LETTERS.has(letter)) index += 1;
      }
      continue;
    }
    if (takesCommand) found.commandLines.push(word);
    return;
  }
}

/** Each `-exec … ;` (or `… {} +`) of a `find`, in one pass over its words. */
function findExec(args: ReachableWords, found: InnerCommands): void {
  let index = 0;
  while (index < args.length) {
    const word = args[index];
    index += 1;
    if (word === undefined || !FIND_EXEC.has(word)) continue;
    const start = index;
    while (index < args.length && !endsExec(args, index)) index += 1;
    if (index > start) found.words.push(args.slice(start, index));
    index += 1;
  }
}

function endsExec(args: ReachableWords, at: number): boolean {
  const word = args[at];
  if (word === ';') return true;
  if (word !== '+') return false;
  const before = args[at - 1];
  return before === '{}' || before === undefined;
}
