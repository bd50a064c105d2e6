import { existsSync, readFileSync } from 'node:fs';
import { isWithin } from '../path-within';
import { ipcSysctls } from './ipc-limits';

/** Where `unshare` (util-linux) is looked for: fixed system folders only, never a PATH a tool could write to. */
export const UNSHARE_LOCATIONS = ['/usr/bin/unshare', '/bin/unshare'];

/** The share of the server's user's inotify instances and watches one call may hold: an eighth. */
const INOTIFY_SHARE = 8;

/**
 * Watches one call may hold however few the user has, while that leaves the user half of them: a watch-mode tool
 * (a compiler's or a test runner's) watches a folder per folder of the project, past 1024, an eighth of 8192, the
 * default of kernels before 5.11 and of machines of less than about 1 GB.
 */
const INOTIFY_WATCHES_FLOOR = 8192;

/**
 * Where the namespace around bubblewrap mounts the call's /tmp and /dev/shm, to be bound in: under its own /dev/shm,
 * a tmpfs over the host's in that namespace alone (the host's /dev/shm is out of the call's sight anyway, under its
 * fresh /dev).
 */
export const STAGED_TMP = '/dev/shm/tmp';
export const STAGED_SHM = '/dev/shm/shm';

/** Bytes of a tmpfs per file it may hold: a page, what each file with any content takes already. */
const BYTES_PER_FILE = 4096;

/**
 * Namespaces of each kind one call may hold, those it is in counted: a network namespace takes about 120 KB of the
 * kernel's memory that no process is charged for, and each kind is counted per user too (the kernel's default, half
 * its largest number of threads, about 96,000 on 24 GB), so one call holding them (a process keeps one alive by an open
 * /proc/<pid>/ns file, a thousand per process) could pin gigabytes and leave the person's programs (a browser's sandbox)
 * none. 128 leaves room for browsers' sandboxes (a user, PID and network namespace each) and bubblewrap's own.
 */
export const NAMESPACES_PER_CALL = 128;

/** The kinds of namespace counted in /proc/sys/user (ipc's is set apart, see ipcSysctls); one the kernel lacks is passed over. */
const NAMESPACE_KINDS = ['user', 'mnt', 'pid', 'net', 'uts', 'cgroup', 'time'];

/** What the call ends with when its limits could not be set: 126, as for the limit on processes. */
const LIMITS_NOT_SET_EXIT_CODE = 126;

/**
 * Said at start-up when bubblewrap starts as it is (see BubblewrapProbe's `unbounded`), with the `reason` the probe
 * found.
 */
export function unboundedNamespaceWarning(reason: string): string {
  return (
    'Warning: tool calls’ inotify instances and watches, the number of files in their /tmp and /dev/shm, and their System V shared memory, ' +
    'message queues and semaphores are not bounded here, so one call you allow can hold every inotify watch this user may have while it runs ' +
    '(this server’s and your editors’ file watching then fail), and take gigabytes of memory in empty files, shared memory and message ' +
    `queues. The cause: ${reason}.`
  );
}

/** inotify instances and watches one call may hold. */
export interface InotifyLimits {
  instances: number;
  watches: number;
}

/**
 * The inotify instances and watches one call may hold, of `user`'s (default: the server's user's,
 * /proc/sys/user/max_inotify_*, as this server's user namespace sets them): an eighth of each, at least one, and of
 * watches at least INOTIFY_WATCHES_FLOOR or half the user's, whichever is fewer. Undefined when they cannot be read.
 */
export function inotifyLimits(user: InotifyLimits | undefined = userInotifyLimits()): InotifyLimits | undefined {
  if (user === undefined) return undefined;
  const share = (count: number) => Math.max(1, Math.floor(count / INOTIFY_SHARE));
  return { instances: share(user.instances), watches: Math.max(share(user.watches), Math.min(INOTIFY_WATCHES_FLOOR, Math.floor(user.watches / 2))) };
}

