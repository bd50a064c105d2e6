/**
 * One table of the programs the rules know by what they do, each named once with all of its traits; every list of
 * programs by trait that the rules read (exact-only, the wrappers deny rules look behind, the programs that run code
 * or a command they are given, the project's runners …) is built from it once, when this module loads. A program
 * added for one trait is seen with its others, so a gap between two lists shows in one line. Loaded in the command
 * reader's worker too: it imports nothing.
 */

/** What a program does that the rules must know; a trait not set is false. */
export interface ProgramTraits {
  /**
   * It runs whatever it is given (a shell, an interpreter, a wrapper, an editor or pager with a shell escape, a builtin
   * that changes how later commands run): "commands starting with `python`" would be "any program". An allow rule for
   * it must be exact, and a proposal for it is exact (`EXACT_ONLY_COMMANDS`, which takes in `followedWrapper` too).
   */
  exactOnly?: true;
  /**
   * A wrapper deny rules look behind: it runs the command given after its own words (`perf stat -- sh -c …`,
   * `setarch x86_64 sh -c …`, `ccache sh -c …`, `hyperfine 'sh -c …'`), so it is exact-only for allow rules as well
   * (`FOLLOWED_WRAPPERS`: the server's command-wrappers.ts keys its table of their options by these names).
   */
  followedWrapper?: true;
  /** A name util-linux installs as a link to `setarch`, running the command given for that architecture. */
  setarchLink?: true;
  /**
   * A shell whose `-c` line (fish's `--command`, PowerShell's `-Command`) deny rules read as a command line of its own,
   * also under a versioned name (`bash-5.2`, `ksh93`) (`SHELLS`).
   */
  shell?: true;
  /**
   * Also installed under a versioned or suffixed name, exact-only as well: `python3.11`, `perl5.36.0`, `bash-5.2`
   * (`VERSIONED_PROGRAMS`, which takes in every `codeRunner` too: `guile-3.0`, `lldb-15`, `gdb-multiarch`).
   */
  versionedNames?: true;
  /**
   * A shell, interpreter, debugger or editor: it runs the code or the command line it is given. Under a command deny
   * rule, a program given one of these as a word (`fakeroot-sysv -- sh -c '…'`, `--shell=bash`) is not plain; matched
   * with a version after the name too (`python3.12`, `bash-5.2`, `lua5.4`) (`CODE_RUNNERS`).
   */
  codeRunner?: true;
  /**
   * It runs a command its words name, or one a file it reads names (which a call may have written): wrappers the
   * wrapper tables do not strip, launchers, build tools that run what their build file says, session keepers, job
   * queues, terminal emulators, shells and interpreters run with a script. Under a command deny rule it is never plain
   * (`RUNS_NAMED_COMMANDS`).
   */
  runsNamedCommands?: true;
  /**
   * It runs a command by these subcommands (or options), looked for in any word after the name (`docker --context x
   * run …`; a word the shell computes may be one): containers, environments, secret stores. Under a command deny rule
   * it is not plain when one of them is given (`RUNS_BY_SUBCOMMAND`).
   */
  runsBySubcommand?: readonly string[];
  /**
   * A process manager or launcher whose only subcommands that run nothing are these: any other starts a script or a
   * command, or starts again what was started (`pm2 start ./x.sh`, `gio launch`), and under a command deny rule is not
   * plain (`PLAIN_SUBCOMMANDS`).
   */
  plainSubcommands?: readonly string[];
  /**
   * Its own subcommands: given a first word that is none of these (and no option; a rustup toolchain `+stable` is
   * skipped), it runs the program `<name>-<word>` it finds on PATH, a plugin, which a call may have put there
   * (`kubectl foo` runs `kubectl-foo`, `cargo foo` `cargo-foo`). Under a command deny rule such a first word is not
   * plain (`BUILTIN_SUBCOMMANDS`).
   */
  builtinSubcommands?: readonly string[];
  /**
   * A TeX engine or format, which runs a shell command a document writes when given its shell escape, or Lua
   * (luatex's `--lua`): then not plain under a command deny rule; `-dev` builds too (`TEX_ENGINES`).
   */
  texEngine?: true;
  /**
   * It takes what a pipe feeds it as data and never runs it, and no command, expression or script of its runs a
   * program: fed a pipe, it stays plain under a command deny rule (`DATA_FILTERS`).
   */
  dataFilter?: true;
  /**
   * Named by a rule's prefix, it takes its input, when not a terminal, as commands (`echo '!id' | sftp host`) or as the
   * words of the command it runs (`xargs`): fed a pipe, no rule covers it (`INPUT_COMMAND_READERS`).
   */
  inputCommandReader?: true;
  /**
   * It runs the program named after its runner subcommand (`uv run make test`, `pnpm exec git status`, `npx x`): that
   * program is judged as a command of its own. Its subcommands and harmless options are in the server's
   * program-runners.ts, keyed by these names (`RunnerProgram`).
   */
  runner?: true;
  /**
   * It runs what the project defines, by a name a rule cannot read the code of (a package script, a Makefile target,
   * the project's own program): fed a pipe, that may run the input, so no rule covers it (`PROJECT_RUNNERS`).
   */
  projectRunner?: true;
  /**
   * It looks for the program it is given among the project's (`node_modules/.bin`, a `bin` of a `package.json`, a
   * script of that name) before this machine's: a rule for `npm exec git status` means the machine's git, so given a
   * program the machine has, it is asked about (`PROJECT_FIRST_RUNNERS`).
   */
  projectFirst?: true;
  /**
   * It reads the folder it runs in without being given it (its build file, its project's scripts and config): that
   * folder is judged as an operand would be, so a rule does not cover it run where a `cd` may have led elsewhere
   * (`WORKING_FOLDER_PROGRAMS`, which takes in `projectRunner` too: the project it runs is the one it finds there).
   */
  workingFolder?: true;
}

