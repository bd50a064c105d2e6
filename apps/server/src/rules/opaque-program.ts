import { codeWord, reason, type Reason } from '@airlock/core';
import { commandBaseName, PREFIX_PROPOSED_COMMANDS } from '@airlock/api';
import { patternNaming } from './hidden-program-name';
import type { SimpleCommand } from './parse-command-line';

/**
 * Programs that take what a pipe feeds them as data and never run it, each read for this: no command, expression or
 * script of theirs runs a program (their options that run one, `sort --compress-program` and `rg --pre`, are judged as
 * for any call). Some write files they are named (`tee`, `uniq in out`, `xxd -r - out`), as `cp` does. Not `awk` or
 * `sed` (`system()`, `e`: exact-only), not `git` (`git push --stdin` reads refspecs), not `less` (its `!`), not
 * `openssl` (`-engine` loads a library).
 */
const DATA_FILTERS: ReadonlySet<string> = new Set([
  'cat', 'head', 'tail', 'grep', 'egrep', 'fgrep', 'rg', 'wc', 'sort', 'uniq', 'cut', 'tr', 'tee', 'base64', 'base32',
  'basenc', 'xxd', 'jq',
  'nl', 'tac', 'rev', 'fold', 'fmt', 'paste', 'column', 'comm', 'join', 'od', 'hexdump', 'strings', 'diff', 'cmp',
  'md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum', 'cksum',
]);

/**
 * Shells, interpreters, debuggers and editors: each runs the code or the command line it is given. Matched with a
 * version after the name too (`python3.12`, `bash-5.2`, `lua5.4`).
 */
const CODE_RUNNERS: ReadonlySet<string> = new Set([
  'sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'fish', 'csh', 'tcsh', 'ash', 'rbash', 'rzsh', 'rksh', 'pwsh',
  'powershell', 'busybox', 'toybox', 'python', 'python2', 'python3', 'pypy', 'pypy3', 'ipython', 'bpython', 'node', 'nodejs', 'deno', 'bun', 'perl',
  'ruby', 'irb', 'php', 'lua', 'luajit', 'tclsh', 'wish', 'Rscript', 'julia', 'java', 'jshell', 'osascript', 'awk',
  'gawk', 'mawk', 'nawk', 'sed', 'gsed', 'expect', 'erl', 'escript', 'guile', 'tsx', 'ts-node', 'gdb', 'lldb',
  'sqlite3', 'duckdb', 'vi', 'vim', 'nvim', 'emacs', 'ed', 'ex',
]);

/**
 * Programs that run a command their words name, or one a file they read names (which a call may have written): a
 * wrapper (`pee`, `mispipe`, `lckdo`, `daemonize`, `fakechroot`, `fakeroot` and its variants, `watchexec`, `entr`),
 * a launcher of desktop files, applications and default handlers (`xdg-open`, `gtk-launch`, `gapplication`, `dex`), a build tool that runs what its
 * build file says (`make` and its kin, `ninja`, `just`, `rake`), TeX drivers that run an rc file or `$TEX`
 * (`latexmk`, `texi2dvi`), and `aria2c`, whose config file's `on-download-*` hooks run a program. Then the programs
 * that run their remaining words as a command by conventions of their own, which the wrapper tables do not strip
 * (`systemd-cat ./evil.sh`, `dtach -n sock …`, `abduco -n name …`, `reflex -- …`): session and terminal keepers,
 * lock, retry, limit and user-switching wrappers, job queues and cluster launchers, tracers, file watchers, and
 * terminal emulators.
 */
