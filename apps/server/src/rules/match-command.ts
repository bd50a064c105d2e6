import { innerCommands, longOptionNamed, wrappedFolder, type ReachableWords, type WrappedFolder } from './command-wrappers';
import { gitArgumentsCovered, gitCommandReadsOnly, gitDenyNames, gitPushImpliedOptions } from './git-arguments';
import { jqArgumentsCovered } from './jq-arguments';
import { linkMayLeadAway } from './link-targets';
import { copySourceMayLeadAway } from './copy-sources';
import { fileReaderMayReadAway } from './file-readers';
import { readsInputOnly } from './input-only-readers';
import { followedTreeMayHoldLinkOut } from './link-following-readers';
import { writesOutputOperand } from './output-operands';
import { shortValueLetters } from './short-option-files';
import { isTestRunner, testRunnerArgumentsCovered, testRunnerPathOperands } from './test-runner-options';
import { denyCallOperands, denyRuleOperands, packageManagerCommand } from './package-manager-commands';
import { mayNameOutside, mayNameOutsideFolder, movedTo, treeMayHoldLinkOut, workingFolderMayLeadAway, type PathFacts } from './outside-workspace';
import { COMPUTED_WORD, NPM_HARMLESS, runnerCall } from './program-runners';
import { projectMayRunInstead } from './project-programs';
import { realProgramName } from './program-real-name';
import { pythonModuleMayBeLocal } from './python-module-folder';
import { isPrefixedMake } from './prefixed-make';
import { readsCommandsFromInput } from './reads-commands-from-input';
import { rustProjectMayNameProgram } from './rust-project-files';
import { configFileMayRun } from './program-config-files';
import { submoduleConfigMayRun } from './submodule-configs';
import { commandBaseName, CROSS_TARGET, isExactOnlyCommand, isExactOnlyProgram, PREFIX_PROPOSED_COMMANDS, PROPOSE_EXACT_COMMANDS, SUBCOMMAND_COMMANDS } from '@airlock/api';
import { PLAIN_SUBCOMMANDS, TEX_ENGINES, WORKING_FOLDER_PROGRAMS } from '@airlock/api/rules/commands';
import { embeddedTool, nixSettingsRunCode, opensslLoadsCode, pandocRunsCode, runsBySubcommand as runsCommandBySubcommand, runsPlugin, texRunsCode } from './opaque-program';
import type { SimpleCommand } from './parse-command-line';
import { plainWord, type ShellWord } from './shell-word';
import type { CommandPrefix } from '@airlock/api';

/** Option spellings deny rules take as one, per command: `rm -R`, `rm --recursive` and `rm -r` are the same. */
const OPTION_ALIASES = new Map<string, ReadonlyMap<string, string>>([
  ['rm', new Map([['-R', '-r'], ['--recursive', '-r'], ['--force', '-f'], ['--dir', '-d']])],
  ['cp', new Map([['-R', '-r'], ['--recursive', '-r'], ['--force', '-f']])],
  ['chmod', new Map([['--recursive', '-R']])],
  ['chown', new Map([['--recursive', '-R']])],
  ['chgrp', new Map([['--recursive', '-R']])],
  ['git', new Map([['--force', '-f'], ['--delete', '-d']])],
]);

/**
 * Shell builtins that take a variable's name and evaluate an array subscript in it as arithmetic, which runs any
 * `$(…)` it holds, also from a variable's value: `printf -v 'a[$(id)]' %s x` runs `id`, quoted or not. `printf -v`
 * and `wait -p` also set a variable, whose value later words of the line would take on.
 */
const SUBSCRIPT_EVALUATING = new Map<string, string | undefined>([
  ['printf', '-v'],
  ['wait', '-p'],
  ['test', undefined],
  ['[', undefined],
]);

/** npm's and pnpm's option parser (nopt) never takes a `--` for an option's value. */
const NOPT_DASHES = 'always';

/**
 * A compiler driver hands these to other programs or loads code through them: `-Wl,-plugin=x.so`, `-Wp,-fplugin=…`,
 * any `-X…` (`-Xlinker`, `-Xclang -load`, `-Xpreprocessor` …), `-B`/`--prefix` (where it finds `as`, `ld`, `cc1`),
 * `-specs` and clang's `--config` (files of more options), `-fcompare-debug=` (options for a second compilation),
 * `-cc1 -load x.so`, `-ccc-install-dir`, `--gcc-toolchain` (where it finds the tools), `@file` of options.
 * `--sysroot` only moves headers and libraries, which end up in the output, not run.
 */
const COMPILER_PREFIXES = [
  '-wrapper', '-fplugin', '-fpass-plugin', '-fuse-ld', '-fcompare-debug', '-specs', '--specs', '-Wl,', '-Wa,', '-Wp,', '-X',
  '-iplugindir', '-B', '-cc1', '-ccc-', '-mllvm', '-load', '@',
];

/** The compilers' long options of that kind: GCC takes any unambiguous start of one (`--pre=…`, `--for-l x`). */
const COMPILER_LONG_OPTIONS = [
  '--prefix', '--for-linker', '--for-assembler', '--config', '--config-system-dir', '--config-user-dir', '--specs',
  '--ld-path', '--gcc-toolchain', '--gcc-install-dir', '--wrapper',
];

/** pip's options of that kind, of every subcommand (`-f` is also `pip show --files`, asked about too). */
const PIP_OPTIONS = [
  '--log', '--log-file', '--local-log', '--python', '-r', '--requirement', '-c', '--constraint', '--cache-dir', '--src',
  '-t', '--target', '--root', '--prefix', '--path', '-i', '--index-url', '--extra-index-url', '-f', '--find-links',
  '--cert', '--client-cert', '--trusted-host', '--proxy', '--exists-action', '-C', '--config-settings',
  '--keyring-provider', '--report', '-d', '--dest', '--build-option', '--global-option',
];

/**
 * ssh_config keywords that run a command line or load code on this machine, as a `-o` option's value, attached or
 * the next word (`-o ProxyCommand=…`, `-oLocalCommand …`, `-4o 'KnownHostsCommand x'`), in any case.
 */
const SSH_CODE_KEYWORDS =
  /^(?:-[A-Za-z0-9]*o)?\s*(?:proxycommand|localcommand|permitlocalcommand|knownhostscommand|proxyjump|include|match|pkcs11provider|securitykeyprovider|identityagent|controlpath|controlmaster|remotecommand|proxyusefdpass)\s*(?:=|\s|$)/i;

/**
 * The options by which kubectl, oc, helm and kustomize (cobra's, read by pflag: `--x v`, `--x=v`, no start of a name)
 * run a program the call chose, or a file naming one: a kubeconfig's credential plugin (`--kubeconfig ./kc`), helm's
 * post-renderer, kustomize's exec and container plugins of a kustomization a call wrote (`--enable-exec`,
 * `--enable-alpha-plugins`, also `kubectl kustomize`'s), its `--helm-command` and `fn run --exec-path`. kubectl takes
 * `_` for `-` in a name (`--enable_exec`).
 */
const KUBE_CODE_OPTIONS = /^--(?:kubeconfig|kuberc|post[-_]renderer(?:[-_]args)?|enable[-_]exec|enable[-_]alpha[-_]plugins|helm[-_]command|exec[-_]path)(?:=|$)/;
/**
 * oc's own, besides kubectl's: it takes `--config` for a kubeconfig as kubectl takes `--kubeconfig`. A kuberc
 * (`--kuberc`, kubectl's and oc's) defines aliases and default flags, which may be any of these.
 */
const OC_CODE_OPTIONS = new RegExp(`${KUBE_CODE_OPTIONS.source}|^--config(?:=|$)`);

/**
 * nmap's output options that write a file where they are told, also over one of the person's (`-oN ~/.bashrc`,
 * `-oA base` writes three): long options of two letters, which nmap reads after one dash or two, their file in the
 * next word or attached.
 */
const NMAP_OUTPUT_OPTIONS = /^--?o[NXGASMH]/;

/**
 * Gradle's options that run build logic other than the project's own: an init script (`-I`), another project, settings
 * or build script (`-p`, `-c`, `-b`), an included build's scripts, a user home whose `init.d` scripts run and whose
 * gradle.properties set the daemon's JVM and its arguments (`-g`; gradlew also runs the distribution unpacked there),
 * and the project cache, whose configuration cache holds a stored task graph it runs and which it writes where told.
 */
const GRADLE_OPTIONS = [
  '-I', '--init-script', '-p', '--project-dir', '-c', '--settings-file', '-b', '--build-file', '-g', '--gradle-user-home',
  '--include-build', '--project-cache-dir',
];
/**
 * Long options of Gradle's that start with the letter of one of `GRADLE_OPTIONS` and run nothing else, each Gradle's
 * since its 1.x or 2.x releases: after one dash Gradle's parser takes a whole long name before a first letter, so
 * `-parallel` is `--parallel`, not `-p arallel`. Any other such word is read as the letter (`-parallel=true`,
 * `-build-cache`, which a Gradle older than 3.5 reads as the build file `uild-cache`). None starts with `g`, which
 * gradlew's own parser, knowing only `-g`, `-q` and `-D`, would read as `-g`.
 */
const GRADLE_LONG_OPTIONS: ReadonlySet<string> = new Set(['parallel', 'continue', 'continuous', 'configure-on-demand', 'profile']);
/**
 * Properties that choose the JVM Gradle runs or the JDKs it runs for a build's toolchain, given as system properties
 * (`-D`, `--system-prop`) or project properties (`-P`, `--project-prop`), which Gradle also reads for these: the user
 * home, the JVM the daemon runs (`org.gradle.java.home`) and its arguments (`-javaagent:…`), the JDKs toolchains run
 * from (`org.gradle.java.installations.paths`, whose `bin/java` Gradle runs to probe it) and the environment variables
 * naming more (`…fromEnv=PWD`).
 */
const GRADLE_CODE_PROPERTIES =
  /^(?:--?(?:[DP]=?|system-prop=|project-prop=))?(?:gradle\.user\.home|org\.gradle\.java\.home|org\.gradle\.jvmargs|org\.gradle\.java\.installations\.(?:paths|fromEnv))(?:=|$)/;
/** gpg's options that run a program or load code, or read a config or a home whose gpg.conf may set one (`photo-viewer`). */
const GPG_OPTIONS = ['--photo-viewer', '--exec-path', '--options', '--homedir', '--agent-program', '--dirmngr-program', '--load-extension'];

/** mypy's options that run code (`--config-file`'s plugins, `--python-executable`) or write where they say. */
const MYPY_OPTIONS = [
  '--config-file', '--python-executable', '--install-types', '--junit-xml', '--cache-dir', '--any-exprs-report',
  '--cobertura-xml-report', '--html-report', '--linecount-report', '--linecoverage-report', '--lineprecision-report',
  '--txt-report', '--xml-report', '--xslt-html-report', '--xslt-txt-report', '--status-file', '--log-file',
];

