import { statSync, type BigIntStats } from 'node:fs';
import path from 'node:path';
import { FolderScans, type BrowserPlaces } from './browser-profiles';
import { keptWhileSame } from './kept-paths';

/**
 * In the XDG state folders: neovim's swap, undo and backup folders (its defaults since 0.8), vim's where set up so,
 * and neovim's ShaDa folder (`shada/main.shada`, and the `main.shada.tmp.*` it writes before renaming one over it).
 */
const STATE_FOLDERS = ['swap', 'undo', 'backup', 'shada'].map((name) => path.join('nvim', name)).concat(['swap', 'undo', 'backup'].map((name) => path.join('vim', name)));

/** In the XDG state folders: vim's viminfo where vim keeps its files there (`vim/viminfo`). */
const STATE_FILES = [path.join('vim', 'viminfo')];

/**
 * In the XDG data folders: neovim's before 0.8 kept its swap, undo, backup and ShaDa folders there; nano keeps its
 * search and position histories (and, set so, its backups) in `nano`; Kate the text of unsaved changes it stashes as
 * it closes (`kate/stash`) and, in its sessions, the search and replace histories (hidden whole); Midnight Commander
 * its input histories (`mc/history`: commands and patterns searched for) and mcedit's clipboard (`mc/mcedit`).
 */
const DATA_FOLDERS = [...['swap', 'undo', 'backup', 'shada'].map((name) => path.join('nvim', name)), 'nano', 'kate', 'mc'];

/**
 * In a VS Code user-data folder (VS Code's, its forks', code-server's, the remote servers' `data`): the local history
 * (`User/History`, a copy of each file at each save), hot exit's copies of unsaved editors (`Backups`, and
 * `User/Backups` where a build keeps them there) and the workspaces' storage, where the chat keeps a copy of each file
 * it edits (`workspaceStorage/<id>/chatEditingSessions/<session>/contents`) and its conversations, files quoted
 * (`chatSessions`): hidden whole, as its one folder per workspace ever opened would be a look each.
 */
const USER_DATA_PATHS = [path.join('User', 'History'), path.join('User', 'Backups'), 'Backups', path.join('User', 'workspaceStorage')];

/** The user-data folders of VS Code and the forks known by name, in the XDG config folders. */
const USER_DATA_NAMES = ['Code', 'Code - OSS', 'Code - Insiders', 'VSCodium', 'VSCodium - Insiders', 'Cursor', 'Windsurf'];

/** In the home folder: VS Code's remote server's and its forks' folders, each with its user-data folder in `data`. */
const REMOTE_SERVER_FOLDER = /^\.[^.].*-server(?:-insiders)?$/;

/**
 * How long ago an entry must have last changed for its want of a `User` folder to be taken as lasting: an editor's
 * first start makes its folder, then `User` in it, moments apart; a folder that has held still this long without one
 * is not an editor's being made.
 */
const SETTLED_ENTRY_NS = 60_000_000_000n;

/**
 * How long a folder found without a user-data layout is taken to have none before it is looked at again: a `User`
 * folder removed (to reset an editor) and made again at its next start leaves its parent's listing as it was.
 */
const NO_LAYOUT_KEPT_NS = 10_000_000_000n;

/**
 * At most this many entries of a folder changed lately are looked at again at each use; past it, the rest wait
 * NO_LAYOUT_KEPT_NS: a call that makes thousands of them costs their look that often, not at every use.
 */
const MAX_UNDECIDED_ENTRIES = 64;

/**
 * In the XDG config folders: micro's backups and its `buffers` (the search and command history, and, set so, each
 * file's undo history); Sublime Text's `Local` (its session holds the text of unsaved buffers and the find history);
 * Midnight Commander's mcedit positions (`mc/filepos`, with its bookmarks).
 */
const CONFIG_PATHS = [
  path.join('micro', 'backups'),
  path.join('micro', 'buffers'),
  ...['sublime-text', 'sublime-text-3', 'sublime-text-2'].map((name) => path.join(name, 'Local')),
  path.join('mc', 'filepos'),
];

/**
 * The folders that hold a VS Code user-data layout (a `User` folder with `settings.json` or `globalStorage`) among the
 * entries of the XDG config and data folders (`~/.config/Windsurf`, `~/.local/share/code-server`) and the remote
 * servers' `data` (`~/.vscode-server/data`, `~/.cursor-server/data`, whose `User` may hold no settings), and the ones
 * known by name whether laid out yet or not: each fork keeps its copies there under its own name, too many to list.
 * Every entry of each XDG folder is looked into (a folder past MAX_LISTED_ENTRIES is hidden whole as a browsers'
 * folder), when its listing is read, a folder found without a layout again every NO_LAYOUT_KEPT_NS (see FolderScans).
 */