const RUNS_NAMED_COMMANDS: ReadonlySet<string> = new Set([
  'pee', 'mispipe', 'lckdo', 'daemonize', 'fakechroot', 'fakeroot', 'fakeroot-ng', 'fakeroot-sysv', 'fakeroot-tcp',
  'watchexec', 'entr', 'xdg-open', 'gvfs-open', 'kde-open', 'kde-open5', 'exo-open', 'gtk-launch', 'gio-launch-desktop',
  'gapplication', 'kioclient', 'kioclient5', 'dex', 'make',
  'gmake', 'bmake', 'pmake', 'remake', 'colormake', 'mk', 'ninja', 'samu', 'just', 'rake', 'scons', 'latexmk',
  'texi2dvi', 'texi2pdf', 'pdftexi2dvi', 'aria2c',
  'systemd-cat', 'systemd-nspawn', 'dtach', 'abduco', 'byobu', 'zellij', 'dvtm', 'reflex', 'watchman-make',
  'when-changed', 'onchange', 'cargo-watch', 'concurrently', 'trickle', 'nocache', 'caffeinate', 'scl', 'with-lock-ex',
  'lockrun', 'gosu', 'su-exec', 'cset', 'retry', 'timelimit', 'run-one', 'run-this-one', 'keep-one-running',
  'start-stop-daemon', 'daemon', 'schroot', 'rootlesskit', 'flatpak-spawn', 'toolbox', 'distrobox-enter', 'xinit',
  'startx', 'sshpass', 'empty', 'faketty', 'mpirun', 'mpiexec', 'orterun', 'srun', 'salloc', 'sbatch', 'distcc',
  'nq', 'tsp', 'pueue', 'bear', 'intercept-build', 'scan-build', 'rr', 'uftrace', 'multitime', 'gnome-terminal',
  'konsole', 'kitty', 'tilix', 'alacritty', 'wezterm', 'urxvt', 'terminator', 'foot', 'footclient', 'kitten',
  'mate-terminal', 'xfce4-terminal', 'x-terminal-emulator', 'lxterminal', 'qterminal', 'kgx', 'ptyxis', 's6-setuidgid',
  'vglrun', 'prime-run', 'gamemoderun', 'mangohud', 'qsub', 'bsub', 'mpiexec.hydra',
  // sudoedit runs the editor $SUDO_EDITOR, $VISUAL or $EDITOR names; compose tools run what their compose file says;
  // `distrobox-host-exec` runs its words on the host; texlua, mtxrun and ConTeXt's `context` run Lua; arara and pythontex run what the
  // directives and code of a .tex file say
  'sudoedit', 'docker-compose', 'podman-compose', 'distrobox-host-exec', 'distrobox-ephemeral', 'distrobox-assemble',
  'texlua', 'mtxrun', 'context', 'arara', 'pythontex',
  // and more found in a sweep: remote shells, container and chroot entries, debug servers, s6 and runit chain-loaders
  'mosh', 'autossh', 'lxc-attach', 'lxc-execute', 'arch-chroot', 'gdbserver', 'with-contenv', 's6-envdir',
  's6-envuidgid', 's6-applyuidgid', 's6-softlimit', 's6-setsid', 'execlineb', 'runsv', 'runsvdir',
  // and shells and interpreters the tables above do not know, which run the script their words name (as `python
  // x.py`): lilypond runs the Scheme of a score
  'yash', 'oksh', 'loksh', 'posh', 'rc', 'es', 'nu', 'elvish', 'xonsh', 'octave', 'octave-cli', 'maxima', 'asy',
  'sage', 'gp', 'scilab', 'scilab-cli', 'clisp', 'sbcl', 'ecl', 'racket', 'ocaml', 'ghci', 'runghc', 'runhaskell',
  'swipl', 'gprolog', 'scala', 'scala-cli', 'kotlin', 'groovy', 'elixir', 'iex', 'raku', 'rakudo', 'perl6', 'tcc',
  'cling', 'clojure', 'clj', 'bb', 'hy', 'janet', 'fennel', 'moon', 'wren', 'rhino', 'jjs', 'qjs', 'gjs', 'lilypond',
]);

/**
 * Programs that run a command by some of their subcommands (or options), each with the words by which they do,
 * looked for in any word after the name (`docker --context x run …`, `podman container run …`; a word the shell
 * computes may be one): containers and their user namespaces, which run the command with the call's files (`-v
 * /:/host`, the same home), image builds and compose files (which a call may have written), cluster pods, desktop
 * application sandboxes, language and package environments, and secret stores.
 */