/** rake's options that run no code of their own and take no value from the next word. */
const RAKE_HARMLESS: ReadonlySet<string> = new Set([
  '-q', '--quiet', '-s', '--silent', '-v', '--verbose', '-t', '--trace', '-n', '--dry-run', '-P', '--prereqs', '-A',
  '--all', '-m', '--multitask', '-X', '--no-deprecation-warnings', '-N', '--no-search', '--nosearch', '-G',
  '--no-system', '--nosystem', '-V', '--version', '-h', '--help',
]);
/** just's options of that kind. */
const JUST_HARMLESS: ReadonlySet<string> = new Set([
  '-q', '--quiet', '-v', '--verbose', '-n', '--dry-run', '--highlight', '--no-highlight', '--yes', '--no-deps',
  '--timestamp', '--explain', '-l', '--list', '--summary', '-u', '--unsorted', '--dump', '--variables', '--groups',
]);
/** latexmk's options of that kind (no viewer, no command, no rc file, no Perl). */
const LATEXMK_HARMLESS: ReadonlySet<string> = new Set([
  '-pdf', '-pdfdvi', '-pdfps', '-pdflua', '-pdfxe', '-lualatex', '-xelatex', '-dvi', '-ps', '-c', '-C', '-CA', '-f',
  '-g', '-gg', '-quiet', '-silent', '-verbose', '-interaction=nonstopmode', '-interaction=batchmode', '-halt-on-error',
  '-file-line-error', '-synctex=1', '-bibtex', '-nobibtex', '-bibtex-cond', '-cd', '-norc', '-recorder', '-time',
]);

/**
 * Options through which a command runs code other than what a rule for it names (`npm test --node-options=…`,
 * `git log --output=…`, `make test SHELL=…`). A prefix rule never covers a call that carries one before a `--`.
 * Not a complete list of what a program can be made to do: a prefix rule still allows every other argument.
 */
