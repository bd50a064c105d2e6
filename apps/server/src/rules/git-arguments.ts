import path from 'node:path';
import type { GitTopAbove } from './git-top-above';
import { mayNameOutside, mayNameOutsideFolder, movedTo, type PathFacts } from './outside-workspace';
import type { ShellWord } from './shell-word';

/**
 * Git's own commands. Any other word after `git` is an alias from the repository's configuration (which a call
 * may have written: `alias.st = !touch PWNED`) or a `git-<name>` program found on PATH; git never lets an alias
 * hide one of these.
 */
const GIT_COMMANDS = new Set([
  'add', 'am', 'annotate', 'apply', 'archive', 'backfill', 'bisect', 'blame', 'branch', 'bugreport', 'bundle', 'cat-file',
  'check-attr', 'check-ignore', 'check-mailmap', 'check-ref-format', 'checkout', 'checkout-index', 'cherry', 'cherry-pick',
  'citool', 'clean', 'clone', 'column', 'commit', 'commit-graph', 'commit-tree', 'config', 'count-objects', 'credential',
  'describe', 'diagnose', 'diff', 'diff-files', 'diff-index', 'diff-tree', 'difftool', 'fast-export', 'fast-import',
  'fetch', 'fetch-pack', 'filter-branch', 'fmt-merge-msg', 'for-each-ref', 'for-each-repo', 'format-patch', 'fsck', 'gc',
  'get-tar-commit-id', 'grep', 'gui', 'hash-object', 'help', 'hook', 'index-pack', 'init', 'instaweb', 'interpret-trailers',
  'log', 'ls-files', 'ls-remote', 'ls-tree', 'mailinfo', 'mailsplit', 'maintenance', 'merge', 'merge-base', 'merge-file',
  'merge-index', 'merge-tree', 'mergetool', 'mktag', 'mktree', 'multi-pack-index', 'mv', 'name-rev', 'notes',
  'pack-objects', 'pack-redundant', 'pack-refs', 'patch-id', 'prune', 'prune-packed', 'pull', 'push', 'range-diff',
  'read-tree', 'rebase', 'reflog', 'refs', 'remote', 'repack', 'replace', 'replay', 'request-pull', 'rerere', 'reset',
  'restore', 'rev-list', 'rev-parse', 'revert', 'rm', 'send-pack', 'shortlog', 'show', 'show-branch', 'show-index',
  'show-ref', 'sparse-checkout', 'stash', 'status', 'stripspace', 'submodule', 'switch', 'symbolic-ref', 'tag',
  'unpack-file', 'unpack-objects', 'update-index', 'update-ref', 'update-server-info', 'var', 'verify-commit',
  'verify-pack', 'verify-tag', 'version', 'whatchanged', 'worktree', 'write-tree',
]);

/**
 * git's commands that run a command line they are given or configured with (`git bisect run …`, `git submodule
 * foreach …`, `git filter-branch --tree-filter …`, the tools of `difftool` and `mergetool`), which a rule for git's
 * name still covers.
 */
export const GIT_RUNS_COMMANDS: ReadonlySet<string> = new Set(['bisect', 'submodule', 'filter-branch', 'difftool', 'mergetool']);

/** Options git takes before its command: those that take the next word as their value, and those that take none. */
const GLOBAL_VALUES = ['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--config-env', '--attr-source'];
/**
 * Those of `GLOBAL_VALUES` that name the repository or the folder git works in. Another repository runs its own
 * configuration (`git -C ~/other status` runs its `core.fsmonitor`, `git log` its `core.pager`), and `init` or
 * `clone` there makes one there.
 */
const GLOBAL_PATHS = ['-C', '--git-dir', '--work-tree'];
const GLOBAL_FLAGS = [
  '-p', '-P', '--paginate', '--no-pager', '--bare', '--no-replace-objects', '--no-lazy-fetch', '--no-optional-locks',
  '--no-advice', '--literal-pathspecs', '--glob-pathspecs', '--noglob-pathspecs', '--icase-pathspecs', '--html-path',
  '--man-path', '--info-path', '--version', '-v', '--help', '-h',
];

/**
 * git's own options before its command in `words` (git's name first, undefined for a word the shell computes): where
 * the command stands, the folders its `-C`s name in order, and whether another option names a repository, a work
 * tree or config (`--git-dir`, `-c`), an option is not known, or one of them is computed (`other`).
 */
export function gitGlobalOptions(words: readonly (string | undefined)[]): { command: number; folders: string[]; other: boolean } {
  const folders: string[] = [];
  let other = false;
  let index = 1;
  for (let word = words[index]; index < words.length && (word === undefined || word.startsWith('-')); word = words[index]) {
    if (word === undefined) return { command: index, folders, other: true };
    const name = word.split('=', 1)[0]!;
    if (GLOBAL_FLAGS.includes(word)) {
      index += 1;
      continue;
    }
    if (!GLOBAL_VALUES.includes(name)) return { command: index, folders, other: true };
    const value = word.includes('=') ? word.slice(name.length + 1) : words[index + 1];
    if (name === '-C' && value === undefined) return { command: index + 1, folders, other: true };
    index += word.includes('=') ? 1 : 2;
    if (name !== '-C') other = true;
    else if (value !== undefined) folders.push(value);
  }
  return { command: index, folders, other };
}

/**
 * git's commands that read the repository and print, and change nothing a path of the work tree leads through (they
 * may refresh the index or fetch a partial clone's objects into `.git`): no link, no file of the work tree is made or
 * replaced. What a repository's configuration has them run (`core.fsmonitor`, a textconv) is the person's, whose keys
 * no covered call writes (`CODE_KEYS`).
 */
const GIT_READ_ONLY_COMMANDS = new Set([
  'status', 'log', 'show', 'diff', 'diff-files', 'diff-index', 'diff-tree', 'whatchanged', 'range-diff', 'blame', 'annotate',
  'shortlog', 'describe', 'rev-parse', 'rev-list', 'ls-files', 'ls-tree', 'cat-file', 'grep', 'merge-base', 'name-rev',
  'show-ref', 'for-each-ref', 'show-branch', 'cherry', 'count-objects', 'check-ignore', 'check-attr', 'var', 'version',
]);
/** Commands that only list when given these options alone (`git branch -a`, `git remote -v`), whole as written. */
const GIT_LISTING_FORMS: ReadonlyMap<string, readonly string[]> = new Map([
  ['branch', ['-a', '--all', '-r', '--remotes', '-v', '-vv', '--verbose', '--show-current', '--no-color']],
  ['tag', ['-l', '--list']],
  ['remote', ['-v', '--verbose']],
]);
/** git's own options that change nothing of what it reads or runs (the pager is `cat` in the terminal tool). */
const READ_ONLY_GLOBAL_FLAGS = [
  '-p', '-P', '--paginate', '--no-pager', '--no-replace-objects', '--no-lazy-fetch', '--no-optional-locks', '--no-advice',
  '--literal-pathspecs', '--glob-pathspecs', '--noglob-pathspecs', '--icase-pathspecs',
];

/**
 * Whether a call of git (`words`, git's name first, undefined for a word the shell computes) runs one of its commands
 * that only read (`GIT_READ_ONLY_COMMANDS`, or a listing form of `GIT_LISTING_FORMS`), in this repository and with its
 * own configuration: no global option but `READ_ONLY_GLOBAL_FLAGS` (`-C`, `--git-dir`, `-c`, `--exec-path` are asked
 * about). Its options that run a program or write a file (`--output`, `--ext-diff`, `-O`) are the caller's to refuse.
 */
export function gitCommandReadsOnly(words: readonly (string | undefined)[]): boolean {
  const { command } = gitGlobalOptions(words);
  if (words.slice(1, command).some((word) => word === undefined || !READ_ONLY_GLOBAL_FLAGS.includes(word))) return false;
  const name = words[command];
  if (name === undefined || words.slice(command + 1).includes(undefined)) return false;
  const listing = GIT_LISTING_FORMS.get(name);
  if (listing !== undefined) return words.slice(command + 1).every((word) => word !== undefined && listing.includes(word));
  return GIT_READ_ONLY_COMMANDS.has(name);
}

/** How one of git's commands that talks to another repository reads its arguments. */
interface RepositoryCommand {
  /** What its repository must be for a prefix rule to cover it: the name of a configured remote, or a source to clone. */
  repository: 'remote' | 'clone-source';
  /** Options that take the next word as their value unless given one (`--depth 1`, `-o x`, `-ox`). */
  values: readonly string[];
  /** Options that take no value, or one only with `=` (`--force-with-lease=main`). */
  flags: readonly string[];
  /** Options whose value is a repository (`push --repo=<repository>`). */
  repositoryValues?: readonly string[];
  /** Options after which every operand is a repository (`fetch --multiple a b`). */
  allRepositories?: readonly string[];
  /** Options that run a program this command alone reads so (`clone -u`, `ls-remote -u`: the upload-pack to run). */
  code?: readonly string[];
  /** Options a prefix rule covers only where it names them (`FETCH_ASKED`). */
  asked?: readonly string[];
  /** Options whose value is a local path, which may not lead outside the workspace (`clone --separate-git-dir=~/x`). */
  paths?: readonly string[];
  /** Options whose value is a `key=value` of the configuration, which may not set a key of `CODE_KEYS` (`clone -c`). */
  config?: readonly string[];
  /** `clone`: no operand, the source or the folder it makes, is a local path that may lead outside the workspace. */
  localOperands?: boolean;
  /**
   * `fetch`, `pull`: a refspec with a destination (`+x:main`, `'+refs/heads/*:refs/heads/*'`) overwrites that local
   * branch, and with `--prune` deletes the local branches its destination matches that the remote lacks.
   */
  localRefspecs?: boolean;
}

