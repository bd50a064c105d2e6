import path from 'node:path';
import type { FoldersWalked } from './links-below';
import { plainWord, type ShellWord } from './shell-word';
import type { GitTopAbove } from './git-top-above';
import type { GitLooks } from './submodule-configs';

/** Where the words of a command line are read from. */
export interface PathFacts {
  /** The workspace's absolute path, where the terminal runs: an absolute path under it is inside. Default: none is. */
  workspace?: string;
  /**
   * A command before this one on the line may have led the shell to a folder outside the workspace (`cd ~/other`,
   * `cd ..`, `cd "$X"`, `cd -`, `cd` alone, `popd`, `source x`): this one may run there, and a relative path may lead
   * anywhere. Otherwise it runs in the workspace or a folder inside, where a relative path that climbs no higher
   * than the workspace's own folder stays inside. Default: false.
   */
  leftWorkspace?: boolean;
  /**
   * A command before this one on the line, or one after it that may run while it runs (in its pipeline, or after it
   * when it runs in the background), may have changed the file system (`changesFileSystem`: any but one that only
   * reads and prints, moves the shell, or `mkdir`): what a path names when the rules are evaluated is no sign of
   * what it names when this command runs (`rm -rf t && ln -s ../other t && pytest t`, `git checkout other && cd
   * tools`), so every path counts as one that may lead out. Default: false.
   */
  fileSystemChanged?: boolean;
  /**
   * With `fileSystemChanged`: every command that set it runs code of the project's (`runsProjectCode`: a test runner,
   * a make target, a package script, a program of the workspace), which could have read and printed any file itself,
   * or leaves no link (`leavesNoLink`: touch, truncate), so a program that prints the files it is named shows nothing
   * more by following a link such a command left (`npm test 2>&1 | tail -n 20`, `make && cat out.txt`, `touch x &&
   * cat README.md`). After one that cannot print a file but may leave a link no rule saw (`tar -xf vendor.tar && cat
   * link`, the archive holding `link -> ~/.ssh/id_rsa`), it is unset. Default: false.
   */
  printedAsFound?: boolean;
  /**
   * As `fileSystemChanged`, set whatever the facts judge paths by (also for deny rules, which judge paths as they are
   * now): whether what a program reads of the file system at its start (a nested repository's Git config) may be
   * another by the time it runs. Default: false.
   */
  changedBefore?: boolean;
  /**
   * What the looks at the workspace's Git directories found for this judging (`RuleContext.walks`). Default: none
   * made, and a git call counts as one that may run what they say.
   */
  walks?: GitLooks;
  /**
   * The folder the command runs in, absolute, as the `cd`s before it name it (links not followed): where a relative
   * path is looked up with `leadsInside`, and what a program that reads it is judged by (`workingFolderMayLeadAway`).
   * Default: `workspace`.
   */
  folder?: string;
  /**
   * Whether an absolute path, as the shell hands it on (a `..` after a link climbs from where the link leads), leads
   * inside the workspace once its links are followed; false when that is not known. Given, a word must stay inside
   * by its text and by this, and a glob counts as leading anywhere (its matches, which may be links, are not
   * listed). Default: judged by the text only.
   */
  leadsInside?: (absolute: string) => boolean;
  /**
   * Whether an absolute path, as `leadsInside` takes it, leads once its links are followed into a `.git` folder of
   * the workspace (`docs/hooks` with `docs -> .git`), for the checks that keep a command out of `.git`
   * (`mayLeadUnderGit`). Default: not looked up.
   */
  leadsUnderGit?: (absolute: string) => boolean;
  /**
   * Whether the folder or file at an absolute path, or a folder above it in the workspace, may hold a symbolic link
   * that leads out of the workspace or into `.git` (`folderHoldsLinkOut`), for a program that reads a folder and
   * follows links in it by itself (`treeMayHoldLinkOut`), walking the folders such a program goes into (`folders`,
   * default `collected`). Default: not looked up.
   */
  holdsLinkOut?: (absolute: string, folders?: FoldersWalked) => boolean;
  /**
   * Only for saying why a line was asked, never when deciding: given, a word that may name a place outside the
   * workspace is handed here and taken for one inside, so a second look finds whether the rules would cover the line
   * but for such words (`evaluateRules`' `leadsOut`). Default: none.
   */
  outsideSeen?: (word: ShellWord) => void;
  /**
   * For a git command: the work tree git finds from the absolute folder it starts in (undefined when that is not
   * known: a command before may have changed the file system) when its top lies above the workspace, the workspace
   * lying in a larger repository; undefined when git finds its repository in that folder or above it inside the
   * workspace, or none. Then a path git reads from the top (`HEAD:x`, `:/x`), and a read of the whole work tree (`git
   * diff`, `git show`), may reach files outside the workspace. Default: not looked up (git's top is the workspace's).
   */
  gitTopAbove?: (folder: string | undefined) => GitTopAbove | undefined;
}