const RUNS_BY_SUBCOMMAND: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries({
    docker: ['run', 'exec', 'create', 'start', 'restart', 'compose', 'build', 'buildx', 'builder', 'stack', 'plugin'],
    podman: ['run', 'exec', 'create', 'start', 'restart', 'unshare', 'ssh', 'compose', 'build', 'play', 'kube', 'healthcheck', 'farm', 'runlabel'],
    nerdctl: ['run', 'exec', 'create', 'start', 'restart', 'compose', 'build', 'builder'],
    buildah: ['run', 'unshare', 'build', 'bud'],
    lxc: ['exec', 'shell'],
    incus: ['exec', 'shell'],
    kubectl: ['exec', 'run', 'debug', 'attach'],
    oc: ['exec', 'run', 'debug', 'attach', 'rsh'],
    flatpak: ['run', 'enter'],
    snap: ['run'],
    distrobox: ['enter', 'ephemeral', 'create', 'assemble'],
    machinectl: ['shell'],
    runc: ['run', 'exec', 'create', 'start'],
    crun: ['run', 'exec', 'create', 'start'],
    crictl: ['run', 'exec', 'start'],
    ctr: ['run', 'exec', 'start'],
    singularity: ['run', 'exec', 'shell', 'build', 'instance'],
    apptainer: ['run', 'exec', 'shell', 'build', 'instance'],
    udocker: ['run'],
    multipass: ['exec', 'shell'],
    minikube: ['ssh'],
    // Environments that run a command in them: `nix-shell --run`, `nix develop`, `guix shell -- …`, `stack exec`.
    'nix-shell': ['--run'],
    nix: ['run', 'shell', 'develop'],
    guix: ['shell', 'environment'],
    nvm: ['exec', 'run'],
    opam: ['exec'],
    stack: ['exec', 'run', 'runghc', 'runhaskell', 'eval', 'ghci', 'repl', 'script'],
    cabal: ['exec', 'run', 'repl'],
    // Secret stores that run a command with the secrets in its environment.
    'aws-vault': ['exec'],
    op: ['run'],
    doppler: ['run'],
    dotenvx: ['run'],
    infisical: ['run'],
    chamber: ['exec'],
    sops: ['exec-env', 'exec-file'],
    xdotool: ['exec'],
  }).map(([program, subcommands]) => [program, new Set(subcommands)]),
);

/**
 * Subcommands of process managers that run nothing: any other starts a script or a command line, or starts again
 * what was started (`pm2 start ./x.sh`, `pm2 restart app`, `pm2 resurrect`, `forever start x.js`), as `gio`'s.
 */
const PLAIN_SUBCOMMANDS: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries({
    gio: ['info', 'list', 'cat', 'tree', 'copy', 'move', 'rename', 'remove', 'trash', 'mkdir', 'save', 'set', 'monitor', 'version', 'help'],
    pm2: ['list', 'ls', 'l', 'ps', 'status', 'jlist', 'prettylist', 'describe', 'desc', 'info', 'show', 'logs', 'log', 'monit', 'flush', 'ping', 'stop', 'delete', 'del', 'kill', 'save', 'dump', 'help', 'version'],
    forever: ['list', 'stop', 'stopall', 'logs', 'cleanlogs', 'columns', 'config', 'set', 'clear', 'help'],
  }).map(([program, subcommands]) => [program, new Set(subcommands)]),
);

/**
 * TeX engines and formats, which run a shell command a document writes (`\write18`, `\ShellEscape`) when the shell
 * escape is on, and run Lua (luatex) given `--lua`: `-dev` builds too (`pdflatex-dev`).
 */
