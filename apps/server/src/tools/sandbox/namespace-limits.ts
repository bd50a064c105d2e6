import { existsSync, readFileSync } from 'node:fs';
import { isWithin } from '../path-within';
import { ownLimit } from '../../own-limits';
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

/**
 * Pseudo-terminals one call may open at once, of its own devpts (see limitedNamespaceCommand): a terminal multiplexer
 * with a few dozen panes, or a test runner that gives each of its workers one, stays under it. Every devpts but the
 * host's first shares kernel.pty.max less kernel.pty.reserve (3,072 by default) across the machine, containers' and
 * other calls' too, and bubblewrap's own has no `max`.
 */
export const PTYS_PER_CALL = 64;

/** The kernel's defaults, taken where the machine's cannot be read: kernel.pty.max less kernel.pty.reserve, and RLIMIT_MSGQUEUE. */
const DEFAULT_PTY_POOL = 4096 - 1024;
const DEFAULT_MESSAGE_QUEUE_BYTES = 819_200;

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
    'Warning: tool calls’ inotify instances and watches, fanotify groups and marks, POSIX message queues, pseudo-terminals, the number of ' +
    'files in their /tmp and /dev/shm, and their System V shared memory, message queues and semaphores are not bounded here, so one call ' +
    'you allow can hold every inotify watch, fanotify group and POSIX message queue this user may have while it runs (this server’s and ' +
    'your editors’ file watching then fail) and every pseudo-terminal other calls and containers take theirs from, and take gigabytes of memory in empty ' +
    `files, shared memory and message queues. The cause: ${reason}.`
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

/**
 * The counts the kernel keeps per user (inotify's, fanotify's, the bytes of POSIX message queues) or per machine
 * (pseudo-terminals) that a call holds a part of: what there is in all (hostCounts), or what one call may hold
 * (callShare, CountBudget).
 */
export interface CallCounts extends InotifyLimits {
  /** fanotify groups and marks (user.max_fanotify_*); absent where the kernel lacks them (before Linux 5.13). */
  fanotifyGroups?: number;
  fanotifyMarks?: number;
  /** Pseudo-terminals. */
  ptys: number;
  /** Bytes of POSIX message queues (RLIMIT_MSGQUEUE). */
  messageQueueBytes: number;
}

/**
 * What there is of each count: the server's user's, as this server's user namespace and its own limit on message
 * queues set them, and of pseudo-terminals what every devpts but the host's first shares on the machine. Undefined
 * when inotify's cannot be read.
 */
export function hostCounts(): CallCounts | undefined {
  const inotify = userInotifyLimits();
  return inotify === undefined ? undefined : { ...inotify, ...otherHostCounts() };
}

/**
 * One call's share of `all`: inotifyLimits' of inotify's, an eighth of the rest (at least one of each, where there is
 * one), and of pseudo-terminals at most PTYS_PER_CALL.
 */
export function callShare(all: CallCounts): CallCounts {
  const share = (count: number) => Math.max(Math.min(1, count), Math.floor(count / INOTIFY_SHARE));
  const inotify = inotifyLimits(all)!;
  return {
    ...inotify,
    ...(all.fanotifyGroups === undefined ? {} : { fanotifyGroups: share(all.fanotifyGroups) }),
    ...(all.fanotifyMarks === undefined ? {} : { fanotifyMarks: share(all.fanotifyMarks) }),
    ptys: Math.min(PTYS_PER_CALL, share(all.ptys)),
    messageQueueBytes: share(all.messageQueueBytes),
  };
}

function otherHostCounts(): Omit<CallCounts, keyof InotifyLimits> {
  const [groups, marks] = [readLimit('/proc/sys/user/max_fanotify_groups', 0), readLimit('/proc/sys/user/max_fanotify_marks', 0)];
  const [ptyMax, ptyReserve] = [readLimit('/proc/sys/kernel/pty/max'), readLimit('/proc/sys/kernel/pty/reserve', 0)];
  return {
    ...(groups === undefined || marks === undefined ? {} : { fanotifyGroups: groups, fanotifyMarks: marks }),
    ptys: ptyMax === undefined || ptyReserve === undefined ? DEFAULT_PTY_POOL : Math.max(0, ptyMax - ptyReserve),
    // The soft limit is the one the kernel checks.
    messageQueueBytes: ownLimit('Max msgqueue size', 'soft') ?? DEFAULT_MESSAGE_QUEUE_BYTES,
  };
}