/** Each program by its base name, with its traits. */
const PROGRAMS = {
  // Shells, interpreters, debuggers and editors: each runs the code or the command line it is given.
  sh: { exactOnly: true, shell: true, versionedNames: true, codeRunner: true },
  bash: { exactOnly: true, shell: true, versionedNames: true, codeRunner: true },
  dash: { exactOnly: true, shell: true, versionedNames: true, codeRunner: true },
  zsh: { exactOnly: true, shell: true, versionedNames: true, codeRunner: true },
  ksh: { exactOnly: true, shell: true, versionedNames: true, codeRunner: true },
  mksh: { exactOnly: true, shell: true, versionedNames: true, codeRunner: true },
  fish: { exactOnly: true, shell: true, versionedNames: true, codeRunner: true },
  csh: { exactOnly: true, shell: true, versionedNames: true, codeRunner: true },
  tcsh: { exactOnly: true, shell: true, versionedNames: true, codeRunner: true },
  ash: { exactOnly: true, shell: true, versionedNames: true, codeRunner: true },
  rbash: { exactOnly: true, shell: true, codeRunner: true },
  rzsh: { exactOnly: true, shell: true, codeRunner: true },
  rksh: { exactOnly: true, shell: true, codeRunner: true },
  // PowerShell's `-Command` (any start of it, `-c`), `-CommandWithArgs` and `-EncodedCommand`, read in command-wrappers.ts
  pwsh: { exactOnly: true, shell: true, versionedNames: true, codeRunner: true },
  powershell: { exactOnly: true, shell: true, codeRunner: true },
  busybox: { exactOnly: true, followedWrapper: true, codeRunner: true },
  toybox: { exactOnly: true, followedWrapper: true, codeRunner: true },
  python: { exactOnly: true, versionedNames: true, codeRunner: true },
  python2: { exactOnly: true, codeRunner: true },
  python3: { exactOnly: true, codeRunner: true },
  pypy: { exactOnly: true, versionedNames: true, codeRunner: true },
  pypy3: { exactOnly: true, codeRunner: true },
  ipython: { exactOnly: true, codeRunner: true },
  bpython: { exactOnly: true, codeRunner: true },
  node: { exactOnly: true, versionedNames: true, codeRunner: true },
  nodejs: { exactOnly: true, versionedNames: true, codeRunner: true },
  deno: { exactOnly: true, versionedNames: true, codeRunner: true, projectRunner: true },
  bun: { exactOnly: true, versionedNames: true, codeRunner: true, runner: true, projectRunner: true, projectFirst: true },
  perl: { exactOnly: true, versionedNames: true, codeRunner: true },
  ruby: { exactOnly: true, versionedNames: true, codeRunner: true },
  irb: { exactOnly: true, versionedNames: true, codeRunner: true },
  php: { exactOnly: true, versionedNames: true, codeRunner: true },
  lua: { exactOnly: true, versionedNames: true, codeRunner: true },
  luajit: { exactOnly: true, versionedNames: true, codeRunner: true },
  tclsh: { exactOnly: true, versionedNames: true, codeRunner: true },
  wish: { exactOnly: true, versionedNames: true, codeRunner: true },
  Rscript: { exactOnly: true, versionedNames: true, codeRunner: true },
  julia: { exactOnly: true, versionedNames: true, codeRunner: true },
  java: { exactOnly: true, versionedNames: true, codeRunner: true },
  jshell: { exactOnly: true, codeRunner: true },
  osascript: { exactOnly: true, codeRunner: true },
  awk: { exactOnly: true, versionedNames: true, codeRunner: true },
  gawk: { exactOnly: true, versionedNames: true, codeRunner: true },
  mawk: { exactOnly: true, codeRunner: true },
  nawk: { exactOnly: true, codeRunner: true },
  sed: { exactOnly: true, versionedNames: true, codeRunner: true },
  gsed: { exactOnly: true, codeRunner: true },
  // awk and sed under other names (`system()`, `e`, `r`/`w`), and Miller, whose DSL runs a command (`system`, `exec`)
  goawk: { exactOnly: true, codeRunner: true },
  frawk: { exactOnly: true, codeRunner: true },
  'original-awk': { exactOnly: true, codeRunner: true },
  bioawk: { exactOnly: true, codeRunner: true },
  ssed: { exactOnly: true, codeRunner: true },
  psed: { exactOnly: true, codeRunner: true },
  mlr: { exactOnly: true, codeRunner: true },
  // qsv's `py` and `luau` commands run the Python and Luau they are given (found in review)
  qsv: { exactOnly: true, codeRunner: true },
  // fx runs its arguments after the file as JavaScript (`x => require("fs")…`; found in review)
  fx: { exactOnly: true, codeRunner: true },
  // ug and ug+ are ugrep loading a `.ugrep` config of the working or home folder by themselves, whose `filter=`,
  // `pager=` and `view=` lines run commands (found in review)
  ug: { exactOnly: true },
  'ug+': { exactOnly: true },
  // xsltproc runs the stylesheet it is given, which reads any file (`document('/etc/shadow')`) and writes one
  // (`exsl:document`), as sed's script does (found in review)
  xsltproc: { exactOnly: true },
  // windres runs its preprocessor through a shell, with the `-D`, `-U`, `-I` and `--preprocessor-arg` values and the
  // input's name in its line, escaping only spaces and parentheses (`-D'X;sh x.sh'`), and an .rc file copies any file
  // it names into the output (`1 RCDATA "/home/me/.ssh/id_rsa"`); LLVM's runs `--preprocessor` too, and it and
  // llvm-rc copy what an RCDATA line names as well, under the versioned names Debian installs alone (`llvm-windres-14`,
  // `llvm-rc-14`); windres under a cross build's name is `isExactOnlyCommand`'s (found in review)
  windres: { exactOnly: true },
  'llvm-windres': { exactOnly: true, versionedNames: true },
  'llvm-rc': { exactOnly: true, versionedNames: true },
  expect: { exactOnly: true, codeRunner: true },
  erl: { exactOnly: true, codeRunner: true },
  escript: { exactOnly: true, codeRunner: true },
  guile: { exactOnly: true, codeRunner: true },
  tsx: { exactOnly: true, codeRunner: true },
  'ts-node': { exactOnly: true, codeRunner: true },
  gdb: { exactOnly: true, codeRunner: true },
  lldb: { exactOnly: true, codeRunner: true },
  // gdb's text interface and curses front end, which hand gdb their words (`cgdb -- -ex 'shell …'`); gdb and lldb under
  // a target's or a wrapper's prefix (`arm-none-eabi-gdb`, `rust-lldb`) are `isExactOnlyCommand`'s
  gdbtui: { exactOnly: true, codeRunner: true },
  cgdb: { exactOnly: true, codeRunner: true },
  sqlite3: { exactOnly: true, codeRunner: true },
  duckdb: { exactOnly: true, codeRunner: true },
  vi: { exactOnly: true, versionedNames: true, codeRunner: true },
  vim: { exactOnly: true, versionedNames: true, codeRunner: true },
  nvim: { exactOnly: true, versionedNames: true, codeRunner: true },
  emacs: { exactOnly: true, versionedNames: true, codeRunner: true },
  ed: { exactOnly: true, codeRunner: true },
  ex: { exactOnly: true, codeRunner: true },
  // Python on the JVM, GraalVM and microcontrollers, Haskell's compiler (`ghc -e`), Ruby's pry, CHICKEN's and Chez's
  // Scheme (`csi -e`, `scheme --script`), Forth, and JavaScript and ClojureScript script runners (`zx x.mjs`, `nbb -e`)
  jython: { exactOnly: true, codeRunner: true },
  graalpy: { exactOnly: true, codeRunner: true },
  micropython: { exactOnly: true, codeRunner: true },
  ghc: { exactOnly: true, codeRunner: true },
  pry: { exactOnly: true, codeRunner: true },
  csi: { exactOnly: true, codeRunner: true },
  scheme: { exactOnly: true, codeRunner: true },
  chez: { exactOnly: true, codeRunner: true },
  petite: { exactOnly: true, codeRunner: true },
  gforth: { exactOnly: true, codeRunner: true },
  zx: { exactOnly: true, codeRunner: true },
  nbb: { exactOnly: true, codeRunner: true },

  // Wrappers that run the command given after their own words.
  sudo: { exactOnly: true, followedWrapper: true },
  doas: { exactOnly: true, followedWrapper: true },
  env: { exactOnly: true, followedWrapper: true },
  nice: { exactOnly: true, followedWrapper: true },
  ionice: { exactOnly: true, followedWrapper: true },
  nohup: { exactOnly: true, followedWrapper: true },
  setsid: { exactOnly: true, followedWrapper: true },
  command: { exactOnly: true, followedWrapper: true },
  builtin: { exactOnly: true, followedWrapper: true },
  exec: { exactOnly: true, followedWrapper: true },
  time: { exactOnly: true, followedWrapper: true },
  stdbuf: { exactOnly: true, followedWrapper: true },
  timeout: { exactOnly: true, followedWrapper: true },
  chroot: { exactOnly: true, followedWrapper: true },
  taskset: { exactOnly: true, followedWrapper: true },
  flock: { exactOnly: true, followedWrapper: true },
  xargs: { exactOnly: true, followedWrapper: true, inputCommandReader: true },
  nsenter: { exactOnly: true, followedWrapper: true },
  unshare: { exactOnly: true, followedWrapper: true },
  strace: { exactOnly: true, followedWrapper: true },
  ltrace: { exactOnly: true, followedWrapper: true },
  unbuffer: { exactOnly: true, followedWrapper: true },
  coproc: { exactOnly: true, followedWrapper: true },
  prlimit: { exactOnly: true, followedWrapper: true },
  setpriv: { exactOnly: true, followedWrapper: true },
  fakeroot: { exactOnly: true, followedWrapper: true, runsNamedCommands: true },
  'ssh-agent': { exactOnly: true, followedWrapper: true },
  'dbus-run-session': { exactOnly: true, followedWrapper: true },
  'xvfb-run': { exactOnly: true, followedWrapper: true },
  'systemd-run': { exactOnly: true, followedWrapper: true },
  cgexec: { exactOnly: true, followedWrapper: true },
  numactl: { exactOnly: true, followedWrapper: true },
  valgrind: { exactOnly: true, followedWrapper: true },
  catchsegv: { exactOnly: true, followedWrapper: true },
  torsocks: { exactOnly: true, followedWrapper: true },
  proxychains: { exactOnly: true, followedWrapper: true },
  proxychains4: { exactOnly: true, followedWrapper: true },
  faketime: { exactOnly: true, followedWrapper: true },
  chronic: { exactOnly: true, followedWrapper: true },
  ifne: { exactOnly: true, followedWrapper: true },
  chrt: { exactOnly: true, followedWrapper: true },
  script: { exactOnly: true, followedWrapper: true },
  setarch: { followedWrapper: true },
  choom: { followedWrapper: true },
  rlwrap: { followedWrapper: true },
  chpst: { followedWrapper: true },
  softlimit: { followedWrapper: true },
  envdir: { followedWrapper: true },
  envuidgid: { followedWrapper: true },
  setuidgid: { followedWrapper: true },
  setlock: { followedWrapper: true },
  pgrphack: { followedWrapper: true },
  fghack: { followedWrapper: true },
  // s6's and s6-overlay's, the same (`s6-setuidgid user cmd`, `s6-envdir dir cmd`, `with-contenv cmd`), and the
  // user-switching `gosu user cmd`, `su-exec user cmd`
  's6-setuidgid': { followedWrapper: true },
  's6-envuidgid': { followedWrapper: true },
  's6-applyuidgid': { followedWrapper: true },
  's6-envdir': { followedWrapper: true },
  's6-softlimit': { followedWrapper: true },
  's6-setsid': { followedWrapper: true },
  's6-setlock': { followedWrapper: true },
  's6-fghack': { followedWrapper: true },
  'with-contenv': { followedWrapper: true },
  gosu: { followedWrapper: true },
  'su-exec': { followedWrapper: true },
  tini: { followedWrapper: true },
  'dumb-init': { followedWrapper: true },
  catatonit: { followedWrapper: true },
  ccache: { followedWrapper: true },
  sccache: { followedWrapper: true },
  'systemd-inhibit': { followedWrapper: true },
  run0: { followedWrapper: true },
  eatmydata: { exactOnly: true, followedWrapper: true },
  cpulimit: { exactOnly: true, followedWrapper: true },
  entr: { exactOnly: true, followedWrapper: true, runsNamedCommands: true },
  'dbus-launch': { exactOnly: true, followedWrapper: true },
  firejail: { exactOnly: true, followedWrapper: true },
  proot: { exactOnly: true, followedWrapper: true },
  // Read by a function of their own in command-wrappers.ts: `perf stat|record|trace … cmd`, `runcon CONTEXT cmd`,
  // `hyperfine '…'` (and `parallel cmd ::: args`, `sem cmd`, listed above).
  perf: { followedWrapper: true },
  runcon: { followedWrapper: true },
  hyperfine: { followedWrapper: true },

  // setarch's links named for an architecture (`linux64 rm -rf x`).
  linux32: { followedWrapper: true, setarchLink: true },
  linux64: { followedWrapper: true, setarchLink: true },
  i386: { followedWrapper: true, setarchLink: true },
  i486: { followedWrapper: true, setarchLink: true },
  i586: { followedWrapper: true, setarchLink: true },
  i686: { followedWrapper: true, setarchLink: true },
  x86_64: { followedWrapper: true, setarchLink: true },
  uname26: { followedWrapper: true, setarchLink: true },
  aarch64: { followedWrapper: true, setarchLink: true },
  armv7l: { followedWrapper: true, setarchLink: true },
  armv8l: { followedWrapper: true, setarchLink: true },
  ppc: { followedWrapper: true, setarchLink: true },
  ppc32: { followedWrapper: true, setarchLink: true },
  ppc64: { followedWrapper: true, setarchLink: true },
  ppc64le: { followedWrapper: true, setarchLink: true },
  s390: { followedWrapper: true, setarchLink: true },
  s390x: { followedWrapper: true, setarchLink: true },
  sparc: { followedWrapper: true, setarchLink: true },
  sparc32: { followedWrapper: true, setarchLink: true },
  sparc64: { followedWrapper: true, setarchLink: true },
  mips: { followedWrapper: true, setarchLink: true },
  mips64: { followedWrapper: true, setarchLink: true },
  // and wrappers of the JavaScript world and of GPU and emulator launchers: `cross-env A=1 cmd`, `env-cmd -f .env
  // cmd`, `primusrun cmd`, `box64 cmd`
  'cross-env': { followedWrapper: true },
  'env-cmd': { followedWrapper: true },
  primusrun: { followedWrapper: true },
  box64: { followedWrapper: true },
  box86: { followedWrapper: true },

  // More that run whatever they are given: interpreters and runners of any package, wrappers, shell builtins, editors
  // and pagers, programs whose arguments are a language that runs a shell command (`sqlite3 db '.shell …'`).
  cmd: { exactOnly: true },
  bunx: { exactOnly: true, runner: true, projectRunner: true, projectFirst: true },
  npx: { exactOnly: true, runner: true, projectRunner: true, projectFirst: true },
  pnpx: { exactOnly: true, runner: true, projectRunner: true, projectFirst: true },
  R: { exactOnly: true },
  dotnet: { exactOnly: true },
  uvx: { exactOnly: true, runner: true, projectRunner: true },
  pipx: { exactOnly: true },
  su: { exactOnly: true },
  runuser: { exactOnly: true },
  pkexec: { exactOnly: true, followedWrapper: true },
  parallel: { exactOnly: true, followedWrapper: true, inputCommandReader: true },
  watch: { exactOnly: true },
  bwrap: { exactOnly: true },
  ssh: { exactOnly: true },
  find: { exactOnly: true },
  // shell builtins that run words as code or change how the next commands run
  eval: { exactOnly: true },
  source: { exactOnly: true },
  '.': { exactOnly: true },
  alias: { exactOnly: true },
  trap: { exactOnly: true },
  set: { exactOnly: true },
  shopt: { exactOnly: true },
  enable: { exactOnly: true },
  hash: { exactOnly: true },
  export: { exactOnly: true },
  declare: { exactOnly: true },
  typeset: { exactOnly: true },
  readonly: { exactOnly: true },
  local: { exactOnly: true },
  unset: { exactOnly: true },
  fc: { exactOnly: true },
  bind: { exactOnly: true },
  // `jobs -x cmd …` runs the command given, its job specs replaced by process ids (found in review)
  jobs: { exactOnly: true },
  less: { exactOnly: true, versionedNames: true },
  more: { exactOnly: true },
  man: { exactOnly: true },
  // the same under the names Debian's alternatives and vim's links give them (`view -es -c '!…'` is vim)
  view: { exactOnly: true, versionedNames: true },
  rview: { exactOnly: true },
  vimdiff: { exactOnly: true },
  rvim: { exactOnly: true },
  gvim: { exactOnly: true },
  gview: { exactOnly: true },
  gvimdiff: { exactOnly: true },
  rgvim: { exactOnly: true },
  rgview: { exactOnly: true },
  evim: { exactOnly: true },
  eview: { exactOnly: true },
  vimx: { exactOnly: true },
  nvi: { exactOnly: true },
  editor: { exactOnly: true },
  'sensible-editor': { exactOnly: true },
  pager: { exactOnly: true },
  'sensible-pager': { exactOnly: true },
  most: { exactOnly: true },
  pg: { exactOnly: true },
  // more that run their arguments as code (`let` evaluates arithmetic, which runs `$(…)` in a subscript), and
  // builtins that set variables, whose values later words would take on
  let: { exactOnly: true },
  read: { exactOnly: true },
  mapfile: { exactOnly: true },
  readarray: { exactOnly: true },
  getopts: { exactOnly: true },
  py: { exactOnly: true },
  ipython3: { exactOnly: true },
  compgen: { exactOnly: true },
  complete: { exactOnly: true },
  sg: { exactOnly: true },
  newgrp: { exactOnly: true },
  sem: { exactOnly: true, followedWrapper: true },
  'run-parts': { exactOnly: true },
  at: { exactOnly: true },
  batch: { exactOnly: true },
  tmux: { exactOnly: true },
  screen: { exactOnly: true },
  'xdg-open': { exactOnly: true, runsNamedCommands: true },
  open: { exactOnly: true },
  // installs the commands it reads (a file, or its input with `-`) for cron to run later, outside any sandbox
  crontab: { exactOnly: true },
  dc: { exactOnly: true },
  mysql: { exactOnly: true },
  mariadb: { exactOnly: true },
  psql: { exactOnly: true },
  gnuplot: { exactOnly: true },
  m4: { exactOnly: true },
  // more whose words run code or a command (found in review): Perl's rename takes a Perl expression for its first
  // word (`rename 'system("…")' x`; Debian's `rename`, `prename`, `file-rename`), exiftool evaluates Perl in `-if`, `-p`
  // and `${TAG;…}`, erb runs a template's Ruby, moreutils' `zrun cmd x.gz` and e2fsprogs' `logsave log cmd` run cmd
  rename: { exactOnly: true },
  prename: { exactOnly: true },
  'file-rename': { exactOnly: true },
  'perl-rename': { exactOnly: true },
  exiftool: { exactOnly: true },
  erb: { exactOnly: true },
  zrun: { exactOnly: true },
  logsave: { exactOnly: true },
  // whose file names run a command: Ghostscript writes to `-sOutputFile='%pipe%cmd'` (`|cmd` too) through a shell, and
  // ImageMagick and GraphicsMagick read and write `'|cmd'` by running it, and run delegates and MSL scripts by a
  // name's prefix or a file's content (`msl:x`, `ephemeral:`), so their words are not judged one by one (found in review)
  gs: { exactOnly: true },
  gsc: { exactOnly: true },
  gsx: { exactOnly: true },
  ghostscript: { exactOnly: true },
  convert: { exactOnly: true },
  magick: { exactOnly: true },
  mogrify: { exactOnly: true },
  montage: { exactOnly: true },
  composite: { exactOnly: true },
  compare: { exactOnly: true },
  identify: { exactOnly: true },
  conjure: { exactOnly: true },
  stream: { exactOnly: true },
  animate: { exactOnly: true },
  display: { exactOnly: true },
  import: { exactOnly: true },
  gm: { exactOnly: true },
  'ts-node-esm': { exactOnly: true },
  esno: { exactOnly: true },
  'vite-node': { exactOnly: true },
  jiti: { exactOnly: true },
  'babel-node': { exactOnly: true },
  'node-dev': { exactOnly: true },
  nodemon: { exactOnly: true },
  cmake: { exactOnly: true },
  erlc: { exactOnly: true },
  capsh: { exactOnly: true },
  'fakeroot-sysv': { exactOnly: true, runsNamedCommands: true },
  'fakeroot-tcp': { exactOnly: true, runsNamedCommands: true },
  luit: { exactOnly: true },
  heaptrack: { exactOnly: true },
  memusage: { exactOnly: true },
  sotruss: { exactOnly: true },
  pg_virtualenv: { exactOnly: true },
  dotenv: { exactOnly: true },

  // Programs that run a command their words or a file they read name: wrappers of their own conventions (`pee`,
  // `systemd-cat ./x.sh`, `dtach -n sock …`), launchers of desktop files and default handlers, build tools that run what
  // their build file says (`make`, `ninja`, `just`, `rake`), TeX drivers that run an rc file or `$TEX` (`latexmk`),
  // `aria2c` (its config's `on-download-*` hooks), session keepers, lock, retry, limit and user-switching wrappers, job
  // queues and cluster launchers, tracers, file watchers and terminal emulators.
  pee: { exactOnly: true, runsNamedCommands: true },
  mispipe: { exactOnly: true, runsNamedCommands: true },
  lckdo: { exactOnly: true, runsNamedCommands: true },
  daemonize: { exactOnly: true, runsNamedCommands: true },
  fakechroot: { exactOnly: true, runsNamedCommands: true },
  'fakeroot-ng': { exactOnly: true, runsNamedCommands: true },
  watchexec: { exactOnly: true, runsNamedCommands: true },
  'gvfs-open': { exactOnly: true, runsNamedCommands: true },
  'kde-open': { exactOnly: true, runsNamedCommands: true },
  'kde-open5': { exactOnly: true, runsNamedCommands: true },
  'exo-open': { exactOnly: true, runsNamedCommands: true },
  'gtk-launch': { exactOnly: true, runsNamedCommands: true },
  'gio-launch-desktop': { exactOnly: true, runsNamedCommands: true },
  gapplication: { exactOnly: true, runsNamedCommands: true },
  kioclient: { exactOnly: true, runsNamedCommands: true },
  kioclient5: { exactOnly: true, runsNamedCommands: true },
  dex: { exactOnly: true, runsNamedCommands: true },
  make: { runsNamedCommands: true, projectRunner: true, workingFolder: true },
  gmake: { runsNamedCommands: true, projectRunner: true },
  bmake: { runsNamedCommands: true, projectRunner: true },
  pmake: { runsNamedCommands: true, projectRunner: true },
  bsdmake: { runsNamedCommands: true, projectRunner: true },
  makepp: { runsNamedCommands: true, projectRunner: true },
  remake: { runsNamedCommands: true, projectRunner: true },
  colormake: { runsNamedCommands: true, projectRunner: true },
  mk: { runsNamedCommands: true, projectRunner: true },
  ninja: { runsNamedCommands: true, projectRunner: true, workingFolder: true },
  samu: { runsNamedCommands: true, projectRunner: true, workingFolder: true },
  just: { runsNamedCommands: true, projectRunner: true },
  rake: { runsNamedCommands: true, projectRunner: true },
  scons: { runsNamedCommands: true, projectRunner: true },
  latexmk: { runsNamedCommands: true },
  texi2dvi: { runsNamedCommands: true },
  texi2pdf: { runsNamedCommands: true },
  pdftexi2dvi: { runsNamedCommands: true },
  aria2c: { runsNamedCommands: true },
  'systemd-cat': { exactOnly: true, runsNamedCommands: true },
  'systemd-nspawn': { exactOnly: true, runsNamedCommands: true },
  dtach: { exactOnly: true, runsNamedCommands: true },
  abduco: { exactOnly: true, runsNamedCommands: true },
  byobu: { exactOnly: true, runsNamedCommands: true },
  zellij: { exactOnly: true, runsNamedCommands: true },
  dvtm: { exactOnly: true, runsNamedCommands: true },
  reflex: { exactOnly: true, runsNamedCommands: true },
  'watchman-make': { exactOnly: true, runsNamedCommands: true },
  'when-changed': { exactOnly: true, runsNamedCommands: true },
  onchange: { exactOnly: true, runsNamedCommands: true },
  'cargo-watch': { exactOnly: true, runsNamedCommands: true },
  concurrently: { exactOnly: true, runsNamedCommands: true },
  trickle: { exactOnly: true, runsNamedCommands: true },
  nocache: { exactOnly: true, runsNamedCommands: true },
  caffeinate: { exactOnly: true, runsNamedCommands: true },
  scl: { exactOnly: true, runsNamedCommands: true },
  'with-lock-ex': { exactOnly: true, runsNamedCommands: true },
  lockrun: { exactOnly: true, runsNamedCommands: true },
  cset: { exactOnly: true, runsNamedCommands: true },
  retry: { exactOnly: true, runsNamedCommands: true },
  timelimit: { exactOnly: true, runsNamedCommands: true },
  'run-one': { exactOnly: true, runsNamedCommands: true },
  'run-this-one': { exactOnly: true, runsNamedCommands: true },
  'keep-one-running': { exactOnly: true, runsNamedCommands: true },
  'start-stop-daemon': { exactOnly: true, runsNamedCommands: true },
  daemon: { exactOnly: true, runsNamedCommands: true },
  schroot: { exactOnly: true, runsNamedCommands: true },
  rootlesskit: { exactOnly: true, runsNamedCommands: true },
  'flatpak-spawn': { exactOnly: true, runsNamedCommands: true },
  toolbox: { exactOnly: true, runsNamedCommands: true },
  'distrobox-enter': { exactOnly: true, runsNamedCommands: true },
  xinit: { exactOnly: true, runsNamedCommands: true },
  startx: { exactOnly: true, runsNamedCommands: true },
  sshpass: { exactOnly: true, runsNamedCommands: true },
  empty: { exactOnly: true, runsNamedCommands: true },
  faketty: { exactOnly: true, runsNamedCommands: true },
  mpirun: { exactOnly: true, runsNamedCommands: true },
  mpiexec: { exactOnly: true, runsNamedCommands: true },
  orterun: { exactOnly: true, runsNamedCommands: true },
  srun: { exactOnly: true, runsNamedCommands: true },
  salloc: { exactOnly: true, runsNamedCommands: true },
  sbatch: { exactOnly: true, runsNamedCommands: true },
  distcc: { exactOnly: true, runsNamedCommands: true },
  nq: { exactOnly: true, runsNamedCommands: true },
  tsp: { exactOnly: true, runsNamedCommands: true },
  pueue: { exactOnly: true, runsNamedCommands: true },
  bear: { exactOnly: true, runsNamedCommands: true },
  'intercept-build': { exactOnly: true, runsNamedCommands: true },
  'scan-build': { exactOnly: true, runsNamedCommands: true },
  rr: { exactOnly: true, runsNamedCommands: true },
  uftrace: { exactOnly: true, runsNamedCommands: true },
  multitime: { exactOnly: true, runsNamedCommands: true },
  'gnome-terminal': { exactOnly: true, runsNamedCommands: true },
  konsole: { exactOnly: true, runsNamedCommands: true },
  kitty: { exactOnly: true, runsNamedCommands: true },
  tilix: { exactOnly: true, runsNamedCommands: true },
  alacritty: { exactOnly: true, runsNamedCommands: true },
  wezterm: { exactOnly: true, runsNamedCommands: true },
  urxvt: { exactOnly: true, runsNamedCommands: true },
  terminator: { exactOnly: true, runsNamedCommands: true },
  foot: { exactOnly: true, runsNamedCommands: true },
  footclient: { exactOnly: true, runsNamedCommands: true },
  kitten: { exactOnly: true, runsNamedCommands: true },
  'mate-terminal': { exactOnly: true, runsNamedCommands: true },
  'xfce4-terminal': { exactOnly: true, runsNamedCommands: true },
  'x-terminal-emulator': { exactOnly: true, runsNamedCommands: true },
  lxterminal: { exactOnly: true, runsNamedCommands: true },
  qterminal: { exactOnly: true, runsNamedCommands: true },
  kgx: { exactOnly: true, runsNamedCommands: true },
  ptyxis: { exactOnly: true, runsNamedCommands: true },
  vglrun: { exactOnly: true, runsNamedCommands: true },
  'prime-run': { exactOnly: true, runsNamedCommands: true },
  gamemoderun: { exactOnly: true, runsNamedCommands: true },
  mangohud: { exactOnly: true, runsNamedCommands: true },
  qsub: { exactOnly: true, runsNamedCommands: true },
  bsub: { exactOnly: true, runsNamedCommands: true },
  'mpiexec.hydra': { exactOnly: true, runsNamedCommands: true },
  // sudoedit runs the editor $SUDO_EDITOR, $VISUAL or $EDITOR names; compose tools run what their compose file says;
  // `distrobox-host-exec` runs its words on the host; texlua, mtxrun and ConTeXt's `context` run Lua; arara and
  // pythontex run what the directives and code of a .tex file say
  sudoedit: { runsNamedCommands: true },
  'docker-compose': { runsNamedCommands: true },
  'podman-compose': { runsNamedCommands: true },
  'distrobox-host-exec': { exactOnly: true, runsNamedCommands: true },
  'distrobox-ephemeral': { exactOnly: true, runsNamedCommands: true },
  'distrobox-assemble': { runsNamedCommands: true },
  texlua: { exactOnly: true, codeRunner: true, runsNamedCommands: true },
  texluajit: { exactOnly: true, codeRunner: true, runsNamedCommands: true },
  mtxrun: { exactOnly: true, runsNamedCommands: true },
  context: { runsNamedCommands: true },
  arara: { runsNamedCommands: true },
  pythontex: { runsNamedCommands: true },
  // and more found in a sweep: remote shells, container and chroot entries, debug servers, s6 and runit chain-loaders
  mosh: { exactOnly: true, runsNamedCommands: true },
  autossh: { exactOnly: true, runsNamedCommands: true },
  'lxc-attach': { exactOnly: true, runsNamedCommands: true },
  'lxc-execute': { exactOnly: true, runsNamedCommands: true },
  'arch-chroot': { exactOnly: true, runsNamedCommands: true },
  gdbserver: { exactOnly: true, runsNamedCommands: true },
  execlineb: { exactOnly: true, runsNamedCommands: true },
  runsv: { runsNamedCommands: true },
  runsvdir: { runsNamedCommands: true },
  // and shells and interpreters that are not code runners above, which run the script their words name (as `python
  // x.py`) or the code of an option (`nu -c`, `racket -e`), exact-only as those are: lilypond runs the Scheme of a
  // score
  yash: { exactOnly: true, runsNamedCommands: true },
  oksh: { exactOnly: true, runsNamedCommands: true },
  loksh: { exactOnly: true, runsNamedCommands: true },
  posh: { exactOnly: true, runsNamedCommands: true },
  rc: { exactOnly: true, runsNamedCommands: true },
  es: { exactOnly: true, runsNamedCommands: true },
  nu: { exactOnly: true, runsNamedCommands: true },
  elvish: { exactOnly: true, runsNamedCommands: true },
  xonsh: { exactOnly: true, runsNamedCommands: true },
  octave: { exactOnly: true, runsNamedCommands: true },
  'octave-cli': { exactOnly: true, runsNamedCommands: true },
  maxima: { exactOnly: true, runsNamedCommands: true },
  asy: { exactOnly: true, runsNamedCommands: true },
  sage: { exactOnly: true, runsNamedCommands: true },
  gp: { exactOnly: true, runsNamedCommands: true },
  scilab: { exactOnly: true, runsNamedCommands: true },
  'scilab-cli': { exactOnly: true, runsNamedCommands: true },
  clisp: { exactOnly: true, runsNamedCommands: true },
  sbcl: { exactOnly: true, runsNamedCommands: true },
  ecl: { exactOnly: true, runsNamedCommands: true },
  racket: { exactOnly: true, runsNamedCommands: true },
  ocaml: { exactOnly: true, runsNamedCommands: true },
  ghci: { exactOnly: true, runsNamedCommands: true },
  runghc: { exactOnly: true, runsNamedCommands: true },
  runhaskell: { exactOnly: true, runsNamedCommands: true },
  swipl: { exactOnly: true, runsNamedCommands: true },
  gprolog: { exactOnly: true, runsNamedCommands: true },
  scala: { exactOnly: true, runsNamedCommands: true },
  'scala-cli': { exactOnly: true, runsNamedCommands: true },
  kotlin: { exactOnly: true, runsNamedCommands: true },
  groovy: { exactOnly: true, runsNamedCommands: true },
  elixir: { exactOnly: true, runsNamedCommands: true },
  iex: { exactOnly: true, runsNamedCommands: true },
  raku: { exactOnly: true, runsNamedCommands: true },
  rakudo: { exactOnly: true, runsNamedCommands: true },
  perl6: { exactOnly: true, runsNamedCommands: true },
  tcc: { exactOnly: true, runsNamedCommands: true },
  cling: { exactOnly: true, runsNamedCommands: true },
  clojure: { exactOnly: true, runsNamedCommands: true },
  clj: { exactOnly: true, runsNamedCommands: true },
  bb: { exactOnly: true, runsNamedCommands: true },
  hy: { exactOnly: true, runsNamedCommands: true },
  janet: { exactOnly: true, runsNamedCommands: true },
  fennel: { exactOnly: true, runsNamedCommands: true },
  moon: { exactOnly: true, runsNamedCommands: true },
  wren: { exactOnly: true, runsNamedCommands: true },
  rhino: { exactOnly: true, runsNamedCommands: true },
  jjs: { exactOnly: true, runsNamedCommands: true },
  qjs: { exactOnly: true, runsNamedCommands: true },
  gjs: { exactOnly: true, runsNamedCommands: true },
  lilypond: { exactOnly: true, runsNamedCommands: true },
  // and compilers and build tools that run the code they compile or build, whatever the subcommand: Swift runs a
  // script or a package's Package.swift, Crystal's macros and Nim's `staticExec` and NimScript (config.nims, a .nimble
  // file) run commands while compiling; Ansible runs a playbook's tasks, and all its tools load the plugins and run
  // the inventory scripts an ansible.cfg in the folder names; Nx runs the plugins its nx.json names for any command
  swift: { runsNamedCommands: true },
  crystal: { runsNamedCommands: true },
  nim: { runsNamedCommands: true },
  nimble: { runsNamedCommands: true },
  ansible: { exactOnly: true, runsNamedCommands: true },
  'ansible-playbook': { runsNamedCommands: true },
  'ansible-pull': { runsNamedCommands: true },
  'ansible-console': { runsNamedCommands: true },
  'ansible-inventory': { runsNamedCommands: true },
  // and more that run their remaining words as a command, or a shell line: GPU and emulator launchers, secret and
  // environment injectors, sandboxes and VMs
  optirun: { exactOnly: true, runsNamedCommands: true },
  'cross-env-shell': { exactOnly: true, runsNamedCommands: true },
  summon: { exactOnly: true, runsNamedCommands: true },
  nsjail: { exactOnly: true, runsNamedCommands: true },
  wine: { exactOnly: true, runsNamedCommands: true },
  wine64: { exactOnly: true, runsNamedCommands: true },
  lima: { exactOnly: true, runsNamedCommands: true },

  // Containers and their user namespaces (which run the command with the call's files), image builds and compose
  // files, cluster pods, desktop application sandboxes, language and package environments, and secret stores.
  docker: { runsBySubcommand: ['run', 'exec', 'create', 'start', 'restart', 'attach', 'service', 'compose', 'build', 'buildx', 'builder', 'stack', 'plugin'] },
  podman: { runsBySubcommand: ['run', 'exec', 'create', 'start', 'restart', 'attach', 'unshare', 'ssh', 'compose', 'build', 'play', 'kube', 'healthcheck', 'farm', 'runlabel'] },
  nerdctl: { runsBySubcommand: ['run', 'exec', 'create', 'start', 'restart', 'attach', 'compose', 'build', 'builder'] },
  buildah: { runsBySubcommand: ['run', 'unshare', 'build', 'bud'] },
  lxc: { runsBySubcommand: ['exec', 'shell'] },
  incus: { runsBySubcommand: ['exec', 'shell'] },
  kubectl: {
    runsBySubcommand: ['exec', 'run', 'debug', 'attach'],
    builtinSubcommands: [
      'create', 'expose', 'run', 'set', 'explain', 'get', 'edit', 'delete', 'rollout', 'scale', 'autoscale', 'certificate',
      'cluster-info', 'top', 'cordon', 'uncordon', 'drain', 'taint', 'describe', 'logs', 'attach', 'exec', 'port-forward',
      'proxy', 'cp', 'auth', 'debug', 'events', 'diff', 'apply', 'patch', 'replace', 'wait', 'kustomize', 'label',
      'annotate', 'completion', 'alpha', 'api-resources', 'api-versions', 'config', 'plugin', 'version', 'options', 'help',
    ],
  },
  // oc runs `oc-<word>` or `kubectl-<word>` from PATH for a word that is none of its commands, and `oc observe … --
  // cmd` a command for each change it sees.
  oc: {
    runsBySubcommand: ['exec', 'run', 'debug', 'attach', 'rsh', 'observe'],
    builtinSubcommands: [
      'create', 'expose', 'run', 'set', 'explain', 'get', 'edit', 'delete', 'rollout', 'rollback', 'scale', 'autoscale',
      'certificate', 'cluster-info', 'top', 'cordon', 'uncordon', 'drain', 'taint', 'describe', 'logs', 'attach', 'exec',
      'port-forward', 'proxy', 'cp', 'auth', 'debug', 'events', 'diff', 'apply', 'patch', 'replace', 'wait', 'kustomize',
      'label', 'annotate', 'completion', 'api-resources', 'api-versions', 'config', 'plugin', 'version', 'options', 'help',
      'login', 'logout', 'whoami', 'new-project', 'new-app', 'new-build', 'start-build', 'cancel-build', 'import-image',
      'tag', 'status', 'project', 'projects', 'extract', 'idle', 'image', 'observe', 'policy', 'process', 'registry',
      'rsh', 'rsync', 'secrets', 'serviceaccounts', 'adm', 'get-token',
    ],
  },
  // helm runs a plugin of its plugins folder (~/.local/share/helm/plugins) as a command of its own; gh an extension
  // (`gh-<word>`, ~/.local/share/gh/extensions) or an alias, which may be a shell line, for a word none of theirs
  // (aliases of their commands among them: `helm ls`, `gh cs`). gh's `copilot` downloads and runs a program.
  helm: {
    builtinSubcommands: [
      'completion', 'create', 'dependency', 'dep', 'dependencies', 'env', 'get', 'help', 'history', 'hist', 'install',
      'lint', 'list', 'ls', 'package', 'plugin', 'pull', 'fetch', 'push', 'registry', 'repo', 'rollback', 'search', 'show',
      'inspect', 'status', 'template', 'test', 'uninstall', 'un', 'delete', 'del', 'upgrade', 'verify', 'version',
    ],
  },
  gh: {
    builtinSubcommands: [
      'agent-task', 'alias', 'api', 'attestation', 'auth', 'browse', 'cache', 'codespace', 'cs', 'completion', 'config',
      'extension', 'extensions', 'ext', 'gist', 'gpg-key', 'issue', 'label', 'org', 'pr', 'preview', 'project', 'release',
      'repo', 'ruleset', 'rs', 'run', 'search', 'secret', 'ssh-key', 'status', 'variable', 'workflow', 'help', 'version',
      'accessibility', 'a11y',
    ],
  },
  flatpak: { runsBySubcommand: ['run', 'enter'] },
  snap: { runsBySubcommand: ['run'] },
  distrobox: { runsBySubcommand: ['enter', 'ephemeral', 'create', 'assemble'] },
  machinectl: { runsBySubcommand: ['shell'] },
  runc: { runsBySubcommand: ['run', 'exec', 'create', 'start'] },
  crun: { runsBySubcommand: ['run', 'exec', 'create', 'start'] },
  crictl: { runsBySubcommand: ['run', 'exec', 'start'] },
  ctr: { runsBySubcommand: ['run', 'exec', 'start'] },
  singularity: { runsBySubcommand: ['run', 'exec', 'shell', 'build', 'instance'] },
  apptainer: { runsBySubcommand: ['run', 'exec', 'shell', 'build', 'instance'] },
  udocker: { runsBySubcommand: ['run'] },
  multipass: { runsBySubcommand: ['exec', 'shell'] },
  minikube: { runsBySubcommand: ['ssh'] },
  // `vagrant ssh -c cmd` runs a command in the machine.
  vagrant: { runsBySubcommand: ['ssh', 'winrm', 'powershell'] },
  // Environments that run a command in them: `nix-shell --run`, `nix develop`, `guix shell -- …`, `stack exec`.
  'nix-shell': { runsBySubcommand: ['--run', '--command'] },
  nix: { runsBySubcommand: ['run', 'shell', 'develop'] },
  guix: { runsBySubcommand: ['shell', 'environment', 'container', 'repl'] },
  nvm: { runsBySubcommand: ['exec', 'run'] },
  opam: { runsBySubcommand: ['exec'] },
  stack: { runsBySubcommand: ['exec', 'run', 'runghc', 'runhaskell', 'eval', 'ghci', 'repl', 'script'] },
  cabal: { runsBySubcommand: ['exec', 'run', 'repl', 'v1-exec', 'v1-run', 'v1-repl', 'v2-exec', 'v2-run', 'v2-repl', 'new-exec', 'new-run', 'new-repl'] },
  // Secret stores that run a command with the secrets in its environment.
  'aws-vault': { runsBySubcommand: ['exec'] },
  op: { runsBySubcommand: ['run'] },
  doppler: { runsBySubcommand: ['run'] },
  dotenvx: { runsBySubcommand: ['run'] },
  infisical: { runsBySubcommand: ['run'] },
  chamber: { runsBySubcommand: ['exec'] },
  sops: { runsBySubcommand: ['exec-env', 'exec-file'] },
  xdotool: { runsBySubcommand: ['exec'] },
  // Virtual machines and dev containers that run a command, or the provisioning scripts and lifecycle commands their
  // files name (`limactl start x.yaml`, devcontainer.json's `initializeCommand` runs here, not in the container).
  limactl: { runsBySubcommand: ['shell', 'start', 'restart'] },
  colima: { runsBySubcommand: ['ssh', 'start', 'restart'] },
  devcontainer: { runsBySubcommand: ['exec', 'up', 'run-user-commands', 'set-up', 'build', 'test'] },
  // Compilers that run what they compile: `zig run`, `zig test` and `zig build` (build.zig is a program), `kotlinc
  // -script`.
  zig: { runsBySubcommand: ['run', 'build', 'test'] },
  kotlinc: { runsBySubcommand: ['-script', '-expression'] },

  // Process managers and launchers that run something by any subcommand but these.
  gio: { plainSubcommands: ['info', 'list', 'cat', 'tree', 'copy', 'move', 'rename', 'remove', 'trash', 'mkdir', 'save', 'set', 'monitor', 'version', 'help'] },
  pm2: { plainSubcommands: ['list', 'ls', 'l', 'ps', 'status', 'jlist', 'prettylist', 'describe', 'desc', 'info', 'show', 'logs', 'log', 'monit', 'flush', 'ping', 'stop', 'delete', 'del', 'kill', 'save', 'dump', 'help', 'version'] },
  forever: { plainSubcommands: ['list', 'stop', 'stopall', 'logs', 'cleanlogs', 'columns', 'config', 'set', 'clear', 'help'] },
  // `dart x.dart` runs the script, `dart run`, `dart test` and the build hooks of a package run its code; foreman runs
  // a Procfile's commands; lerna runs the packages' scripts or a command (`lerna exec -- cmd`).
  dart: { plainSubcommands: ['format', 'info', 'help', 'create'] },
  foreman: { plainSubcommands: ['check', 'export', 'help', 'version'] },
  lerna: { plainSubcommands: ['list', 'ls', 'la', 'll', 'info', 'changed', 'diff', 'help'] },

  // TeX engines and formats.
  tex: { texEngine: true },
  etex: { texEngine: true },
  pdftex: { texEngine: true },
  pdfetex: { texEngine: true },
  luatex: { texEngine: true },
  luahbtex: { texEngine: true },
  luajittex: { texEngine: true },
  xetex: { texEngine: true },
  ptex: { texEngine: true },
  eptex: { texEngine: true },
  uptex: { texEngine: true },
  euptex: { texEngine: true },
  aleph: { texEngine: true },
  latex: { texEngine: true },
  pdflatex: { texEngine: true },
  xelatex: { texEngine: true },
  lualatex: { texEngine: true },
  luajitlatex: { texEngine: true },
  dvilualatex: { texEngine: true },
  platex: { texEngine: true },
  uplatex: { texEngine: true },
  amstex: { texEngine: true },
  mpost: { texEngine: true },
  optex: { texEngine: true },
  lamed: { texEngine: true },

  // Runners of the program named after their subcommand: package managers, version managers, environments.
  npm: { runner: true, projectRunner: true, projectFirst: true, workingFolder: true },
  pnpm: { runner: true, projectRunner: true, projectFirst: true, workingFolder: true },
  yarn: { runner: true, projectRunner: true, projectFirst: true, workingFolder: true },
  corepack: { runner: true },
  pyenv: { runner: true },
  rbenv: { runner: true },
  nodenv: { runner: true },
  goenv: { runner: true },
  asdf: { runner: true },
  fnm: { runner: true },
  mise: { runner: true, workingFolder: true },
  rtx: { runner: true, workingFolder: true },
  volta: { runner: true },
  direnv: { runner: true },
  uv: { runner: true, projectRunner: true, workingFolder: true },
  poetry: { runner: true, projectRunner: true, workingFolder: true },
  pipenv: { runner: true, projectRunner: true },
  pdm: { runner: true, projectRunner: true },
  hatch: { runner: true, projectRunner: true },
  rye: { runner: true, projectRunner: true },
  pixi: { runner: true, projectRunner: true },
  conda: { runner: true, projectRunner: true },
  mamba: { runner: true, projectRunner: true },
  bundle: { runner: true, projectRunner: true },
  micromamba: { runner: true, workingFolder: true },

  // More that run what the project defines (a task, a target, the project's own program).
  task: { projectRunner: true },
  yarnpkg: { projectRunner: true, projectFirst: true },
  // turbo runs the tasks of every package of the repository (`turbo run test`, `turbo test`) by any subcommand but
  // these; Nx runs the plugins its nx.json names for any command (above).
  turbo: {
    projectRunner: true,
    workingFolder: true,
    plainSubcommands: ['ls', 'login', 'logout', 'link', 'unlink', 'info', 'telemetry', 'daemon', 'prune', 'query', 'bin', 'completion', 'docs', 'help'],
  },
  nx: { projectRunner: true, runsNamedCommands: true },
  // cargo runs `cargo-<word>` from ~/.cargo/bin or PATH for a subcommand of no other name (`cargo watch`); `go run`
  // builds and runs the files or the package its words name, `go generate` the commands its files' `//go:generate`
  // lines name, `go tool` a tool, go.mod's own too (`go env -w`, which sets what later go commands run: opaque-program.ts).
  cargo: {
    projectRunner: true,
    workingFolder: true,
    builtinSubcommands: [
      'add', 'b', 'bench', 'build', 'c', 'check', 'clean', 'clippy', 'config', 'd', 'doc', 'fetch', 'fix', 'fmt',
      'generate-lockfile', 'git-checkout', 'help', 'info', 'init', 'install', 'locate-project', 'login', 'logout',
      'metadata', 'new', 'owner', 'package', 'pkgid', 'publish', 'r', 'read-manifest', 'remove', 'report', 'rm', 'run',
      'rustc', 'rustdoc', 'search', 't', 'test', 'tree', 'uninstall', 'update', 'vendor', 'verify-project', 'version', 'yank',
    ],
  },
  go: { projectRunner: true, workingFolder: true, runsBySubcommand: ['run', 'generate', 'tool'] },
  tox: { projectRunner: true },
  nox: { projectRunner: true },
  composer: { projectRunner: true, workingFolder: true },
  gradle: { projectRunner: true },
  gradlew: { projectRunner: true },
  mvn: { projectRunner: true },
  mvnw: { projectRunner: true },
  sbt: { projectRunner: true },
  mix: { projectRunner: true },

  // Programs that take their input as commands, and run a line of this machine's shell for a `!…` one.
  sftp: { inputCommandReader: true },
  ftp: { inputCommandReader: true },
  lftp: { inputCommandReader: true },
  smbclient: { inputCommandReader: true },
  telnet: { inputCommandReader: true },

  // Filters of data: some write the files they are named (`tee`, `uniq in out`, `xxd -r - out`), as `cp` does. Not
  // `awk` or `sed` (`system()`, `e`: exact-only), not `git` (`git push --stdin` reads refspecs), not `less` (its `!`),
  // not `openssl` (`-engine` loads a library); their options that run a program (`sort --compress-program`, `rg
  // --pre`) are judged as for any call.
  cat: { dataFilter: true },
  head: { dataFilter: true },
  tail: { dataFilter: true },
  grep: { dataFilter: true },
  egrep: { dataFilter: true },
  fgrep: { dataFilter: true },
  rg: { dataFilter: true },
  wc: { dataFilter: true },
  sort: { dataFilter: true },
  uniq: { dataFilter: true },
  cut: { dataFilter: true },
  tr: { dataFilter: true },
  tee: { dataFilter: true },
  base64: { dataFilter: true },
  base32: { dataFilter: true },
  basenc: { dataFilter: true },
  xxd: { dataFilter: true },
  jq: { dataFilter: true },
  nl: { dataFilter: true },
  tac: { dataFilter: true },
  rev: { dataFilter: true },
  fold: { dataFilter: true },
  fmt: { dataFilter: true },
  paste: { dataFilter: true },
  column: { dataFilter: true },
  comm: { dataFilter: true },
  join: { dataFilter: true },
  od: { dataFilter: true },
  hexdump: { dataFilter: true },
  strings: { dataFilter: true },
  diff: { dataFilter: true },
  cmp: { dataFilter: true },
  md5sum: { dataFilter: true },
  sha1sum: { dataFilter: true },
  sha224sum: { dataFilter: true },
  sha256sum: { dataFilter: true },
  sha384sum: { dataFilter: true },
  sha512sum: { dataFilter: true },
  b2sum: { dataFilter: true },
  cksum: { dataFilter: true },
} as const satisfies Record<string, ProgramTraits>;

