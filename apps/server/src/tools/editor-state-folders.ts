import path from 'node:path';
import type { BrowserPlaces } from './browser-profiles';

/** In the XDG state folders: neovim's swap, undo and backup folders (its defaults since 0.8), and vim's where set up so. */
const STATE_FOLDERS = [path.join('nvim', 'swap'), path.join('nvim', 'undo'), path.join('nvim', 'backup'), path.join('vim', 'swap'), path.join('vim', 'undo'), path.join('vim', 'backup')];

/** In the XDG data folders: neovim's before 0.8 kept its swap, undo and backup folders there. */
const DATA_FOLDERS = [path.join('nvim', 'swap'), path.join('nvim', 'undo'), path.join('nvim', 'backup')];

/** In the home folder: where a vimrc usually points vim's `directory`, `undodir` and `backupdir`. */
const HOME_FOLDERS = ['swap', 'swaps', 'tmp', 'undo', 'backup', 'backups'].map((name) => path.join('.vim', name));

/** In the XDG cache folders: where a vimrc also often points them. */
const CACHE_FOLDERS = [path.join('vim', 'swap'), path.join('vim', 'undo'), path.join('vim', 'backup')];

/**
 * In Emacs's folders (`~/.emacs.d`, or `emacs` in the XDG config folders): where an init file usually points
 * `backup-directory-alist` and `auto-save-file-name-transforms`, which name a file's copy by its full path with `!`
 * for `/` (`!home!me!.openai-key~`).
 */
const EMACS_FOLDERS = ['backups', 'backup', 'auto-save', 'auto-saves', 'auto-save-list'];

/**
 * The folders where neovim, and vim and Emacs as usually set up, keep every file's swap, undo and backup copy under its full path
 * with `%` for `/` (`%home%me%.openai-key.swp`): the copy of a hidden file (the server's token or key file, a shell
 * history) is there under another name in another folder, so editorCopies, which looks beside the file, misses it. Hidden
 * whole from the tools: no tool needs another program's swap, undo or backup store, and naming only the copies of hidden
 * files would miss a vim whose `directory` names the folder without the `//` that gives the full path. Only where they
 * exist, looked for at each use (an editor makes them the first time it needs one).
 * `env` is the server's: its HOME gave `places`, and it may name XDG_STATE_HOME.
 */
export function editorStateFolders(places: BrowserPlaces, env: Readonly<Record<string, string | undefined>>): string[] {
  const stateHome = env.XDG_STATE_HOME !== undefined && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : undefined;
  const under = (bases: (string | undefined)[], names: readonly string[]) =>
    [...new Set(bases.filter((base) => base !== undefined))].flatMap((base) => names.map((name) => path.join(base, name)));
  return [
    ...under([stateHome, path.join(places.home, '.local', 'state')], STATE_FOLDERS),
    ...under([places.dataHome, path.join(places.home, '.local', 'share')], DATA_FOLDERS),
    ...HOME_FOLDERS.map((name) => path.join(places.home, name)),
    ...under([places.cacheHome, path.join(places.home, '.cache')], CACHE_FOLDERS),
    ...under([path.join(places.home, '.emacs.d'), ...[places.configHome, path.join(places.home, '.config')].map((base) => base && path.join(base, 'emacs'))], EMACS_FOLDERS),
  ];
}
