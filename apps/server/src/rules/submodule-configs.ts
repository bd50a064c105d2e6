import { lstatSync, realpathSync, type Dirent } from 'node:fs';
import { lstat, opendir, readdir, readlink, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { commandBaseName } from '@airlock/api';
import { buildChildEnv, PROCESS_GIT_CONFIG, withGitConfig } from '../tools/child-env';
import { readConfigFile, type ConfigSetting } from '../tools/git-config-file';
import { includeTarget } from '../tools/git-config-includes';
import { readSmallFile, repositoryConfigFiles, repositoryFolders, workspaceGitDir } from '../tools/workspace-git-dir';
import { gitGlobalOptions } from './git-arguments';
import { readIndexGitlinks } from './git-index-gitlinks';
import type { LineFacts } from './match-command';
import type { SimpleCommand } from './parse-command-line';
import type { ShellWord } from './shell-word';

/**
 * Keys of a Git config whose value git runs as a program or a command line, or that lead it to (more config from a
 * file, a hooks folder, an alias's `!…`, a filter, a driver, a helper): written `section.name`, `section.*.name` for
 * any subsection, or `section` for each of its keys. `core.worktree`, `remote.*.url` and the like, which every
 * submodule's config holds, run nothing.
 */
const RUNS_KEYS = [
  'core.fsmonitor', 'core.pager', 'core.editor', 'core.sshcommand', 'core.askpass', 'core.hookspath', 'core.gitproxy',
  'core.alternaterefscommand', 'sequence.editor', 'diff.external', 'diff.*.command', 'diff.*.textconv', 'merge.*.driver',
  'interactive.difffilter', 'uploadpack.packobjectshook', 'imap.tunnel', 'web.browser', 'help.browser',
  'remote.*.uploadpack', 'remote.*.receivepack', 'remote.*.vcs', 'submodule.*.update', 'extensions.worktreeconfig',
  'lfs.*.path', 'lfs.*.clean', 'lfs.*.smudge', 'pager', 'filter', 'credential', 'gpg', 'difftool', 'mergetool',
  'guitool', 'browser', 'man', 'instaweb', 'sendemail', 'trailer', 'tar', 'hook', 'trace2', 'protocol', 'include',
  'includeif', 'alias',
];

/** The most Git directories looked at for one call: past that, a git call counts as running what they say. */
const MAX_FOLDERS = 512;
/** A config file larger than this counts as setting such a key. */
const MAX_CONFIG_BYTES = 256 * 1024;
/** An index larger than this is not read: git may go into any repository of the workspace then (the walk below). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;
/**
 * The most entries, and the deepest folder, the walk for repositories nested in the workspace reads: past either, git
 * counts as running what they say. Changed only by tests.
 */
export const walkBounds = { entries: 50_000, depth: 64 };
/** How many folders the walk reads at once. */
const WALK_READERS = 4;
/**
 * How many entries of a folder are read at a time (`listing`): a folder of 49,000 entries read whole held the server's
 * thread for 50–140 ms while its names were handled (docs/benchmarks.md); read a slice at a time, other clients are
 * served between slices.
 */
const LISTING_SLICE = 256;

/**
 * git's commands that go into no repository but the one they work in and the submodules its index records (and, as
 * any command, those of `.git/modules` and `.git/worktrees`), unless an option or a key below says otherwise. Seen
 * with git 2.39 (strace of the files opened): `git status`, `status -uall`, `diff`, `log -p`, `ls-files -o`, `clean
 * -n`, `stash -u` never read the config of a repository nested in the work tree that the index does not record
 * (only its `HEAD`, to tell it is one; `git add -A`, which records it, reads its config and runs nothing of it); with
 * a gitlink for it in the index, `git status` and `git diff` run its `core.fsmonitor`. A commit's gitlink is another matter: `git log -p --submodule=diff` or `=log`, `git diff HEAD~1
 * --submodule=diff`, `diff.submodule = diff` read the config of the repository at a gitlink's path of any commit
 * (removed from the index since, the repository left there untracked) and run `git diff` in it; `checkout
 * --recurse-submodules` too. Those, any other command, an option with `submodule` in it, a word the shell computes,
 * `-c` and `--git-dir` are judged by the walk of the whole workspace.
 */
const INDEX_REACH_COMMANDS = new Set([
  'status', 'diff', 'log', 'show', 'whatchanged', 'add', 'commit', 'mv', 'rm', 'branch', 'tag', 'config', 'rev-parse',
  'rev-list', 'ls-files', 'ls-tree', 'blame', 'annotate', 'describe', 'shortlog', 'reflog', 'cat-file', 'show-ref',
  'for-each-ref', 'grep', 'check-ignore', 'check-attr', 'diff-files', 'diff-index', 'diff-tree', 'count-objects',
  'name-rev', 'merge-base', 'symbolic-ref', 'show-branch', 'format-patch', 'var', 'version', 'help',
]);

/**
 * Keys that lead those commands into the repositories at the gitlinks of commits, not only of the index
 * (`diff.submodule = diff`, `status.submoduleSummary`, `submodule.recurse`), or to more config the look does not follow
 * (`include`): while the workspace repository's config, the person's own or a submodule's sets one, git is judged by
 * the walk.
 */
const WIDENS_KEYS = ['diff.submodule', 'status.submodulesummary', 'submodule.recurse', 'fetch.recursesubmodules', 'include', 'includeif'];

/**
 * The environment a call's git has (run-tool-process.ts): the server's own filtered as every call's is
 * (`buildChildEnv`: no `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_COUNT` or
 * `XDG_CONFIG_HOME` of the server reaches it), with Airlock's own settings given as `git -c` would
 * (`PROCESS_GIT_CONFIG`). The Git configs looked at are those git finds with it (`gitConfigFiles`).
 */
function callEnvironment(): Record<string, string> {
  return withGitConfig(buildChildEnv({ source: process.env, cwd: '/' }), PROCESS_GIT_CONFIG);
}

/**
 * The Git configs git reads for every repository, as it finds them from its environment `env` (config.c, path.c of
 * git 2.39), in its order: the machine's (`GIT_CONFIG_SYSTEM`, else `/etc/gitconfig`; none with
 * `GIT_CONFIG_NOSYSTEM`) and the person's (`GIT_CONFIG_GLOBAL`, else `$XDG_CONFIG_HOME/git/config` or
 * `~/.config/git/config`, and `~/.gitconfig`), a relative path taken from `folder`; and the settings it is given in it as `git -c` gives
 * them (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_<n>`, `GIT_CONFIG_VALUE_<n>`; `GIT_CONFIG_PARAMETERS`, which git passes
 * on to the gits it starts, as one that sets an include).
 */
export function gitConfigFiles(env: Readonly<Record<string, string | undefined>>, folder: string): { files: string[]; given: { name: string; setting: ConfigSetting }[] } {
  const home = env.HOME;
  const at = (file: string) => path.resolve(folder, file);
  const configHome = env.XDG_CONFIG_HOME;
  const xdg = configHome !== undefined && configHome !== '' ? [at(path.join(configHome, 'git', 'config'))] : home === undefined ? [] : [at(path.join(home, '.config', 'git', 'config'))];
  const global = env.GIT_CONFIG_GLOBAL !== undefined ? [at(env.GIT_CONFIG_GLOBAL)] : [...xdg, ...(home === undefined ? [] : [at(path.join(home, '.gitconfig'))])];
  const noSystem = env.GIT_CONFIG_NOSYSTEM !== undefined && !['', '0', 'false', 'no', 'off'].includes(env.GIT_CONFIG_NOSYSTEM.toLowerCase());
  const system = noSystem ? [] : [at(env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig')];
  const given: { name: string; setting: ConfigSetting }[] = [];
  if (env.GIT_CONFIG_PARAMETERS !== undefined) given.push({ name: 'GIT_CONFIG_PARAMETERS', setting: { section: 'include', subsection: false, key: 'path', value: undefined } });
  const count = Number(env.GIT_CONFIG_COUNT ?? 0);
  for (let index = 0; index < (Number.isSafeInteger(count) ? Math.min(count, 1000) : 0); index += 1) {
    const key = (env[`GIT_CONFIG_KEY_${index}`] ?? '').toLowerCase();
    const first = key.indexOf('.');
    const last = key.lastIndexOf('.');
    const setting: ConfigSetting = { section: key.slice(0, first === -1 ? key.length : first), subsection: first !== last, key: key.slice(last + 1), value: env[`GIT_CONFIG_VALUE_${index}`] };
    given.push({ name: `GIT_CONFIG_KEY_${index}`, setting });
  }
  return { files: [...system, ...global], given };
}

/** How many includes deep git follows (`MAX_INCLUDE_DEPTH` of its config.c): past that it stops with an error. */
const MAX_INCLUDE_DEPTH = 10;
/** Past this many config files looked at for one git call's includes, git may run what one of the rest says. */
const MAX_INCLUDED_FILES = 256;
/** The include checks kept between judgings (`includeChecks`), by workspace and the configs they start from. */
const KEPT_INCLUDE_CHECKS = 16;
/**
 * A check is kept only when each file it read changed no less than this before: the kernel's file clock is coarse,
 * so a write in the same tick as the change read would leave the times as they were (as readConfigFile).
 */
const SETTLED_NS = 2_000_000_000n;

/**
 * What made a git call one that may run what a Git config of the workspace says, for the card: the config (a path, or
 * the variable of the call's environment that gives the setting) and the key it sets that runs something; no key for
 * a file that is not there yet or cannot be read (a call may make it), `bound` past the most files looked at.
 */
export interface GitConfigCause {
  /** The config as the card shows it: from the home folder (`~/.gitconfig`) or the workspace when in either, else whole; or the variable of the environment. */
  file: string;
  key?: string;
  bound?: true;
}

/** What one include check found, and what it read: each file's real path and its identity, to tell it is unchanged. */
interface IncludeCheck {
  cause: GitConfigCause | undefined;
  /** `real\0<path>` to the real path it had, `id\0<path>` to its identity (`none` when not there). */
  read: Map<string, string>;
  /** The latest change time among the files read, in nanoseconds. */
  changed: bigint;
}

const keptIncludeChecks = new Map<string, IncludeCheck>();

/** Include checks made in full, for tests (one answered from `keptIncludeChecks` is not counted). */
export const includeChecks = { made: 0 };
/** The clock include checks are kept by (`SETTLED_NS`): changed only by tests. */
export const includeCheckClock = { now: () => BigInt(Date.now()) * 1_000_000n };

/**
 * Whether a Git config that git reads for every call in the workspace may run what a call wrote, and what: one of the
 * person's or the machine's (`gitConfigFiles` of the call's environment) lying in the workspace (a workspace that is
 * the home folder, which the server warns of) that sets a key of `RUNS_KEYS`, as a repository's own; a setting the
 * call's environment gives that does; or a file in the workspace that one of them, wherever it lies, or the workspace
 * repository's own config includes (`include.path`, `includeIf.*.path`, its condition taken as met, and theirs in
 * turn): a workspace that is a dotfiles repository the person's `~/.gitconfig` includes. Made once per change of the
 * files it reads: kept while each has the real path and the device, inode, size and change times it had, once made
 * two seconds past the latest change (at most `KEPT_INCLUDE_CHECKS` kept), since it reads up to 256 files.
 */
async function globalConfigMayRun(workspace: string): Promise<GitConfigCause | undefined> {
  const env = callEnvironment();
  const { files, given } = gitConfigFiles(env, workspace);
  for (const { name, setting } of given) if (runsSomething(setting)) return { file: name, key: settingName(setting) };
  const found = workspaceGitDir(workspace);
  const own = found === undefined || !('found' in found) ? [] : repositoryConfigFiles(found.found);
  const home = env.HOME ?? homedir();
  const key = [workspace, home, ...files, '', ...own].join('\0');
  const known = keptIncludeChecks.get(key);
  if (known !== undefined && (await unchanged(known.read))) {
    keptIncludeChecks.delete(key);
    keptIncludeChecks.set(key, known);
    return known.cause;
  }
  // Taken before any file is read: a change made after that has a change time past it, so the check below holds
  // for what the reads find however long they take.
  const startedAt = includeCheckClock.now();
  includeChecks.made += 1;
  const check: IncludeCheck = { cause: undefined, read: new Map(), changed: 0n };
  const cause = await includeCheck(workspace, home, files, own, check);
  check.cause = cause === undefined ? undefined : { ...cause, file: shownPath(cause.file, home, workspace) };
  keptIncludeChecks.delete(key);
  if (startedAt - check.changed >= SETTLED_NS) {
    keptIncludeChecks.set(key, check);
    if (keptIncludeChecks.size > KEPT_INCLUDE_CHECKS) keptIncludeChecks.delete(keptIncludeChecks.keys().next().value!);
  }
  return check.cause;
}

async function includeCheck(workspace: string, home: string, files: readonly string[], own: readonly string[], check: IncludeCheck): Promise<GitConfigCause | undefined> {
  const realWorkspace = await realOf(workspace, check);
  const look: IncludeLook = { workspace, realWorkspace, home, seen: new Set(), check };
  for (const file of files) {
    if (identity(file, check) === 'none') continue;
    const cause = await configMayRun(look, file, 0);
    if (cause !== undefined) return cause;
  }
  // The repository's own config is held read-only by the sandbox and read for its includes only.
  for (const file of own) {
    const read = identity(file, check) === 'none' ? undefined : readConfigFile(file, MAX_CONFIG_BYTES);
    const cause = read === undefined ? undefined : await includesMayRun(look, file, read.settings, 0);
    if (cause !== undefined) return cause;
  }
  return undefined;
}

/** `file` as the card shows it: from the home folder (`~/.gitconfig`) or else the workspace when it lies in either. */
function shownPath(file: string, home: string, workspace: string): string {
  if (isInside(home, file)) return `~/${path.relative(home, file)}`;
  return isInside(workspace, file) ? path.relative(workspace, file) : file;
}

/** What one include check works with: the workspace, where `~/` leads, the files looked at so far, what it read. */
interface IncludeLook {
  workspace: string;
  realWorkspace: string;
  home: string;
  seen: Set<string>;
  check: IncludeCheck;
}

/** Links followed and folders gone up at most in finding where one path leads. */
const MAX_LEAD_STEPS = 256;

/**
 * Where the kernel leads `file`, noted in `check`: its real path when it is there; when not, the real path of the
 * nearest folder on the way that is with the rest (`lnk/../x` beside where `lnk` leads, not `x`), a link left
 * dangling followed to where it points (a call may make what it names).
 */
async function realOf(file: string, check: IncludeCheck): Promise<string> {
  const rest: string[] = [];
  let at = file;
  let real: string | undefined;
  for (let steps = 0; steps < MAX_LEAD_STEPS && real === undefined; steps += 1) {
    real = await realpath(at).catch(() => undefined);
    if (real !== undefined) break;
    const target = await readlink(at).catch(() => undefined);
    if (target !== undefined) {
      at = [target.startsWith('/') ? target : `${at.slice(0, at.lastIndexOf('/') + 1)}${target}`, ...rest.splice(0)].join('/');
      continue;
    }
    const up = path.dirname(at);
    if (up === at) break;
    rest.unshift(path.basename(at));
    at = up;
  }
  const leads = real === undefined ? path.resolve(file) : path.join(real, ...rest);
  check.read.set(`real\0${file}`, leads);
  return leads;
}

/** `file`'s identity as lstat gives it (`none` when not there), noted in `check`. */
function identity(file: string, check: IncludeCheck): string {
  let info;
  try {
    info = lstatSync(file, { bigint: true });
  } catch {
    info = undefined;
  }
  const found = info === undefined ? 'none' : `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
  if (info !== undefined && info.ctimeNs > check.changed) check.changed = info.ctimeNs;
  check.read.set(`id\0${file}`, found);
  return found;
}

/** How many paths the confirmation that an include check still holds looks up at once. */
const UNCHANGED_SLICE = 8;

/**
 * Whether each path an include check read still leads where it did and has the identity it had: looked up in libuv's
 * pool, `UNCHANGED_SLICE` at a time (the lookups made on the server's thread, or 500 promises at once, held it for
 * 15–65 ms on a busy machine).
 */
async function unchanged(read: ReadonlyMap<string, string>): Promise<boolean> {
  // A file that was there under its own real path needs no realpath again: its identity is looked up through the same
  // path, and a link put on the way to another file changes that identity (the file's device and inode). One not
  // there does: a link put on the way may lead its path into the workspace.
  const entries = [...read].filter(([entry, was]) => !(entry === `real\0${was}` && (read.get(`id\0${was}`) ?? 'none') !== 'none'));
  const scratch: IncludeCheck = { cause: undefined, read: new Map(), changed: 0n };
  for (let from = 0; from < entries.length; from += UNCHANGED_SLICE) {
    const answers = await Promise.all(
      entries.slice(from, from + UNCHANGED_SLICE).map(async ([entry, was]) => {
        const [kind, file] = entry.split('\0') as [string, string];
        return (kind === 'real' ? await realOf(file, scratch) : await identityNow(file)) === was;
      }),
    );
    if (!answers.every(Boolean)) return false;
  }
  return true;
}

/** `identity`, looked up in libuv's pool. */
async function identityNow(file: string): Promise<string> {
  const info = await lstat(file, { bigint: true }).catch(() => undefined);
  return info === undefined ? 'none' : `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

/**
 * Whether the config `file`, which git reads, may run what a call wrote, and what: when it lies in the workspace (by
 * its path or where its links lead) and sets a key of `RUNS_KEYS` (includes among them) or cannot be read (a call may
 * make it yet); else by what it includes.
 */
async function configMayRun(look: IncludeLook, file: string, depth: number): Promise<GitConfigCause | undefined> {
  const { workspace, realWorkspace, seen, check } = look;
  const real = await realOf(file, check);
  // Each file is looked at once from each folder it is named in (one seen before may run nothing, or the look would
  // have ended; git reads a relative include from the folder of the path it was given, so through a link elsewhere
  // its includes are other files), and only so many: files that name one another many times over would otherwise be
  // read a number of times exponential in the depth.
  const key = `${real}\0${path.dirname(file)}`;
  if (seen.has(key)) return undefined;
  if (seen.size >= MAX_INCLUDED_FILES) return { file, bound: true };
  seen.add(key);
  const inside = isInside(workspace, file) || isInside(realWorkspace, file) || isInside(realWorkspace, real);
  const read = readConfigFile(real, MAX_CONFIG_BYTES);
  // Its identity after the read: a change during it has a change time too recent for the check to be kept.
  identity(real, check);
  if (inside) {
    if (read === undefined) return { file };
    const runs = read.settings.find(runsSomething);
    return runs === undefined ? undefined : { file, key: settingName(runs) };
  }
  // Outside the workspace no call writes it: one not there or not read is skipped by git too, or is the person's.
  if (read === undefined) return undefined;
  return (await includesMayRun(look, file, read.settings, depth)) ?? (real === file ? undefined : await includesMayRun(look, real, read.settings, depth));
}

/** Whether a file the config `file` includes (`settings` its settings), `depth` includes deep, may run what a call wrote. */
async function includesMayRun(look: IncludeLook, file: string, settings: ConfigSetting[], depth: number): Promise<GitConfigCause | undefined> {
  for (const setting of settings) {
    if (!((setting.section === 'include' && !setting.subsection) || (setting.section === 'includeif' && setting.subsection)) || setting.key !== 'path') continue;
    if (setting.value === undefined || setting.value === '') continue;
    if (depth + 1 > MAX_INCLUDE_DEPTH) return { file, bound: true };
    const named = includedPath(look.home, file, setting.value);
    const cause = named === undefined ? { file, key: settingName(setting) } : await configMayRun(look, named, depth + 1);
    if (cause !== undefined) return cause;
  }
  return undefined;
}

/** A setting's key as written in `git config` (`core.fsmonitor`, `includeif.<condition>.path`). */
function settingName(setting: ConfigSetting): string {
  return setting.subsection ? `${setting.section}.….${setting.key}` : `${setting.section}.${setting.key}`;
}

/**
 * The file an include's `path` names, as git reads it (see includeTarget): `~/` the home folder, a relative path put
 * after the including file's folder as named, for the kernel to resolve; undefined for one that cannot be told here
 * (`~user/`, `%(prefix)/`).
 */
function includedPath(home: string, file: string, value: string): string | undefined {
  return value.startsWith('%(') ? undefined : includeTarget(home, file, value);
}

/**
 * What the Git directories of the workspace say, looked at once per judging (`RuleContext.walks`) by
 * `lookAtGitDirectories`, before the rules are judged: by key (`lookKey`), whether git may run what one of them says.
 */
export type GitLooks = Map<string, boolean | 'widens'>;

/** Looks made, for tests: how many walked the whole workspace. */
export const walkCount = { walks: 0 };

/**
 * Whether a git call may run what a call of the workspace wrote into a Git directory that git reads for it and the
 * sandbox does not hold read-only as it holds the repository's `.git/config` and `.git/hooks`: those of its
 * submodules and linked worktrees (`.git/modules/<name>/…`, nested `…/modules/…` too, `.git/worktrees/<name>/…`), of
 * the repositories its index records as submodules (`sub/.git`, a submodule not absorbed, and theirs in turn), of the
 * repository found from the folder git starts in (`cd nested && git status`, `git -C nested log`) or a folder above
 * it, and, for a command that may go into the repository at a commit's gitlink (any not of `INDEX_REACH_COMMANDS`,
 * or one that a key or an option sends there), of any repository nested in the workspace, found by one walk of it,
 * with the folder such a `.git` gitfile names (`gitdir: ../anywhere`). `git status` runs each populated submodule's `core.fsmonitor`, `cd sub && git commit` its hooks, `cd
 * nested && git status` the nested repository's, `cd wt && git status` in a linked worktree reads the config its
 * `commondir` names. True while such a folder's `config` or `config.worktree` sets a key of `RUNS_KEYS`, its `hooks`
 * folder holds anything but git's `*.sample` files, a submodule's folder holds a `commondir` or a worktree's names
 * another folder than its repository's, a nested `.git` is a link or a gitfile naming a folder outside the workspace
 * or none, a file there cannot be read, past the bounds above, when git starts inside a Git directory of the
 * workspace (`cd .git/x`, where it finds a `.git/x/.git` a call made), while a Git config git reads for every
 * repository lies in the workspace and sets such a key or it (or the repository's own) includes a file of the
 * workspace that does or is not there yet, and after a command on the line that may have changed
 * the file system or led the shell out (it may have made any of these, so whether they are there yet does not count).
 * False for any other program, when the facts name no workspace, and for a workspace with no such Git directory.
 * Answered from what `lookAtGitDirectories` found for the line (`line.walks`): a call it did not look at counts as
 * one that may run them.
 */
export function submoduleConfigMayRun(command: SimpleCommand, line: LineFacts): boolean {
  const [first] = command.words;
  if (first?.kind !== 'literal' || !isGitName(first.value)) return false;
  if (line.workspace === undefined) return false;
  if (line.leftWorkspace === true || line.fileSystemChanged === true || line.changedBefore === true) return true;
  const call = gitCall(command.words, line.folder);
  return call === undefined || line.walks?.get(lookKey(line.workspace, call)) !== false;
}

/** What made the looks of one judging find a git call may run what a Git config git reads for every repository says, by workspace. */
const configCauses = new WeakMap<GitLooks, Map<string, GitConfigCause>>();

function causesOf(looks: GitLooks): Map<string, GitConfigCause> {
  let causes = configCauses.get(looks);
  if (causes === undefined) configCauses.set(looks, (causes = new Map<string, GitConfigCause>()));
  return causes;
}

/**
 * When `command` is a git call that may run what a Git config it reads for every repository says (the person's or
 * the machine's in the workspace, a file of the workspace one of them includes, a setting of the call's
 * environment), the config and key, for the card; undefined otherwise (`submoduleConfigMayRun` says why in general).
 */
export function gitConfigCause(command: SimpleCommand, line: LineFacts): GitConfigCause | undefined {
  if (!submoduleConfigMayRun(command, line) || line.workspace === undefined || line.walks === undefined) return undefined;
  if (line.leftWorkspace === true || line.fileSystemChanged === true || line.changedBefore === true) return undefined;
  return configCauses.get(line.walks)?.get(line.workspace);
}

/**
 * Looks, for each git call among `commands` (one judged with `facts` of the same index, git named anywhere in its
 * words, as behind a wrapper or runner), at the Git directories it may read (see submoduleConfigMayRun), and notes
 * what it found in `looks`: a look made for an earlier call of the same judging is not made again. Asynchronous, so
 * that the walk of a large workspace holds no other client: each folder is read with a callback of its own.
 */
export async function lookAtGitDirectories(commands: readonly SimpleCommand[], facts: readonly LineFacts[], looks: GitLooks): Promise<void> {
  for (const [index, command] of commands.entries()) {
    const line = facts[index];
    const folder = line?.folder;
    if (line?.workspace === undefined || folder === undefined || line.leftWorkspace === true || line.fileSystemChanged === true || line.changedBefore === true) continue;
    for (const [at, word] of command.words.entries()) {
      if (word.kind !== 'literal' || !isGitName(word.value)) continue;
      const call = gitCall(command.words.slice(at), folder);
      if (call === undefined) continue;
      if (at === 0) {
        await lookedAt(line.workspace, call, looks);
        continue;
      }
      // Behind a wrapper or runner, which may start it in another folder (`env -C nested git status`, `sudo -D x`):
      // looked at from each folder a word before it may name, and by the walk. Noted for the call as judged alone,
      // which is how the judging asks; a look of the same call not behind one is no answer for this one.
      const key = lookKey(line.workspace, call);
      const before = command.words.slice(0, at);
      const named = before.flatMap((earlier) => (earlier.kind === 'literal' ? [path.resolve(folder, earlier.value)] : []));
      const behind = named.length < before.length || (await lookedAt(line.workspace, { starts: [...call.starts, ...named], reach: 'walk' }, looks));
      looks.set(key, looks.get(key) === true || behind);
    }
  }
}

function isGitName(program: string): boolean {
  return /^git(?:-[a-z][a-z0-9-]*)?$/.test(commandBaseName(program));
}

/** Where a git call starts looking for its repository, and whether it may go into a commit's submodules. */
interface GitCall {
  /** The folders git starts in, absolute: the one it runs in, moved by each `-C` in turn. */
  starts: string[];
  reach: 'index' | 'walk';
}

/**
 * The git call `words` make, run in `folder`; undefined when where it starts cannot be told (`cd su* && git status`,
 * `-C "$X"`).
 */
function gitCall(words: readonly ShellWord[], folder: string | undefined): GitCall | undefined {
  if (folder === undefined) return undefined;
  const literal = words.map((word) => (word.kind === 'literal' ? word.value : undefined));
  const dashed = /^git-([a-z][a-z0-9-]*)$/.exec(commandBaseName(literal[0] ?? ''));
  const options = dashed === null ? gitGlobalOptions(literal) : { command: 0, folders: [], other: false };
  // A word the shell computes among git's options, or as its command, may be a `-C` and a folder (`git $X status`).
  if (literal.slice(1, options.command + 1).includes(undefined)) return undefined;
  const starts = [folder];
  for (const named of options.folders) starts.push(path.resolve(starts.at(-1)!, named));
  const command = dashed === null ? literal[options.command] : dashed[1];
  const rest = literal.slice(options.command + 1);
  const indexOnly = !options.other && (command === undefined || INDEX_REACH_COMMANDS.has(command)) && rest.every((word) => word !== undefined && !word.includes('submodule'));
  return { starts: options.folders.length === 0 ? starts : starts.slice(-1), reach: indexOnly ? 'index' : 'walk' };
}

function lookKey(workspace: string, call: GitCall): string {
  return [call.reach, workspace, ...call.starts].join('\0');
}

/** Whether `call` may run what a Git directory says (noted in `looks`, with the parts it is made of). */
async function lookedAt(workspace: string, call: GitCall, looks: GitLooks): Promise<boolean> {
  const key = lookKey(workspace, call);
  const known = looks.get(key);
  if (known !== undefined) return known === true;
  let reach = call.reach;
  let answer =
    (await once(looks, `global\0${workspace}`, async () => {
      const cause = await globalConfigMayRun(workspace);
      if (cause !== undefined) causesOf(looks).set(workspace, cause);
      return cause !== undefined;
    })) === true;
  if ((await once(looks, `remotes\0${workspace}`, () => ownRemoteFiles(workspace))) === true) answer = true;
  if ((await once(looks, `alternates\0${workspace}`, async () => ownAlternates(workspace))) === true) answer = true;
  for (const start of call.starts) {
    const found = await once(looks, `from\0${workspace}\0${start}`, () => discoveredMayRun(workspace, start));
    if (found === true) answer = true;
    if (found === 'widens') reach = 'walk';
  }
  if (!answer && reach === 'index') {
    const byIndex = await once(looks, `index\0${workspace}`, () => reachedByIndex(workspace));
    if (byIndex === 'widens') reach = 'walk';
    else answer = byIndex;
  }
  if (!answer && reach === 'walk') answer = (await once(looks, `walk\0${workspace}`, () => reachedByWalk(workspace))) !== false;
  looks.set(key, answer);
  return answer;
}

async function once(looks: GitLooks, key: string, look: () => Promise<boolean | 'widens'>): Promise<boolean | 'widens'> {
  const known = looks.get(key);
  if (known !== undefined) return known;
  const found = await look().catch(() => true);
  looks.set(key, found);
  return found;
}

/**
 * Whether the workspace repository's Git directory defines a remote by a file, as Git still reads them: `remotes/<name>`
 * (`URL:`, `Push:` and `Pull:` lines) or `branches/<name>` (a URL). The sandbox holds those folders read-only only when
 * they exist as a call starts, and git makes neither by itself nowadays (older templates made an empty `branches`), so
 * a file there is one a call may have written: `git fetch evil` fetched from the path or URL it named, a repository
 * outside the workspace, and force-updated a local branch by its `Pull:` line, and `git push evil` sends the repository
 * to its URL, where the rules ask about a URL or path the call names (found in review). Any entry counts, and a folder
 * that cannot be read.
 */
async function ownRemoteFiles(workspace: string): Promise<boolean> {
  const found = workspaceGitDir(workspace);
  if (found === undefined || !('found' in found)) return false;
  for (const folder of repositoryFolders(found.found)) {
    for (const name of ['remotes', 'branches']) {
      const entries = await readdir(path.join(folder, name)).catch((error: unknown) => (notThere(error) ? [] : undefined));
      if (entries === undefined || entries.length > 0) return true;
    }
  }
  return false;
}

/**
 * Whether the workspace repository's object store borrows another's: `objects/info/alternates` naming a store (a line
 * neither blank nor a `#` comment), or an `objects/info/http-alternates`. `objects/info` is no part of what the
 * sandbox holds read-only, so a call may have written one: `git log --alternate-refs -p` then printed the history
 * and files of a repository outside the workspace (`/home/me/private/.git/objects`), and `git show <id>` prints any
 * object of it (found in review). A file that cannot be read as a small regular one counts. So a clone made with
 * `--reference` or `--shared` has every git call asked.
 */
function ownAlternates(workspace: string): boolean {
  const found = workspaceGitDir(workspace);
  if (found === undefined || !('found' in found)) return false;
  for (const folder of repositoryFolders(found.found)) {
    const info = path.join(folder, 'objects', 'info');
    if (exists(path.join(info, 'http-alternates'))) return true;
    const file = path.join(info, 'alternates');
    if (!exists(file)) continue;
    const text = readSmallFile(file, MAX_CONFIG_BYTES);
    if (text === undefined) return true;
    if (text.toString('utf8').split('\n').some((line) => line.trim() !== '' && !line.startsWith('#'))) return true;
  }
  return false;
}

/** One repository git may work in: where its index is, and its work tree. */
interface Repository {
  gitDir: string;
  workTree: string;
}

/**
 * Whether the repositories git finds from `start` (a `.git` there or in a folder above it inside the workspace, or a
 * folder there that is itself a Git directory), other than the workspace's own, or the submodules their indexes
 * record, may run what they say; `widens` when one of them leads git further (`WIDENS_KEYS`).
 */
async function discoveredMayRun(workspace: string, start: string): Promise<boolean | 'widens'> {
  const realWorkspace = await realpath(workspace).catch(() => undefined);
  if (realWorkspace === undefined) return false;
  let real: string | undefined;
  // `mkdir x && cd x && git status` starts where the folder will be: git looks from there up.
  for (let folder = start; real === undefined; folder = path.dirname(folder)) {
    real = await realpath(folder).catch(() => undefined);
    if (folder === path.dirname(folder)) return false;
  }
  const own = workspaceGitDir(workspace);
  const ownFolders = own !== undefined && 'found' in own ? repositoryFolders(own.found).map((folder) => path.join(realWorkspace, path.relative(workspace, folder))) : [];
  // Started in a Git directory of the workspace (`cd .git/x`, `cd .git`), git finds the repository a call may have
  // made there (`.git/x/.git`, `.git/.git`), which the walk never goes into: counted as running what it says.
  if (ownFolders.some((folder) => folder === real || isInside(folder, real)) || (isInside(realWorkspace, real) && path.relative(realWorkspace, real).split(path.sep).includes('.git'))) return true;
  const pending: Pending[] = [];
  const repositories: Repository[] = [];
  // Only inside the workspace: git run elsewhere is judged as leading out (`leadsOut`), not here.
  for (let folder = real; isInside(realWorkspace, folder); folder = path.dirname(folder)) {
    if (ownFolders.includes(folder)) continue;
    const dotGit = path.join(folder, '.git');
    const info = await lstat(dotGit).catch(() => undefined);
    if (info !== undefined) {
      const gitDir = info.isDirectory() ? dotGit : gitfileTarget(realWorkspace, dotGit);
      if (gitDir === undefined) return true;
      pending.push(...(await nestedGitDirectory(gitDir)));
      repositories.push({ gitDir, workTree: folder });
    }
    // As git tells a Git directory (is_git_directory): a `HEAD`, with `objects` or `refs` beside it here, so that a
    // project's own `HEAD` file and `hooks/` folder are no repository.
    if (exists(path.join(folder, 'HEAD')) && (exists(path.join(folder, 'objects')) || exists(path.join(folder, 'refs')))) {
      const parent = path.dirname(folder);
      pending.push(path.basename(parent) === 'worktrees' ? { folder, kind: 'worktree', common: path.dirname(parent) } : { folder, kind: 'module', common: folder });
    }
  }
  if (pending.length === 0) return false;
  const submodules = await submodulesOf(realWorkspace, repositories);
  if (submodules === true) return true;
  // A repository with no index yet leads git no further than itself: its own config is read all the same.
  const found = await checked(realWorkspace, [...pending, ...(typeof submodules === 'object' ? submodules : [])], true);
  return found === false && typeof submodules !== 'object' ? submodules : found;
}

type Pending = { folder: string; kind: 'module' | 'worktree'; common: string };

/** The workspace repository's submodules and linked worktrees (`.git/modules/*`, `.git/worktrees/*`). */
async function ownGitDirectories(workspace: string): Promise<Pending[]> {
  const pending: Pending[] = [];
  const found = workspaceGitDir(workspace);
  if (found === undefined || !('found' in found)) return pending;
  for (const folder of repositoryFolders(found.found)) {
    for (const module of await subfolders(path.join(folder, 'modules'))) pending.push({ folder: module, kind: 'module', common: module });
    for (const worktree of await subfolders(path.join(folder, 'worktrees'))) pending.push({ folder: worktree, kind: 'worktree', common: folder });
  }
  return pending;
}

/** What a nested repository's Git directory `gitDir` is looked at as, with its linked worktrees. */
async function nestedGitDirectory(gitDir: string): Promise<Pending[]> {
  const parent = path.dirname(gitDir);
  // A linked worktree's gitfile names `<repository>/worktrees/<name>`, whose commondir names that repository.
  const pending: Pending[] = [
    path.basename(parent) === 'worktrees' && exists(path.join(gitDir, 'commondir')) ? { folder: gitDir, kind: 'worktree', common: path.dirname(parent) } : { folder: gitDir, kind: 'module', common: gitDir },
  ];
  for (const worktree of await subfolders(path.join(gitDir, 'worktrees'))) pending.push({ folder: worktree, kind: 'worktree', common: gitDir });
  return pending;
}

/**
 * For the commands of INDEX_REACH_COMMANDS: the workspace repository's own submodules and worktrees, and the
 * repositories at the gitlinks its index records and `.gitmodules` names, theirs in turn. `widens` when the
 * workspace has no repository of its own at its root (git may use one above it, whose index is not read), its index
 * cannot be read whole, or a config leads further.
 */
async function reachedByIndex(workspace: string): Promise<boolean | 'widens'> {
  const found = workspaceGitDir(workspace);
  if (found === undefined || !('found' in found)) return 'widens';
  const settings = [...repositoryConfigFiles(found.found), ...gitConfigFiles(callEnvironment(), workspace).files].map((file) => (exists(file) ? readConfigFile(file, MAX_CONFIG_BYTES) : { settings: [] }));
  if (settings.some((read) => read === undefined || read.settings.some(widens))) return 'widens';
  const submodules = await submodulesOf(workspace, [{ gitDir: found.found.gitDir, workTree: workspace }]);
  if (typeof submodules !== 'object') return submodules;
  return checked(workspace, [...(await ownGitDirectories(workspace)), ...submodules], true);
}

/**
 * The Git directories of the submodules `repositories` record in their index or `.gitmodules`, populated (a `.git`
 * in the submodule's folder), and of theirs in turn. True when one cannot be read as git would (a `.git` that is a
 * link, a gitfile naming no folder of the workspace, a folder reached through a link), `widens` when an index cannot
 * be read whole.
 */
async function submodulesOf(workspace: string, repositories: Repository[]): Promise<Pending[] | boolean | 'widens'> {
  const realWorkspace = await realpath(workspace);
  const pending: Pending[] = [];
  let looked = 0;
  for (let next = repositories.pop(); next !== undefined; next = repositories.pop()) {
    if ((looked += 1) > MAX_FOLDERS) return true;
    const links = await gitlinkPaths(next);
    if (links === undefined) return 'widens';
    for (const link of links) {
      const workTree = path.resolve(next.workTree, link);
      if (!isInside(workspace, workTree)) return true;
      const dotGit = path.join(workTree, '.git');
      const info = await lstat(dotGit).catch(() => undefined);
      if (info === undefined) continue;
      if ((await realpath(workTree)) !== path.join(realWorkspace, path.relative(workspace, workTree))) return true;
      const gitDir = info.isDirectory() ? dotGit : gitfileTarget(workspace, dotGit);
      if (gitDir === undefined) return true;
      pending.push(...(await nestedGitDirectory(gitDir)));
      repositories.push({ gitDir, workTree });
    }
  }
  return pending;
}

/**
 * The paths, relative to its work tree, of a repository's gitlinks: its index's and its `.gitmodules`'s; undefined
 * when its index is not there or cannot be read whole.
 */
async function gitlinkPaths(repository: Repository): Promise<string[] | undefined> {
  const modules = path.join(repository.workTree, '.gitmodules');
  const declared = exists(modules) ? readConfigFile(modules, MAX_CONFIG_BYTES) : { settings: [] };
  if (declared === undefined) return undefined;
  const named = declared.settings.flatMap((setting) => (setting.section === 'submodule' && setting.subsection && setting.key === 'path' && setting.value !== undefined ? [setting.value] : []));
  const index = path.join(repository.gitDir, 'index');
  // With no index yet (a repository just made, or one a call wrote by hand) which repositories its first `git add`
  // records is not known: judged by the walk, as any.
  const config = readConfigFile(path.join(repository.gitDir, 'config'), MAX_CONFIG_BYTES);
  const sha256 = config?.settings.some((setting) => setting.section === 'extensions' && setting.key === 'objectformat' && setting.value?.toLowerCase() === 'sha256');
  // Read once per change of the file, not at every judging (readIndexGitlinks).
  const recorded = await readIndexGitlinks(index, sha256 === true ? 32 : 20, MAX_INDEX_BYTES);
  return recorded === undefined ? undefined : [...recorded, ...named];
}

/** For the other commands: the workspace repository's own submodules and worktrees, and every repository nested in it. */
async function reachedByWalk(workspace: string): Promise<boolean> {
  const nested = await nestedGitEntries(workspace);
  if (nested === undefined) return true;
  const pending = await ownGitDirectories(workspace);
  for (const entry of nested) {
    const gitDir = lstatSync(entry).isDirectory() ? entry : gitfileTarget(workspace, entry);
    if (gitDir === undefined) return true;
    pending.push(...(await nestedGitDirectory(gitDir)));
  }
  return (await checked(workspace, pending, false)) !== false;
}

/**
 * Whether a Git directory of `pending`, or one below (a submodule's own `modules`), may make git run what a call
 * wrote; with `widening`, `widens` for one whose config leads git further (`WIDENS_KEYS`).
 */
async function checked(workspace: string, pending: Pending[], widening: boolean): Promise<boolean | 'widens'> {
  let widened = false;
  for (let looked = 0, next = pending.pop(); next !== undefined; looked += 1, next = pending.pop()) {
    if (looked >= MAX_FOLDERS) return true;
    const says = await runsWhatItHolds(next.folder, next.kind, next.common);
    if (says === true) return true;
    if (says === 'widens' && widening) widened = true;
    if (next.kind === 'worktree') continue;
    // A submodule's own submodules (`.git/modules/a/modules/b`), and the folders of a name with a slash
    // (`.git/modules/libs/x` for the submodule `libs/x`), which hold no repository of their own.
    const repository = exists(path.join(next.folder, 'HEAD')) || exists(path.join(next.folder, 'config'));
    for (const below of await subfolders(repository ? path.join(next.folder, 'modules') : next.folder)) pending.push({ folder: below, kind: 'module', common: below });
    // One folder's listing at a time, so that a workspace of many submodules holds no other client long.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return widened ? 'widens' : false;
}

/**
 * The `.git` entries below the workspace (not its own), each a folder, a gitfile or anything else: a walk that goes
 * into no `.git` folder and through no link (a folder not there holds none), one folder read at a time without
 * holding the server's thread. Undefined past `walkBounds`.
 */
async function nestedGitEntries(workspace: string): Promise<string[] | undefined> {
  walkCount.walks += 1;
  const found: string[] = [];
  const queue: { folder: string; depth: number }[] = [{ folder: workspace, depth: 0 }];
  let entries = 0;
  let over = false;
  let reading = 0;
  await new Promise<void>((resolve, reject) => {
    // A folder's entries a slice at a time (`listing`), so that a folder of many holds the thread for none of them long.
    const read = async (next: { folder: string; depth: number }) => {
      for await (const entry of listing(next.folder)) {
        if (over) break;
        if ((entries += 1) > walkBounds.entries) over = true;
        const entryPath = path.join(next.folder, entry.name);
        if (entry.name === '.git') {
          if (next.depth > 0) found.push(entryPath);
          continue;
        }
        if (!entry.isDirectory()) continue;
        if (next.depth + 1 > walkBounds.depth) over = true;
        queue.push({ folder: entryPath, depth: next.depth + 1 });
      }
    };
    // A few folders read at once: each read waits on the disk in libuv's pool, not on the server's thread.
    const more = () => {
      for (let next = queue.pop(); next !== undefined && !over; next = reading < WALK_READERS ? queue.pop() : undefined) {
        reading += 1;
        read(next).then(() => {
          reading -= 1;
          more();
        }, reject);
        if (reading >= WALK_READERS) break;
      }
      if (reading === 0) resolve();
    };
    more();
  });
  return over ? undefined : found;
}

/**
 * The folder a nested `.git` gitfile names, as Git reads it (`gitdir: ` and a path relative to the file's folder);
 * undefined for a link, a file Git would not read as a gitfile, or a folder outside the workspace or reached through
 * a link.
 */
function gitfileTarget(workspace: string, file: string): string | undefined {
  if (!lstatSync(file).isFile()) return undefined;
  const text = readSmallFile(file)?.toString('utf8');
  if (text === undefined || !text.startsWith('gitdir: ')) return undefined;
  const named = text.slice('gitdir: '.length).replace(/\s+$/, '');
  if (named === '') return undefined;
  const gitDir = path.resolve(path.dirname(file), named);
  const relative = path.relative(workspace, gitDir);
  if (relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) return undefined;
  return realpathSync(gitDir) === path.join(realpathSync(workspace), relative) && lstatSync(gitDir).isDirectory() ? gitDir : undefined;
}

/**
 * Whether the Git directory `folder` holds config, hooks or a `commondir` that may make git run what a call wrote;
 * `widens` when its config only leads git further (`WIDENS_KEYS`).
 */
async function runsWhatItHolds(folder: string, kind: 'module' | 'worktree', common: string): Promise<boolean | 'widens'> {
  let widened = false;
  for (const name of ['config', 'config.worktree']) {
    const file = path.join(folder, name);
    if (!exists(file)) continue;
    const read = readConfigFile(file, MAX_CONFIG_BYTES);
    if (read === undefined || read.settings.some(runsSomething)) return true;
    widened ||= read.settings.some(widens);
  }
  for await (const hook of listing(path.join(folder, 'hooks'))) if (!hook.name.endsWith('.sample')) return true;
  const commondir = path.join(folder, 'commondir');
  if (exists(commondir)) {
    if (kind === 'module') return true;
    const named = readSmallFile(commondir)?.toString('utf8').replace(/\s+$/, '');
    if (named === undefined || path.resolve(folder, named) !== common) return true;
  }
  return widened ? 'widens' : false;
}

function runsSomething(setting: ConfigSetting): boolean {
  return matchesKey(RUNS_KEYS, setting);
}

function widens(setting: ConfigSetting): boolean {
  return matchesKey(WIDENS_KEYS, setting);
}

function matchesKey(keys: readonly string[], setting: ConfigSetting): boolean {
  return keys.some((pattern) => {
    const parts = pattern.split('.');
    if (parts[0] !== setting.section) return false;
    if (parts.length === 1) return true;
    return parts.length === 3 ? setting.subsection && parts[2] === setting.key : !setting.subsection && parts[1] === setting.key;
  });
}

/** The folders in `folder` (a link among them counts as one, and is judged by what it holds), none when it is not there. */
async function subfolders(folder: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of listing(folder)) if (entry.isDirectory() || entry.isSymbolicLink()) found.push(path.join(folder, entry.name));
  return found;
}

/**
 * The entries of `folder`, read `LISTING_SLICE` at a time (none when it is not there); the folder is closed when the
 * loop reading them ends.
 */
async function* listing(folder: string): AsyncGenerator<Dirent> {
  let opened;
  try {
    opened = await opendir(folder, { bufferSize: LISTING_SLICE });
  } catch (error) {
    if (notThere(error)) return;
    throw error;
  }
  yield* opened;
}

function notThere(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Whether `entry` lies strictly inside `folder`, by their text. */
function isInside(folder: string, entry: string): boolean {
  const relative = path.relative(folder, entry);
  // `..x` is a name inside; only `..` itself or a path through it leads out.
  return relative !== '' && relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