const FETCH_VALUES = [
  '--depth', '--deepen', '--shallow-since', '--shallow-exclude', '-j', '--jobs', '--upload-pack', '--refmap', '-o',
  '--server-option', '--negotiation-tip', '--filter', '--recurse-submodules-default', '--submodule-prefix',
];
const FETCH_FLAGS = [
  '--all', '--no-all', '-a', '--append', '--atomic', '--dry-run', '-f', '--force', '-k', '--keep', '--multiple',
  '--auto-maintenance', '--no-auto-maintenance', '--auto-gc', '--no-auto-gc', '--write-commit-graph',
  '--no-write-commit-graph', '--prefetch', '-p', '--prune', '-P', '--prune-tags', '-n', '--no-tags', '-t', '--tags',
  '--unshallow', '--update-shallow', '--update-head-ok', '-u', '-q', '--quiet', '-v', '--verbose', '--progress',
  '--no-progress', '--show-forced-updates', '--no-show-forced-updates', '-4', '--ipv4', '-6', '--ipv6', '--set-upstream',
  '--porcelain', '--no-write-fetch-head', '--write-fetch-head', '--recurse-submodules', '--no-recurse-submodules',
  '--negotiate-only', '--refetch', '--stdin',
];
/**
 * What a fetch does besides bringing in the remote's branches: `-u` lets a refspec overwrite the branch checked out,
 * `--depth`, `--deepen`, `--shallow-…`, `--unshallow` and `--update-shallow` change which history the clone keeps,
 * `--refmap` maps the remote's branches onto local ones, `--refetch` fetches everything anew, `--prune-tags` deletes
 * local tags the remote lacks, `--force` lets a refspec or `--tags` overwrite a local tag, `--stdin` reads refspecs
 * from its input, where a rule cannot see whether one has a destination (`printf '+x:main\n' | git fetch --stdin …`).
 */
const FETCH_ASKED = [
  '-u', '--update-head-ok', '--depth', '--deepen', '--shallow-since', '--shallow-exclude', '--unshallow',
  '--update-shallow', '--refmap', '--refetch', '-P', '--prune-tags', '-f', '--force', '--stdin',
];
const MERGE_VALUES = ['-s', '--strategy', '-X', '--strategy-option', '--cleanup'];
const MERGE_FLAGS = [
  '--commit', '--no-commit', '-e', '--edit', '--no-edit', '--ff', '--no-ff', '--ff-only', '--log', '--no-log', '--signoff',
  '--no-signoff', '--stat', '--no-stat', '--compact-summary', '--squash', '--no-squash', '--verify', '--no-verify',
  '--verify-signatures', '--no-verify-signatures', '--summary', '--no-summary', '--autostash', '--no-autostash',
  '--allow-unrelated-histories', '-r', '--rebase', '--no-rebase', '-S', '--gpg-sign', '--no-gpg-sign',
];

const REPOSITORY_COMMANDS = new Map<string, RepositoryCommand>([
  ['push', {
    repository: 'remote',
    values: ['-o', '--push-option', '--repo', '--receive-pack', '--exec', '--recurse-submodules'],
    flags: [
      '--all', '--branches', '--mirror', '--tags', '--follow-tags', '--no-follow-tags', '--atomic', '--no-atomic', '-n',
      '--dry-run', '--porcelain', '-d', '--delete', '--prune', '-f', '--force', '--force-with-lease',
      '--no-force-with-lease', '--force-if-includes', '--no-force-if-includes', '-u', '--set-upstream', '--thin',
      '--no-thin', '-q', '--quiet', '-v', '--verbose', '--progress', '--no-progress', '--no-verify', '--verify', '--signed',
      '--no-signed', '--no-recurse-submodules', '-4', '--ipv4', '-6', '--ipv6',
    ],
    repositoryValues: ['--repo'],
  }],
  ['fetch', { repository: 'remote', values: FETCH_VALUES, flags: FETCH_FLAGS, allRepositories: ['--multiple'], asked: FETCH_ASKED, localRefspecs: true }],
  ['pull', {
    repository: 'remote',
    values: [...FETCH_VALUES, ...MERGE_VALUES],
    flags: [...FETCH_FLAGS.filter((flag) => flag !== '--multiple'), ...MERGE_FLAGS],
    asked: FETCH_ASKED,
    localRefspecs: true,
  }],
  ['ls-remote', {
    repository: 'remote',
    values: ['--upload-pack', '--sort', '-o', '--server-option'],
    flags: ['--heads', '--branches', '-b', '-t', '--tags', '--refs', '-q', '--quiet', '--exit-code', '--get-url', '--symref'],
    code: ['-u', '--exec'],
  }],
  ['clone', {
    repository: 'clone-source',
    values: [
      '-o', '--origin', '-b', '--branch', '--revision', '--depth', '--shallow-since', '--shallow-exclude', '--reference',
      '--reference-if-able', '--separate-git-dir', '-j', '--jobs', '--filter', '--server-option', '--ref-format',
      '--template', '-c', '--config', '--upload-pack',
    ],
    flags: [
      '-l', '--local', '--no-local', '-s', '--shared', '--no-hardlinks', '-q', '--quiet', '-v', '--verbose', '--progress',
      '--no-progress', '-n', '--no-checkout', '--bare', '--mirror', '--sparse', '--single-branch', '--no-single-branch',
      '--no-tags', '--tags', '--recurse-submodules', '--recursive', '--no-recurse-submodules', '--shallow-submodules',
      '--no-shallow-submodules', '--remote-submodules', '--no-remote-submodules', '--also-filter-submodules',
      '--reject-shallow', '--no-reject-shallow', '--dissociate',
    ],
    // `--bundle-uri` fetches from a URI before the clone; the hooks of a `--template` folder run in the new repository.
    code: ['-u', '--bundle-uri', '--template'],
    // `--reference` reads another repository's objects, and points the new one there for good unless `--dissociate`.
    paths: ['--separate-git-dir', '--reference', '--reference-if-able'],
    config: ['-c', '--config'],
    localOperands: true,
  }],
]);

/** A remote's name: no path (`./x`, `../x`, `/x`, `~/x`), no URL (`https://…`, `host:path`, `ext::…`), no option. */
const REMOTE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
/** URL schemes git itself speaks; any other (`foo://`, `foo::`) runs a `git-remote-foo` helper (`ext::sh -c …` runs sh). */
const GIT_SCHEMES = new Set(['https', 'http', 'ssh', 'git', 'git+ssh', 'ssh+git', 'file']);
/** `git remote` forms that neither change the configuration nor name a URL. */
const REMOTE_READS = new Set(['show', 'get-url']);

/**
 * Whether a prefix rule may cover this git command (`words` from `git` on, the first `trusted` of them the rule's own
 * tokens): it works on no repository or folder outside the workspace (`-C`, `--git-dir`, `--work-tree`:
 * `GLOBAL_PATHS`), nor runs after a command of its line that may have led the shell out of it (`cd ~/other && git
 * status`: `PathFacts.leftWorkspace`); its command is one of git's own (not an alias the repository's configuration
 * defines); the repository a `push`, `fetch`, `pull` or `ls-remote` talks to is a remote's name, not a URL or path the
 * call names (`git push https://…` sends the repository there); a `fetch` or `pull` writes no local branch a refspec
 * names (`+x:main`), prunes nothing with one, and keeps the clone's history (`FETCH_ASKED`); `diff`, `grep`, `commit` and
 * `add` read no file outside the workspace and add no ignored one, `instaweb` starts no program the call names
 * (`NAMED_ONLY_OPTIONS`); `config` writes no key whose value git runs (`configCovered`); `blame` reads, `init` makes,
 * `worktree add`, `format-patch -o`, `bundle create`, `archive -o` … write nothing outside the workspace
 * (`PATH_OPTIONS`); `clone` reads from no remote helper (`ext::sh -c …`, `fd::3`), runs no upload-pack (`-u`) nor
 * template hooks, sets no key of `CODE_KEYS` in the new repository (`-c core.fsmonitor=…`), and reads or makes nothing
 * outside the workspace (its source, its folder, `--reference`, `--separate-git-dir`); a rule for `git remote` covers
 * only `show` and `get-url`, not `add` or `set-url`, which point a remote somewhere else; `init` makes no repository
 * others may write (`--shared`, `initCovered`); and where the workspace lies in a larger repository
 * (`PathFacts.gitTopAbove`), `show`, `log`, `diff`, `blame`, `add`, `ls-files` … read no file outside the workspace,
 * by a path, a top-relative `<rev>:<path>` or pathspec, or a diff of the whole work tree (`treeReadCovered`, and
 * `commitPrintsDiff`, `stashPrintsDiff`, `range-diff`); `exact`, the rule names the whole call. Options git's
 * tables here do not know make every operand be judged as the repository.
 */