const CODE_RUNNING_OPTIONS = new Map<string, CodeOptions>([
  ['npm', { options: [], harmless: NPM_HARMLESS, endOfOptions: NOPT_DASHES, noOptionsAfterEnd: true }],
  ['pnpm', { options: [], harmless: NPM_HARMLESS, endOfOptions: NOPT_DASHES, noOptionsAfterEnd: true }],
  // Yarn 1 and Yarn 2+ parse options each their own way: the same few harmless words, and nothing else.
  ['yarn', { options: [], harmless: NPM_HARMLESS, noOptionsAfterEnd: true }],
  // `git grep -O…` opens the files in a program it names, `git difftool -x`/`--extcmd` and `git rebase -x` run one.
  ['git', {
    options: ['-c', '--config-env', '--upload-pack', '--receive-pack', '--exec', '--exec-path', '--git-dir', '--work-tree', '--output', '--ext-diff', '--template', '--namespace', '-O', '--open-files-in-pager', '--extcmd', '-x'],
    flags: ['--exec-path', '--ext-diff', '-O', '--open-files-in-pager'],
  }],
  // GNU make 4.4 reads `--temp-stdin=FILE` as a makefile, as `-f FILE`, and deletes FILE when it exits. `-t` writes
  // the targets' files instead of running their recipes (also a prerequisite's, a source), `-W FILE` rebuilds what
  // depends on a file it names, and `--jobserver-auth=fifo:FILE` has make open a file it names (or descriptors it was
  // not given) to read and write its job tokens: any start of `--jobserver-…` past `--jobs`, which is its own option.
  ['make', {
    options: [
      '-f', '--file', '--makefile', '-C', '--directory', '--eval', '-E', '-I', '--include-dir', '--temp-stdin', '-t',
      '--touch', '-W', '--what-if', '--new-file', '--assume-new',
    ],
    prefixes: ['--jobse'],
    flags: ['-t', '--touch'],
    assignments: true,
  }],
  // ninja runs what the build file it is given says (`ninja -f /dev/stdin`, `-C dir`); `-t` runs a tool (`-t clean`).
  ...['ninja', 'samu'].map((ninja): [string, CodeOptions] => [ninja, { options: ['-f', '-C', '-t'] }]),
  // `clippy --fix` rewrites the sources, also those with changes not yet committed (`--allow-dirty`).
  ['cargo', { options: ['--config', '-Z', '--manifest-path', '--target-dir', '--fix'], flags: ['--fix'] }],
  // Whether `go` ends its options at a `--` depends on the subcommand. Besides those that run a program: those that
  // write a file where they are told (`-o /usr/local/bin/git`, `-coverprofile=~/.bashrc`, the profiles, `-trace`,
  // `-outputdir`, `-pkgdir`, the build's debug logs), hand the assembler options (`-asmflags=-o=…`), read a profile
  // (`-pgo`), or change go.mod and download modules (`-mod=mod`).
  ['go', {
    options: [
      '-toolexec', '-exec', '-overlay', '-modfile', '-ldflags', '-gcflags', '-asmflags', '-C', '-vettool', '-compiler',
      '-gccgoflags', '-o', '-coverprofile', '-cpuprofile', '-memprofile', '-blockprofile', '-mutexprofile', '-trace',
      '-outputdir', '-pkgdir', '-pgo', '-mod', '-debug-actiongraph', '-debug-trace', '-debug-runtime-trace',
    ],
    harmlessForms: new Set(['-mod=readonly', '-mod=vendor']),
    flagPackage: true,
    endOfOptions: 'never',
  }],
  // GNU tar also writes the file `--index-file` names (its listing, over README.md under a rule for `tar -tf`) and
  // `--volno-file` (the volume's number), any start of either (found in review).
  ...['tar', 'bsdtar'].map((tar): [string, CodeOptions] => [tar, { options: ['--to-command', '-I', '--use-compress-program', '--checkpoint-action', '--info-script', '--new-volume-script', '-F', '--rmt-command', '--rsh-command', '--index-file', '--volno-file'], clustered: true }]),
  // zip takes options of two letters (`-TT`), their values attached (`-TTsh`), and any start of a long option.
  // `--symlinks` by any start of it zip takes (`--sy`; `--s` it refuses as ambiguous).
  ['zip', { options: [], harmless: new Set(['-r', '-q', '-j', '-v', '-u', '-X', '-y', '-D', '-T', '-rq', '-qr', '-ry', '-yr', '--recurse-paths', '--quiet', '--junk-paths', '--sy', '--sym', '--syml', '--symli', '--symlin', '--symlink', '--symlinks', ...'0123456789'.split('').flatMap((level) => [`-${level}`, `-r${level}`])]), endOfOptions: 'never' }],
  // `-o` writes the file it names, also over one of the person's.
  ['sort', { options: ['--compress-program', '-o', '--output'] }],
  // ripgrep 14 runs the program `--hostname-bin` names to fill in hyperlinks, whether or not it writes any (found in
  // review). Its other options run nothing: `-z` runs the decompressors found on PATH, which a call cannot change under
  // a prefix rule (`PATH=. rg -z …` is asked about), and `--pre-glob` only narrows what `--pre` runs on.
  ['rg', { options: ['--pre', '--hostname-bin'] }],
  // ssh-keygen loads the PKCS#11 library `-D` names and the security key provider `-w` names into itself, and ssh-add
  // has the agent load the library `-s` or `-S` names (the agent runs it as the person, outside any sandbox).
  ['ssh-keygen', { options: ['-D', '-w'] }],
  ['ssh-add', { options: ['-s', '-S'] }],
  // tcpdump runs `-z` program on each file it has written, and `-w` writes the file it names, also over one of the
  // person's, as `sort -o` does.
  ['tcpdump', { options: ['-z', '-w'] }],
  // nmap runs the Lua scripts `--script` names, and those of the folder `--datadir` names in place of its own (the
  // default ones of `-sC` too); `--script-help` loads the scripts it names, `--script-args-file` reads arguments for
  // them, `--resume` the options of an earlier scan from its log, `--script` among them.
  ['nmap', { options: ['--script', '--script-help', '--script-args-file', '--datadir', '--resume'], words: NMAP_OUTPUT_OPTIONS, longWithOneDash: true }],
  ...['gpg', 'gpg2'].map((gpg): [string, CodeOptions] => [gpg, { options: GPG_OPTIONS }]),
  // Gradle runs the Groovy or Kotlin scripts `GRADLE_OPTIONS` lead to, and nox the noxfile `-f` names (Python).
  ...['gradle', 'gradlew'].map((gradle): [string, CodeOptions] => [gradle, { options: GRADLE_OPTIONS, words: GRADLE_CODE_PROPERTIES, gradleParser: true }]),
  ['nox', { options: ['-f', '--noxfile'] }],
  // `install -s` runs the program `--strip-program` names on each file it installs (`--strip-program=/bin/sh x.sh y`
  // runs x.sh); any start of it counts, `--strip` too, which GNU getopt would take for `-s`.
  ['install', { options: ['--strip-program'] }],
  // OpenSSH's scp and sftp run a program they are given (`-S ssh-program`, `-D sftp-server`), ssh with a config file
  // (`-F cfg`) or a jump host's (`-J`), and `-o` keywords that run a line or load a library here (`-o
  // ProxyCommand=…`, `-oLocalCommand=…`, `Include`, `Match exec`, `PKCS11Provider` …), read in any word as the deny
  // side reads them; sftp also runs the `!…` lines of a batch file (`-b`).
  ['scp', { options: ['-S', '-F', '-J', '-D'], words: SSH_CODE_KEYWORDS }],
  ['sftp', { options: ['-S', '-F', '-J', '-D', '-b'], words: SSH_CODE_KEYWORDS }],
  // wget runs `--use-askpass=program`, and reads any wgetrc command from `-e` (`-e use_askpass=…`) or `--config`.
  ['wget', { options: ['--use-askpass', '-e', '--execute', '--config'] }],
  ['wget2', { options: ['--use-askpass', '-e', '--execute', '--config', '--post-file', '--body-file'] }],
  // `--daemon` serves with a `--config` that may run commands before and after each transfer.
  ['rsync', { options: ['-e', '--rsh', '--rsync-path', '-M', '--remote-option', '--daemon', '--config', '--early-input'], flags: ['--daemon'] }],
  // `--basetemp` empties the folder it names; `-p`, `-c`, `-o`, `--pyargs`, `-W` (a warning's category) load modules
  // and settings that do; `--trace` and `--pdb` hand piped input to the debugger, which runs it. pytest's parser
  // (argparse) takes any unambiguous start of a long option, which the check below refuses for each of these.
  // pytest 8.2 and later read more arguments from a file named after an `@` (`pytest @args.txt`), also after `--`.
  ['pytest', { prefixes: ['@'], endOfOptions: 'never', options: ['-p', '-c', '--config-file', '-o', '--override-ini', '--rootdir', '--confcutdir', '--basetemp', '--pdb', '--pdbcls', '--trace', '--pyargs', '-W', '--pythonwarnings', '--pastebin', '--debug', '--junitxml', '--junit-xml', '--log-file', '--result-log', '--report-log'], flags: ['--pdb', '--trace', '--pyargs'] }],
  // pip's options that write (`--log` appends its debug log to any file, also over one of the person's), read a file
  // (`freeze -r /etc/passwd`), work elsewhere (`--path`, `--target`, `--prefix`, `--python`), or choose where it
  // downloads from and whom it trusts (`--index-url`, `--cert`, `--proxy`). Its parser (optparse) takes any
  // unambiguous start of a long option (`--lo x`), which the check below refuses for each of these.
  ...['pip', 'pip3'].map((pip): [string, CodeOptions] => [pip, { options: PIP_OPTIONS }]),
  // Tools that work on the project of another folder (`poetry show -C ~/other`, `composer show -d /tmp/x`): they load
  // its configuration and plugins (Composer activates those in its `vendor/`, Poetry installs its required plugins,
  // uv builds its dependencies, turbo reads its turbo.json), as `make -C` runs another Makefile.
  ['poetry', { options: ['-C', '--directory', '-P', '--project'] }],
  ['composer', { options: ['-d', '--working-dir'] }],
  ['uv', { options: ['--directory', '--project', '--config-file', '--script'] }],
  ['turbo', { options: ['--cwd', '--root-turbo-json'] }],
  // stern (logs) and k9s (a terminal UI) read a kubeconfig as kubectl does, whose credential plugin runs.
  ...['kubectl', 'helm', 'kustomize', 'minikube', 'k3s', 'microk8s', 'stern', 'k9s'].map((kube): [string, CodeOptions] => [kube, { options: [], words: KUBE_CODE_OPTIONS }]),
  ['oc', { options: [], words: OC_CODE_OPTIONS }],
  // Found in review: split's `--filter` runs a shell command for each piece (`split --filter='sh -c …' x` ran it
  // under a rule for `split`); sdiff and diff3 run the program `--diff-program` names; netcat's and ncat's `-e`, `-c`,
  // `--exec`, `--sh-exec` and `--lua-exec` run a program or a shell line with the connection; aria2c runs the
  // `--on-download-…` and `--on-bt-download-complete` hooks, those a `--conf-path` file names, and those an RPC
  // client sets (`--enable-rpc`). GNU getopt takes any unambiguous start of each long one (`--fil=…`).
  ['split', { options: ['--filter'] }],
  // fd runs the command `-x`/`--exec` names for each file it finds, `-X`/`--exec-batch` once for them all (found in
  // review). tree writes its listing to the file `-o` names, also over one of the person's, and with `-R` (and `-L`) a
  // 00Tree.html into each folder at that depth, wherever it lists: its own parser takes each letter of a group, a
  // value-taking one's value from the next word (`-ao FILE`, `-L3o FILE`).
  ...['fd', 'fdfind'].map((fd): [string, CodeOptions] => [fd, { options: ['-x', '--exec', '-X', '--exec-batch'] }]),
  ['tree', { options: ['-o', '-R'], flags: ['-R'] }],
  // bat runs the pager `--pager` names (`--paging=always` even with no terminal), its words a shell line of their own.
  ...['bat', 'batcat'].map((bat): [string, CodeOptions] => [bat, { options: ['--pager'] }]),
  // yq's `system` operator runs a command once `--security-enable-system-operator` enables it (found in review); its
  // parser takes the whole name only, any start of it is asked about to be safe.
  ['yq', { options: ['--security-enable-system-operator'] }],
  // Found in review, programs judged as cat is that still run what an option names, as bat's `--pager` does: enscript
  // the `-I`/`--filter` command for each file, and with `-e`/`--escapes` an `epsf` escape's `cmd|`; ugrep the
  // `--filter` commands, its `--pager` and `--view` programs, and those of a `--config` file (`---FILE`); highlight
  // the Lua of a `--plug-in` or `--config-file`, or of a `--data-dir`'s (`-D`); pygmentize a lexer or formatter of a
  // `.py` file with `-x`; ack its `--pager` and the options of an `--ackrc` file. Each parser (GNU getopt, argparse,
  // Getopt::Long, highlight's) takes a short one's value attached (`-I'cmd'`) or any unambiguous start of a long one.
  ['enscript', { options: ['-I', '--filter', '-e', '--escapes'] }],
  ...['ugrep', 'ugrep+'].map((ugrep): [string, CodeOptions] => [ugrep, { options: ['--filter', '--pager', '--view', '--config'], prefixes: ['---'] }]),
  // highlight 4 also loads the file a `-s`/`--style` value names as a theme, whatever its name, and runs the
  // language server `--ls-exec` names or a `--ls-profile` of its config names (found in review). Its `-B` search is
  // covered by no rule (`HIGHLIGHT_SEARCH`).
  ['highlight', { options: ['--plug-in', '--config-file', '--data-dir', '-D', '-s', '--style', '--ls-exec', '--ls-profile'], valueLetters: shortValueLetters('highlight') }],
  ['pygmentize', { options: ['-x'] }],
  ...['ack', 'ack-grep'].map((ack): [string, CodeOptions] => [ack, { options: ['--pager', '--ackrc'] }]),
  // binutils' nm, ar and ranlib, and GCC's wrappers of them, load the shared library `--plugin` names into themselves
  // (`nm --plugin ./p.so a.o` runs its constructor; found in review, with the real programs); ar reads it after a `--`
  // before its key letters too.
  ...['nm', 'ranlib', 'gcc-nm', 'gcc-ranlib'].map((binutil): [string, CodeOptions] => [binutil, { options: ['--plugin'] }]),
  ...['ar', 'gcc-ar'].map((ar): [string, CodeOptions] => [ar, { options: ['--plugin'], endOfOptions: 'never' }]),
  // The linker loads its `-plugin` (`--plugin`) too (`ld -plugin ./p.so a.o` ran its constructor; found in review).
  ...['ld', 'ld.bfd', 'ld.gold'].map((ld): [string, CodeOptions] => [ld, { options: ['-plugin', '--plugin'] }]),
  // dlltool runs the assembler `--as`/`-S` names, with the `--as-flags`/`-f` it is given (gas's `--MD FILE` writes
  // anywhere), and in its MCore builds the linker `--linker`/`-L` names, with `--linker-flags`/`-F` (found in review).
  // Its getopt takes a value after `m e l y D d z b p S t f I`, and `M L F` in its MCore builds (`-dfoo.def`: no `-f`).
  ['dlltool', { options: ['--as', '-S', '--as-flags', '-f', '--linker', '-L', '--linker-flags', '-F'], valueLetters: 'meylDdzbpStfIMLF' }],
  // GNU info writes the nodes it shows (`-o FILE`, `--output`) and the keys it reads (`--dribble`) where it is told,
  // over one of the person's too; cscope its cross-reference (`-f reffile`, `-freffile`), which `-X` deletes at exit.
  ['info', { options: ['-o', '--output', '--dribble'] }],
  ['cscope', { options: ['-f'] }],
  // mypy loads the plugins of the config `--config-file` names and runs the program `--python-executable` names
  // (argparse takes any start of either), reads more arguments from an `@file`, and writes its reports where they say.
  ...['mypy', 'dmypy'].map((mypy): [string, CodeOptions] => [mypy, { options: MYPY_OPTIONS, prefixes: ['@'] }]),
  ...['sdiff', 'diff3'].map((diff): [string, CodeOptions] => [diff, { options: ['--diff-program'] }]),
  ...['nc', 'netcat', 'nc.traditional', 'nc.openbsd', 'ncat'].map((nc): [string, CodeOptions] => [nc, { options: ['-e', '-c', '--exec', '--sh-exec', '--lua-exec'] }]),
  ['aria2c', { options: ['--conf-path', '--enable-rpc', '--on-download-complete', '--on-download-error', '--on-download-pause', '--on-download-start', '--on-download-stop', '--on-bt-download-complete'], prefixes: ['--on-'] }],
  // Found in review: rake runs the Ruby of `-e`/`-p`/`-E`, `-r`, a rakefile `-f` names, and each `NAME=value` word
  // sets an environment variable its tasks' programs read (`RUBYOPT=-r./x`); just runs `--command`, recipes through
  // `--shell`, and each `NAME=value` word overrides a variable its recipes' lines hold; latexmk runs the Perl of `-e`
  // and `-r`, and the command of `-pdflatex=…` and its kin. Only their options that do none of that are let through.
  ['rake', { options: [], harmless: RAKE_HARMLESS, assignments: true }],
  ['just', { options: [], harmless: JUST_HARMLESS, assignments: true }],
  ['latexmk', { options: [], harmless: LATEXMK_HARMLESS, endOfOptions: 'never' }],
  // Found in review: Mercurial runs the hooks and extensions `--config` sets and those of the repository `-R` or
  // `--cwd` leads to (`hg status --config hooks.pre-status=…`, as git's `-c`); Subversion the program `--diff-cmd`,
  // `--diff3-cmd`, `--editor-cmd` or a `--config-option`/`--config-dir` names; rpm the shell of a `%(…)` macro that
  // `--eval`, `--define`, `--macros`, `--rcfile` or `--load` bring; lftp the `!…` lines of `-c`, `-e` and `-f`; sshfs
  // the `ssh_command`, `sftp_server` or an ssh config's command; bsdtar the programs tar's options name.
  ['hg', { options: ['--config', '-R', '--repository', '--repo', '--cwd', '--debugger'] }],
  ['svn', { options: ['--diff-cmd', '--diff3-cmd', '--editor-cmd', '--config-option', '--config-dir'] }],
  ['rpm', { options: ['-E', '--eval', '-D', '--define', '--macros', '--rcfile', '--load', '--pipe'] }],
  ['lftp', { options: ['-c', '-e', '-f'] }],
  ['sshfs', { options: ['-F'], words: /ssh_command|sftp_server|proxycommand|localcommand|knownhostscommand|pkcs11provider|securitykeyprovider|include|match/i }],
  // The compiler drivers have no `--`: it is an error there.
  ...['gcc', 'g++', 'cc', 'c++', 'clang', 'clang++'].map((compiler): [string, CodeOptions] => [compiler, { options: COMPILER_LONG_OPTIONS, prefixes: COMPILER_PREFIXES, endOfOptions: 'never' }]),
]);

