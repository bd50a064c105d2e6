import { readFileSync } from 'node:fs';

/** Where `unshare` (util-linux) is looked for: fixed system folders only, never a PATH a tool could write to. */
export const UNSHARE_LOCATIONS = ['/usr/bin/unshare', '/bin/unshare'];

/** The share of the server's user's inotify instances and watches one call may hold: an eighth. */
const INOTIFY_SHARE = 8;

/** What the call ends with when its limits could not be set: 126, as for the limit on processes. */
const LIMITS_NOT_SET_EXIT_CODE = 126;

/** Said at start-up when bubblewrap starts as it is (see BubblewrapProbe's `unshare`). */
export const UNBOUNDED_INOTIFY_WARNING =
  'Warning: tool calls’ inotify instances and watches are not bounded here (no unshare in /usr/bin or /bin, or it cannot set ' +
  'them: /proc/sys read-only), so one call you allow can hold every one this user may have while it runs, and this server’s ' +
  'and your editors’ file watching fail meanwhile.';

/** inotify instances and watches one call may hold. */
export interface InotifyLimits {
  instances: number;
  watches: number;
}

/**
 * An eighth of the inotify instances and watches the server's user may hold (/proc/sys/user/max_inotify_*, as this
 * server's user namespace sets them), at least one of each; undefined when they cannot be read.
 */
export function inotifyLimits(): InotifyLimits | undefined {
  const instances = readLimit('/proc/sys/user/max_inotify_instances');
  const watches = readLimit('/proc/sys/user/max_inotify_watches');
  if (instances === undefined || watches === undefined) return undefined;
  return { instances: Math.max(1, Math.floor(instances / INOTIFY_SHARE)), watches: Math.max(1, Math.floor(watches / INOTIFY_SHARE)) };
}

/**
 * The command that starts bubblewrap (`bwrap` with `args`) inside a user namespace of its own whose inotify limits are
 * `limits`. The kernel counts inotify instances and watches per user and user namespace, and charges each to every
 * namespace above too: those of the call's namespace, inside this one, count against these limits and against the
 * server's user's, so a call can hold no more than these, whatever namespaces it makes. The limits are set as root
 * of this namespace (`unshare --map-root-user`, the server's user outside); bubblewrap then maps the server's user and
 * group back (`--uid`, `--gid`), so the call sees the same ids as without it, and keeps no capability in this
 * namespace, nor any way to change them (its /proc/sys is read-only too). When they cannot be set, bubblewrap is not
 * started and the call says why.
 */
export function limitedNamespaceCommand(unshare: string, limits: InotifyLimits, bwrap: string, args: readonly string[]): { file: string; args: string[] } {
  const refusal = "airlock: this call's inotify limits could not be set, so the command was not run";
  const set = `echo ${checkedCount(limits.instances)} > /proc/sys/user/max_inotify_instances && echo ${checkedCount(limits.watches)} > /proc/sys/user/max_inotify_watches`;
  const script = `if ! { ${set}; } 2>/dev/null; then echo "${refusal}" >&2; exit ${LIMITS_NOT_SET_EXIT_CODE}; fi\nexec "$@"`;
  const ids = ['--uid', String(process.getuid?.() ?? 0), '--gid', String(process.getgid?.() ?? 0)];
  return {
    file: unshare,
    args: ['--user', '--map-root-user', '/bin/sh', '-c', script, 'sh', bwrap, ...ids, ...args],
  };
}

function checkedCount(count: number): number {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`an inotify limit must be a whole number from 1, not ${count}`);
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
