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
]);

/** `gio` subcommands that run no program (`gio launch` runs a desktop file's `Exec=`, `gio open` a default handler). */
const GIO_PLAIN_SUBCOMMANDS: ReadonlySet<string> = new Set([
  'info', 'list', 'cat', 'tree', 'copy', 'move', 'rename', 'remove', 'trash', 'mkdir', 'save', 'set', 'monitor', 'version', 'help',
]);

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
  if (name === 'gio') {
    const subcommand = words.find((word) => word === undefined || !word.startsWith('-'));
    if (subcommand === undefined || !GIO_PLAIN_SUBCOMMANDS.has(subcommand)) return reason(codeWord('gio'), ' may launch a program');
  }
  // socat 1.8 installs its program as `socat1` too.
  if ((name === 'socat' || name === 'socat1') && words.some((word, index) => word === undefined || (!SOCAT_VALUED_OPTIONS.has(words[index - 1] ?? '') && socatRunsProgram(word)))) {
    return reason(codeWord('socat'), ' may run the command of an address');
  }
  if (name === 'pandoc' && pandocRunsCode(words)) return reason(codeWord('pandoc'), ' is given a filter, an engine or a file that may run a program');
  return undefined;
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