interface CodeOptions {
  options: readonly string[];
  /**
   * Options of the list that take no value from the next word (`cargo clippy --fix`, git's `--exec-path` without
   * `=`): a rule that ends in one covers what a call adds after it, as it does after any other word.
   */
  flags?: readonly string[];
  /** Words that run code whatever option they are the value of (scp's `-o ProxyCommand=…`, `ProxyCommand=…` after `-o`). */
  words?: RegExp;
  /** Words that run code when they start with one of these, whatever follows (`-Wl,-plugin=…`, `@file`). */
  prefixes?: readonly string[];
  /** Given, the only option words that may come before `--`: any other word starting with a dash is refused. */
  harmless?: ReadonlySet<string>;
  /**
   * `make`: also `NAME=value` words (`X!=cmd` runs `cmd`), before and after `--`: make reads a word with `=` in
   * it as a variable's definition wherever it stands.
   */
  assignments?: boolean;
  /**
   * npm, pnpm, yarn: after `--` the words go to the script, often a test runner whose options load code
   * (`node --test --import=data:…`, `jest --config`, `vitest --globalSetup`): there, any word that starts with a
   * dash or may become one is refused too. Plain words (a test file, a pattern) stay allowed.
   */
  noOptionsAfterEnd?: boolean;
  /** Forms of a listed option that are harmless (`go … -mod=vendor`), as the flag package reads them. */
  harmlessForms?: ReadonlySet<string>;
  /**
   * `go`: options are read by Go's flag package (`flagPackageOption`), not grouped, not abbreviated: `-run=TestCase`
   * holds no `-C`.
   */
  flagPackage?: boolean;
  /**
   * The short options that take a value, for a parser that reads a group's letters after such a one as its value
   * (`highlight -Oansi` is `-O ansi`, no `-s`). Unset, every letter of a group is read as an option: more is asked.
   */
  valueLetters?: string;
  /** `tar`: a first argument without a dash is a group of options (`tar xIf zstd a.tar`). */
  clustered?: boolean;
  /**
   * `nmap`: read with getopt_long_only, which takes a long option after one dash too (`-script=x`, `-datadir x`),
   * any unambiguous start of it as well, when the word is longer than one letter after the dash.
   */
  longWithOneDash?: boolean;
  /**
   * `gradle`: read with Gradle's parser, which takes an option by its whole name only (no start of it), after one dash
   * or two (`-project-dir x`, `--p x`), a short one's value attached too (`-px`, `-p=x`); in a group of one dash only
   * the first letter counts, as Gradle refuses one that takes a value past it (`-qp x`).
   */
  gradleParser?: boolean;
  /**
   * Where a `--` ends the options. Default: unless it comes right after an option, which may take it for its value
   * (`tar -xf -- --to-command=sh` extracts the archive `--`); `always` for parsers that never do; `never` for
   * programs that have no such marker or hand it on.
   */
  endOfOptions?: 'always' | 'never';
}

/**
 * Variables the terminal's shell gets from the person's environment (tools/child-env.ts passes on these and
 * little else) and neither sets nor changes as a line runs. Every other `$NAME` may hold text the model wrote:
 * bash sets `$_` to the last word of the command before, `$BASH_COMMAND` to the command being run, `$PWD` and
 * `$OLDPWD` as `cd` moves, `$1`, `$@` … as `set --` and `shift` make them, `$REPLY` and `$OPTARG` from input, and
 * a later bash may add more; a name the environment does not hold is empty only until a builtin sets it.
 */
const ENVIRONMENT_ONLY = new Set(['HOME', 'USER', 'LOGNAME', 'SHELL', 'PATH', 'LANG', 'LANGUAGE', 'TERM', 'TZ', 'TMPDIR', 'TEMP', 'TMP', 'COLORTERM', 'NO_COLOR']);

function isEnvironmentOnly(name: string): boolean {
  return ENVIRONMENT_ONLY.has(name) || /^LC_[A-Z]+$/.test(name);
}

/**
 * Builtins that set a variable named in their arguments (`read HOME`, `printf -v HOME …`, `getopts x HOME`), or
 * run code that may (`source`, `eval`, `trap … DEBUG`). None can be allowed by a prefix rule, but an exact rule
 * may allow one; after it, no `$NAME` of the same line keeps its value from the environment.
 */
const SETS_VARIABLES = new Set([
  'read', 'mapfile', 'readarray', 'getopts', 'let', 'unset', 'declare', 'typeset', 'local', 'export', 'readonly',
  'source', '.', 'eval', 'set', 'builtin', 'command', 'trap', 'enable',
]);

/** What the other commands of a line change for this one, and where it runs (`PathFacts`). */
export interface LineFacts extends PathFacts {
  /** Some command of the line may set variables (`SETS_VARIABLES`). Default: false. */
  setsVariables?: boolean;
  /**
   * Only for whether deny rules judge the line whole (`unjudged`): where a link a command makes leads
   * (`linkMayLeadAway`) is no part of what runs. Default: false.
   */
  onlyWhatRuns?: boolean;
}

/** Whether `command` may set a shell variable that later words of its line would take on. */
export function setsShellVariables(command: SimpleCommand): boolean {
  const [first, ...args] = command.words;
  if (first?.kind !== 'literal') return true;
  const name = commandBaseName(first.value);
  if (SETS_VARIABLES.has(name)) return true;
  // `printf -v NAME …`, `wait -p NAME`. Only an exact rule allows either with that option, and its words are literal.
  const setter = SUBSCRIPT_EVALUATING.get(name);
  return setter !== undefined && args.some((word) => word.kind === 'literal' && word.value.startsWith('-') && word.value.slice(1).includes(setter[1]!));
}

/** Builtins that change the directory, and those that run code that may (`source`, `eval`: `SETS_VARIABLES`). */
const CHANGES_DIRECTORY = new Set(['cd', 'pushd', 'popd']);

/** Whether `command` may change the directory (where it leads: `folderAfter`). */
function changesDirectory(command: SimpleCommand): boolean {
  const [first] = command.words;
  if (first?.kind !== 'literal') return true;
  const name = commandBaseName(first.value);
  return CHANGES_DIRECTORY.has(name) || SETS_VARIABLES.has(name);
}

/**
 * Whether `command` may change the file system so that a path leads elsewhere than it does now (a folder replaced by
 * a link, a link re-pointed): any command but those that only read and print (`PREFIX_PROPOSED_COMMANDS`: `ls`,
 * `cat`, `grep` …, none with an argument that writes a file), git's commands that only read (`git log`, `git status`:
 * `gitChangesNothing`), find without an action that writes or runs (`findChangesNothing`), those that only move the
 * shell (`cd`, `pushd`, `popd`) or change its positional parameters (`shift`), and `mkdir`, which makes only folders
 * where nothing was, and a path through one leads where it led before (a name not made yet is judged by the folder it
 * would be made in), by their bare name (`./ls` is the workspace's program).
 */
export function changesFileSystem(command: SimpleCommand): boolean {
  const [first] = command.words;
  if (first?.kind !== 'literal') return true;
  if (first.value === 'git') return !gitChangesNothing(command);
  if (first.value === 'find') return !findChangesNothing(command);
  // `shift` changes only the shell's `$1`, `$@` ….
  return !PREFIX_PROPOSED_COMMANDS.has(first.value) && !CHANGES_DIRECTORY.has(first.value) && first.value !== 'mkdir' && first.value !== 'shift';
}

/** Programs that change files but make no link and run no other program: touch makes or dates regular files, truncate sizes them. */
const LINKLESS_WRITERS = new Set(['touch', 'truncate']);

/**
 * Whether `command`, when it changes the file system (`changesFileSystem`, which the caller has worked out already),
 * leaves no link there: touch and truncate by their bare name (`LINKLESS_WRITERS`), whose files are regular ones a
 * program that prints them finds as they are named. sed -i is not one: its `e` command and `s///e` run a shell command.
 */
export function leavesNoLink(command: SimpleCommand): boolean {
  const [first] = command.words;
  return first?.kind === 'literal' && LINKLESS_WRITERS.has(first.value);
}

/**
 * Whether a call of git changes nothing a path leads through: one of its commands that only read, here
 * (`gitCommandReadsOnly`), every word literal, and none of git's options that run a program or write a file
 * (`--output`, `--ext-diff`, `-O`: `CODE_RUNNING_OPTIONS`, read as a rule for git reads them, any start of a long one).
 */
function gitChangesNothing(command: SimpleCommand): boolean {
  const words = command.words.map(plainWord);
  const spec = CODE_RUNNING_OPTIONS.get('git');
  return spec !== undefined && gitCommandReadsOnly(words) && !carriesCodeOption(command.words.slice(1), 'git', spec, () => false);
}

/**
 * GNU find's actions that write a file or run a program. find 4.9 takes each by its whole name after one dash only
 * (`--delete` and `delete` it refuses), so every other literal word is no action; a word the shell computes may be one.
 */
const FIND_ACTIONS = new Set(['-delete', '-exec', '-execdir', '-ok', '-okdir', '-fprint', '-fprint0', '-fprintf', '-fls']);

/** Whether a call of find changes nothing: every word literal and none an action of `FIND_ACTIONS` (wherever it stands). */
function findChangesNothing(command: SimpleCommand): boolean {
  return command.words.every((word) => word.kind === 'literal' && !FIND_ACTIONS.has(word.value));
}

/**
 * Wrappers that run the command they are given where they run, in the same environment, by their bare name: `env`
 * (`-C`, `PATH=…`) and `stdbuf` (`LD_PRELOAD`) are not.
 */
const SAME_PLACE_WRAPPERS = new Set(['timeout', 'nice', 'nohup', 'time']);

/** Test runners, which run the code of the tests they collect (eslint and prettier, read as they are, are none). */
const TEST_RUNNERS = new Set(['pytest', 'vitest', 'jest', 'rspec', 'phpunit', 'tox']);

/** cargo's subcommands that build the project, running its build scripts, procedural macros and tests, and go's that run its code. */
const PROJECT_CODE_SUBCOMMANDS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['cargo', new Set(['build', 'b', 'check', 'c', 'clippy', 'test', 't', 'bench', 'run', 'r'])],
  ['go', new Set(['test', 'run', 'generate'])],
]);

/**
 * Whether `command` runs code of the project's, which may read and print any file the sandbox lets it, by its own
 * words (behind a wrapper it is not counted): a test runner, a make target, a script of npm, pnpm or Yarn (`npm test`,
 * `npm run build`), cargo's and go's subcommands that build or run the project (`PROJECT_CODE_SUBCOMMANDS`), or a
 * program of the workspace (`./build.sh`). Such a command changing the file system leaves nothing a program that prints
 * the files it is named could show and it could not (`PathFacts.printedAsFound`). Behind a wrapper that runs it in
 * the same folder and environment (`timeout 60 npm test`: `SAME_PLACE_WRAPPERS`) it counts as well.
 */
export function runsProjectCode(command: SimpleCommand): boolean {
  const [first, second] = command.words;
  if (first?.kind !== 'literal') return false;
  if (SAME_PLACE_WRAPPERS.has(first.value)) {
    const [inner] = innerCommands(command.words.map((word) => (word.kind === 'literal' ? word.value : undefined))).words;
    const start = inner === undefined || inner.length === 0 ? undefined : command.words.length - inner.length;
    return start !== undefined && command.words.slice(0, start).every((word) => word.kind === 'literal') && runsProjectCode({ ...command, words: command.words.slice(start) });
  }
  if (isWorkspaceProgram(first.value)) return true;
  const name = programName(commandBaseName(first.value));
  if (TEST_RUNNERS.has(name) || name === 'make') return true;
  if (SCRIPT_RUNNERS.has(name)) return scriptArgumentsStart(command.words) !== undefined;
  return second?.kind === 'literal' && PROJECT_CODE_SUBCOMMANDS.get(name)?.has(second.value) === true;
}

/**
 * Where `command` leads the shell, its folder judged with `facts` of the commands before it (`cd sub && cd x` stays
 * inside, `cd sub && cd ..` may not): undefined when it changes no folder; `outside` when it may lead to a folder
 * outside the workspace: `cd` or `pushd` to a folder that may lie outside (`cd ~/other`, `cd ..`, `cd "$X"`, a link
 * that leads out given `facts.leadsInside`), `cd` alone (home), `cd -` (the folder before), `pushd` alone or `pushd
 * +1` (one on the stack), `popd`, and any other command that may change the directory (`source x`, `eval …`);
 * else the folder it names (`movedTo`: absolute from `facts.folder`; undefined for a word the shell expands).
 */