export function gitArgumentsCovered(words: readonly ShellWord[], trusted: number, facts: PathFacts = {}, exact = false): boolean {
  const untrusted = (index: number) => index >= trusted;
  if (facts.leftWorkspace === true) return false;
  // Where git works once its `-C`s moved it: `git -C sub -C link` goes to `sub/link`.
  let here = facts;
  let index = 1;
  while (index < words.length) {
    const word = words[index]!;
    // A rule's tokens are literal: a word the shell computes is the call's.
    if (word.kind !== 'literal') return false;
    const value = word.value;
    if (!value.startsWith('-')) break;
    const name = value.split('=', 1)[0]!;
    if (GLOBAL_FLAGS.includes(value)) index += 1;
    else if (GLOBAL_VALUES.includes(name)) {
      const given = optionValue(words, index, value.includes('=') ? value.slice(name.length + 1) : undefined);
      const outside = name === '-C' ? mayNameOutsideFolder : mayNameOutside;
      if (GLOBAL_PATHS.includes(name) && untrusted(given.at) && given.word !== undefined && outside(given.word, here)) return false;
      if (name === '-C' && given.word?.kind === 'literal') here = movedTo(here, given.word.value);
      index = given.at + 1;
    } else return false;
  }
  const command = words[index];
  if (command === undefined) return true;
  if (command.kind !== 'literal' || !GIT_COMMANDS.has(command.value)) return false;
  const namedOnly = NAMED_ONLY_OPTIONS.get(command.value);
  if (namedOnly !== undefined && !namedOnlyOptionsCovered(namedOnly, words, index + 1, untrusted)) return false;
  if (command.value === 'config' && !configCovered(words, index + 1, untrusted, here)) return false;
  const paths = PATH_OPTIONS.get(command.value);
  if (paths !== undefined && !pathsCovered(paths, words, index + 1, untrusted, here)) return false;
  // `git diff a b` with either outside the repository compares the two files as `--no-index` does.
  if (command.value === 'diff' && words.slice(index + 1).some((word, offset) => untrusted(index + 1 + offset) && !isOption(word) && mayNameOutside(word, here))) return false;
  // Where the work tree's top lies above the workspace, git reads from there what the workspace does not hold.
  const above = here.gitTopAbove?.(here.fileSystemChanged === true ? undefined : (here.folder ?? here.workspace));
  // A repository with no work tree (a folder that is itself a Git directory), or one whose work tree the folder lies
  // outside, reads every path from the top of its tree: no pathspec keeps a read inside (`cd sub && git log -p -- .`).
  if (above?.pathsFromTop === true && (TREE_READS.has(command.value) || ['grep', 'stash', 'range-diff'].includes(command.value))) return false;
  if (command.value === 'grep' && !grepCovered(words, index + 1, untrusted, here, above)) return false;
  if (command.value === 'init' && !initCovered(words, index + 1, untrusted)) return false;
  if (above !== undefined && TREE_READS.has(command.value) && !treeReadCovered(command.value, words, index + 1, untrusted, here, above, exact)) return false;
  if (above !== undefined && command.value === 'commit' && !exact && commitPrintsDiff(words, index + 1)) return false;
  if (above !== undefined && command.value === 'stash' && !exact && stashPrintsDiff(words, index + 1)) return false;
  // `range-diff` prints the diffs of both series whole: git 2.39 takes a pathspec after `--` and does not limit them.
  if (above !== undefined && command.value === 'range-diff' && !exact) return false;
  if (command.value === 'remote') return remoteCovered(words, index + 1, untrusted);
  const spec = REPOSITORY_COMMANDS.get(command.value);
  return spec === undefined || repositoryCovered(spec, words, index + 1, untrusted, here);
}

/** `git grep`'s one-letter options that take a value (`-A 3`, `-A3`, `-iA3`): `-e` a pattern, `-f` a file of patterns. */
const GREP_SHORT_VALUES = 'ABCmef';
/** Its long options that take the next word as their value unless given one with `=` (a count: no path). */
const GREP_LONG_VALUES = ['--after-context', '--before-context', '--context', '--max-depth', '--threads', '--max-count'];

/**
 * Whether a prefix rule covers this `git grep` call (its words from `start` on): it reads no file outside the
 * workspace. Its options come first (git refuses one after the pattern), then the pattern, unless `-e` or `-f` gave
 * one, then revisions and paths, each of which must stay inside: `git grep --no-index secret ../other` prints the
 * lines of files outside the workspace where the workspace lies in a larger repository, and `-f` reads its patterns
 * from any file (`-f -`, the pipe, is allowed). Only options known to take a value skip one: an option taken for a
 * flag that takes a value leaves that value to be judged as the pattern, and every word after it as a path, never
 * the other way round.
 */
function grepCovered(words: readonly ShellWord[], start: number, untrusted: (index: number) => boolean, facts: PathFacts, above: GitTopAbove | undefined): boolean {
  const leadsOut = (at: number, word: ShellWord | undefined) =>
    word !== undefined && untrusted(at) && (mayNameOutside(word, facts) || (above !== undefined && colonWordLeadsOut(word, facts, above)));
  let patternGiven = false;
  let index = start;
  for (; index < words.length; index += 1) {
    const word = words[index]!;
    if (word.kind !== 'literal' || !isOption(word) || word.value === '--') break;
    const value = word.value;
    if (value.startsWith('--')) {
      const equals = value.indexOf('=');
      if (equals === -1 && GREP_LONG_VALUES.includes(value)) index += 1;
      continue;
    }
    for (let at = 1; at < value.length; at += 1) {
      const letter = value[at]!;
      // `-O`'s pager is the rest of its group (it runs: asked about as a code-running option before this).
      if (letter === 'O') break;
      if (!GREP_SHORT_VALUES.includes(letter)) continue;
      const given = optionValue(words, index, restOfGroup(value, at));
      if (letter === 'e' || letter === 'f') patternGiven = true;
      const fromPipe = given.word?.kind === 'literal' && given.word.value === '-';
      if (letter === 'f' && !fromPipe && (given.word === undefined || leadsOut(given.at, given.word))) return false;
      index = given.at;
      break;
    }
  }
  const first = words[index];
  if (!patternGiven && first !== undefined && !(first.kind === 'literal' && first.value === '--')) {
    // The pattern is no path, but a word the shell expands may become several: `-v ../other/*` gives git the first
    // file as the pattern and every other one as a path to print.
    if (first.kind !== 'literal' && leadsOut(index, first)) return false;
    index += 1;
  }
  for (; index < words.length; index += 1) {
    const word = words[index]!;
    if (word.kind === 'literal' && word.value === '--') continue;
    if (leadsOut(index, word)) return false;
  }
  return true;
}

/**
 * git's commands that read files of the work tree, the index or the history by a path, a pathspec or a
 * `<rev>:<path>`, judged by `treeReadCovered` where the work tree's top lies above the workspace.
 */
const TREE_READS = new Set([
  'diff', 'diff-files', 'diff-index', 'diff-tree', 'show', 'log', 'whatchanged', 'shortlog', 'blame', 'annotate', 'add',
  'ls-files', 'ls-tree', 'cat-file', 'status', 'checkout', 'restore', 'archive', 'format-patch',
]);
/**
 * Of those, the ones whose output without a pathspec is a diff of the whole work tree or commit (`format-patch` prints
 * each commit's with `--stdout`, and writes it into a file of the workspace without).
 */
const WHOLE_DIFFS = new Set(['diff', 'diff-files', 'diff-index', 'diff-tree', 'show', 'whatchanged', 'format-patch']);
/** Those that print a diff only when told to (`-p`, `--stat`, …: `LOG_QUIET_LONG` says which options do not). */
const LOGS = new Set(['log', 'shortlog']);
/** Those whose revisions may name a blob by its hash (`git show 8178c76d`), which a pathspec does not limit. */
const BLOB_READS = new Set(['diff', 'diff-tree', 'show', 'cat-file', 'archive']);
/**
 * `git cat-file`'s options that read the objects' names from its input (`echo HEAD:x | git cat-file --batch`) or take
 * every object (`--batch-all-objects`): no word of the line limits what it prints.
 */
const CAT_FILE_BATCHES = ['--batch', '--batch-check', '--batch-command', '--batch-all-objects'];
/** Where a `<rev>:<path>` operand is read as one (`git show HEAD:x`): not a message or a pathspec of `add` or `status`. */
const REV_PATHS = new Set(['diff', 'diff-tree', 'diff-index', 'show', 'log', 'whatchanged', 'blame', 'annotate', 'ls-tree', 'cat-file', 'checkout', 'restore', 'archive']);
/**
 * Options of git's revision walk that take the next word as their value unless given one with `=` (an author, a date:
 * no path), for the commands of `TREE_READS` that walk revisions (`LOG_VALUES_TAKEN`).
 */
const LOG_VALUES = ['--author', '--committer', '--grep', '--since', '--until', '--before', '--after', '--max-count', '--skip', '--since-as-filter'];
/** Commands that take `LOG_VALUES` with the next word; `-n` is a count only for the first three (blame's `--show-number`, shortlog's `--numbered`). */
const LOG_VALUES_TAKEN = new Set(['log', 'show', 'whatchanged', 'shortlog', 'blame', 'annotate', 'format-patch']);
const COUNT_N_TAKEN = new Set(['log', 'show', 'whatchanged']);
/**
 * Long options of `log` and `show` that print no file's content, name or change (commit messages, their order and
 * decoration only). Any other, or a start of one, counts as one that prints a diff.
 */
