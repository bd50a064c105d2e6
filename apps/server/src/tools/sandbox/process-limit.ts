import { readFileSync } from 'node:fs';
import { ownLimit } from '../../own-limits';
import { WRAPPER_SCRIPT } from '../process-confinement';

/**
 * Processes one sandboxed call may run at once, threads included (Linux counts each thread as a process here).
 * A `make -j16` runs about 4 per job; a test runner with a worker per core runs up to about 12 per worker (a Node
 * process's own threads), so near 400 on a 32-core machine: 1024 leaves room for that, and still stops a fork bomb
 * far below what takes a machine down (often 32,768 processes in all, or its memory before that).
 */
export const DEFAULT_MAX_PROCESSES = 1024;

/** Accepted values: a call needs bubblewrap's pid 1 and the shell; above Linux's largest process id there is no limit left. */
export const MIN_MAX_PROCESSES = 16;
export const MAX_MAX_PROCESSES = 4_194_304;

/**
 * Files each process of a sandboxed call may have open at once (RLIMIT_NOFILE), soft and hard: the soft limit most
 * systems give a process. Open files are counted machine-wide (fs.file-max), not per user, so this bounds a call to
 * `maxProcesses` times it: a million at the default 1024 processes.
 */
export const DEFAULT_MAX_OPEN_FILES = 1024;

/** Accepted values: a process needs its standard three and a few more; above Linux's default fs.nr_open none may be set. */
export const MIN_MAX_OPEN_FILES = 16;
export const MAX_MAX_OPEN_FILES = 1_048_576;

/** The limits limitedWrapperScript sets. */
export interface CallLimits {
  /** Processes, threads included, the call may run at once (see DEFAULT_MAX_PROCESSES). */
  maxProcesses: number;
  /** Files each process of the call may have open at once. Default DEFAULT_MAX_OPEN_FILES. */
  maxOpenFiles?: number;
}

/** What the call ends with when the limit could not be set: 126, as a shell reports a command it cannot run. */
export const LIMIT_NOT_SET_EXIT_CODE = 126;

/**
 * WRAPPER_SCRIPT with the limits on processes and open files set first (RLIMIT_NPROC and RLIMIT_NOFILE, soft and
 * hard, so the command cannot raise them back). In the call's own user namespace the kernel counts only the processes
 * of that namespace, so the limit on processes bounds this call alone, whatever else the person runs (set outside
 * bubblewrap, it would count all of them); the limit on open files holds for each process (see DEFAULT_MAX_OPEN_FILES).
 *
 * Shells spell the first differently (`ulimit -u` in bash, `ulimit -p` in dash, where bash's `-p` is the pipe size), so
 * both are tried, and what counts is what the kernel then holds: each hard limit read back from /proc/self/limits
 * must be at most its setting (one already lower is kept), else the command is not run. Builtins only: nothing
 * forks before the limits are checked. `run` then runs the command (default WRAPPER_SCRIPT).
 */
export function limitedWrapperScript({ maxProcesses, maxOpenFiles = DEFAULT_MAX_OPEN_FILES }: CallLimits, run: string = WRAPPER_SCRIPT): string {
  const limit = String(checkedMaxProcesses(maxProcesses));
  const openFiles = String(checkedMaxOpenFiles(maxOpenFiles));
  const refusal = `airlock: /bin/sh in the sandbox could not limit this call to ${limit} processes, so the command was not run`;
  const filesRefusal = `airlock: /bin/sh in the sandbox could not limit this call to ${openFiles} open files per process, so the command was not run`;
  return [
    `ulimit -u ${limit} 2>/dev/null || ulimit -p ${limit} 2>/dev/null`,
    `ulimit -n ${openFiles} 2>/dev/null`,
    'hard=',
    'files=',
    // The lines read "Max processes <soft> <hard> processes" and "Max open files <soft> <hard> files".
    'if [ -r /proc/self/limits ]; then while read -r w1 w2 w3 w4 w5 rest; do if [ "$w1 $w2" = "Max processes" ]; then hard=$w4; elif [ "$w1 $w2 $w3" = "Max open files" ]; then files=$w5; fi; done < /proc/self/limits; fi',
    `case $hard in ''|*[!0-9]*) hard=unset ;; esac`,
    `if [ "$hard" = unset ] || [ "$hard" -gt ${limit} ]; then echo '${refusal}' >&2; exit ${LIMIT_NOT_SET_EXIT_CODE}; fi`,
    `case $files in ''|*[!0-9]*) files=unset ;; esac`,
    `if [ "$files" = unset ] || [ "$files" -gt ${openFiles} ]; then echo '${filesRefusal}' >&2; exit ${LIMIT_NOT_SET_EXIT_CODE}; fi`,
    run,
  ].join('\n');
}