export function folderAfter(command: SimpleCommand, facts: PathFacts): { folder: string | undefined } | 'outside' | undefined {
  if (!changesDirectory(command)) return undefined;
  const [first, ...args] = command.words;
  const name = first?.kind === 'literal' ? commandBaseName(first.value) : undefined;
  if (name !== 'cd' && name !== 'pushd') return 'outside';
  const option = (word: ShellWord | undefined) => word?.kind === 'literal' && /^-[LPe@n]+$/.test(word.value);
  let index = 0;
  while (option(args[index])) index += 1;
  const dashes = args[index];
  if (dashes?.kind === 'literal' && dashes.value === '--') index += 1;
  const folder = args[index];
  if (folder === undefined) return 'outside';
  if (folder.kind === 'literal' && /^[-+]/.test(folder.value)) return 'outside';
  if (mayNameOutsideFolder(folder, facts)) return 'outside';
  // Where a glob leads is not known: with links looked up it is `outside` already (`mayNameOutside`).
  return { folder: folder.kind === 'literal' ? movedTo(facts, folder.value).folder : undefined };
}

/** Other names a program is installed under, each judged as the program itself. */
const PROGRAM_ALIASES: ReadonlyMap<string, string> = new Map([
  // pytest's own second entry point, and Debian's python3-pytest's.
  ['py.test', 'pytest'],
  ['pytest-3', 'pytest'],
  ['pytest3', 'pytest'],
  // GNU make's own names and forks, and BSD make, whose options and `NAME=value` words are read as make's: no fewer
  // of them run code.
  ['gmake', 'make'],
  ['remake', 'make'],
  ['colormake', 'make'],
  ['bmake', 'make'],
  ['pmake', 'make'],
  ['bsdmake', 'make'],
  ['makepp', 'make'],
  // kubecolor colours kubectl's output and hands it every word: it runs what kubectl would (exec, plugins, a kubeconfig).
  ['kubecolor', 'kubectl'],
]);

/** Other names a program is installed under that a deny rule for the program catches too (npm's own script, Debian's yarn). */
const INSTALLED_AS: ReadonlyMap<string, string> = new Map([
  ['npm-cli.js', 'npm'],
  ['npx-cli.js', 'npx'],
  ['pnpm.cjs', 'pnpm'],
  ['yarnpkg', 'yarn'],
  ['nodejs', 'node'],
]);

/**
 * The names a deny rule's program may be called by here: its own, an alias, and without a version (`pip3`, `pip3.11`
 * and `pip-3.11` are pip; `python3.11` is python3 and python), so a rule for `pip install` catches `pip3 install`.
 */
export function installedNames(name: string): ReadonlySet<string> {
  const names = new Set([name, programName(name)]);
  const installed = INSTALLED_AS.get(name);
  if (installed !== undefined) names.add(installed);
  const versioned = /^([A-Za-z][A-Za-z_]*?)-?(\d+)((?:\.\d+)*)$/.exec(name);
  if (versioned !== null) {
    names.add(versioned[1]!);
    if (versioned[3] !== '') names.add(`${versioned[1]}${versioned[2]}`);
  }
  return names;
}

/**
 * The binary tools as a cross build installs them, named for its target (`x86_64-linux-gnu-objdump`,
 * `arm-none-eabi-nm`, `x86_64-linux-gnu-gcc-ar`, MXE's `x86_64-w64-mingw32.static-windres`: `CROSS_TARGET`, which a
 * rule is stored by too), and GCC's wrappers and the linker under the versioned names a distribution installs
 * (`gcc-ar-12`, `x86_64-linux-gnu-gcc-nm-12`): the same programs, with the same options (found in review).
 */
const TARGET_BINARY_TOOL = new RegExp(
  `^(?:${CROSS_TARGET.source})?(gcc-(?:nm|ar|ranlib)(?=-\\d)|(?<=-)(?:nm|ar|ranlib|objdump|readelf|objcopy|strip|size|strings|addr2line|c\\+\\+filt|elfedit|windres|dlltool|ld(?:\\.bfd|\\.gold)?))(?:-\\d+(?:\\.\\d+)*)?$`,
);

/**
 * The program a command's base name stands for: an alias (`py.test`) is judged as its program (`pytest`), a tool
 * under a cross build's name as the tool.
 */
function programName(name: string): string {
  return PROGRAM_ALIASES.get(name) ?? (isPrefixedMake(name) ? 'make' : TARGET_BINARY_TOOL.exec(name)?.[1] ?? name);
}

/**
 * Whether `command` runs a program that reads the folder it runs in as an operand it was not given
 * (`WORKING_FOLDER_PROGRAMS`: build and project tools, which read their build file, scripts and config there; a test
 * runner, which collects its tests, config and plugins there, `isTestRunner`; or a program of the workspace named by a
 * relative path, which is looked up from there): that folder is judged as such an operand would be
 * (`workingFolderMayLeadAway`).
 */
function readsWorkingFolder(command: SimpleCommand): boolean {
  const [first] = command.words;
  if (first?.kind !== 'literal') return true;
  const name = programName(commandBaseName(first.value));
  return WORKING_FOLDER_PROGRAMS.has(name) || isTestRunner(name) || isWorkspaceProgram(first.value);
}

/** Whether a prefix rule for `name` is checked against a table of options that run code. */
export function hasCodeOptions(name: string): boolean {
  return CODE_RUNNING_OPTIONS.has(name);
}

/**
 * Whether the word after `pnpm` or `yarn` names a program the rules know (`pnpm make test`, `pnpm git status`,
 * `pnpm rm -rf x`), judged as that program would be; any other word is most likely one of the project's scripts
 * (`pnpm lint`) or the binaries its packages install (`pnpm vitest`).
 */
export function isKnownProgram(word: string): boolean {
  const base = commandBaseName(word);
  return word.includes('/') || isExactOnlyCommand(base) || PROPOSE_EXACT_COMMANDS.has(base) || PREFIX_PROPOSED_COMMANDS.has(base) || SUBCOMMAND_COMMANDS.has(base) || hasCodeOptions(base);
}

/**
 * Whether a command's name is a path relative to where it runs (`./scripts/test.sh`, `./node_modules/.bin/vitest`,
 * `bin/lint`): a program of the workspace, which reads the words it is given as it likes, as a script `npm test`
 * runs does (`./scripts/test.sh .git/COMMIT_EDITMSG` had `node --test` run a file a call wrote; `./manage.py shell -c
 * …`, `./node_modules/.bin/vitest --globalSetup=…` run code the call names). A rule for one covers the words it
 * names and no other.
 */
export function isWorkspaceProgram(name: string): boolean {
  return name.includes('/') && !name.startsWith('/');
}

/** The package managers that run the project's scripts, handing them the words after the script's name. */
const SCRIPT_RUNNERS = new Set(['npm', 'pnpm', 'yarn']);
/** Their subcommands that run the script of their own name (`npm test`, `npm t`), and those that run the one named next. */
const SCRIPT_SUBCOMMANDS = new Set(['test', 't', 'tst', 'start', 'stop', 'restart']);
const RUN_SCRIPT_SUBCOMMANDS = new Set(['run', 'run-script', 'rum', 'urn']);

/**
 * Where the words handed to the project's script start in an `npm`, `pnpm` or `yarn` call that runs one (`npm test
 * x`, `npm run build x`), past the package manager's harmless options; undefined for a call that runs no script.
 */
function scriptArgumentsStart(words: readonly ShellWord[]): number | undefined {
  const harmless = (index: number) => {
    const word = words[index];
    return word?.kind === 'literal' && NPM_HARMLESS.has(word.value);
  };
  let index = 1;
  while (harmless(index)) index += 1;
  const subcommand = words[index];
  const [manager] = words;
  if (subcommand?.kind !== 'literal' || manager?.kind !== 'literal') return undefined;
  // npm also takes an alias or any unambiguous start of a command for it: `npm tes x`, `npm run-s build x`.
  const command = packageManagerCommand(commandBaseName(manager.value), subcommand.value) ?? subcommand.value;
  if (SCRIPT_SUBCOMMANDS.has(subcommand.value) || SCRIPT_SUBCOMMANDS.has(command)) return index + 1;
  if (!RUN_SCRIPT_SUBCOMMANDS.has(subcommand.value) && !RUN_SCRIPT_SUBCOMMANDS.has(command)) return undefined;
  index += 1;
  while (harmless(index)) index += 1;
  return index + 1;
}

/**
 * Whether `words` from `from` on are only the package manager's harmless options. A script is the project's code and
 * reads what it is handed as it likes: a test runner runs a file it is named (`npm test .git/COMMIT_EDITMSG` has
 * `node --test` run that file), so a rule for a script covers it with no word of its own, unless the rule names it.
 */
function onlyHarmlessAfter(words: readonly ShellWord[], from: number): boolean {
  return words.slice(from).every((word) => word.kind === 'literal' && NPM_HARMLESS.has(word.value));
}

/**
 * An allow rule covers a command whose first words are exactly the rule's tokens (after quote removal, compared
 * as whole words: `npm testing` is not `npm test`), followed by nothing when the rule is exact, or by any
 * arguments, including globs and `$NAME` of the environment (`ENVIRONMENT_ONLY`), which only ever become more
 * arguments: except where the shell or the program makes an argument run code (`SUBSCRIPT_EVALUATING`,
 * `CODE_RUNNING_OPTIONS`), and never by prefix for a command that runs whatever it is given (a rule stored before
 * its name was known as one).
 */
export function allowsCommand(rule: CommandPrefix, command: SimpleCommand, line: LineFacts = {}): boolean {
  // Neither a prefix rule nor an exact one names the folder such a program reads: it must be where it was judged.
  // Judged after the words, so that when only saying why, a word the command names is the one said.
  if (!allowsWords(rule, command, line) || (readsWorkingFolder(command) && (workingFolderMayLeadAway(line) || treesReadMayHoldLinkOut(command, line)))) return false;
  // Nor what a pipe feeds a program that runs its input (`echo '!id' | sftp host`), which no rule's words show.
  if (command.inputPiped === true && readsCommandsFromInput(command, line.workspace)) return false;
  // `python3 -m pip` runs a `pip/` of the folder it runs in before the installed one; `cargo tree` runs the `cargo` a
  // `rust-toolchain.toml` names by its path, or the `build.rustc` of a `.cargo/config.toml`.
  // `git status` runs a populated submodule's `core.fsmonitor`, which a call may have written into `.git/modules/…`;
  // `go build` what a go env file in the workspace sets, `kubectl get` a kubeconfig's credential plugin.
  // Behind a wrapper or a runner too: an exact rule for `timeout 60 cargo build` names the wrapper's words, not what
  // the `.cargo/config.toml` a call wrote has cargo run (git's look reads git named anywhere in the words already).
  return (
    !submoduleConfigMayRun(command, line) &&
    (commandsRun(command, line)?.every(({ run, facts }) => !pythonModuleMayBeLocal(run, facts) && !rustProjectMayNameProgram(run, facts) && configFileMayRun(run, facts) === undefined && !highlightSearches(run, facts)) ?? false)
  );
}

