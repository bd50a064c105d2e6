import path from 'node:path';
import type { HiddenMask } from '../hidden-paths';
import { isStrictlyWithin } from '../path-within';
import { hostLayout, type HostLayout } from './host-layout';
import { STAGED_SHM, STAGED_TMP } from './namespace-limits';
import { masksBesideVeils, veilArgs, type VeiledFolder } from './veiled-folders';

/** What a sandboxed call may see of the filesystem and the network. */
export interface SandboxPolicy {
  /** The one folder the call may write to, besides its private /tmp; a real path. */
  workspace: string;
  /** Folders and files outside the workspace the call must read, at the same path (e.g. the python tool's script). Default none. */
  readOnly?: readonly string[];
  /** Folders and files that must look empty inside (data dir, token and key files), from HiddenPaths. Default none. */
  hidden?: readonly HiddenMask[];
  /**
   * Folders outside the workspace that hold hidden files, each seen as an empty read-only tmpfs with its other entries
   * put back (see veiledFolders); a hidden path directly inside one needs no mask of its own. Default none.
   */
  veiled?: readonly VeiledFolder[];
  /** Whether the call reaches the network. */
  network: boolean;
  /**
   * Workspace paths mounted from descriptors bubblewrap holds, by their number in bubblewrap (see
   * openWorkspaceGuards): read-only, or bound over themselves. Default none.
   */
  guards?: readonly { path: string; fd: number; readOnly: boolean }[];
  /**
   * Workspace paths missing at the call's start that it must not make (see maskMissingGitPaths): an empty read-only
   * tmpfs over a folder; over a file, a read-only empty file bubblewrap copies from the descriptor `fd` (a device
   * such as /dev/null cannot be read on bubblewrap's mounts, and Git must still read the config). Default none.
   */
  emptyReadOnly?: readonly ({ path: string; folder: true } | { path: string; folder: false; fd: number })[];
  /** The descriptor, in bubblewrap, it reads the call's seccomp filter from (see callFilter). Default none. */
  seccompFd?: number;
  /**
   * Bytes the call's /tmp and its /dev/shm may each hold (bubblewrap's --size, from 0.7.0 on). Unset: the kernel's
   * default, half the machine's memory each, for a bubblewrap without --size.
   */
  tmpfsBytes?: number;
  /**
   * Whether the namespace bubblewrap starts in has mounted the call's /tmp and /dev/shm (see limitedNamespaceCommand),
   * bounded in bytes and in files: they are bound in from STAGED_TMP and STAGED_SHM, and `tmpfsBytes` is not used.
   * Default false: bubblewrap makes them, bounded in bytes only.
   */
  stagedTmpfs?: boolean;
  /**
   * Whether bubblewrap starts in an IPC namespace made for the call, with its limits (see limitedNamespaceCommand): it
   * then makes none, and the call stays in that one. Default false: bubblewrap makes one, with the kernel's defaults.
   */
  ipcNamespaceGiven?: boolean;
  /**
   * Whether the namespace bubblewrap starts in has mounted a devpts of the call's own over /dev/pts, of a bounded number
   * of pseudo-terminals (see limitedNamespaceCommand): bubblewrap binds it over the call's, to which /dev/ptmx leads.
   * Default false: the call has bubblewrap's, which has no bound.
   */
  ptysGiven?: boolean;
}

type Mount = { path: string; args: string[] };

/**
 * bubblewrap arguments for a call: its own user, PID and IPC namespaces (the last made around bubblewrap, with its
 * limits, where it can be: `ipcNamespaceGiven`) with no capabilities (pid 1 of the
 * namespace is bubblewrap's, and killing it ends every process of the call), a new session (no terminal to
 * inject input into), dies with the server, the whole system read-only, a fresh /dev, /proc and /tmp, an empty
 * tmpfs over each folder of Unix sockets (see HostLayout), the workspace read-write with its guards (a Git
 * repository's config and hooks, `.airlock`) read-only, and the hidden paths masked: an empty tmpfs over a folder,
 * /dev/null over a file, or, for the files of a folder outside the workspace, the folder veiled (its other entries put
 * back over an empty tmpfs, the hidden ones not there, so a host renaming a new file over one uncovers nothing). Each
 * folder between the workspace and a hidden path is bound over itself: a mount point
 * cannot be renamed (EBUSY), so no call can move a hidden path away from under its mask, for itself or for the
 * calls after it.
 *
 * /proc/sys is read-only, so the call cannot raise the limits of its namespaces.
 *
 * A tmpfs lives in memory, where no process is charged for it: filled, the kernel kills process after process (this
 * server among them) and frees none of it. So the call writes only to /tmp and /dev/shm, each bounded (`tmpfsBytes`);
 * /dev and every mask's tmpfs are made read-only once what lies inside them is mounted.
 */