function vsCodeUserDataFolders(places: BrowserPlaces, scans: FolderScans): string[] {
  const configs = [...new Set([places.configHome, path.join(places.home, '.config')].filter((base) => base !== undefined))];
  const data = [...new Set([places.dataHome, path.join(places.home, '.local', 'share')].filter((base) => base !== undefined))];
  const found = [...configs, ...data].flatMap((base) => scans.entriesWhere(base, /^[^.]/, userDataVerdict, NO_LAYOUT_KEPT_NS, MAX_UNDECIDED_ENTRIES));
  const servers = scans.entriesNamed(places.home, REMOTE_SERVER_FOLDER).map((server) => path.join(server, 'data'));
  return [...new Set([...configs.flatMap((base) => USER_DATA_NAMES.map((name) => path.join(base, name))), ...servers, ...found])];
}

/**
 * Whether `folder` holds a VS Code user-data layout: true for good (a layout stays hidden while its folder is listed
 * the same); false for a while (NO_LAYOUT_KEPT_NS): it cannot be looked into, or it, or its `User` folder without the
 * files that tell a layout, has not changed for SETTLED_ENTRY_NS; undefined, to look again at the next use, while the
 * one that would tell changed lately: an editor making its folder.
 */
function userDataVerdict(folder: string, now: bigint): boolean | undefined {
  const there = (entry: string) => {
    try {
      return statSync(entry, { bigint: true, throwIfNoEntry: false });
    } catch {
      // A file among the folders' entries (ENOTDIR), or one that cannot be read.
      return null;
    }
  };
  // By the change time alone, which no process can set (an mtime set ahead would keep an entry undecided for good).
  const settled = (info: BigIntStats) => now - info.ctimeNs >= SETTLED_ENTRY_NS;
  const userFolder = path.join(folder, 'User');
  const user = there(userFolder);
  if (user === null) return false;
  if (user?.isDirectory() === true) {
    if (['settings.json', 'globalStorage'].some((name) => there(path.join(userFolder, name)) != null)) return true;
    return settled(user) ? false : undefined;
  }
  const own = there(folder);
  if (own === null || (own !== undefined && !own.isDirectory())) return false;
  return own !== undefined && settled(own) ? false : undefined;
}

/** In the XDG cache folders: helix's log, which at `-v` holds the language servers' messages, each file's text among them. */
const CACHE_PATHS = ['helix'];

/** In the home folder: where a vimrc usually points vim's `directory`, `undodir` and `backupdir`; nano's folder before it used the data folder. */
const HOME_FOLDERS = [...['swap', 'swaps', 'tmp', 'undo', 'undodir', 'backup', 'backups'].map((name) => path.join('.vim', name)), '.nano'];

/**
 * In the home folder: vim's viminfo (the old default and `~/.vim/viminfo`), nano's history before it had a folder, and
 * joe's `~/.joe_state`, which keeps its search and command histories and the yank buffer.
 */
const HOME_FILES = ['.viminfo', path.join('.vim', 'viminfo'), '.nano_history', '.joe_state'];

/** In the home folder: Midnight Commander's folder before it followed XDG (its histories and mcedit's clipboard). */
const HOME_OLD_FOLDERS = ['.mc'];

/**
 * The names vim writes a viminfo file under before renaming it over the file: `.viminfo.tmp`, and while that one is
 * there (left by a vim that was killed), `.viminfz.tmp`, then `.viminfy.tmp`, down to `.viminfa.tmp`. Each holds the
 * whole viminfo.
 */
function viminfoTemporaries(file: string): string[] {
  const stem = file.slice(0, -1);
  return [`${file}.tmp`, ...'abcdefghijklmnopqrstuvwxyz'.split('').map((letter) => `${stem}${letter}.tmp`)];
}

/**
 * The JetBrains editors' local history (a copy of each file at each change, in their system folder since 2020.1:
 * `JetBrains/<product><version>/LocalHistory` in the XDG cache folders; Android Studio's under `Google`), one per
 * product and version installed, so looked for at each use.
 */
function jetBrainsLocalHistories(caches: readonly (string | undefined)[], scans: FolderScans): string[] {
  return [...new Set(caches.filter((base) => base !== undefined))].flatMap((base) => [
    ...scans.entriesNamed(path.join(base, 'JetBrains'), /^[^.]/).map((product) => path.join(product, 'LocalHistory')),
    ...scans.entriesNamed(path.join(base, 'Google'), /^AndroidStudio/).map((product) => path.join(product, 'LocalHistory')),
  ]);
}

/** In the XDG cache folders: where a vimrc also often points them. */
const CACHE_FOLDERS = [path.join('vim', 'swap'), path.join('vim', 'undo'), path.join('vim', 'backup')];