/** What limitedNamespaceCommand starts, and with what. */
export interface LimitedNamespaceOptions {
  /** Absolute path of `unshare`. */
  unshare: string;
  /**
   * inotify instances and watches the call may hold, and the other counts of CallCounts, none of any possibly (see
   * CountBudget); those left out, a call's alone (callShare).
   */
  limits: InotifyLimits & Partial<CallCounts>;
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
 * fanotify groups and marks are counted so too, and bounded the same way (`limits`' fanotifyGroups and fanotifyMarks;
 * a kernel without them, before Linux 5.13, is passed over).
 *
 * The bytes of POSIX message queues are counted per user too, against RLIMIT_MSGQUEUE, which the shell lowers to
 * `limits`' messageQueueBytes, soft and hard, before bubblewrap starts (`prlimit`: dash's ulimit has no -q): the kernel
 * takes a user namespace's bound on what all of it holds from its maker's limit as it makes it, so bubblewrap's
 * namespace, and each one a process of the call makes, holds that much at most between all of the call's processes.
 *
 * The namespace has its own mounts, and a devpts of its own over /dev/pts, of at most `limits`' ptys pseudo-terminals
 * (`max`), which bubblewrap binds over the call's (SandboxPolicy's `ptysGiven`): its own has no such bound, and the
 * kernel lets every devpts but the host's first take from one pool, containers' too. None (0, which devpts takes for
 * no bound): an empty read-only folder there instead.
 *
 * With `tmpfsBytes`, the namespace mounts the tmpfs bubblewrap binds in as the call's /tmp and /dev/shm too (STAGED_TMP,
 * STAGED_SHM; see SandboxPolicy's `stagedTmpfs`), each of `tmpfsBytes` and of at most a file per page of it
 * (`nr_inodes`, which bubblewrap has no option for): an empty file takes no page, so without it a call could make
 * millions of them, each about 1 KB of kernel memory, whatever the size.
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
 * Counts `limits` leaves out are those of a call alone (callShare of hostCounts). When any of it cannot be done,
 * bubblewrap is not started and the call says why.
 */
export function limitedNamespaceCommand({ unshare, limits, bwrap, args, tmpfsBytes, sharedMemoryBytes, ipcSysctlFolder }: LimitedNamespaceOptions): { file: string; args: string[] } {
  const refusal =
    "airlock: this call's limits (inotify, fanotify, POSIX message queues, pseudo-terminals, files in /tmp and /dev/shm, System V IPC) could not be set, so the command was not run";
  const counts: InotifyLimits & Partial<CallCounts> = limits.ptys === undefined || limits.messageQueueBytes === undefined ? { ...callShare({ ...limits, ...otherHostCounts() }), ...limits } : limits;
  const [mount, mkdir, prlimit] = [systemProgram('mount'), systemProgram('mkdir'), systemProgram('prlimit')];
  const queueBytes = checkedCount(counts.messageQueueBytes ?? 0, 0);
  const ptys = checkedCount(counts.ptys ?? 0, 0);
  const fanotify = [
    ['groups', counts.fanotifyGroups],
    ['marks', counts.fanotifyMarks],
  ] as const;
  const steps = [
    `echo ${checkedCount(limits.instances, 0)} > /proc/sys/user/max_inotify_instances`,
    `echo ${checkedCount(limits.watches, 0)} > /proc/sys/user/max_inotify_watches`,
    ...fanotify.flatMap(([kind, count]) => (count === undefined ? [] : [`{ [ ! -e /proc/sys/user/max_fanotify_${kind} ] || echo ${checkedCount(count, 0)} > /proc/sys/user/max_fanotify_${kind}; }`])),
    ...(sharedMemoryBytes === undefined ? [] : ipcSysctls(sharedMemoryBytes, undefined, ipcSysctlFolder).map(({ file, value }) => `echo '${value}' > ${file}`)),
    `for kind in ${NAMESPACE_KINDS.join(' ')}; do file=/proc/sys/user/max_\${kind}_namespaces; [ ! -e $file ] || echo ${NAMESPACES_PER_CALL} > $file || exit 1; done`,
    // The shell's own limit ($$ names it in this subshell too): bubblewrap inherits it.
    `${prlimit} --pid $$ --msgqueue=${queueBytes}:${queueBytes}`,
  ];
  if (tmpfsBytes !== undefined) {
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
  // The options bubblewrap's own devpts has, and the bound.
  steps.push(
    ptys > 0
      ? `${mount} -n -t devpts -o newinstance,ptmxmode=0666,mode=620,max=${ptys} airlock-pts /dev/pts`
      : `${mount} -n -t tmpfs -o ro,size=${BYTES_PER_FILE},nr_inodes=1,mode=0755 airlock-pts /dev/pts`,
  );
  // The failing step's own error comes first, the cause (the start-up probe keeps that line); nothing a step says
  // when it works reaches the call's output. Its mounts and limits belong to the namespace: the subshell sets them too.
  const script = `if ! failure=$({ ${steps.join(' && ')}; } 2>&1); then printf '%s\\n' "$failure" >&2; echo "${refusal}" >&2; exit ${LIMITS_NOT_SET_EXIT_CODE}; fi\nexec "$@"`;
  const ids = ['--uid', String(process.getuid?.() ?? 0), '--gid', String(process.getgid?.() ?? 0)];
  return {
    file: unshare,
    args: ['--user', '--map-root-user', '--mount', ...(sharedMemoryBytes === undefined ? [] : ['--ipc']), '/bin/sh', '-c', script, 'sh', bwrap, ...ids, ...args],
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

function readLimit(file: string, least = 1): number | undefined {
  try {
    const value = Number(readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(value) && value >= least ? value : undefined;
  } catch {
    return undefined;
  }
}