/**
 * highlight's `-B`/`--batch-recursive`, read as its other options are (`CODE_RUNNING_OPTIONS`): a search it runs
 * itself, through what its wildcard matches in the folder before its last `/` and every folder below, following links
 * to files and folders, `node_modules`' too. A rule names the wildcard, not what it matches: stored while no link
 * existed, an exact rule for `highlight --batch-recursive=*.c -d out2` covered the same call after `src/vendor ->
 * /outside` appeared, which wrote the outside file's text into out2/ (found in review, with highlight 3.41).
 */
const HIGHLIGHT_SEARCH: CodeOptions = { options: ['-B', '--batch-recursive'], valueLetters: shortValueLetters('highlight') };

/** Whether `command` is a highlight search (`HIGHLIGHT_SEARCH`), which no rule covers, exact ones included. */
function highlightSearches(command: SimpleCommand, line: LineFacts): boolean {
  const [first, ...rest] = command.words;
  if (first?.kind !== 'literal' || programName(commandBaseName(first.value)) !== 'highlight') return false;
  return carriesCodeOption(rest, first.value, HIGHLIGHT_SEARCH, (word) => word.kind === 'dynamic' && mayBecomeAnything(word, line));
}

/** At most this many commands, the call's own among them, are judged by the files they read: past it, none is allowed. */
const MAX_COMMANDS_RUN = 16;

/**
 * The command and those its wrappers and runners run, each the words that end it (`timeout 60 cargo build` →
 * `cargo build`, `uv run python3 -m x` → `python3 -m x`), as the deny side finds them (`innerCommands`), with the
 * facts it is judged by: in the folder a wrapper names (`env -C sub cargo build` reads `sub/.cargo/config.toml`), as a
 * `cd` there would be judged; as one that may run anywhere, in a folder changed since (`leftWorkspace`,
 * `fileSystemChanged`), when the wrapper picks it or it may lead out (`sudo -i`, `pnpm recursive exec`, `env -C ..`).
 * Undefined when there are more than `MAX_COMMANDS_RUN` (`nice nice … go build`), so that none goes unjudged.
 */
function commandsRun(command: SimpleCommand, line: LineFacts): { run: SimpleCommand; facts: LineFacts }[] | undefined {
  const found = [{ run: command, facts: line }];
  const starts = new Set([0]);
  for (let index = 0; index < found.length; index += 1) {
    const { run, facts } = found[index]!;
    const words = run.words.map((word) => (word.kind === 'literal' ? word.value : undefined));
    const innerFacts = wrappedFacts(wrappedFolder(words), run, facts);
    const inner = innerCommands(words);
    // A line the wrapper hands a shell (`parallel cargo build ::: a`, `sem cargo build`) is no suffix of the words,
    // and is not parsed here: what it runs is not judged by the files it reads, so it is not allowed.
    if (inner.commandLines.length > 0) return undefined;
    for (const ran of inner.words) {
      const at = command.words.length - ran.length;
      const first = command.words[at];
      if (at <= 0 || starts.has(at) || first?.kind !== 'literal' || first.value !== ran[0]) continue;
      if (found.length === MAX_COMMANDS_RUN) return undefined;
      starts.add(at);
      found.push({ run: { ...command, words: command.words.slice(at) }, facts: innerFacts });
    }
  }
  return found;
}

/** The facts what a wrapper runs is judged by, given where it runs it (`wrappedFolder`). */
function wrappedFacts(where: WrappedFolder, wrapper: SimpleCommand, facts: LineFacts): LineFacts {
  if (where.kind === 'here') return facts;
  const moved = where.kind === 'named' ? folderAfter({ ...wrapper, words: [{ kind: 'literal', value: 'cd' }, { kind: 'literal', value: where.folder }] }, facts) : 'outside';
  if (moved !== 'outside' && moved?.folder !== undefined) return { ...facts, folder: moved.folder };
  return { ...facts, leftWorkspace: true, fileSystemChanged: true, changedBefore: true, printedAsFound: false };
}

/**
 * Whether a folder such a program reads and follows links in by itself may hold a link that leads out
 * (`treeMayHoldLinkOut`): a test runner's files and folders when it is named some (`pytest -q tests`), else the
 * folder it runs in.
 */
function treesReadMayHoldLinkOut(command: SimpleCommand, line: LineFacts): boolean {
  const [first] = command.words;
  const name = first?.kind === 'literal' ? programName(commandBaseName(first.value)) : undefined;
  const operands = name !== undefined && isTestRunner(name) ? testRunnerPathOperands(name, command.words) : undefined;
  const read = operands === undefined || operands.length === 0 ? ['.'] : operands;
  return read.some((value) => treeMayHoldLinkOut({ kind: 'literal', value }, line));
}

