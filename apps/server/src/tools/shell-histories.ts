import path from 'node:path';
import type { BrowserPlaces } from './browser-profiles';

/** Files and folders, in the home folder, that shells and interpreters keep their history in by default. */
const HOME_HISTORIES = [
  // Shells: bash, sh, zsh (its own default and the usual choices), ksh, mksh, ash, tcsh and csh.
  '.bash_history',
  '.sh_history',
  '.zsh_history',
  '.zhistory',
  '.histfile',
  '.ksh_history',
  '.mksh_history',
  '.ash_history',
  '.history',
  // The zsh of macOS keeps one history per terminal window.
  '.zsh_sessions',
  // elvish before it followed XDG (a database it writes in place).
  path.join('.elvish', 'db'),
  // Interpreters and database clients.
  '.python_history',
  '.node_repl_history',
  '.psql_history',
  '.mysql_history',
  '.sqlite_history',
  '.rediscli_history',
  '.irb_history',
  '.pry_history',
  '.Rhistory',
  path.join('.ipython', 'profile_default', 'history.sqlite'),
  path.join('.julia', 'logs', 'repl_history.jl'),
  // less keeps the patterns searched for and the shell commands given in it (`/the-key`, `!…`).
  '.lesshst',
];

/**
 * In the XDG data folders: fish's (whole: fish saves its history by renaming a new file over it, which would lift a
 * mask over the file alone from a running call, while a mask over the folder holds), atuin's (which keeps every
 * shell's commands) and xonsh's; PowerShell's (whole: one file per host, `ConsoleHost_history.txt` for `pwsh`); less
 * with XDG support kept its `lesshst` there at first.
 */
const DATA_HISTORIES = ['fish', 'atuin', 'xonsh', path.join('powershell', 'PSReadLine'), 'lesshst'];

/** In the XDG config folders: nushell, as text or as a database. */
const CONFIG_HISTORIES = [path.join('nushell', 'history.txt'), path.join('nushell', 'history.sqlite3')];

/**
 * In the XDG state folders, where shells set up after that standard keep their history, where elvish keeps its
 * database of commands, and where later less keeps its `lesshst`.
 */
const STATE_HISTORIES = [path.join('bash', 'history'), path.join('zsh', 'history'), path.join('elvish', 'db.bolt'), 'lesshst'];

/** Variables naming a history file elsewhere (taken when absolute), besides ZDOTDIR, where zsh keeps `.zsh_history`. */
const HISTORY_VARIABLES = ['HISTFILE', 'PYTHON_HISTORY', 'NODE_REPL_HISTORY', 'PSQL_HISTORY', 'MYSQL_HISTFILE', 'SQLITE_HISTORY', 'REDISCLI_HISTFILE', 'LESSHISTFILE'];

/**
 * The files and folders that may hold what the person typed into a shell or an interpreter. A line typed there keeps
 * whatever was on it: `AIRLOCK_TOKEN=… npm start` leaves Airlock's token (and with it the gate, through the API on
 * loopback) to anything that reads the history, and so would any other key set that way. Hidden from the tools as the
 * browser profiles are; only where they exist, looked for at each use (a shell writes its history as it exits).
 * `env` is the server's: its HOME gave `places`, and it may name XDG_STATE_HOME, ZDOTDIR and HISTFILE and the like.
 */
export function historyFiles(places: BrowserPlaces, env: Readonly<Record<string, string | undefined>>): string[] {
  const absolute = (value: string | undefined) => (value !== undefined && path.isAbsolute(value) ? value : undefined);
  const under = (bases: (string | undefined)[], names: readonly string[]) =>
    [...new Set(bases.filter((base) => base !== undefined))].flatMap((base) => names.map((name) => path.join(base, name)));
  const zdotdir = absolute(env.ZDOTDIR);
  const named = [...HISTORY_VARIABLES.map((name) => absolute(env[name])), zdotdir === undefined ? undefined : path.join(zdotdir, '.zsh_history')];
  return [
    ...HOME_HISTORIES.map((name) => path.join(places.home, name)),
    ...under([places.dataHome, path.join(places.home, '.local', 'share')], DATA_HISTORIES),
    ...under([places.configHome, path.join(places.home, '.config')], CONFIG_HISTORIES),
    ...under([absolute(env.XDG_STATE_HOME), path.join(places.home, '.local', 'state')], STATE_HISTORIES),
    ...new Set(named.filter((file) => file !== undefined)),
  ];
}