/**
 * In Emacs's folders (`~/.emacs.d`, or `emacs` in the XDG config folders): where an init file usually points
 * `backup-directory-alist` and `auto-save-file-name-transforms`, which name a file's copy by its full path with `!`
 * for `/` (`!home!me!.openai-key~`); Doom's cache (`.local/cache`: `backup`, `autosave`, `undo-fu-session`,
 * `savehist`) and Spacemacs's (`.cache`: `auto-save`, `undo`, `savehist`), hidden whole; no-littering's
 * `var/backup`, `var/auto-save` and its undo histories; and the minibuffer history savehist keeps (`history`, and
 * no-littering's `var/savehist.el`), which holds what was searched for and, set so, the kill ring.
 */
const EMACS_PATHS = [
  'backups',
  'backup',
  'auto-save',
  'auto-saves',
  'autosave',
  'auto-save-list',
  path.join('.local', 'cache'),
  '.cache',
  ...['backup', 'auto-save', 'undo-tree-hist', 'undo-fu-session', 'savehist.el'].map((name) => path.join('var', name)),
  'history',
];

/**
 * The folders and files where editors keep what was in the files edited, under other names in other folders: neovim's,
 * and vim's and Emacs's as usually set up, swap, undo and backup folders, which hold every file's copy under its full
 * path with `%` for `/` (`%home%me%.openai-key.swp`); the other editors' copies (VS Code's, its forks' and the
 * JetBrains editors' local history, the backups of VS Code's hot exit, its chat's copies of the files it edits,
 * micro, Kate's stash and Sublime Text's session); and the registers and search histories of vim's viminfo (and its
 * temporary names), neovim's ShaDa, nano's, joe's, micro's, Midnight Commander's and Emacs's savehist, which hold
 * text yanked or searched for in a file. The copy of a hidden file (the server's token or key file, a shell history),
 * or a line of it, is there under another name in another folder, so editorCopies, which looks beside the file, misses it. Hidden whole from the tools: no tool needs another
 * program's swap, undo or backup store or its registers, and naming only the copies of hidden files would miss a vim
 * whose `directory` names the folder without the `//` that gives the full path. Only where they exist, looked for at
 * each use (an editor makes them the first time it needs one, and writes its viminfo or ShaDa as it exits).
 * `env` is the server's: its HOME gave `places`, and it may name XDG_STATE_HOME and MICRO_CONFIG_HOME. With `scans`,
 * the JetBrains folders and those looked through for a VS Code user-data folder are read only when they change (see
 * FolderScans).
 */
export function editorStatePaths(places: BrowserPlaces, env: Readonly<Record<string, string | undefined>>, scans: FolderScans = new FolderScans()): string[] {
  const caches = [places.cacheHome, path.join(places.home, '.cache')];
  return [...fixedEditorStatePaths(places, env), ...vsCodeUserDataFolders(places, scans).flatMap((folder) => USER_DATA_PATHS.map((name) => path.join(folder, name))), ...jetBrainsLocalHistories(caches, scans)];
}

/** The paths of editorStatePaths that no folder's entries decide, made again only when the places or variables change. */
const fixedEditorStatePaths = keptWhileSame(makeFixedEditorStatePaths);

function makeFixedEditorStatePaths(places: BrowserPlaces, env: Readonly<Record<string, string | undefined>>): readonly string[] {
  const absolute = (value: string | undefined) => (value !== undefined && path.isAbsolute(value) ? value : undefined);
  const under = (bases: (string | undefined)[], names: readonly string[]) =>
    [...new Set(bases.filter((base) => base !== undefined))].flatMap((base) => names.map((name) => path.join(base, name)));
  const states = [absolute(env.XDG_STATE_HOME), path.join(places.home, '.local', 'state')];
  const caches = [places.cacheHome, path.join(places.home, '.cache')];
  const viminfos = [...under(states, STATE_FILES), ...HOME_FILES.filter((name) => name.endsWith('viminfo')).map((name) => path.join(places.home, name))];
  const micro = absolute(env.MICRO_CONFIG_HOME);
  return [
    ...under(states, [...STATE_FOLDERS, ...STATE_FILES]),
    ...viminfos.flatMap(viminfoTemporaries),
    ...under([places.dataHome, path.join(places.home, '.local', 'share')], DATA_FOLDERS),
    ...under([places.configHome, path.join(places.home, '.config')], CONFIG_PATHS),
    ...(micro === undefined ? [] : [path.join(micro, 'backups'), path.join(micro, 'buffers')]),
    ...[...HOME_FOLDERS, ...HOME_FILES, ...HOME_OLD_FOLDERS].map((name) => path.join(places.home, name)),
    ...under(caches, [...CACHE_FOLDERS, ...CACHE_PATHS]),
    ...under([path.join(places.home, '.emacs.d'), ...[places.configHome, path.join(places.home, '.config')].map((base) => base && path.join(base, 'emacs'))], EMACS_PATHS),
  ];
}