const TEX_ENGINES: ReadonlySet<string> = new Set([
  'tex', 'etex', 'pdftex', 'pdfetex', 'luatex', 'luahbtex', 'luajittex', 'xetex', 'ptex', 'eptex', 'uptex', 'euptex',
  'aleph', 'latex', 'pdflatex', 'xelatex', 'lualatex', 'luajitlatex', 'dvilualatex', 'platex', 'uplatex', 'amstex',
  'mpost', 'optex', 'lamed',
]);

/**
 * TeX's options that turn on its shell escape or run Lua: TeX reads options with getopt_long_only, so any unique
 * start of one, after one dash or two, is the option (`-shell-e`); `--cnf-line=shell_escape=t` sets it as its
 * configuration would.
 */
const TEX_CODE_OPTIONS = ['shell-escape', 'enable-write18', 'cnf-line', 'lua', 'luaonly'];

/**
 * socat address types that open a file, a socket or a terminal and run no program (not `EXEC:`, `SYSTEM:` or
 * `SHELL:`): an address of any other type, in any case, is taken to run one.
 */
const SOCAT_DATA_ADDRESSES: ReadonlySet<string> = new Set([
  '-', 'STDIO', 'STDIN', 'STDOUT', 'STDERR', 'FD', 'OPEN', 'CREATE', 'GOPEN', 'PIPE', 'PTY', 'TCP', 'TCP4', 'TCP6',
  'TCP-LISTEN', 'TCP4-LISTEN', 'TCP6-LISTEN', 'TCP-L', 'TCP4-L', 'TCP6-L', 'UDP', 'UDP4', 'UDP6', 'UDP-LISTEN',
  'UDP4-LISTEN', 'UDP6-LISTEN', 'UDP-L', 'UDP-SENDTO', 'UDP4-SENDTO', 'UDP6-SENDTO', 'UDP-RECVFROM', 'UDP-RECV',
  'UNIX', 'UNIX-CONNECT', 'UNIX-LISTEN', 'UNIX-L', 'UNIX-CLIENT', 'UNIX-SENDTO', 'UNIX-RECVFROM', 'UNIX-RECV',
  'ABSTRACT-CONNECT', 'ABSTRACT-LISTEN', 'ABSTRACT-CLIENT', 'OPENSSL', 'OPENSSL-LISTEN', 'SSL', 'SSL-L', 'PROXY',
  'SOCKS4', 'SOCKS4A', 'SOCKS5', 'SOCKS5-CONNECT',
]);

/** socat's options that take the next word as their value (`-T 5`, `-lf log`), which is no address. */
const SOCAT_VALUED_OPTIONS: ReadonlySet<string> = new Set(['-T', '-b', '-t', '-lf', '-lp', '-L', '-W', '-r', '-R']);

/**
 * pandoc's long options that run a program or Lua code (`--filter`, `--lua-filter`, `--pdf-engine`), or read a file
 * that may name one (`--defaults`); pandoc takes any unique start of a long option (`--filt=…`).
 */
const PANDOC_CODE_OPTIONS = ['filter', 'lua-filter', 'pdf-engine', 'pdf-engine-opt', 'defaults'];
const PANDOC_CODE_SHORT = /^-(?:[FLd]|[^-]*[FLd])/;
/** pandoc's options naming a reader or writer, which may be a Lua script (`-t ./writer.lua`). */
const PANDOC_FORMAT_OPTIONS = ['from', 'to', 'read', 'write'];
const PANDOC_FORMAT_SHORT = /^-([ftrw])(.*)$/;

/** Words through which a program takes code to run by the usual conventions (`-e`, `-c`, `--eval`, `-eval`). */
const CODE_OPTIONS: ReadonlySet<string> = new Set(['-e', '-c', '-eval', '--eval', '-exec', '--exec', '--execute', '-command', '--command', '-cmd', '--cmd']);
const CODE_OPTION_WITH_VALUE = /^--(?:eval|exec|execute|command|cmd)=/;