/** The server's user's inotify limits, as this server's user namespace sets them; undefined when they cannot be read. */
export function userInotifyLimits(): InotifyLimits | undefined {
  const instances = readLimit('/proc/sys/user/max_inotify_instances');
  const watches = readLimit('/proc/sys/user/max_inotify_watches');
  return instances === undefined || watches === undefined ? undefined : { instances, watches };
}

/** What limitedNamespaceCommand starts, and with what. */
export interface LimitedNamespaceOptions {
  /** Absolute path of `unshare`. */
  unshare: string;
  /** inotify instances and watches the call may hold, none of either possibly (see InotifyBudget). */
  limits: InotifyLimits;
  /** Absolute path of bubblewrap, and its arguments for the call. */
  bwrap: string;
  args: readonly string[];
  /** Bytes of the call's /tmp and /dev/shm, when this namespace mounts them (see SandboxPolicy's `stagedTmpfs`). Default none: it does not. */
  tmpfsBytes?: number;
  /**
   * Bytes of System V shared memory the call may hold (see ipcSysctls). Default none: the namespace makes no IPC
   * namespace and sets no IPC limit (this kernel refuses them: see NamespaceProbe's `ipcUnbounded`), and bubblewrap
   * makes the call's.
   */
  sharedMemoryBytes?: number;
  /** Where the IPC limits are written. Default SYSCTL_FOLDER; tests name one that cannot be written. */
  ipcSysctlFolder?: string;
}

/**
 * The command that starts bubblewrap (`bwrap` with `args`) inside a user namespace of its own whose inotify limits are
 * `limits`. The kernel counts inotify instances and watches per user and user namespace, and charges each to every
 * namespace above too: those of the call's namespace, inside this one, count against these limits and against the
 * server's user's, so a call can hold no more than these, whatever namespaces it makes. The limits are set as root
 * of this namespace (`unshare --map-root-user`, the server's user outside); bubblewrap then maps the server's user and
 * group back (`--uid`, `--gid`), so the call sees the same ids as without it, and keeps no capability in this
 * namespace to change them. A user namespace it makes itself has limits that bound nothing (a new one's are the
 * largest number), but what it makes there is charged to this namespace too: the bound holds through that charge.
 *
 * With `tmpfsBytes`, the namespace has its own mounts too, and mounts there the tmpfs bubblewrap binds in as the
 * call's /tmp and /dev/shm (STAGED_TMP, STAGED_SHM; see SandboxPolicy's `stagedTmpfs`), each of `tmpfsBytes` and of at
 * most a file per page of it (`nr_inodes`, which bubblewrap has no option for): an empty file takes no page, so
 * without it a call could make millions of them, each about 1 KB of kernel memory, whatever the size.
 *
 * The namespace has its own IPC namespace too, which bubblewrap then leaves the call in (SandboxPolicy's
 * `ipcNamespaceGiven`), with the System V IPC limits of ipcSysctls: an IPC namespace's limits are its own, not charged
 * upward, and a new one gets the kernel's defaults, so the call may make no other (user.max_ipc_namespaces 1 here,
 * which the kernel checks for every IPC namespace made in a namespace inside this one), and cannot change these (its
 * /proc/sys is read-only, and it may not mount another /proc). Without `sharedMemoryBytes`, none of it: kernels before
 * Linux 6.9 (and 6.1.y before August 2024) let no namespace's root write these limits.
 *
 * It holds at most NAMESPACES_PER_CALL namespaces of each other kind, charged upward as inotify's.
 *
 * When any of it cannot be done, bubblewrap is not started and the call says why.
 */
