import { codeWord, reason, type Reason } from '@airlock/core';
import { commandBaseName, PREFIX_PROPOSED_COMMANDS } from '@airlock/api';
import { BUILTIN_SUBCOMMANDS, CODE_RUNNERS, DATA_FILTERS, isPrefixedDebugger, PLAIN_SUBCOMMANDS, RUNS_BY_SUBCOMMAND, RUNS_NAMED_COMMANDS, TEX_ENGINES } from '@airlock/api/rules/commands';
import { patternNaming } from './hidden-program-name';
import type { SimpleCommand } from './parse-command-line';

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

/**
 * openssl's options that load a shared object, or a config that may name one to load (`-engine ./x.so`,
 * `-provider-path . -provider x`, `req -config x.cnf`, `-ssl_client_engine`, `-keygen_engine`); OpenSSL reads an
 * option after one dash or two, its value attached with `=` too.
 */
const OPENSSL_CODE_OPTION = /^--?(?:[a-z_]*engine[a-z_]*|provider|provider-path|config)(?:=|$)/;
/** openssl's subcommands that load the engine or provider they are given, which may be a path (`openssl engine ./x.so`). */
const OPENSSL_LOADING_SUBCOMMANDS: ReadonlySet<string> = new Set(['engine', 'provider']);

/**
 * Programs that find their command, a plugin's or an extension's too, after their options (cobra's helm and gh, clap's
 * cargo): an option without `=` takes the next word as its value (an unknown one too for cobra), but for these, which
 * take none (`helm --debug evil` runs the plugin `evil`, `helm -n ns evil` and `cargo --color always evil` too).
 */
const OPTIONS_WITHOUT_VALUE: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['helm', new Set(['--debug', '--kube-insecure-skip-tls-verify', '-h', '--help'])],
  ['gh', new Set(['-h', '--help', '--version'])],
  ['cargo', new Set(['-V', '--version', '--list', '-v', '--verbose', '-q', '--quiet', '--frozen', '--locked', '--offline', '-h', '--help'])],
]);
/** helm's option that runs a program on the manifests it renders, and the plugin subcommands that run a plugin's hooks. */
const HELM_POST_RENDERER = /^--post-renderer(?:-args)?(?:=|$)/;
const HELM_PLUGIN_HOOKS: ReadonlySet<string> = new Set(['install', 'add', 'update', 'up']);
/**
 * nix's settings that run code, given on its command line: any setting by `--option name value` or `--extra-name …`
 * (which may be one of these), and as flags of their own the unsafe evaluation that lets an expression's
 * `builtins.exec` run a command, plugin files, build hooks, remote builders and stores, and a flake's own settings.
 */
const NIX_CODE_OPTION =
  /^--(?:option|extra-[a-z-]+|allow-unsafe-native-code-during-evaluation|plugin-files|(?:pre|post)-build-hook|build-hook|diff-hook|builders|store|accept-flake-config)(?:=|$)/;
const NIX_PROGRAMS: ReadonlySet<string> = new Set(['nix', 'nix-instantiate', 'nix-build', 'nix-shell', 'nix-env', 'nix-store']);
/** Cluster programs that run a tool of their own by its name (`k3s kubectl …`, `minikube kubectl -- …`). */
const EMBEDDED_TOOLS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['minikube', new Set(['kubectl'])],
  ['k3s', new Set(['kubectl', 'crictl', 'ctr'])],
  ['microk8s', new Set(['kubectl', 'ctr', 'helm', 'helm3'])],
]);
/** gh's names of its `extension` command. */
const GH_EXTENSION: ReadonlySet<string> = new Set(['extension', 'extensions', 'ext']);

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
  if (runsBySubcommand(name, words)) return reason(codeWord(name), ' may run a command or code by a subcommand or option it is given');
  const embedded = embeddedTool(name, words);
  if (embedded === null || (embedded !== undefined && (runsBySubcommand(embedded.name, embedded.words) || runsPlugin(embedded.name, embedded.words)))) {
    return reason(codeWord(name), ' runs a tool of its own, such as kubectl, which may run a command by a subcommand it is given');
  }
  if (runsPlugin(name, words)) {
    return reason(codeWord(name), ' runs a plugin, an extension, an alias or a program it is given or sets, which a call may have written');
  }
  // `go env -w` writes the go env file that every later go command reads (`GOFLAGS=-toolexec=./x.sh`, `CC=./x.sh`).
  if (name === 'go' && words.includes('env') && words.some((word) => word !== undefined && /^--?w(?:=|$)/.test(word))) {
    return reason(codeWord('go env -w'), ' sets what later go commands run');
  }
  if (name === 'openssl' && opensslLoadsCode(words)) {
    return reason(codeWord('openssl'), ' is given an engine, a provider or a config, which may load a shared object');
  }
  if (nixSettingsRunCode(name, words)) return reason(codeWord(name), " is given a setting of nix's, by which it may run a program or load a plugin");
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
 * Whether `name`, given `words` (its name left out, a word the shell computes as undefined), runs a command by one of
 * its `RUNS_BY_SUBCOMMAND`, in any word, an option's with its value attached too (`nix-shell --run=…`), or, for kubectl
 * and oc, makes a job, a cron job or a deployment running the command given after `--` (`create job j --image=x -- cmd`),
 * as `run` does. Allow rules read a call past their words so too.
 */