/** What splits a word into the words of a command line it may hold (`--shell=/bin/bash`, `'sh -c …'`). */
const INNER_WORD_SEPARATORS = /[\s=;&|()<>`{},:]+/;
const INNER_WORD_SEPARATORS_BUT_BRACES = /[\s=;&|()<>`:]+/;

/**
 * Why a deny rule cannot read what the command `program` (its first word, literal) runs, or undefined: no table of
 * the programs that run what they are given is complete, so a program not known to only read and print (or filter
 * data: `DATA_FILTERS`) is not plain when it is fed a pipe (`… | base64 -d | erl` ran the line decoded), or is given
 * a shell or an interpreter as a word or a word of a line inside one (`fakeroot-sysv -- sh -c '…'`, `--shell=bash`,
 * `/bin/s? -c …`), or an option by which programs usually take code (`erl -eval '…'`, `guile -c '…'`).
 */
export function opaqueProgramReason(command: SimpleCommand, program: string): Reason | undefined {
  const name = commandBaseName(program);
  const known = program === name || program === `/bin/${name}` || program === `/usr/bin/${name}`;
  const runs = runsNamedCommand(command, name);
  if (runs !== undefined) return runs;
  if (command.inputPiped === true && !(known && DATA_FILTERS.has(name))) {
    return reason(codeWord(name), ' reads what the line pipes into it, and is not known to take it as data only');
  }
  if (known && (DATA_FILTERS.has(name) || PREFIX_PROPOSED_COMMANDS.has(name))) return undefined;
  for (const word of command.words.slice(1)) {
    const text = (word.kind === 'literal' ? word.value : word.text).replace(/["'\\]/g, '');
    if (CODE_OPTIONS.has(text) || CODE_OPTION_WITH_VALUE.test(text)) return reason(codeWord(name), ' is given ', codeWord(text.split('=')[0]!), ', by which programs take code to run');
    const runner =
      text.split(INNER_WORD_SEPARATORS).find((token) => isCodeRunner(commandBaseName(token))) ?? patternNaming(text, CODE_RUNNERS, INNER_WORD_SEPARATORS_BUT_BRACES);
    if (runner !== undefined) return reason(codeWord(commandBaseName(runner)), ', which runs what it is given, stands in a word given to ', codeWord(name));
  }
  return undefined;
}

/** Why `name`, given the words of `command`, runs a command its words or a file it reads name, or undefined. */
function runsNamedCommand(command: SimpleCommand, name: string): Reason | undefined {
  if (RUNS_NAMED_COMMANDS.has(name)) return reason(codeWord(name), ' runs a command its words or a file it reads name');
  const words = command.words.slice(1).map((word) => (word.kind === 'literal' ? word.value : undefined));
  // `gio launch` runs a desktop file's `Exec=`, `gio open` a default handler.
  const plain = PLAIN_SUBCOMMANDS.get(name);
  if (plain !== undefined) {
    const subcommand = words.find((word) => word === undefined || !word.startsWith('-'));
    if (subcommand === undefined || !plain.has(subcommand)) return reason(codeWord(name), ' may launch a program');
  }
  const running = RUNS_BY_SUBCOMMAND.get(name);
  if (running !== undefined && words.some((word) => word === undefined || running.has(word))) return reason(codeWord(name), ' may run a command in a container, a namespace or a sandbox');
  if (name === 'ip' && ipRunsCommand(words)) return reason(codeWord('ip'), ' runs a command with `netns exec`, `vrf exec` or the commands of a -batch file');
  // task-spooler (`ts`, `tsp` on Debian, where `ts` is moreutils') queues the command its words name.
  if (name === 'ts' && words.length > 0) return reason(codeWord('ts'), ' may queue the command its words name');
  // groff's unsafe mode runs the shell commands of a document (`.sy`, `.pso`, `.pi`); dvips's -R0 its backquoted specials.
  if (['groff', 'troff', 'gtroff', 'nroff', 'gnroff'].includes(name) && words.some((word) => word === undefined || /^-[^-]*U/.test(word))) {
    return reason(codeWord(name), ' is given -U, by which a document runs shell commands');
  }
  if (name === 'dvips' && words.some((word) => word === undefined || /^-R(?:0|$)/.test(word))) return reason(codeWord('dvips'), ' is given -R0, by which a document runs shell commands');
  if (TEX_ENGINES.has(name.replace(/-dev$/, '')) && words.some((word) => word === undefined || texRunsCode(word))) {
    return reason(codeWord(name), ' is given its shell escape or a Lua script, which run programs');
  }
  // socat 1.8 installs its program as `socat1` too.
  if ((name === 'socat' || name === 'socat1') && words.some((word, index) => word === undefined || (!SOCAT_VALUED_OPTIONS.has(words[index - 1] ?? '') && socatRunsProgram(word)))) {
    return reason(codeWord('socat'), ' may run the command of an address');
  }
  if (name === 'pandoc' && pandocRunsCode(words)) return reason(codeWord('pandoc'), ' is given a filter, an engine or a file that may run a program');
  return undefined;
}

/**
 * Whether ip, given `words`, may run a command: ip takes any start of an object and of a command (`ip net e NAME …` is
 * `ip netns exec`), so any word that starts `exec` may be `netns exec` or `vrf exec`; and `-batch` (any start of it
 * down to `-b`, one dash or two) runs the ip commands of a file, which may be those.
 */
function ipRunsCommand(words: readonly (string | undefined)[]): boolean {
  return words.some((word) => {
    if (word === undefined) return true;
    if (word !== '' && 'exec'.startsWith(word)) return true;
    const option = /^--?(b[a-z]*)$/.exec(word)?.[1];
    return option !== undefined && 'batch'.startsWith(option);
  });
}

/** Whether a word given to a TeX engine is an option (any unique start of one, `-` or `--`) that runs code. */
function texRunsCode(word: string): boolean {
  const option = /^--?([a-z0-9-]+)(?:=|$)/.exec(word)?.[1];
  return option !== undefined && TEX_CODE_OPTIONS.some((known) => known.startsWith(option));
}

/** Whether a word given to socat may be an address that runs a program: `EXEC:…`, `SYSTEM:…`, one of any type not known. */
function socatRunsProgram(word: string): boolean {
  if (word.startsWith('-') && word !== '-') return false;
  // A dual address (`STDIN!!EXEC:…`) is two.
  return word.split('!!').some((address) => {
    if (address.startsWith('/') || address.startsWith('.')) return false;
    const type = /^[^:,]*/.exec(address)![0].toUpperCase();
    return !SOCAT_DATA_ADDRESSES.has(type);
  });
}

function pandocRunsCode(words: readonly (string | undefined)[]): boolean {
  for (const [index, word] of words.entries()) {
    if (word === undefined) return true;
    if (word === '--') return false;
    const long = /^--([^=]+)(?:=(.*))?$/.exec(word);
    if (long !== null) {
      const [, option, attached] = long;
      if (PANDOC_CODE_OPTIONS.some((known) => known.startsWith(option!))) return true;
      if (PANDOC_FORMAT_OPTIONS.some((known) => known.startsWith(option!)) && mayBeScript(attached ?? words[index + 1])) return true;
      continue;
    }
    if (!word.startsWith('-') || word === '-') continue;
    if (PANDOC_CODE_SHORT.test(word)) return true;
    const format = PANDOC_FORMAT_SHORT.exec(word);
    if (format !== null && mayBeScript(format[2] === '' ? words[index + 1] : format[2])) return true;
  }
  return false;
}

/** Whether a pandoc format names a script rather than a built-in format (`./writer.lua`, `x.lua`), or is unread. */
function mayBeScript(format: string | undefined): boolean {
  return format === undefined || format.includes('/') || format.includes('.');
}

function isCodeRunner(name: string): boolean {
  return CODE_RUNNERS.has(name) || CODE_RUNNERS.has(name.replace(/-?[0-9][0-9.]*$/, ''));
}