export function limitedNamespaceCommand({ unshare, limits, bwrap, args, tmpfsBytes, sharedMemoryBytes, ipcSysctlFolder }: LimitedNamespaceOptions): { file: string; args: string[] } {
  const refusal = "airlock: this call's limits (inotify, files in /tmp and /dev/shm, System V IPC) could not be set, so the command was not run";
  const steps = [
    `echo ${checkedCount(limits.instances, 0)} > /proc/sys/user/max_inotify_instances`,
    `echo ${checkedCount(limits.watches, 0)} > /proc/sys/user/max_inotify_watches`,
    ...(sharedMemoryBytes === undefined ? [] : ipcSysctls(sharedMemoryBytes, undefined, ipcSysctlFolder).map(({ file, value }) => `echo '${value}' > ${file}`)),
    `for kind in ${NAMESPACE_KINDS.join(' ')}; do file=/proc/sys/user/max_\${kind}_namespaces; [ ! -e $file ] || echo ${NAMESPACES_PER_CALL} > $file || exit 1; done`,
  ];
  if (tmpfsBytes !== undefined) {
    const [mount, mkdir] = [systemProgram('mount'), systemProgram('mkdir')];
    const bytes = checkedCount(tmpfsBytes);
    const sized = `size=${bytes},nr_inodes=${Math.max(1, Math.floor(bytes / BYTES_PER_FILE))},mode=0755`;
    steps.push(
      // Its root and the two folders.
      `${mount} -n -t tmpfs -o size=${BYTES_PER_FILE},nr_inodes=3,mode=0755 airlock /dev/shm`,
      `${mkdir} ${STAGED_TMP} ${STAGED_SHM}`,
      `${mount} -n -t tmpfs -o ${sized} airlock-tmp ${STAGED_TMP}`,
      `${mount} -n -t tmpfs -o ${sized} airlock-shm ${STAGED_SHM}`,
    );
  }
  // The failing step's own error comes first, the cause (the start-up probe keeps that line); nothing a step says
  // when it works reaches the call's output. Its mounts and limits belong to the namespace: the subshell sets them too.
  const script = `if ! failure=$({ ${steps.join(' && ')}; } 2>&1); then printf '%s\\n' "$failure" >&2; echo "${refusal}" >&2; exit ${LIMITS_NOT_SET_EXIT_CODE}; fi\nexec "$@"`;
  const ids = ['--uid', String(process.getuid?.() ?? 0), '--gid', String(process.getgid?.() ?? 0)];
  return {
    file: unshare,
    args: ['--user', '--map-root-user', ...(tmpfsBytes === undefined ? [] : ['--mount']), ...(sharedMemoryBytes === undefined ? [] : ['--ipc']), '/bin/sh', '-c', script, 'sh', bwrap, ...ids, ...args],
  };
}

/**
 * Whether the call's /tmp and /dev/shm can be mounted under /dev/shm of the namespace around bubblewrap, which hides the
 * host's there: not when bubblewrap binds anything from it (`args`, bubblewrap's for the call), a workspace or a
 * server's temporary folder there (TMPDIR=/dev/shm). Such a call gets them from bubblewrap, bounded in bytes only.
 */
export function canStage(args: readonly string[]): boolean {
  return !args.some((arg, index) => index > 0 && BINDS.has(args[index - 1]!) && isWithin('/dev/shm', arg));
}

/** bubblewrap's options whose next argument is a path it binds from. */
const BINDS = new Set(['--bind', '--ro-bind', '--dev-bind', '--bind-try', '--ro-bind-try', '--dev-bind-try']);

/** A program of the system's own folders (never a PATH a tool could write to); the first place when in none, to fail there. */
function systemProgram(name: string): string {
  const places = [`/usr/bin/${name}`, `/bin/${name}`];
  return places.find((place) => existsSync(place)) ?? places[0]!;
}

function checkedCount(count: number, least = 1): number {
  if (!Number.isSafeInteger(count) || count < least) throw new RangeError(`a limit must be a whole number from ${least}, not ${count}`);
  return count;
}

function readLimit(file: string): number | undefined {
  try {
    const value = Number(readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}