/** `allowsCommand` but for the folder the command runs in. */
function allowsWords(rule: CommandPrefix, command: SimpleCommand, line: LineFacts): boolean {
  if (command.words.length < rule.tokens.length) return false;
  if (rule.exact && command.words.length !== rule.tokens.length) return false;
  const prefixMatches = rule.tokens.every((token, index) => {
    const word = command.words[index];
    return word?.kind === 'literal' && word.value === token;
  });
  if (rule.exact) return prefixMatches;
  if (isWorkspaceProgram(rule.tokens[0] ?? '') && command.words.length > rule.tokens.length) return false;
  const name = programName(commandBaseName(rule.tokens[0] ?? ''));
  if (isExactOnlyCommand(name) || isExactOnlyProgram(rule.tokens[0] ?? '')) return false;
  // Found from the command's words, not the rule's: a rule for `uv` or `pnpm` alone names no program either.
  const call = runnerCall(command.words.map((word) => (word.kind === 'literal' ? word.value : COMPUTED_WORD)));
  if (call.kind === 'runner') return runnerAllows(rule, command, call, line);
  if (!prefixMatches) return false;
  // A name that leads to a shell, an interpreter or an editor (`editor` is vim here) is that program.
  const real = realProgramName(rule.tokens[0] ?? '');
  if (real !== undefined && isExactOnlyCommand(real)) return false;
  // `pnpm --filter x make …`: which word is the program depends on which options take a value.
  if (call.kind === 'options' && command.words.length > rule.tokens.length) return false;
  const rest = command.words.slice(rule.tokens.length);
  const anything = (word: ShellWord) => word.kind === 'dynamic' && mayBecomeAnything(word, line);
  // A link is a path later commands follow: where it leads is judged as a path the command is given.
  if (line.onlyWhatRuns !== true && linkMayLeadAway(name, command.words.slice(1), { ...line, anything })) return false;
  // A copy's sources are paths it reads, and what it brings in may run later (`cp ../other/conftest.py .`, `pytest`).
  if (line.onlyWhatRuns !== true && copySourceMayLeadAway(name, command.words.slice(1), { ...line, anything })) return false;
  // A program that prints the files it reads shows one outside to the model (`cat ~/.ssh/id_rsa`): asked about.
  // One named no file reads its input only (`… | tail -n 20`): its counts and pattern are no path.
  if (line.onlyWhatRuns !== true && !readsInputOnly(name, command.words.slice(1)) && fileReaderMayReadAway(name, rest, { ...line, anything })) return false;
  // One that prints by default may be told to write over a file by an operand (`uniq a.txt notes.md`), as `sort -o`.
  if (writesOutputOperand(name, command.words.slice(1), rule.tokens.length - 1)) return false;
  // One that follows the links below the folders it reads (`grep -R`, `zip -r`) reads where they lead.
  if (line.onlyWhatRuns !== true && followedTreeMayHoldLinkOut(name, command.words.slice(1), line, rule.tokens.length - 1)) return false;
  if (SUBSCRIPT_EVALUATING.has(name)) {
    const setter = SUBSCRIPT_EVALUATING.get(name);
    // `test -v a*`: a glob may match a file named `a[$(…)]`, whose subscript the test evaluates.
    const namesVariable = (name === 'test' || name === '[') && rest.some((word) => word.kind === 'literal' && (word.value === '-v' || word.value === '-R'));
    const risky = (word: ShellWord) =>
      word.kind === 'literal'
        ? word.value.includes('[') || (setter !== undefined && word.value.startsWith(setter))
        : namesVariable || word.text.includes('[') || anything(word);
    if (rest.some(risky)) return false;
  }
  if (name === 'git' && !gitArgumentsCovered(command.words, rule.tokens.length, line, rule.exact)) return false;
  // gojq and jaq read jq's options (`--rawfile k ~/.ssh/id_rsa`) and filters: judged as jq is (found in review), and
  // so is yq, whose jq-wrapping kind hands jq the options it does not know (`-L/x`, `-f`) and its filter (`import`).
  if ((name === 'jq' || name === 'gojq' || name === 'jaq' || name === 'yq') && !jqArgumentsCovered(name, command.words, rule.tokens.length, { ...line, anything })) return false;
  if (isTestRunner(name) && !testRunnerArgumentsCovered(name, command.words, rule.tokens.length, { ...line, anything })) return false;
  if (name === 'rsync' && rest.some(mayNameRemote)) return false;
  // tar and cpio take an archive named `host:file` for one on another machine and run a remote shell to reach it.
  if ((name === 'tar' || name === 'cpio') && rest.some((word, index) => mayNameRemoteArchive(word, rest[index - 1]))) return false;
  // `docker run …` under a rule for `docker` or `docker run`, `pm2 start x.sh` under one for `pm2`: a rule covers a call
  // that runs a command by its subcommand only as it names it, nothing added.
  if (rest.length > 0 && runsBySubcommand(name, command.words)) return false;
  // A TeX engine given its shell escape or Lua (`pdflatex -shell-escape x.tex`) runs what the document says.
  if (TEX_ENGINES.has(name.replace(/-dev$/, '')) && rest.some((word) => word.kind !== 'literal' || texRunsCode(word.value))) return false;
  // openssl given an engine, a provider or a config (`req -engine ./x.so`) loads it, pandoc given a filter runs it
  // (`--filter ./x.sh`, `-L x.lua`): read as deny rules read them, a word that may become any as any.
  // nix given a setting (`--option allow-unsafe-native-code-during-evaluation true`) may run what an expression says.
  // A rule's last word without a value of its own is read with them: the next word may be its value (a rule for
  // `pandoc --filter` names no filter, nor one for `openssl req -engine` an engine).
  if (name === 'openssl' || name === 'pandoc' || name.startsWith('nix')) {
    const last = rule.tokens.length > 1 && rest.length > 0 && !rule.tokens.at(-1)!.includes('=') ? [rule.tokens.at(-1)!] : [];
    const given = [...last, ...rest.map((word) => (word.kind === 'literal' ? word.value : anything(word) ? undefined : word.text.replace(/["']/g, '').replace(LEADING_EXPANSIONS, '')))];
    if (name === 'openssl' ? opensslLoadsCode(given) : name === 'pandoc' ? pandocRunsCode(given) : nixSettingsRunCode(name, given)) return false;
  }
  const script = SCRIPT_RUNNERS.has(name) ? scriptArgumentsStart(command.words) : undefined;
  if (script !== undefined && !onlyHarmlessAfter(command.words, Math.max(script, rule.tokens.length))) return false;
  // make builds every target it is given, each running what the Makefile says: a rule covers the targets it names
  // (`make test` not `make test deploy`), with options only; a word after `--` is a target too.
  // rake and just likewise run the tasks and recipes they are given, each a task or recipe a rule does not name.
  if ((name === 'make' || name === 'rake' || name === 'just') && rest.some((word) => word.kind !== 'literal' || !word.value.startsWith('-') || word.value === '-' || word.value === '--')) return false;
  const handOn = HANDED_ON.get(name);
  if (handOn !== undefined && handsOnWords(command.words, rule.tokens.length, handOn)) return false;
  if (name === 'cargo' && runsWithArguments(command.words, rule.tokens.length)) return false;
  // go builds and runs the packages it is given (`go test ../other/...` runs that folder's tests, as `cd ../other &&
  // go test` would), and `go fmt` rewrites their files: none may lie outside the workspace.
  if (name === 'go' && rest.some((word) => !(word.kind === 'literal' && word.value.startsWith('-')) && mayNameOutside(word, line))) return false;
  const codeOptions = CODE_RUNNING_OPTIONS.get(name);
  if (codeOptions === undefined) return true;
  // A rule that itself ends in such an option (`rg --pre`, `tcpdump -z`, `kubectl --kubeconfig`) names no value for it:
  // the call's next word is what runs, which the rule's words do not show. It covers its own words and nothing past
  // them, as a rule for a program that runs whatever it is given covers none.
  if (rest.length > 0 && endsInCodeOption(rule.tokens, codeOptions)) return false;
  const [first] = rest;
  // The group of options a first argument without a dash is (`tar xIf zstd a.tar`), when the rule names only the command.
  const words = codeOptions.clustered === true && rule.tokens.length === 1 && first?.kind === 'literal' && !first.value.startsWith('-')
    ? [{ kind: 'literal' as const, value: `-${first.value}` }, ...rest.slice(1)]
    : rest;
  return !carriesCodeOption(words, rule.tokens.at(-1) ?? '', codeOptions, anything);
}

/**
 * Whether `words` of the program `name` run a command by a subcommand, as the deny side reads them
 * (`opaque-program.ts`): one of its `RUNS_BY_SUBCOMMAND` in any word (`docker --context x run …`), or for one of
 * `PLAIN_SUBCOMMANDS` a first operand that is not among them (`pm2 start x.sh`); a word the shell computes may be either.
 */
function runsBySubcommand(name: string, words: readonly ShellWord[]): boolean {
  return givenRunsBySubcommand(name, words.slice(1).map((word) => (word.kind === 'literal' ? word.value : undefined)));
}

function givenRunsBySubcommand(name: string, given: readonly (string | undefined)[]): boolean {
  // `k3s kubectl exec …` is judged as `kubectl exec …`.
  const embedded = embeddedTool(name, given);
  if (embedded !== undefined) return embedded === null || givenRunsBySubcommand(embedded.name, embedded.words);
  if (runsCommandBySubcommand(name, given)) return true;
  // `kubectl foo` runs a plugin, `gh extension exec x` an extension (`runsPlugin`).
  if (runsPlugin(name, given)) return true;
  const plain = PLAIN_SUBCOMMANDS.get(name);
  if (plain === undefined) return false;
  const subcommand = given.find((word) => word === undefined || !word.startsWith('-'));
  return subcommand === undefined ? given.length > 0 : !plain.has(subcommand);
}

/**
 * Words after which a command hands the rest to another program, which reads them as its own options. cargo's `--`:
 * `clippy` hands them to the compiler (`-C link-arg=…`, `-C linker=…` run a program the call names), `test` and
 * `bench` to the test binary (`--logfile src/lib.rs` overwrites that file), `fmt` to rustfmt (a file anywhere), `run`
 * to the project's program. `go test -args`: to the test binary (`-test.coverprofile=…`).
 */
const HANDED_ON = new Map<string, readonly string[]>([
  ['cargo', ['--']],
  ['go', ['-args', '--args']],
]);

/** cargo's options that take the next word as their value (`--bin server`, `-p app`, `--color always`). */
const CARGO_VALUES = new Set([
  '-p', '--package', '--bin', '--example', '-j', '--jobs', '-F', '--features', '--target', '--target-dir',
  '--manifest-path', '--profile', '--color', '--message-format', '--config', '-Z', '--lockfile-path', '-C',
]);

/**
 * Whether a `cargo run` call has a word past the rule's first `trusted` tokens that cargo hands to the project's
 * program: from its first word that is neither an option nor an option's value on, every word is the program's
 * (`cargo run x --flag` runs it with `x --flag`), as a script `npm test` runs is handed its words.
 */
function runsWithArguments(words: readonly ShellWord[], trusted: number): boolean {
  let index = 1;
  const option = (at: number) => {
    const word = words[at];
    return word?.kind === 'literal' && (word.value.startsWith('-') || word.value.startsWith('+')) ? word.value : undefined;
  };
  for (let value = option(index); value !== undefined; value = option(index)) index += CARGO_VALUES.has(value) ? 2 : 1;
  const subcommand = words[index];
  if (subcommand?.kind !== 'literal' || (subcommand.value !== 'run' && subcommand.value !== 'r')) return false;
  for (let at = index + 1; at < words.length; at += 1) {
    const value = option(at);
    // What follows a `--` is judged as cargo's other subcommands' (`HANDED_ON`).
    if (value === '--') return false;
    if (value !== undefined) {
      if (CARGO_VALUES.has(value)) at += 1;
    } else if (at >= trusted) {
      return true;
    }
  }
  return false;
}

/** Whether a word past the rule's first `trusted` tokens follows one of `markers`: a rule covers none it does not name. */
function handsOnWords(words: readonly ShellWord[], trusted: number, markers: readonly string[]): boolean {
  const marker = words.findIndex((word, index) => index > 0 && word.kind === 'literal' && markers.includes(word.value));
  return marker !== -1 && words.length > Math.max(marker + 1, trusted);
}

/**
 * What a runner runs is judged as the command it is (`uv run make test SHELL=…` as `make test SHELL=…`), past the
 * runner's harmless options, in the call and in the rule (`uv run --frozen make test` under `uv run make test`). A
 * rule through another runner or none (`uv`, `pnpm` alone), or that names no program after it (`uv run`, `pnpm exec
 * --`), covers no call through a runner.
 */
function runnerAllows(rule: CommandPrefix, command: SimpleCommand, call: { head: readonly string[]; program: number }, line: LineFacts): boolean {
  const ruleCall = runnerCall(rule.tokens);
  if (ruleCall.kind !== 'runner' || ruleCall.head.length !== call.head.length || ruleCall.head.some((word, index) => word !== call.head[index])) return false;
  const target = rule.tokens.slice(ruleCall.program);
  if (target.length === 0 || target[0]!.startsWith('-')) return false;
  const program = command.words.slice(call.program);
  const name = commandBaseName(call.head[0] ?? '');
  // `npm exec git status` under a rule for it: the machine's git, not a node_modules/.bin/git a package put there.
  const run = program[0];
  if (run?.kind !== 'literal' || projectMayRunInstead(name, run.value, line)) return false;
  // `pnpm lint`, `pnpm vitest`: a script or a binary of the project's packages, handed the words after it.
  const script = call.head.length === 1 && SCRIPT_RUNNERS.has(name) && !isKnownProgram(target[0]!);
  if (script && !onlyHarmlessAfter(program, Math.max(1, target.length))) return false;
  if (!allowsCommand({ ...rule, tokens: target }, { ...command, words: program }, line)) return false;
  // npm, pnpm and yarn read their own options after the program's name too.
  const manager = CODE_RUNNING_OPTIONS.get(name);
  const anything = (word: ShellWord) => word.kind === 'dynamic' && mayBecomeAnything(word, line);
  return manager === undefined || !carriesCodeOption(program.slice(target.length), target.at(-1) ?? '', manager, anything);
}

/**
 * Whether an rsync word may name another machine: a colon before any slash (`host:path`, `host::module`,
 * `rsync://`, `--files-from=host:list`), where rsync starts a remote shell, by default ssh, that also reads the path
 * (`'x:;id'`) and hands it a host that starts with a dash as an option; a variable, or a glob with no slash before it
 * (`*` matches a file named `x:;id`), may become one.
 */
function mayNameRemote(word: ShellWord): boolean {
  if (word.kind === 'literal') return word.value.includes(':');
  if (word.variables.length > 0) return true;
  const text = word.text.replace(/["']/g, '');
  const glob = text.search(/[*?[{~]/);
  return text.includes(':') || (glob !== -1 && !text.slice(0, glob).includes('/'));
}

/**
 * Whether a tar or cpio word may name an archive on another machine: GNU tar and cpio read an archive name with a colon
 * and no slash before it (`host:x.tar`, `user@host:x`, `-fhost:x`, `--file=host:x`) as a remote one, and run the remote
 * shell (`/usr/bin/rsh`, perhaps ssh) with that host, to run `rmt` there (`tar -cf localhost:x src` ran it; found in
 * review). Any literal word with a colon counts (a `--transform=s:a:b:` too, asked about to be safe); a word the shell
 * expands, with a variable or a colon in it, or a glob right after an option that may take the archive's name (`-f`,
 * `cf`, `--file`), which may match a file named `h:x`.
 */
function mayNameRemoteArchive(word: ShellWord, previous: ShellWord | undefined): boolean {
  if (word.kind === 'literal') return word.value.includes(':');
  if (word.variables.length > 0 || word.text.includes(':')) return true;
  return previous?.kind === 'literal' && (/^-?[A-Za-z]*[fFOI][A-Za-z]*$/.test(previous.value) || /^--(?:f|fi|fil|file)$/.test(previous.value));
}

/**
 * Whether `words` (after the rule's tokens, the last of which is `lastToken`) carry a code-running option before
 * the options end, or for `make` an assignment anywhere. A word the shell expands is checked by what it is written
 * with, its quotes dropped and any expansion it starts with taken as empty: `--node-options="$X"`,
 * `SHELL=$HOME/x`, `${Z}--output=…` are those options.
 */
function carriesCodeOption(words: readonly ShellWord[], lastToken: string, spec: CodeOptions, anything: (word: ShellWord) => boolean): boolean {
  let previous = lastToken;
  let ended = false;
  for (const word of words) {
    const value = word.kind === 'literal' ? word.value : word.text.replace(/["']/g, '').replace(LEADING_EXPANSIONS, '');
    // make reads any word with `=` in it as a definition, and a word the shell expands may become one (a glob
    // matching a file named `X!=cmd`, a `$PWD` that `cd` led into such a folder).
    if (spec.assignments === true && (word.kind === 'dynamic' || (value.includes('=') && (ended || !value.startsWith('-'))))) return true;
    if (ended) {
      if (spec.noOptionsAfterEnd === true && (anything(word) || value.startsWith('-'))) return true;
      continue;
    }
    if (anything(word)) return true;
    if (word.kind === 'literal' && value === '--' && endsOptions(spec, previous)) {
      if (spec.assignments !== true && spec.noOptionsAfterEnd !== true) return false;
      ended = true;
      continue;
    }
    if (isCodeOption(value, spec)) return true;
    previous = value;
  }
  return false;
}

/**
 * Whether Go's flag package reads `value` as one of `spec`'s options: its whole name after one dash or two, its value
 * after `=` or in the next word. `go test` also reads each test flag with a `test.` prefix (`-test.coverprofile=…`)
 * and hands the test binary every flag it does not know, which the binary reads so (`-test.testlogfile=…` writes
 * there): any word of that form is asked about.
 */
function flagPackageOption(value: string, spec: CodeOptions): boolean {
  const flag = /^--?([^-=][^=]*)(=.*)?$/.exec(value);
  if (flag === null) return false;
  const [, flagName = '', assigned = ''] = flag;
  if (flagName.startsWith('test.')) return true;
  if (spec.harmlessForms?.has(`-${flagName}${assigned}`) === true) return false;
  return spec.options.includes(`-${flagName}`);
}

/**
 * Whether Gradle's parser reads `value` as one of `spec`'s options (`gradleParser`): `--name` or `--name=v` by its whole
 * name, short or long; after one dash, a whole long name (`-include-build`, `-parallel`, which is no `-p`), else its
 * first letter, whose value may be the rest (`-pdir`, `-p=dir`, `-parallel=true`).
 */
function gradleOption(value: string, spec: CodeOptions): boolean {
  if (spec.words?.test(value) === true) return true;
  const names = new Set(spec.options.map((option) => option.replace(/^--?/, '')));
  const long = /^--([^=]+)/.exec(value);
  if (long !== null) return names.has(long[1]!);
  const short = /^-([^-=])(.*)$/s.exec(value);
  if (short === null) return false;
  const whole = `${short[1]!}${short[2]!}`;
  return names.has(whole) || (!GRADLE_LONG_OPTIONS.has(whole) && names.has(short[1]!));
}

/**
 * Whether a rule's last token is one of `spec`'s options whose value is the next word: before the options end, and
 * with no value after `=` (`--pre=./decode.sh` names its program, and a rule for it covers the calls that add to it).
 */
function endsInCodeOption(tokens: readonly string[], spec: CodeOptions): boolean {
  const last = tokens.at(-1);
  if (tokens.length < 2 || last === undefined || last === '--' || last.includes('=') || spec.flags?.includes(last) === true) return false;
  for (let index = 1; index < tokens.length - 1; index += 1) {
    if (tokens[index] === '--' && endsOptions(spec, tokens[index - 1]!)) return false;
  }
  return isCodeOption(last, spec);
}

function endsOptions(spec: CodeOptions, previous: string): boolean {
  if (spec.endOfOptions !== undefined) return spec.endOfOptions === 'always';
  return !previous.startsWith('-') || previous === '-';
}

function isCodeOption(value: string, spec: CodeOptions): boolean {
  if (spec.flagPackage === true) return flagPackageOption(value, spec);
  if (spec.gradleParser === true) return gradleOption(value, spec);
  const dashed = value.startsWith('-') && value !== '-';
  if (spec.harmless !== undefined && dashed && !spec.harmless.has(value)) return true;
  if (spec.prefixes?.some((prefix) => value.startsWith(prefix)) === true) return true;
  if (spec.words?.test(value) === true) return true;
  // GNU getopt (tar, sort), git and make also take any unambiguous start of a long option: `--checkpoint-act=…`.
  const oneDashLong = spec.longWithOneDash === true && /^-[^-][^=]/.test(value);
  const longName = value.startsWith('--') ? value.split('=', 1)[0]! : oneDashLong ? `-${value.split('=', 1)[0]!}` : undefined;
  for (const option of spec.options) {
    if (value === option || value.startsWith(`${option}=`)) return true;
    if (longName !== undefined && longName.length > 2 && option.startsWith('--') && option.startsWith(longName)) return true;
    // A short option anywhere in a group, perhaps with its value attached: `-cfoo`, `-sf Makefile2`.
    if (option.length === 2 && !value.startsWith('--') && dashed && groupOptions(value, spec).includes(option[1]!)) return true;
  }
  return false;
}

/** The letters of a group of short options that are options: all, or up to the first that takes a value (`valueLetters`). */
function groupOptions(group: string, spec: CodeOptions): string {
  const letters = group.slice(1);
  const values = spec.valueLetters;
  const valueAt = values === undefined ? -1 : [...letters].findIndex((letter) => values.includes(letter));
  return valueAt === -1 ? letters : letters.slice(0, valueAt + 1);
}

/**
 * A deny rule catches a command whose name has the rule's first token as its last path part (`/bin/rm` and
 * `\rm` are `rm`), that carries every option of the rule in any order and short-option grouping (`rm -rf`
 * catches `rm -fr`, `rm -r -f`, `rm -R --force`), a long one also by any start of its name (`git reset --har`
 * for `--hard`), and the rule's other words in the same order among its arguments; a package manager's
 * subcommand also by its aliases and abbreviations (`npm i`, `npm pub`), git's push also as `send-pack` and with
 * the options it is spelled with otherwise (`gitPushImpliedOptions`). It can catch more than meant (`git log
 * push` for `git push`), never less for these spellings.
 */
export function deniesCommand(rule: CommandPrefix, words: ReachableWords): boolean {
  const [first, ...given] = words;
  const [ruleName = '', ...ruleArgs] = rule.tokens;
  if (first === undefined) return false;
  const name = commandBaseName(ruleName);
  const called = commandBaseName(first);
  // git runs the subcommand its program's name says: /usr/lib/git-core/git-push is `git push`.
  const dashed = /^git-([a-z][a-z0-9-]*)$/.exec(called);
  const args = name === 'git' && dashed !== null ? [dashed[1]!, ...given] : given;
  if (!(dashed !== null && name === 'git') && !installedNames(called).has(name)) return false;
  const aliases = OPTION_ALIASES.get(name) ?? new Map<string, string>();
  const { options, operands } = splitArguments(args, aliases, 'whole-and-letters');
  const { options: ruleOptions, operands: ruleOperands } = splitArguments(ruleArgs, aliases, 'letters');
  if (rule.exact && args.length !== ruleArgs.length) return false;
  if (name === 'git') for (const option of gitPushImpliedOptions(args)) options.add(option);
  for (const option of ruleOptions) if (!options.has(option) && !abbreviated(option, options)) return false;
  const wanted = SCRIPT_RUNNERS.has(name) ? denyRuleOperands(name, ruleOperands) : ruleOperands;
  let next = 0;
  for (const names of operandNames(name, operands)) {
    const operand = wanted[next];
    if (next < wanted.length && (operand === undefined ? names.size === 0 : names.has(operand))) next += 1;
  }
  return next === wanted.length;
}

/** The names each operand of a call goes by for a deny rule: as written, and as the program also reads it. */
function operandNames(name: string, operands: readonly (string | undefined)[]): ReadonlySet<string>[] {
  if (SCRIPT_RUNNERS.has(name)) return denyCallOperands(name, operands);
  return operands.map((operand) => new Set(operand === undefined ? [] : name === 'git' ? gitDenyNames(operand) : [operand]));
}

/**
 * Whether a call's long option is a start of the rule's long option `option` (`--har` of `--hard`, `--forc=x` of
 * `--force`): git, GNU getopt, curl and most parsers take an unambiguous start of an option's name for it. With a
 * value in the rule (`--output=x`), the call's must be the same.
 */
function abbreviated(option: string, options: ReadonlySet<string>): boolean {
  if (!option.startsWith('--')) return false;
  const [ruleName = '', ...ruleValue] = option.split('=');
  for (const written of options) {
    if (!written.startsWith('--')) continue;
    const [callName = '', ...callValue] = written.split('=');
    if (callName.length < 3 || !ruleName.startsWith(callName)) continue;
    if (!option.includes('=') || (written.includes('=') && callValue.join('=') === ruleValue.join('='))) return true;
  }
  return false;
}

function splitArguments(
  args: readonly (string | undefined)[],
  aliases: ReadonlyMap<string, string>,
  groups: 'whole-and-letters' | 'letters',
): { options: Set<string>; operands: (string | undefined)[] } {
  const options = new Set<string>();
  const operands: (string | undefined)[] = [];
  let afterDashes = false;
  for (const arg of args) {
    if (arg === '--' && !afterDashes) {
      afterDashes = true;
      continue;
    }
    if (afterDashes || arg === undefined || !arg.startsWith('-') || arg === '-') {
      operands.push(arg);
      continue;
    }
    const grouped = !arg.startsWith('--') && arg.length > 2;
    if (!grouped || groups === 'whole-and-letters') options.add(aliasOf(arg, aliases));
    // A call's `--force-with-lease=main` carries `--force-with-lease`.
    if (groups === 'whole-and-letters' && arg.startsWith('--') && arg.includes('=')) options.add(aliasOf(arg.split('=', 1)[0]!, aliases));
    if (grouped) for (const letter of arg.slice(1)) options.add(aliases.get(`-${letter}`) ?? `-${letter}`);
  }
  return { options, operands };
}

/**
 * The option `arg` stands for: its alias, also for any start of a long option that names one alias alone (GNU
 * getopt takes `rm --recu --forc` for `--recursive --force`).
 */
function aliasOf(arg: string, aliases: ReadonlyMap<string, string>): string {
  const named = aliases.has(arg) ? arg : longOptionNamed(arg, aliases.keys());
  return named === undefined ? arg : aliases.get(named)!;
}

/**
 * Whether a word the shell expands may become any text, an option included. `src/*.ts` and `~/x` keep their start;
 * `$NAME` of the environment (`ENVIRONMENT_ONLY`) takes the person's value, unless a command of the line may set
 * variables; any other variable may hold anything (`$_`, `$BASH_COMMAND`, `$1`, `$PWD` …), and unquoted it may
 * also split into several words. A word starting with a glob or a brace (`*`, `{--a,b}`) may become a file's name,
 * and a file can be named `--x=…`. An expansion that starts a word may be empty, so what follows it is the start:
 * `$HOME--node-options=…` is that option when `HOME` is empty.
 */
function mayBecomeAnything(word: Extract<ShellWord, { kind: 'dynamic' }>, line: LineFacts): boolean {
  if (word.variables.some((name) => line.setsVariables === true || !isEnvironmentOnly(name))) return true;
  const unquoted = word.text.replace(/^["']+/, '');
  const afterExpansions = unquoted.replace(LEADING_EXPANSIONS, '');
  if (afterExpansions !== unquoted && afterExpansions !== '') return !/^[A-Za-z0-9_./~]/.test(afterExpansions);
  return !/^[A-Za-z0-9_./~$]/.test(unquoted);
}

/** `$NAME`, `${NAME}`, `$1`, `$@` … at the start of a word, with the quotes around them. */
const LEADING_EXPANSIONS = /^(?:\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!_-])["']*)+/;