const LOG_QUIET_LONG = [
  '--oneline', '--graph', '--decorate', '--no-decorate', '--all', '--branches', '--tags', '--remotes', '--author',
  '--committer', '--grep', '--since', '--until', '--before', '--after', '--max-count', '--skip', '--reverse', '--format',
  '--pretty', '--date', '--abbrev-commit', '--no-abbrev-commit', '--abbrev', '--no-abbrev', '--no-merges', '--merges',
  '--first-parent', '--invert-grep', '--all-match', '--regexp-ignore-case', '--no-patch', '--color', '--no-color',
  '--relative-date', '--topo-order', '--date-order', '--author-date-order', '--ancestry-path', '--left-right',
  '--cherry-pick', '--cherry-mark', '--cherry', '--boundary', '--source', '--mailmap', '--use-mailmap', '--no-mailmap',
  '--parents', '--children', '--no-walk', '--do-walk', '--fixed-strings', '--basic-regexp', '--extended-regexp',
  '--perl-regexp', '--since-as-filter', '--min-parents', '--max-parents', '--no-min-parents', '--no-max-parents',
  '--show-linear-break', '--simplify-by-decoration', '--full-history', '--exclude', '--glob', '--not', '--no-notes',
  '--summary-only-never', '--count', '--numbered', '--email', '--sort', '--group',
];
/** Options of the commands of `TREE_READS` known to take no value: a word after one may be a pathspec. */
const NO_VALUE_FLAGS = ['-p', '-u', '--patch', '--stat', '--numstat', '--shortstat', '--name-only', '--name-status', '--raw', '--cached', '--staged', '--oneline', '--follow', '--graph', '--all', '-s', '--no-patch', '-A', '--all', '-u', '--update', '-v', '--verbose', '--stdout', '--root'];
/** One-letter options of `log`, `show` and `shortlog` that print no file's content (`-n 5`, `-5`, `-i`, `-s` for show). */
const LOG_QUIET_SHORT = 'niEFg0123456789sce';

/**
 * Whether a prefix rule covers this call of one of `TREE_READS` (its words from `start` on) where git's work tree
 * (`above.top`) lies above the workspace: no path, pathspec or `<rev>:<path>` the call adds reads outside the
 * workspace, from where git runs (`../private`) or from the top (`HEAD:private/x`, `:/private`, `:(top)private`,
 * `:0:private/x`); and no read of the whole work tree or commit prints the diff or content of files outside it
 * (`git diff`, `git log -p`, `git show`, `git diff -- ':!x'`, `git status -v`, `git add -A`, `git add ':!x'`, a hash that may be a
 * blob's, `git cat-file --batch`), unless a pathspec inside limits it. `git log` without a diff (commit messages), `git status` (names),
 * `git ls-files` and `git grep` (the folder git runs in, by default) stay covered. A word before `--` counts as a
 * pathspec that limits the read only when no `--` follows it (git then reads every word before one as a revision:
 * `git show HEAD --` with a file `HEAD` in the workspace shows the whole commit; without `--` git refuses a word that
 * names both), it names a file or folder now and follows no option (which may have taken it as its value). With an
 * exact rule, the person named the whole read.
 */
function treeReadCovered(command: string, words: readonly ShellWord[], start: number, untrusted: (index: number) => boolean, facts: PathFacts, above: GitTopAbove, exact: boolean): boolean {
  const from = facts.folder ?? facts.workspace ?? above.top;
  // A `--` that is an option's value (`--grep --`) is taken for the end of options here: more is judged a revision.
  const dashes = words.some((word, at) => at >= start && word.kind === 'literal' && word.value === '--');
  let ended = false;
  let limited = false;
  let diffs = false;
  let noPatch = false;
  let revisions = 0;
  let blobs = 0;
  let hashes = false;
  let batch = false;
  for (let index = start; index < words.length; index += 1) {
    const word = words[index]!;
    if (!ended && isOption(word)) {
      const value = (word as { value: string }).value;
      if (value === '--') {
        ended = true;
        continue;
      }
      const [written = ''] = value.split('=', 1);
      const takesNext = !value.includes('=') && ((LOG_VALUES_TAKEN.has(command) && LOG_VALUES.includes(written)) || (COUNT_N_TAKEN.has(command) && value === '-n'));
      if (command === 'status' && statusVerbose(written)) diffs = true;
      if (command === 'add') diffs = true;
      if (command === 'cat-file' && CAT_FILE_BATCHES.some((option) => abbreviates(written, option))) batch = true;
      if (written === '--no-patch' || value === '-s') noPatch = true;
      if (LOGS.has(command) || command === 'show') {
        const quiet = value.startsWith('--') ? LOG_QUIET_LONG.includes(written) : [...value.slice(1)].every((letter) => LOG_QUIET_SHORT.includes(letter));
        if (!quiet && !(command === 'show' && noPatch && value === '-s')) diffs = true;
      }
      // `-L <start>,<end>:<file>` and `-L :<function>:<file>`: the file is read from where git runs, and limits the log.
      if (LOGS.has(command) && value.startsWith('-L') && !value.startsWith('--')) {
        const given = optionValue(words, index, value.length > 2 ? value.slice(2) : undefined);
        const range = given.word;
        if (range?.kind !== 'literal' || (untrusted(given.at) && lineRangeLeadsOut(range.value, facts))) return false;
        limited = true;
        index = given.at;
        continue;
      }
      if (takesNext) {
        index += 1;
        // Judged as a path too, in case git takes it for one: a table wrong here must not let one through unread.
        const taken = words[index];
        if (taken?.kind === 'literal' && untrusted(index) && (mayNameOutside(taken, facts) || colonWordLeadsOut(taken, facts, above, true))) return false;
      }
      continue;
    }
    const before = words[index - 1];
    const afterOption = index > start && !ended && before?.kind === 'literal' && isOption(before) && !before.value.includes('=') && !NO_VALUE_FLAGS.includes(before.value);
    if (untrusted(index) && (mayNameOutside(word, facts) || (colonWordLeadsOut(word, facts, above, ended || !REV_PATHS.has(command))))) return false;
    if (word.kind !== 'literal') {
      if (!ended) revisions += 1;
      continue;
    }
    const value = word.value;
    const magic = pathspecMagic(value);
    if (ended || command === 'add' || command === 'status' || command === 'ls-files') {
      if (magic?.exclude !== true) limited = true;
      // `git add ':!x'` with no pathspec that includes adds all the rest of the whole work tree, as `-A` does.
      else if (command === 'add') diffs = true;
      continue;
    }
    if (magic === undefined && !dashes && !value.includes(':') && !afterOption && above.holds(path.resolve(from, value))) {
      limited = true;
      continue;
    }
    revisions += 1;
    if (revPath(value) !== undefined && !value.startsWith(':/')) blobs += 1;
    else if (/^[0-9a-f]{4,64}(?:[\^~].*)?$/i.test(value)) hashes = true;
  }
  // The full diff of each commit whose change a pathspec matches; format-patch's `--range-diff` compares the two series'
  // whole diffs, which the pathspec does not limit.
  const whole = (value: string) => value === '--full-diff' || (command === 'format-patch' && abbreviates(value.split('=', 1)[0]!, '--range-diff'));
  if (words.some((word, at) => at >= start && word.kind === 'literal' && whole(word.value))) limited = false;
  if ((hashes && BLOB_READS.has(command)) || batch) return false;
  if (exact || limited) return true;
  // Only blobs read by a path inside (`git show HEAD:app/x`, `git diff HEAD:a HEAD:b`): no diff of a commit. Not so for
  // format-patch, which takes a tree (`HEAD:app`) for the start of its range and prints every commit from the root.
  if (revisions > 0 && blobs === revisions && REV_PATHS.has(command)) return true;
  if (command === 'show') return noPatch && !diffs;
  return !diffs && !WHOLE_DIFFS.has(command);
}

/** Whether a long option as written (`--verb`) names `option` as git reads it: whole or a start of it (git takes an unambiguous one). */
const abbreviates = (written: string, option: string) => written.length > 2 && option.startsWith(written);

/** Whether `git status` is told `--verbose` (`-v`, `-sv`, `--verb`): it then prints the diff of what is staged, or of all. */
function statusVerbose(value: string): boolean {
  return value.startsWith('--') ? abbreviates(value, '--verbose') : value.includes('v');
}

/**
 * Whether `git commit` (its words from `start` on) prints a diff or hunks of the whole work tree (`-a`) or index: a dry
 * run (`--dry-run`, or `--long`, which is one) told `--verbose` prints `git status` with the diff of all it would
 * commit, as `git status -v` does; `--patch` prints each hunk before it reads an answer (from closed input too), and
 * `--interactive` prints them, or the diff, on the answers a pipe gives it. A group of one-letter options ends at one
 * that takes a value (`-Cv` reuses commit `v`'s message, `-mp` is the message `p`).
 */