/** This process's hard limit on open files, read from `limitsFile`; undefined where it cannot be read or is unlimited. */
export function ownOpenFilesHardLimit(limitsFile?: string): number | undefined {
  return ownLimit('Max open files', 'hard', limitsFile);
}

/** What callOpenFiles decides: the limit the calls get, and what to say of it; or why the setting cannot hold. */
export type CallOpenFiles = { maxOpenFiles: number; warning?: string } | { refusal: string };

/**
 * The files each process of a sandboxed call may have open, of `setting` (--tool-max-open-files, `given` or its
 * default) and this server's own hard limit (`hardLimit`, see ownOpenFilesHardLimit): no process the server starts can
 * raise its hard limit past the server's (that takes a capability outside any user namespace), so the shell in the
 * sandbox keeps the server's, and a setting above it gave the calls less than asked, silently. Given, it is refused;
 * the default is lowered to it, and said.
 */
export function callOpenFiles({ setting, given, hardLimit }: { setting: number; given: boolean; hardLimit: number | undefined }): CallOpenFiles {
  if (hardLimit === undefined || setting <= hardLimit) return { maxOpenFiles: setting };
  if (given) {
    return {
      refusal:
        `${setting} is above this server's own limit on open files (${hardLimit}, ulimit -Hn), which no process of a tool call can go past: ` +
        `raise that limit where Airlock starts, or give at most ${hardLimit}`,
    };
  }
  return {
    maxOpenFiles: Math.max(MIN_MAX_OPEN_FILES, hardLimit),
    warning:
      `Warning: this server's own limit on open files is ${hardLimit} (ulimit -Hn), below the ${setting} each process of a tool call may have ` +
      `by default (--tool-max-open-files): its calls get ${hardLimit}. Raise that limit where Airlock starts.`,
  };
}

/** The value itself, when in range; it goes into a shell script, so anything else throws. */
export function checkedMaxProcesses(maxProcesses: number): number {
  if (!Number.isSafeInteger(maxProcesses) || maxProcesses < MIN_MAX_PROCESSES || maxProcesses > MAX_MAX_PROCESSES) {
    throw new RangeError(`maxProcesses must be a whole number from ${MIN_MAX_PROCESSES} to ${MAX_MAX_PROCESSES}, not ${maxProcesses}`);
  }
  return maxProcesses;
}

/** The value itself, when in range; it goes into a shell script, so anything else throws. */
export function checkedMaxOpenFiles(maxOpenFiles: number): number {
  if (!Number.isSafeInteger(maxOpenFiles) || maxOpenFiles < MIN_MAX_OPEN_FILES || maxOpenFiles > MAX_MAX_OPEN_FILES) {
    throw new RangeError(`maxOpenFiles must be a whole number from ${MIN_MAX_OPEN_FILES} to ${MAX_MAX_OPEN_FILES}, not ${maxOpenFiles}`);
  }
  return maxOpenFiles;
}

/**
 * Said at start-up when the limit cannot hold: Linux does not count the processes of the host's root (user id 0
 * outside any user namespace) against RLIMIT_NPROC, in the sandbox's namespace too. `hostUid` is this process's
 * real user id as the host sees it (see ownHostUserId). Null when there is nothing to say.
 */
export function processLimitWarning(maxProcesses: number, hostUid: number | undefined): string | null {
  if (hostUid !== 0) return null;
  return (
    `Warning: Airlock runs as root, so the limit of ${maxProcesses} processes per tool call does not apply (Linux does not ` +
    'count root’s processes against it): a call you allow can fork until the machine runs out of processes or memory. ' +
    'Run Airlock as an ordinary user.'
  );
}

/** This process's real user id as the host sees it: see hostUserId. */
export function ownHostUserId(): number | undefined {
  return hostUserId(process.getuid?.(), readUidMap());
}

/**
 * A real user id as seen one user namespace up (`uidMap` is /proc/self/uid_map): root in a rootless container is
 * an ordinary user there, whose processes are counted. Without a map, the id as it is.
 */
export function hostUserId(uid: number | undefined, uidMap: string | undefined): number | undefined {
  if (uid === undefined || uidMap === undefined) return uid;
  for (const line of uidMap.split('\n')) {
    // Each line maps `count` ids from `inside` on to `outside` on.
    const [inside, outside, count] = line.trim().split(/\s+/).map(Number);
    if (inside === undefined || outside === undefined || count === undefined) continue;
    if (uid >= inside && uid < inside + count) return outside + (uid - inside);
  }
  return uid;
}

function readUidMap(): string | undefined {
  try {
    return readFileSync('/proc/self/uid_map', 'utf8');
  } catch {
    return undefined;
  }
}