export function runsBySubcommand(name: string, words: readonly (string | undefined)[]): boolean {
  const running = RUNS_BY_SUBCOMMAND.get(name);
  if (running !== undefined && words.some((word) => word === undefined || running.has(word) || (word.startsWith('--') && running.has(word.split('=')[0]!)))) return true;
  return (name === 'kubectl' || name === 'oc') && words.includes('create') && words.includes('--');
}

/**
 * The tool and its words that `name`, given `words`, runs as a subcommand of its own (`k3s kubectl exec …`, `minikube
 * kubectl -- exec …`, `microk8s helm3 …`), judged as that tool; null when a word the shell computes may name one.
 */
export function embeddedTool(name: string, words: readonly (string | undefined)[]): { name: string; words: readonly (string | undefined)[] } | null | undefined {
  const tools = EMBEDDED_TOOLS.get(name);
  if (tools === undefined) return undefined;
  const at = words.findIndex((word) => word === undefined || tools.has(word));
  const tool = words[at];
  if (at === -1) return undefined;
  if (tool === undefined) return null;
  const rest = words.slice(at + 1);
  return { name: tool.replace(/3$/, ''), words: rest[0] === '--' ? rest.slice(1) : rest };
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

/**
 * Whether `name`, given `words` (its name left out, a word the shell computes as undefined), runs a plugin, an
 * extension or an alias, a program found by a word that is none of its commands (`kubectl foo` runs `kubectl-foo` from
 * PATH, `helm foo` a plugin of its folder, `gh foo` an extension or an alias; rustup's `cargo +nightly build` names a
 * toolchain first, and cargo, helm and gh find their command after their options), a plugin's hook (`helm plugin
 * install ./x`), a post-renderer (`helm --post-renderer ./x.sh`) or an extension (`gh extension exec x`), or sets a
 * program later calls run (`gh config set browser ./x.sh`). Allow rules read a call past their words so too.
 */
export function runsPlugin(name: string, words: readonly (string | undefined)[]): boolean {
  const builtin = BUILTIN_SUBCOMMANDS.get(name);
  const flags = OPTIONS_WITHOUT_VALUE.get(name);
  const toolchain = words[0]?.startsWith('+') === true ? 1 : 0;
  const first = flags !== undefined ? commandAfterOptions(words.slice(toolchain), flags) : words[0];
  if (builtin !== undefined && words.length > 0 && first !== null && (first === undefined || (!first.startsWith('-') && !builtin.has(first)))) return true;
  if (name === 'helm') {
    return words.some((word) => word === undefined || HELM_POST_RENDERER.test(word)) || (words.includes('plugin') && words.some((word) => word !== undefined && HELM_PLUGIN_HOOKS.has(word)));
  }
  if (name === 'gh') {
    return (words.includes('exec') && words.some((word) => word !== undefined && GH_EXTENSION.has(word))) || (words.includes('config') && words.some((word) => word === undefined || word === 'set'));
  }
  return false;
}

/**
 * The command found among `words` (the program's name left out) past its options (`flags`: those that take no value):
 * undefined when a word the shell computes comes first (it may be any), null when there is none (or only after `--`).
 */
function commandAfterOptions(words: readonly (string | undefined)[], flags: ReadonlySet<string>): string | undefined | null {
  for (let at = 0; at < words.length; at += 1) {
    const word = words[at];
    if (word === undefined) return undefined;
    if (word === '--') return null;
    if (!word.startsWith('-')) return word;
    if (!word.includes('=') && !flags.has(word) && (word.startsWith('--') || word.length === 2)) at += 1;
  }
  return null;
}

/** Whether a word given to a TeX engine is an option (any unique start of one, `-` or `--`) that runs code. */
export function texRunsCode(word: string): boolean {
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

/**
 * Whether pandoc, given `words` (a word the shell computes as undefined), runs a program or Lua code they name: a filter,
 * an engine, a defaults file, or a reader or writer that is a script. Allow rules read a call past their words so too.
 */
export function pandocRunsCode(words: readonly (string | undefined)[]): boolean {
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

/**
 * Whether openssl, given `words` (a word the shell computes as undefined), may load a shared object they name: an
 * engine, a provider or a config option, or its `engine` or `provider` subcommand. Allow rules read a call past their
 * words so too.
 */
export function opensslLoadsCode(words: readonly (string | undefined)[]): boolean {
  return words.some((word) => word === undefined || OPENSSL_LOADING_SUBCOMMANDS.has(word) || OPENSSL_CODE_OPTION.test(word));
}

/**
 * Whether nix, given `words` (a word the shell computes as undefined), is given a setting that may run code, as git's
 * `-c` may (`--option allow-unsafe-native-code-during-evaluation true`, `--post-build-hook ./x.sh`). Allow rules read a
 * call past their words so too.
 */
export function nixSettingsRunCode(name: string, words: readonly (string | undefined)[]): boolean {
  return NIX_PROGRAMS.has(name) && words.some((word) => word === undefined || NIX_CODE_OPTION.test(word));
}

function isCodeRunner(name: string): boolean {
  return CODE_RUNNERS.has(name) || CODE_RUNNERS.has(name.replace(/-?[0-9][0-9.]*$/, '')) || isPrefixedDebugger(name);
}