function commitPrintsDiff(words: readonly ShellWord[], start: number): boolean {
  let dryRun = false;
  let verbose = false;
  for (const word of words.slice(start)) {
    if (word.kind !== 'literal' || !word.value.startsWith('-')) continue;
    const value = word.value;
    if (value === '--') break;
    if (value.startsWith('--')) {
      const written = value.split('=', 1)[0]!;
      if (abbreviates(written, '--patch') || abbreviates(written, '--interactive')) return true;
      if (abbreviates(written, '--dry-run') || abbreviates(written, '--long')) dryRun = true;
      if (abbreviates(written, '--verbose')) verbose = true;
      continue;
    }
    for (const letter of value.slice(1)) {
      if (COMMIT_SHORT_VALUES.includes(letter)) break;
      if (letter === 'p') return true;
      if (letter === 'v') verbose = true;
    }
  }
  return dryRun && verbose;
}
/** `git stash show`'s options that print the names of the stash's files and counts only, as its default `--stat` does. */
const STASH_SHOW_NAMES = [
  '--stat', '--numstat', '--shortstat', '--name-only', '--name-status', '--summary', '--compact-summary', '--dirstat',
  '--include-untracked', '--only-untracked', '--no-include-untracked',
];

/**
 * Whether `git stash` (its words from `start` on, after `stash`) prints a stash's diff or the work tree's hunks: a
 * stash holds changes of the whole work tree, and `show` and `list` take no pathspec to limit them (git 2.39). `show`
 * prints a patch with `-p`, `-U1`, `--word-diff` …: any option but those of `STASH_SHOW_NAMES` and `-u` counts;
 * `list` hands its options to `git log`, judged as the log's (`LOG_QUIET_LONG`), where `-c` prints the diff of a
 * stash, which is a merge; `push` (also bare, or `save`) with `--patch` prints each hunk before it reads an answer, from
 * closed input too. A word the shell computes may be such an option. A `-c stash.showPatch` before `stash` is asked
 * about as any `-c` on the line is.
 */
function stashPrintsDiff(words: readonly ShellWord[], start: number): boolean {
  const first = words[start];
  const named = first?.kind === 'literal' && !first.value.startsWith('-');
  const subcommand = named ? first.value : 'push';
  if (!['show', 'list', 'push', 'save'].includes(subcommand)) return false;
  const rest = words.slice(named ? start + 1 : start);
  for (const [at, word] of rest.entries()) {
    const before = rest[at - 1];
    // `-m`'s message (`push -m "$msg"`) is no option.
    const message = before?.kind === 'literal' && ['-m', '--message'].includes(before.value);
    if (word.kind !== 'literal') {
      if (message) continue;
      return true;
    }
    const value = word.value;
    if (value === '--') return false;
    if (!value.startsWith('-') || value === '-' || message) continue;
    const written = value.split('=', 1)[0]!;
    const long = value.startsWith('--');
    if (subcommand === 'show' && (long ? !STASH_SHOW_NAMES.includes(written) : [...value.slice(1)].some((letter) => letter !== 'u'))) return true;
    if (subcommand === 'list' && (long ? !LOG_QUIET_LONG.includes(written) : [...value.slice(1)].some((letter) => letter === 'c' || !LOG_QUIET_SHORT.includes(letter)))) return true;
    if (subcommand === 'push' || subcommand === 'save') {
      if (long ? abbreviates(written, '--patch') : /^-[^m]*p/.test(value)) return true;
    }
  }
  return false;
}

/** `git commit`'s one-letter options that take a value, the rest of their group or the next word. */
const COMMIT_SHORT_VALUES = 'FtmCcSu';

/**
 * Whether a word with a colon, read as git would where the work tree's top is `above.top`, may name a file outside
 * the workspace: as a pathspec with magic (`:/x`, `:(top)x` from the top, `:(glob)x` from where git runs, `:!x` not
 * judged here), and, unless `pathspecOnly`, as `<rev>:<path>` or `:<stage>:<path>` (from the top, unless it starts
 * with `./` or `../`). Words without a colon are `mayNameOutside`'s.
 */
function colonWordLeadsOut(word: ShellWord, facts: PathFacts, above: GitTopAbove, pathspecOnly = false): boolean {
  if (word.kind !== 'literal') return word.text.includes(':');
  const value = word.value;
  const fromTop = (rest: string) => mayNameOutside({ kind: 'literal', value: `${above.top}/${rest}` }, facts);
  const fromHere = (rest: string) => mayNameOutside({ kind: 'literal', value: rest }, facts);
  const magic = pathspecMagic(value);
  if (magic !== undefined && (magic.top ? fromTop(magic.rest) : fromHere(magic.rest))) return true;
  if (pathspecOnly) return false;
  const rest = revPath(value);
  if (rest === undefined) return false;
  // `:/text` is the newest commit whose message matches: a revision, judged as one.
  if (value.startsWith(':/')) return false;
  return rest === '.' || rest === '..' || rest.startsWith('./') || rest.startsWith('../') ? fromHere(rest) : fromTop(rest);
}

/** The path of a `<rev>:<path>`, `:<path>` or `:<stage>:<path>` (a colon inside `@{…}` is the revision's), or undefined. */
function revPath(value: string): string | undefined {
  let depth = 0;
  for (let at = 0; at < value.length; at += 1) {
    const letter = value[at];
    if (letter === '{') depth += 1;
    else if (letter === '}') depth = Math.max(0, depth - 1);
    else if (letter === ':' && depth === 0) {
      const rest = value.slice(at + 1);
      return at === 0 && /^[0-3]:/.test(rest) ? rest.slice(2) : rest;
    }
  }
  return undefined;
}

/**
 * A pathspec's magic (`gitglossary`): `:(top,exclude)x` in long form, `:/x`, `:!x`, `:^x` (and `:/!:x`) in short; undefined
 * for a word without. `top`: read from the top of the work tree; `exclude`: everything but what it names.
 */
function pathspecMagic(value: string): { top: boolean; exclude: boolean; rest: string } | undefined {
  if (!value.startsWith(':')) return undefined;
  if (value.startsWith(':(')) {
    const close = value.indexOf(')');
    if (close === -1) return { top: true, exclude: true, rest: '' };
    const names = value.slice(2, close).split(',').map((name) => name.trim().split(':', 1)[0]!);
    return { top: names.includes('top'), exclude: names.includes('exclude'), rest: value.slice(close + 1) };
  }
  let at = 1;
  while (at < value.length && '/!^'.includes(value[at]!)) at += 1;
  const marks = value.slice(1, at);
  if (value[at] === ':') at += 1;
  return { top: marks.includes('/'), exclude: marks.includes('!') || marks.includes('^'), rest: value.slice(at) };
}

/** Whether a `log -L` range's file (after any of its colons: a function's pattern may hold one) may lead outside. */
function lineRangeLeadsOut(range: string, facts: PathFacts): boolean {
  return [...range].some((letter, at) => letter === ':' && mayNameOutside({ kind: 'literal', value: range.slice(at + 1) }, facts));
}

/**
 * `git init --shared[=<permissions>]` makes the repository writable to the group (`--shared`, `group`, `true`) or to
 * everyone (`all`, `world`, `everybody`, `0777`…), on an existing one too: another local user may then write its
 * `config` or hooks, which run as the person. Only `false` and `umask` leave it the person's alone.
 */
function initCovered(words: readonly ShellWord[], start: number, untrusted: (index: number) => boolean): boolean {
  for (let index = start; index < words.length; index += 1) {
    const word = words[index]!;
    if (!untrusted(index)) continue;
    if (word.kind !== 'literal') return false;
    if (word.value === '--') return true;
    const [written = '', value] = word.value.split('=', 2);
    if (written.length < 4 || !'--shared'.startsWith(written)) continue;
    if (value === undefined || !['false', 'umask'].includes(value.toLowerCase())) return false;
  }
  return true;
}

/** Options of one git command that take a file from anywhere, name a program to run, or add a file git leaves alone. */
interface NamedOnlyOptions {
  /** Their one-letter forms (`-F`), also in a group (`-aF x`). */
  short: string;
  /** Their long forms, also any start of one (`--fil=x`), as git's option parser reads them. */
  long: readonly string[];
  /** Letters that take the rest of their group, or the next word, as their value (`-mFix` is a message). */
  values?: string;
  /** Those of `short` and `long` that read standard input when their value is `-` (`-F -`): allowed so. */
  fromPipe?: readonly string[];
  /** The command reads its options past a `--` too (`git instaweb -- -d 'touch PWNED lighttpd'` runs the touch). */
  pastDashes?: boolean;
}

/**
 * Options a prefix rule covers only where it names them. `diff --no-index` compares any two files (`/etc/shadow
 * /dev/null`), and what it prints goes to the model; `commit -F`/`--file` and `-t`/`--template` take the message
 * from any file, which `git log` then shows (`-F -`, the message from the pipe, is allowed), and `--amend` replaces
 * the last commit, perhaps the person's, where a rule for `git commit` only adds to the history; `add -f`/`--force`
 * adds a file the repository ignores (`.env`) to what the next commit, and push, takes along; `--pathspec-from-file` reads
 * any file, and git names a line of it that matches no file in its error. `instaweb -d`/`--httpd` is a command line
 * it runs (`--httpd='touch PWNED; lighttpd'`), `-b`/`--browser` and `-m`/`--module-path` name a program or the
 * modules the web server loads. `hash-object --stdin-paths` reads the files named on its input, from anywhere.
 * `branch -u`/`--set-upstream-to`/`-t`/`--track`, `checkout -t`, `switch -t` and `fetch`'s and `pull`'s
 * `--set-upstream` set where a bare push or pull goes.
 */