const GLOB = /[*?[]/;

/**
 * The facts the paths a program prints are judged by: as they are now after commands that run code of the project's
 * only, which could have printed the file itself (`npm test 2>&1 | tail -n 20`, whose words are often no path); after
 * one that may have left a link no rule saw and cannot print a file (`tar -xf vendor.tar && cat link`), each may lead
 * anywhere (`PathFacts.printedAsFound`).
 */
export function pathsAsFound<Facts extends PathFacts>(facts: Facts): Facts {
  return facts.printedAsFound === true ? { ...facts, fileSystemChanged: false } : facts;
}

/**
 * Whether a word that names a file may name one outside the workspace: by its text, an absolute path elsewhere,
 * `~`, a `..` that climbs out, any `$NAME` (`$HOME`, `$_`), braces (`{/etc/x,a}`), a glob part that may match `..`
 * (`.*`), and any relative path once the line may have left the workspace; any path once a command before may have
 * changed the file system; given `facts.leadsInside`, also a path whose links lead out (`link/secret`, `link ->
 * ~/other`) and any glob.
 */
export function mayNameOutside(word: ShellWord, facts: PathFacts): boolean {
  return seenOutside(word, facts, wordLeadsOut(word, facts, false));
}

/**
 * `mayNameOutside` for a folder a command moves to (`cd`, `pushd`, git's `-C`): given `facts.leadsInside`, it must
 * also be there, a folder, when the rules are evaluated. One not made yet can only be entered once the line has made
 * it, and what made it may have made it a link that leads out (`ln -s ~/other new && cd new`, `git clone … r && cd
 * r/link`), which no lookup made before the line runs can see.
 */
export function mayNameOutsideFolder(word: ShellWord, facts: PathFacts): boolean {
  return seenOutside(word, facts, wordLeadsOut(word, facts, true));
}

/**
 * Whether a word that names a file may lead into a `.git` folder of the workspace by its links, given
 * `facts.leadsUnderGit` (its text is the caller's to judge): a path is looked up from the folder the command runs in,
 * and a word the shell expands counts as one that may. False for a word that may lead out of the workspace, which is
 * `mayNameOutside`'s to judge (and, when only saying why, to note).
 */
export function mayLeadUnderGit(word: ShellWord, facts: PathFacts): boolean {
  const { leadsUnderGit } = facts;
  if (leadsUnderGit === undefined || wordLeadsOut(word, facts, false)) return false;
  if (word.kind !== 'literal') return true;
  if (word.value === '' || word.value === '-') return false;
  const from = facts.folder ?? facts.workspace;
  if (word.value.startsWith('/')) return leadsUnderGit(word.value);
  return from === undefined || leadsUnderGit(`${from}/${word.value}`);
}

/**
 * Whether the folder a command runs in (`facts.folder`, the workspace when no `cd` moved it) may lead out of the
 * workspace or into a `.git` folder of it, for a program that reads it without being given it (a test runner
 * collects its tests and `conftest.py` files there, make reads its Makefile, npm its `package.json`): judged as an
 * operand naming it would be, by the text of the `cd`s before (`cd .git && pytest`), by its links given
 * `leadsInside` and `leadsUnderGit` (`cd docs && pytest` with `docs -> .git`), and as leading anywhere once the line
 * may have changed the file system (`ln -s ../other t2 && pytest` collects `t2`, following the link). The workspace
 * itself is looked up nowhere: inside, and not under `.git`, unless the line may have changed what it holds.
 */
export function workingFolderMayLeadAway(facts: PathFacts): boolean {
  const { workspace, folder = workspace } = facts;
  const here: ShellWord = { kind: 'literal', value: '.' };
  if (folder === undefined || folder === workspace) return seenOutside(here, facts, facts.leftWorkspace === true || facts.fileSystemChanged === true);
  const word: ShellWord = { kind: 'literal', value: folder };
  const below = workspace !== undefined && folder.startsWith(`${workspace}/`) ? folder.slice(workspace.length + 1) : folder;
  // Looked up as the `cd` that entered it was, a folder (the same lookup); said, for the card, as the line names it.
  if (seenOutside({ kind: 'literal', value: below }, facts, wordLeadsOut(word, facts, true))) return true;
  return below.split('/').some((part) => part.toLowerCase() === '.git') || mayLeadUnderGit(word, facts);
}

/**
 * Whether a folder a program reads and follows links in by itself (a test runner collecting its tests, a build
 * reading its tree), named by `word` from the folder the command runs in (`.` for that folder), may hold a link that
 * leads out of the workspace or into `.git`, given `facts.holdsLinkOut`: one that arrived by a call a rule allowed
 * (`git checkout` of a branch holding `t/o -> ../../other`, `tar -x`) leads the program elsewhere, whoever made it. A
 * word the shell expands counts as one that may. Said, for the card, as the word names it. `folders`: those the
 * program goes into (`FoldersWalked`).
 */
export function treeMayHoldLinkOut(word: ShellWord, facts: PathFacts, folders: FoldersWalked = 'collected'): boolean {
  const { holdsLinkOut, workspace, folder: from = workspace } = facts;
  if (holdsLinkOut === undefined) return false;
  if (word.kind !== 'literal' || (from === undefined && !word.value.startsWith('/'))) return seenOutside(word, facts, true);
  const absolute = word.value.startsWith('/') ? word.value : word.value === '.' ? from! : `${from}/${word.value}`;
  const named = word.value === '.' && from !== undefined && workspace !== undefined && from.startsWith(`${workspace}/`) ? from.slice(workspace.length + 1) : word.value;
  return seenOutside({ kind: 'literal', value: named }, facts, holdsLinkOut(absolute, folders));
}

/**
 * Whether a path may name a folder now, for a command that takes its last operand as either a folder to work in or a
 * name to make (`ln -s x dest`): without lookups, or once the line may have moved the shell or changed the file
 * system, it may; given `facts.leadsInside`, only when it is a folder inside the workspace now (one outside is
 * `mayNameOutside`'s to judge).
 */
export function mayBeFolder(value: string, facts: PathFacts): boolean {
  const { leadsInside, workspace, folder: from = workspace } = facts;
  if (leadsInside === undefined || facts.leftWorkspace === true || facts.fileSystemChanged === true) return true;
  if (from === undefined && !value.startsWith('/')) return true;
  const absolute = value.startsWith('/') ? value : `${from}/${value}`;
  return leadsInside(absolute.endsWith('/') ? absolute : `${absolute}/`);
}

/** `outside`, as judged by the caller; when only saying why (`facts.outsideSeen`), the word is noted and false given. */
export function seenOutside(word: ShellWord, facts: PathFacts, outside: boolean): boolean {
  if (!outside || facts.outsideSeen === undefined) return outside;
  facts.outsideSeen(word);
  return false;
}

function wordLeadsOut(word: ShellWord, facts: PathFacts, folder: boolean): boolean {
  if (word.kind === 'literal') return pathLeadsOut(word.value, facts, folder);
  // `HEAD~1`: the shell gives the program its text.
  const plain = plainWord(word);
  if (plain !== undefined) return pathLeadsOut(plain, facts, folder);
  if (facts.fileSystemChanged === true) return true;
  if (word.variables.length > 0) return true;
  const text = word.text.replace(/["']/g, '');
  if (text.startsWith('~') || text.includes('{') || text.includes('..')) return true;
  if (text.split('/').some((part) => part.startsWith('.') && GLOB.test(part))) return true;
  if (facts.leadsInside !== undefined) return true;
  const glob = text.search(GLOB);
  return pathLeadsOut(glob === -1 ? text : text.slice(0, text.lastIndexOf('/', glob) + 1), facts, folder);
}

/** With `folder`, the path is looked up with a `/` at its end: `commandPathInside` then asks that it be a folder there. */
function pathLeadsOut(value: string, facts: PathFacts, folder: boolean): boolean {
  const asFolder = (absolute: string) => (folder && !absolute.endsWith('/') ? `${absolute}/` : absolute);
  if (value === '' || value === '-') return false;
  if (value.startsWith('~') || facts.fileSystemChanged === true) return true;
  if (value.startsWith('/')) {
    if (facts.workspace === undefined) return true;
    const workspace = path.posix.resolve(facts.workspace);
    const resolved = path.posix.resolve(value);
    if (resolved !== workspace && !resolved.startsWith(workspace === '/' ? '/' : `${workspace}/`)) return true;
    return facts.leadsInside !== undefined && !facts.leadsInside(asFolder(value));
  }
  if (facts.leftWorkspace === true) return true;
  const normalized = path.posix.normalize(value);
  if (normalized === '..' || normalized.startsWith('../')) return true;
  if (facts.leadsInside === undefined) return false;
  const from = facts.folder ?? facts.workspace;
  // Joined, not resolved: `link/../x` is where the link leads, one folder up, for the program that opens it.
  return from === undefined || !facts.leadsInside(asFolder(`${from}/${value}`));
}

/**
 * `facts` for a command that has moved to `folder` (a `cd`, git's `-C`), named from where it was: a relative path
 * after it is looked up from there (given `leadsInside`), and the folder is judged by its text for a program that
 * reads it (`workingFolderMayLeadAway`). Unchanged for `''` (no move).
 */
export function movedTo(facts: PathFacts, folder: string): PathFacts {
  if (folder === '') return facts;
  const from = facts.folder ?? facts.workspace;
  return { ...facts, folder: folder.startsWith('/') ? folder : from === undefined ? undefined : `${from}/${folder}` };
}
