import path from 'node:path';
import type { BrowserPlaces } from './browser-profiles';

/**
 * In the XDG state folders: neovim's swap, undo and backup folders (its defaults since 0.8), vim's where set up so,
 * and neovim's ShaDa folder (`shada/main.shada`, and the `main.shada.tmp.*` it writes before renaming one over it).
 */
const STATE_FOLDERS = ['swap', 'undo', 'backup', 'shada'].map((name) => path.join('nvim', name)).concat(['swap', 'undo', 'backup'].map((name) => path.join('vim', name)));

/** In the XDG state folders: vim's viminfo where vim keeps its files there (`vim/viminfo`). */
const STATE_FILES = [path.join('vim', 'viminfo')];

/** In the XDG data folders: neovim's before 0.8 kept its swap, undo, backup and ShaDa folders there; nano keeps its search and position histories (and, set so, its backups) in `nano`. */
const DATA_FOLDERS = [...['swap', 'undo', 'backup', 'shada'].map((name) => path.join('nvim', name)), 'nano'];

/** In the home folder: where a vimrc usually points vim's `directory`, `undodir` and `backupdir`; nano's folder before it used the data folder. */
const HOME_FOLDERS = [...['swap', 'swaps', 'tmp', 'undo', 'undodir', 'backup', 'backups'].map((name) => path.join('.vim', name)), '.nano'];

/** In the home folder: vim's viminfo (the old default and `~/.vim/viminfo`), and nano's history before it had a folder. */
const HOME_FILES = ['.viminfo', path.join('.vim', 'viminfo'), '.nano_history'];

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
 * path with `%` for `/` (`%home%me%.openai-key.swp`), and the registers and search histories of vim's viminfo,
 * neovim's ShaDa, nano's and Emacs's savehist, which hold text yanked or searched for in a file. The copy of a hidden
 * file (the server's token or key file, a shell history), or a line of it, is there under another name in another
 * folder, so editorCopies, which looks beside the file, misses it. Hidden whole from the tools: no tool needs another
 * program's swap, undo or backup store or its registers, and naming only the copies of hidden files would miss a vim
 * whose `directory` names the folder without the `//` that gives the full path. Only where they exist, looked for at
 * each use (an editor makes them the first time it needs one, and writes its viminfo or ShaDa as it exits).
 * `env` is the server's: its HOME gave `places`, and it may name XDG_STATE_HOME.
 */
export function editorStatePaths(places: BrowserPlaces, env: Readonly<Record<string, string | undefined>>): string[] {
  const stateHome = env.XDG_STATE_HOME !== undefined && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : undefined;
  const under = (bases: (string | undefined)[], names: readonly string[]) =>
    [...new Set(bases.filter((base) => base !== undefined))].flatMap((base) => names.map((name) => path.join(base, name)));
  return [
    ...under([stateHome, path.join(places.home, '.local', 'state')], [...STATE_FOLDERS, ...STATE_FILES]),
    ...under([places.dataHome, path.join(places.home, '.local', 'share')], DATA_FOLDERS),
    ...[...HOME_FOLDERS, ...HOME_FILES].map((name) => path.join(places.home, name)),
    ...under([places.cacheHome, path.join(places.home, '.cache')], CACHE_FOLDERS),
    ...under([path.join(places.home, '.emacs.d'), ...[places.configHome, path.join(places.home, '.config')].map((base) => base && path.join(base, 'emacs'))], EMACS_PATHS),
  ];
}