const NAMED_ONLY_OPTIONS = new Map<string, NamedOnlyOptions>([
  ['diff', { short: '', long: ['--no-index'] }],
  ['commit', { short: 'Ft', long: ['--file', '--template', '--pathspec-from-file', '--amend'], values: 'mCcSu', fromPipe: ['-F', '--file', '--pathspec-from-file'] }],
  ['add', { short: 'f', long: ['--force', '--pathspec-from-file'], fromPipe: ['--pathspec-from-file'] }],
  ['instaweb', { short: 'dbm', long: ['--httpd', '--browser', '--module-path'], values: 'p', pastDashes: true }],
  // Hashes, and with `-w` keeps, each file named on standard input (`echo ~/.ssh/id_rsa | git hash-object -w …`).
  ['hash-object', { short: '', long: ['--stdin-paths'] }],
  // Each writes a branch's upstream (`branch.<name>.remote` and `.merge`), where a bare `git push` or `git pull` then
  // goes: another remote of the repository than the one the person's rule for the bare command was made on.
  ['branch', { short: 'ut', long: ['--set-upstream-to', '--track', '--set-upstream'] }],
  ['checkout', { short: 't', long: ['--track'], values: 'bB' }],
  ['switch', { short: 't', long: ['--track'], values: 'cC' }],
  // `fetch`'s and `pull`'s `-u` is `--update-head-ok` (asked by `FETCH_ASKED`), not this.
  ['fetch', { short: '', long: ['--set-upstream'] }],
  ['pull', { short: '', long: ['--set-upstream'] }],
]);

function isOption(word: ShellWord): boolean {
  return word.kind === 'literal' && word.value.startsWith('-') && word.value !== '-';
}

/** Whether no word from `start` on that the call adds, before a `--`, is one of `options` (`NamedOnlyOptions`). */
function namedOnlyOptionsCovered(options: NamedOnlyOptions, words: readonly ShellWord[], start: number, untrusted: (index: number) => boolean): boolean {
  for (let index = start; index < words.length; index += 1) {
    const word = words[index]!;
    if (word.kind !== 'literal' || !isOption(word)) continue;
    const value = word.value;
    if (value === '--') {
      if (options.pastDashes === true) continue;
      return true;
    }
    if (!untrusted(index)) continue;
    const next = words[index + 1];
    const fromPipe = next?.kind === 'literal' && next.value === '-';
    if (value.startsWith('--')) {
      const [written = '', assigned] = value.split('=', 2);
      const named = options.long.find((option) => option === written || (written.length > 2 && option.startsWith(written)));
      if (named === undefined) continue;
      if (options.fromPipe?.includes(named) === true && (assigned === '-' || (assigned === undefined && fromPipe))) continue;
      return false;
    }
    for (let at = 1; at < value.length; at += 1) {
      const letter = value[at]!;
      if (options.short.includes(letter)) {
        const attached = value.slice(at + 1);
        if (options.fromPipe?.includes(`-${letter}`) === true && (attached === '-' || (attached === '' && fromPipe))) break;
        return false;
      }
      if (options.values?.includes(letter) === true) break;
    }
  }
  return true;
}

/** Options of one git command whose value is a file or folder, and whether its operands are: none may lead outside. */
interface PathOptions {
  /** One-letter forms, also in a group (`-wS x`), their value the rest of the group or the next word. */
  short: string;
  /** Long forms, also any start of one (`--cont=x`), their value after `=` or the next word. */
  long: readonly string[];
  /** Letters that take the rest of their group, or the next word, as a value that is no path (`-L 1,5`). */
  values?: string;
  /** Long options whose value is no path, of which a path option's name is a start (`--ignore-rev` of `--ignore-revs-file`). */
  others?: readonly string[];
  /** Every word that is no option names a folder (`git init /tmp/x`). */
  operands?: boolean;
}

/**
 * `blame --contents <file>` (and `annotate`) prints any file, line by line, and `--ignore-revs-file`/`-S` read one;
 * `init <folder>` and `init --separate-git-dir=<folder>` make a repository elsewhere (without the sandbox, over
 * whatever is there). Commands that write where they are told: `worktree add <folder>` checks a branch out there
 * (`move`, `repair` too), `format-patch -o`/`--output-directory`, `bundle create <file>`, `archive -o`/`--output`,
 * `bugreport -o` and `diagnose -o`, `checkout-index --prefix=<folder>/`, `merge-file <current> …` (over `<current>`),
 * `pack-objects <base-name>`, `index-pack -o`, `fast-export` and `fast-import --export-marks`, `commit-graph` and
 * `multi-pack-index --object-dir`. And ones that read a file into what the call shows or writes:
 * `format-patch --signature-file`, `archive --add-file` and `--remote` (another repository), `hash-object <file>`
 * (`-w` keeps it for `git show`), `index-pack <pack>`, `--import-marks`, `ls-files -X`/`--exclude-from` (and
 * `--exclude-per-directory`, a name joined to each folder's). A path outside the workspace is asked about, as `git
 * diff`'s are.
 */
const BLAME_PATHS: PathOptions = { short: 'S', long: ['--contents', '--ignore-revs-file'], values: 'L', others: ['--ignore-rev'] };
const MARKS = ['--export-marks', '--import-marks', '--import-marks-if-exists'];
const REPORT_PATHS: PathOptions = { short: 'o', long: ['--output-directory'], values: 's' };
const PATH_OPTIONS = new Map<string, PathOptions>([
  ['blame', BLAME_PATHS],
  ['annotate', BLAME_PATHS],
  ['init', { short: '', long: ['--separate-git-dir'], values: 'b', operands: true }],
  ['worktree', { short: '', long: [], values: 'bB', operands: true }],
  // `-v` is the reroll count; `-S`, `-G`, `-I`, `-O` take a value as `git diff` does.
  ['format-patch', { short: 'o', long: ['--output-directory', '--signature-file', '--description-file'], values: 'vSGIO' }],
  ['bundle', { short: '', long: [], operands: true }],
  ['archive', { short: 'o', long: ['--output', '--remote', '--add-file'] }],
  ['bugreport', REPORT_PATHS],
  ['diagnose', REPORT_PATHS],
  ['checkout-index', { short: '', long: ['--prefix'] }],
  ['ls-files', { short: 'X', long: ['--exclude-from', '--exclude-per-directory'], values: 'x', others: ['--exclude'] }],
  ['merge-file', { short: '', long: [], values: 'L', operands: true }],
  ['pack-objects', { short: '', long: [], operands: true }],
  ['index-pack', { short: 'o', long: [], operands: true }],
  ['hash-object', { short: '', long: [], values: 't', operands: true }],
  ['fast-export', { short: '', long: MARKS }],
  ['fast-import', { short: '', long: [...MARKS, '--export-pack-edges'] }],
  ['commit-graph', { short: '', long: ['--object-dir'] }],
  ['multi-pack-index', { short: '', long: ['--object-dir'] }],
]);

function pathsCovered(options: PathOptions, words: readonly ShellWord[], start: number, untrusted: (index: number) => boolean, facts: PathFacts): boolean {
  const leadsOut = (at: number, word: ShellWord | undefined) => word !== undefined && untrusted(at) && mayNameOutside(word, facts);
  let ended = false;
  for (let index = start; index < words.length; index += 1) {
    const word = words[index]!;
    if (ended || !isOption(word)) {
      if (options.operands === true && leadsOut(index, word)) return false;
      continue;
    }
    const value = (word as { value: string }).value;
    if (value === '--') {
      ended = true;
      continue;
    }
    if (value.startsWith('--')) {
      const equals = value.indexOf('=');
      const written = equals === -1 ? value : value.slice(0, equals);
      if (options.others?.includes(written) === true) continue;
      if (!options.long.some((option) => option === written || (written.length > 2 && option.startsWith(written)))) continue;
      const given = optionValue(words, index, equals === -1 ? undefined : value.slice(equals + 1));
      if (leadsOut(given.at, given.word)) return false;
      index = given.at;
      continue;
    }
    for (let at = 1; at < value.length; at += 1) {
      const letter = value[at]!;
      if (!options.short.includes(letter) && options.values?.includes(letter) !== true) continue;
      const given = optionValue(words, index, restOfGroup(value, at));
      if (options.short.includes(letter) && leadsOut(given.at, given.word)) return false;
      index = given.at;
      break;
    }
  }
  return true;
}

/**
 * Keys of git's configuration whose value is a program or command line git runs later (`core.fsmonitor` at the next
 * `git status`, `core.pager`, `diff.<driver>.textconv`, `filter.<driver>.smudge`, `credential.helper`,
 * `remote.<name>.uploadpack` …), that let it run one (`protocol.ext.allow` lets `ext::sh -c …` remotes run, a
 * `remote.<name>.vcs` runs `git-remote-<vcs>`), that read more configuration from a file (`include.path`), or that
 * send what a covered `git push` or `git fetch origin` talks to elsewhere (`remote.<name>.url`, `url.<base>.insteadOf`)
 * or make git work on files elsewhere (`core.worktree`), and the like (below). Written `section.name`, `section.*.name` for any subsection,
 * or `section` for each of its keys.
 */