export function bubblewrapArgs(policy: SandboxPolicy, host: HostLayout = hostLayout()): string[] {
  const mounts: Mount[] = [
    ...host.maskedFolders.map((folder) => ({ path: folder, args: ['--tmpfs', folder] })),
    ...host.keptLinks.map((link) => ({ path: link.path, args: ['--symlink', link.target, link.path] })),
    ...host.keptFiles.map((file) => ({ path: file.path, args: ['--ro-bind', file.source, file.path] })),
    { path: policy.workspace, args: ['--bind', policy.workspace, policy.workspace] },
    ...(policy.readOnly ?? []).map((entry) => ({ path: entry, args: ['--ro-bind', entry, entry] })),
    ...pinnedFolders(policy).map((folder) => ({ path: folder, args: ['--bind', folder, folder] })),
    ...(policy.guards ?? []).map((guard) => ({ path: guard.path, args: [guard.readOnly ? '--ro-bind-fd' : '--bind-fd', String(guard.fd), guard.path] })),
    ...(policy.emptyReadOnly ?? []).map((empty) => ({
      path: empty.path,
      args: empty.folder ? ['--tmpfs', empty.path, '--remount-ro', empty.path] : ['--ro-bind-data', String(empty.fd), empty.path],
    })),
    ...(policy.veiled ?? []).map((veil) => ({ path: veil.path, args: veilArgs(veil) })),
    ...masksBesideVeils(policy.hidden ?? [], policy.veiled ?? []).map(({ path: hidden, folder }) => ({ path: hidden, args: folder ? ['--tmpfs', hidden] : ['--ro-bind', '/dev/null', hidden] })),
  ];
  // A parent is mounted before what lies inside it, so a hidden folder inside the workspace stays hidden, and a
  // workspace inside a hidden folder or a socket folder is still there. At equal depth, the order above holds
  // (the sort is stable): a hidden path is masked last.
  mounts.sort((a, b) => depth(a.path) - depth(b.path));
  // Read-only only at the end: bubblewrap makes the mount points of what lies deeper in them.
  const writableMasks = mounts.filter((mount) => mount.args[0] === '--tmpfs' && !mount.args.includes('--remount-ro')).map((mount) => mount.path);
  return [
    '--die-with-parent',
    '--new-session',
    '--unshare-user',
    '--unshare-pid',
    ...(policy.ipcNamespaceGiven === true ? [] : ['--unshare-ipc']),
    ...(policy.network ? [] : ['--unshare-net']),
    '--cap-drop',
    'ALL',
    ...(policy.seccompFd === undefined ? [] : ['--seccomp', String(policy.seccompFd)]),
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    // With devices: a nodev bind's /dev/pts/ptmx cannot be opened.
    ...(policy.ptysGiven === true ? ['--dev-bind', '/dev/pts', '/dev/pts'] : []),
    ...(policy.stagedTmpfs === true ? ['--bind', STAGED_SHM, '/dev/shm'] : [...sized(policy.tmpfsBytes), '--tmpfs', '/dev/shm']),
    '--remount-ro',
    '/dev',
    '--proc',
    '/proc',
    // Read-only: an IPC namespace's limits (kernel.shm*, msg*, sem) may be written by any process of the user that is
    // root of the user namespace it belongs to, the call's own user (bubblewrap covers /proc/sys only when it is
    // writable as a folder, which it never is). A bind of the host's: each file says what the reader's namespaces hold.
    '--ro-bind',
    '/proc/sys',
    '/proc/sys',
    ...(policy.stagedTmpfs === true ? ['--bind', STAGED_TMP, '/tmp'] : [...sized(policy.tmpfsBytes), '--tmpfs', '/tmp']),
    ...mounts.flatMap((mount) => mount.args),
    ...writableMasks.flatMap((mask) => ['--remount-ro', mask]),
  ];
}

function sized(bytes: number | undefined): string[] {
  return bytes === undefined ? [] : ['--size', String(bytes)];
}

/** The folders strictly between the (real) workspace and a hidden path inside it. */
function pinnedFolders(policy: SandboxPolicy): string[] {
  const folders = new Set<string>();
  for (const { path: hidden } of policy.hidden ?? []) {
    for (let folder = path.dirname(hidden); isStrictlyWithin(policy.workspace, folder); folder = path.dirname(folder)) folders.add(folder);
  }
  return [...folders];
}

function depth(entry: string): number {
  return path.resolve(entry).split(path.sep).filter(Boolean).length;
}