type Programs = typeof PROGRAMS;
/** The names of the table's programs that have `trait`. */
type Having<Trait extends keyof ProgramTraits> = { [Name in keyof Programs]: Programs[Name] extends Record<Trait, unknown> ? Name : never }[keyof Programs];

const ENTRIES: readonly (readonly [string, ProgramTraits])[] = Object.entries(PROGRAMS);

function having(trait: keyof ProgramTraits): string[] {
  return ENTRIES.filter(([, traits]) => traits[trait] !== undefined).map(([name]) => name);
}

function subcommandsBy(trait: 'runsBySubcommand' | 'plainSubcommands' | 'builtinSubcommands'): ReadonlyMap<string, ReadonlySet<string>> {
  return new Map(
    ENTRIES.flatMap(([name, traits]): [string, ReadonlySet<string>][] => {
      const subcommands = traits[trait];
      return subcommands === undefined ? [] : [[name, new Set(subcommands)]];
    }),
  );
}

export type FollowedWrapper = Having<'followedWrapper'>;
export type SetarchLink = Having<'setarchLink'>;
export type RunnerProgram = Having<'runner'>;

export const FOLLOWED_WRAPPERS = having('followedWrapper') as readonly FollowedWrapper[];
export const SETARCH_LINKS = having('setarchLink') as readonly SetarchLink[];
export const EXACT_ONLY_COMMANDS: ReadonlySet<string> = new Set([...having('exactOnly'), ...FOLLOWED_WRAPPERS]);
export const VERSIONED_PROGRAMS: readonly string[] = [...new Set([...having('versionedNames'), ...having('codeRunner')])];
export const SHELLS: ReadonlySet<string> = new Set(having('shell'));
export const CODE_RUNNERS: ReadonlySet<string> = new Set(having('codeRunner'));
export const RUNS_NAMED_COMMANDS: ReadonlySet<string> = new Set(having('runsNamedCommands'));
export const RUNS_BY_SUBCOMMAND = subcommandsBy('runsBySubcommand');
export const PLAIN_SUBCOMMANDS = subcommandsBy('plainSubcommands');
export const BUILTIN_SUBCOMMANDS = subcommandsBy('builtinSubcommands');
export const TEX_ENGINES: ReadonlySet<string> = new Set(having('texEngine'));
export const DATA_FILTERS: ReadonlySet<string> = new Set(having('dataFilter'));
export const INPUT_COMMAND_READERS: ReadonlySet<string> = new Set(having('inputCommandReader'));
export const PROJECT_RUNNERS: ReadonlySet<string> = new Set(having('projectRunner'));
export const PROJECT_FIRST_RUNNERS: ReadonlySet<string> = new Set(having('projectFirst'));
export const WORKING_FOLDER_PROGRAMS: ReadonlySet<string> = new Set([...having('workingFolder'), ...PROJECT_RUNNERS]);