const CODE_KEYS = [
  'core.fsmonitor', 'core.pager', 'core.editor', 'core.sshcommand', 'core.askpass', 'core.hookspath', 'core.gitproxy',
  'core.alternaterefscommand', 'core.worktree', 'sequence.editor', 'diff.external', 'diff.*.command', 'diff.*.textconv',
  'merge.*.driver', 'interactive.difffilter', 'uploadpack.packobjectshook', 'imap.tunnel', 'web.browser', 'help.browser',
  'remote.*.uploadpack', 'remote.*.receivepack', 'remote.*.vcs', 'remote.*.url', 'remote.*.pushurl', 'submodule.*.update',
  'extensions.worktreeconfig', 'pager', 'filter', 'credential', 'gpg', 'difftool', 'mergetool', 'guitool', 'browser',
  'man', 'instaweb', 'sendemail', 'trailer', 'tar', 'hook', 'lfs', 'trace2', 'url', 'protocol', 'include', 'includeif',
  // Where a bare `git push` or `git fetch` goes and what it sends or takes (`remote.pushDefault`, `branch.<b>.pushRemote`
  // name another remote, a refspec or `push.default` other branches), through which proxy; files git reads from
  // wherever a value names (a commit template, a signature, an order or attributes file, a template folder); aliases,
  // whose `!…` the shell runs.
  'remote.pushdefault', 'branch.*.pushremote', 'branch.*.remote', 'branch.*.merge', 'push.default', 'remote.*.push',
  'remote.*.fetch', 'remote.*.mirror', 'remote.*.proxy', 'http.proxy', 'http.*.proxy', 'commit.template',
  'format.signaturefile', 'diff.orderfile', 'blame.ignorerevsfile', 'core.attributesfile', 'core.excludesfile',
  'init.templatedir', 'alias',
  // Makes the files git writes in the repository writable to the group or to everyone (`0777`), its config and hooks too.
  'core.sharedrepository',
];

/** Whether `key` (`section.name`, `section.subsection.name`) is one of `CODE_KEYS`; git reads section and name in any case. */
function isCodeKey(key: string): boolean {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  const section = (first === -1 ? key : key.slice(0, first)).toLowerCase();
  const name = key.slice(last + 1).toLowerCase();
  const subsection = first !== last;
  return CODE_KEYS.some((pattern) => {
    const parts = pattern.split('.');
    if (parts[0] !== section) return false;
    if (parts.length === 1) return true;
    return parts.length === 3 ? subsection && parts[2] === name : !subsection && first !== -1 && parts[1] === name;
  });
}

const CONFIG_LONG = [
  '--global', '--system', '--local', '--worktree', '--file', '--blob', '--get', '--get-all', '--get-regexp', '--get-urlmatch',
  '--replace-all', '--add', '--unset', '--unset-all', '--rename-section', '--remove-section', '--list', '--fixed-value',
  '--edit', '--get-color', '--get-colorbool', '--type', '--bool', '--int', '--bool-or-int', '--bool-or-str', '--path',
  '--expiry-date', '--no-type', '--null', '--name-only', '--includes', '--no-includes', '--show-origin', '--show-scope',
  '--default', '--comment', '--value', '--url', '--all', '--append', '--regexp', '--show-names',
];
/** `git config`'s options that take the next word as their value unless given one with `=`. */
const CONFIG_VALUES = ['--file', '--blob', '--type', '--default', '--comment', '--value', '--url'];
/** `git config`'s forms that only read: `--get`, `--list`, … and the subcommands `get` and `list` (git 2.46 on). */
const CONFIG_READS = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '--get-color', '--get-colorbool'];
/** Its forms that change the configuration: without one of these or of `CONFIG_READS`, `git config <name>` reads. */
const CONFIG_WRITES = ['--replace-all', '--add', '--unset', '--unset-all', '--rename-section', '--remove-section', '--edit'];
const CONFIG_SUBCOMMANDS = ['list', 'get', 'set', 'unset', 'rename-section', 'remove-section', 'edit'];

/**
 * Whether a prefix rule covers this `git config` call (its words from `start` on): it writes no key of `CODE_KEYS`
 * (to any file: `--global`, `--file`, the repository's own config, which the call may have made writable by creating
 * the repository: `git init sub; git -C sub config core.fsmonitor 'rm -rf ~; false'; git -C sub status`), does not
 * open an editor (`-e`, `edit`), rename a section (`--rename-section x core`), or use a file outside the workspace
 * (`--file ~/.bashrc`). Reading (`--get core.pager`, `--list`, `git config core.pager`) is covered. A key the shell
 * computes, or a form these tables do not know, counts as a write of such a key.
 */
function configCovered(words: readonly ShellWord[], start: number, untrusted: (index: number) => boolean, facts: PathFacts): boolean {
  const operands: number[] = [];
  let reads = false;
  let writes = false;
  let sure = true;
  let ended = false;
  const startOf = (written: string, option: string) => written.length > 2 && option.startsWith(written);
  const fileOk = (at: number, value: ShellWord | undefined) => !untrusted(at) || (value !== undefined && !mayNameOutside(value, facts));
  for (let index = start; index < words.length; index += 1) {
    const word = words[index]!;
    if (word.kind !== 'literal' || ended || !word.value.startsWith('-') || word.value === '-') {
      operands.push(index);
      continue;
    }
    const value = word.value;
    if (value === '--') {
      ended = true;
      continue;
    }
    if (value.startsWith('--')) {
      const equals = value.indexOf('=');
      const written = equals === -1 ? value : value.slice(0, equals);
      if (untrusted(index) && (startOf(written, '--edit') || startOf(written, '--rename-section'))) return false;
      const option = CONFIG_LONG.includes(written) ? written : uniqueStart(written, CONFIG_LONG);
      if (option === undefined) {
        sure = false;
        continue;
      }
      if (CONFIG_READS.includes(option)) reads = true;
      if (CONFIG_WRITES.includes(option)) writes = true;
      const takesNext = equals === -1 && CONFIG_VALUES.includes(option);
      const given = optionValue(words, index, takesNext ? undefined : value.slice(equals + 1));
      if (option === '--file' && !fileOk(given.at, given.word)) return false;
      index = given.at;
      continue;
    }
    for (let at = 1; at < value.length; at += 1) {
      const letter = value[at]!;
      if (letter === 'e' && untrusted(index)) return false;
      if (letter === 'l') reads = true;
      if (letter === 'f' || letter === 't') {
        const given = optionValue(words, index, restOfGroup(value, at));
        if (letter === 'f' && !fileOk(given.at, given.word)) return false;
        index = given.at;
        break;
      }
      if (letter !== 'z') sure = false;
    }
  }
  const [first] = operands;
  const firstWord = first === start ? words[first] : undefined;
  const subcommand = firstWord?.kind === 'literal' && CONFIG_SUBCOMMANDS.includes(firstWord.value) ? firstWord.value : undefined;
  if (subcommand !== undefined && untrusted(first!) && ['edit', 'rename-section'].includes(subcommand)) return false;
  if (subcommand === 'get' || subcommand === 'list') return true;
  if (reads || (sure && !writes && subcommand === undefined && operands.length === 1)) return true;
  return operands.every((at) => {
    if (!untrusted(at)) return true;
    const word = words[at]!;
    return word.kind === 'literal' && !isCodeKey(word.value);
  });
}

function repositoryCovered(spec: RepositoryCommand, words: readonly ShellWord[], start: number, untrusted: (index: number) => boolean, facts: PathFacts): boolean {
  const longOptions = [...spec.values, ...spec.flags, ...(spec.code ?? [])].filter((option) => option.startsWith('--'));
  const operands: number[] = [];
  let sure = true;
  let every = false;
  let ended = false;
  const prunes: number[] = [];
  const repositoryOk = (value: string) => (spec.repository === 'remote' ? REMOTE_NAME.test(value) : cloneSourceOk(value));
  // The value the call gives an option (`at`, the word it stands in) of `repositoryValues`, `paths` or `config`.
  const valueOk = (option: string, at: number, given: ShellWord | undefined) => {
    if (!untrusted(at)) return true;
    const check = spec.repositoryValues?.includes(option) === true ? repositoryOk
      : spec.paths?.includes(option) === true ? (path: string) => !clonePathLeadsOut(path, facts)
      : spec.config?.includes(option) === true ? (setting: string) => !isCodeKey(setting.split('=', 1)[0]!)
      : undefined;
    return check === undefined || (given?.kind === 'literal' && check(given.value));
  };
  for (let index = start; index < words.length; index += 1) {
    const word = words[index]!;
    if (word.kind !== 'literal') {
      if (untrusted(index)) return false;
      continue;
    }
    const value = word.value;
    if (ended || !value.startsWith('-') || value === '-') {
      operands.push(index);
      continue;
    }
    if (value === '--') {
      ended = true;
      continue;
    }
    if (value.startsWith('--')) {
      const equals = value.indexOf('=');
      const written = equals === -1 ? value : value.slice(0, equals);
      const option = longOptions.includes(written) ? written : uniqueStart(written, longOptions);
      if (option === undefined) {
        sure = false;
        continue;
      }
      if ((spec.code?.includes(option) === true || spec.asked?.includes(option) === true) && untrusted(index)) return false;
      if (spec.allRepositories?.includes(option) === true) every = true;
      if (option === '--prune') prunes.push(index);
      const takesNext = equals === -1 && spec.values.includes(option);
      const given = optionValue(words, index, takesNext ? undefined : value.slice(equals + 1));
      if (!valueOk(option, given.at, given.word)) return false;
      index = given.at;
      continue;
    }
    for (let at = 1; at < value.length; at += 1) {
      const option = `-${value[at]!}`;
      if (spec.asked?.includes(option) === true && untrusted(index)) return false;
      if (spec.code?.includes(option) === true) {
        if (untrusted(index)) return false;
        break;
      }
      if (option === '-p') prunes.push(index);
      if (spec.values.includes(option)) {
        const given = optionValue(words, index, restOfGroup(value, at));
        if (!valueOk(option, given.at, given.word)) return false;
        index = given.at;
        break;
      }
      if (!spec.flags.includes(option)) {
        sure = false;
        break;
      }
    }
  }
  // Past an option these tables do not know, which word is the repository is not known: each operand may be.
  const repositories = sure && !every ? operands.slice(0, 1) : operands;
  const refspecs = operands.filter((index) => !repositories.includes(index));
  // `--prune` with a refspec deletes the local refs its destination names that the remote lacks.
  if (spec.localRefspecs === true && prunes.length > 0 && refspecs.length > 0 && [...prunes, ...refspecs].some(untrusted)) return false;
  if (spec.localOperands === true && operands.some((index) => untrusted(index) && clonePathLeadsOut((words[index] as { value: string }).value, facts))) return false;
  return operands.every((index) => {
    if (!untrusted(index)) return true;
    const { value } = words[index] as { value: string };
    if (repositories.includes(index)) return repositoryOk(value);
    // A refspec is no repository, but `::` and `://` have no business in one; a fetch writes no local ref it names.
    return !value.includes('::') && !value.includes('://') && !(spec.localRefspecs === true && value.includes(':'));
  });
}

/** `git remote`, `git remote -v`, `git remote show origin`, `git remote get-url origin`: nothing that changes a remote. */
function remoteCovered(words: readonly ShellWord[], start: number, untrusted: (index: number) => boolean): boolean {
  let index = start;
  while (words[index]?.kind === 'literal' && ['-v', '--verbose'].includes((words[index] as { value: string }).value)) index += 1;
  const subcommand = words[index];
  if (subcommand === undefined || !untrusted(index)) return true;
  if (subcommand.kind !== 'literal' || !REMOTE_READS.has(subcommand.value)) return false;
  return words.slice(index + 1).every((word, offset) => {
    if (!untrusted(index + 1 + offset)) return true;
    return word.kind === 'literal' && (REMOTE_NAME.test(word.value) || word.value === '-n');
  });
}

/**
 * Where `git clone` may fetch from: a URL of a scheme git speaks itself, `host:path` over ssh (not a host git would
 * hand to ssh as an option), or a path; never a remote helper named by `<transport>::` or another scheme.
 */
function cloneSourceOk(value: string): boolean {
  if (value.includes('::')) return false;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value);
  if (scheme !== null) return GIT_SCHEMES.has(scheme[1]!.toLowerCase());
  const colon = value.indexOf(':');
  const slash = value.indexOf('/');
  if (colon === -1 || (slash !== -1 && slash < colon)) return true;
  const host = value.slice(0, colon);
  return !host.slice(host.indexOf('@') + 1).startsWith('-');
}

/**
 * Whether a word of a clone that may name a local path (its source, the folder it makes, `--reference`,
 * `--separate-git-dir`) may name one outside the workspace, read as a path (`/tmp/x`, `~/x`, `../x`, also
 * `h:/../../x` as a folder: `h:`, then two levels up) or as a `file://` URL. Read as a path, a URL git speaks or a
 * `host:path` stays inside: as a source it names another machine, as a folder one inside. A clone of a URL alone
 * makes its folder where git runs: after a command that may have led the shell out of the workspace (`cd /tmp &&
 * git clone …`), `gitArgumentsCovered` asks about any git command.
 */
function clonePathLeadsOut(value: string, facts: PathFacts): boolean {
  if (mayNameOutside({ kind: 'literal', value }, facts)) return true;
  const file = /^file:\/\//i.exec(value);
  if (file === null) return false;
  const path = value.slice(file[0].length);
  return !path.startsWith('/') || mayNameOutside({ kind: 'literal', value: path }, facts);
}

/**
 * Where the value of an option written at `index` stands (`at`, the index of its word) and what it is: `attached`,
 * written after `=` or as the rest of a group of letters (`-ffile`), when there is one, else the next word.
 */
function optionValue(words: readonly ShellWord[], index: number, attached: string | undefined): { at: number; word: ShellWord | undefined } {
  return attached === undefined ? { at: index + 1, word: words[index + 1] } : { at: index, word: { kind: 'literal', value: attached } };
}

/** What follows the letter at `at` in a group of short options (`-aF msg` has none: the value is the next word). */
function restOfGroup(value: string, at: number): string | undefined {
  return at === value.length - 1 ? undefined : value.slice(at + 1);
}

/** The one option of `options` that `written` is a start of, as git's option parser reads an abbreviation. */
function uniqueStart(written: string, options: readonly string[]): string | undefined {
  if (written.length < 3) return undefined;
  const starts = options.filter((option) => option.startsWith(written));
  return starts.length === 1 ? starts[0] : undefined;
}

/**
 * git's commands that push, for a deny rule on `git push`: `send-pack` is the plumbing a push runs, `http-push` pushes
 * over WebDAV.
 */
const PUSHES = new Set(['push', 'send-pack', 'http-push']);

/** Long options of a push that overwrite the remote's branches as `--force` does, or delete them as `--delete` does. */
const PUSH_FORCES = ['--force-with-lease', '--force-if-includes', '--mirror'];
const PUSH_DELETES = ['--mirror', '--prune'];

/** The names a word of a git call goes by for a deny rule: `send-pack` and `http-push` are also `push`. */
export function gitDenyNames(word: string): readonly string[] {
  return word === 'send-pack' || word === 'http-push' ? [word, 'push'] : [word];
}

/**
 * The options a deny rule takes a `git push` or `git send-pack` call (`args`, the words after `git`) to carry,
 * though it spells them otherwise: `-f` for a `+` refspec (`+main`, `+HEAD:main`), `--force-with-lease`,
 * `--force-if-includes` and `--mirror`, each of which overwrites the remote's history; `-d` for a refspec with no
 * source (`:main`), `--prune` and `--mirror`, which delete remote branches. Any start of those options counts, as git
 * takes one; a deny rule may catch more than meant.
 */
export function gitPushImpliedOptions(args: readonly (string | undefined)[]): string[] {
  const command = args.findIndex((arg) => arg !== undefined && PUSHES.has(arg));
  if (command === -1) return [];
  const implied = new Set<string>();
  for (const arg of args.slice(command + 1)) {
    if (arg === undefined || arg.length < 2) continue;
    if (arg.startsWith('+')) implied.add('-f');
    if (arg.startsWith(':')) implied.add('-d');
    if (!arg.startsWith('--') || arg.length < 3) continue;
    const written = arg.split('=', 1)[0]!;
    if (PUSH_FORCES.some((option) => option.startsWith(written))) implied.add('-f');
    if (PUSH_DELETES.some((option) => option.startsWith(written))) implied.add('-d');
  }
  return [...implied];
}

/**
 * What a git call runs through an alias it defines itself (`words` from `git` on, undefined where the shell computes
 * a word), for deny rules: `git -c alias.p=push p origin` is `git push origin` (git's own options kept), and `git -c
 * alias.p='!git push' p x` hands `git push` (and `git push x`) to a shell. An alias the repository's configuration
 * or `--config-env` defines cannot be read from the line: `unjudged` in evaluate-rules.ts asks about it.
 */
export function gitAliasCommands(words: readonly (string | undefined)[]): { words: (string | undefined)[][]; commandLines: string[] } {
  const found: { words: (string | undefined)[][]; commandLines: string[] } = { words: [], commandLines: [] };
  const aliases = new Map<string, string>();
  let index = 1;
  while (index < words.length) {
    const word = words[index];
    if (word === undefined || !word.startsWith('-') || word === '--') break;
    const name = word.split('=', 1)[0]!;
    if (GLOBAL_VALUES.includes(name) && !word.includes('=')) {
      const value = words[index + 1];
      const alias = name === '-c' && value !== undefined ? /^alias\.([^=]+)=(.*)$/is.exec(value) : null;
      // git reads a key's last part in any case: `alias.P` is `alias.p`.
      if (alias !== null) aliases.set(alias[1]!.toLowerCase(), alias[2]!);
      index += 2;
    } else {
      index += 1;
    }
  }
  const command = words[index];
  const value = command === undefined ? undefined : aliases.get(command.toLowerCase());
  if (value === undefined || GIT_COMMANDS.has(command!)) return found;
  const rest = words.slice(index + 1);
  if (value.startsWith('!')) {
    const known = rest.filter((word): word is string => word !== undefined);
    found.commandLines.push(value.slice(1));
    if (known.length > 0) found.commandLines.push([value.slice(1), ...known].join(' '));
  } else {
    found.words.push([...words.slice(0, index), ...value.split(/\s+/).filter((part) => part !== ''), ...rest]);
  }
  return found;
}
