import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { processStartTime } from './process-group';

/** Scans of /proc in a row that must find no new marked process before the frozen ones are killed. */
const QUIET_SCANS = 3;
/** Scans at most, however many keep finding something (a process forking away from its pid faster than it is frozen). */
const MAX_SCANS = 1_000;

// Reads its stdin, which only this server writes to, until it closes: that happens when the server dies, even by
// SIGKILL. Each line names what to kill besides the marked processes: `group <pgid> [start]` or `pid <pid> [start]`
// (0 and 1 are never taken: they would mean the watchdog's own group and every process), with the start time
// (clock ticks since boot, /proc/<pid>/stat's 22nd field) of the process or the group's leader where the server
// read it. That file is read whole, and its fields counted after its last ')': the 2nd, the process's name in
// parentheses, is its program's file name, which may hold spaces, ')' and newlines. A pid whose process is now another (its start differs: the one named ended, and its pid went to a new
// process, which on a machine whose pids wrap every few minutes may be anyone's) is not killed, nor a group whose
// id names another process now (the group ended with its last member before its id could be reused).
// Then it kills those at once: a group is killed whole by the kernel (a member cannot leave it, nor fork, while
// that happens), and the host pid of a sandbox's pid 1 takes its PID namespace with it; nothing waits on a scan.
// Then it freezes every process carrying the marker ($1), scanning /proc until several scans in a row find no new
// one, so one that forks on is frozen before it can start another, and kills them all at the end, so none of them
// can restart another. One grep reads every environment in a scan, and one more those of the processes it found new:
// a grep per process takes seconds on a loaded machine, during which the call runs on. A pid found new is kept with
// its start time, read before that second grep: a process that took the pid before that grep is not marked, and one
// that took it after started at another time. It is frozen, and killed at the end, only while its pid still names the
// process of that start time: the one found may have ended meanwhile (a frozen one too, by another's SIGKILL), its
// pid given to a new process, anyone's.
// A group is signalled with `kill -s SIG -- -pgid`: dash (/bin/sh on Debian and Ubuntu) takes the `--` of
// `kill -SIG -- -pgid` for a pid, fails, and signals nothing.
/** The watchdog's shell script, run as `sh -c WATCHDOG_SCRIPT airlock-watchdog <marker>` (see above). */
export const WATCHDOG_SCRIPT = `
started() {
  ticks=
  stat=
  { while IFS= read -r line; do stat="$stat $line"; done < "/proc/$1/stat"; } 2>/dev/null || return 1
  set -- \${stat##*)}
  ticks=\${20}
}
same() {
  [ -z "$2" ] && return 0
  started "$1" || return 2
  [ "$ticks" = "$2" ]
}
told=
while read -r kind id start; do
  case $id in ''|0*|1|*[!0-9]*) continue ;; esac
  case $start in *[!0-9]*) continue ;; esac
  case $kind in group|pid) told="$told $kind:$id:$start" ;; esac
done
known=
for entry in $told; do
  kind=\${entry%%:*}
  rest=\${entry#*:}
  id=\${rest%%:*}
  same "$id" "\${rest#*:}"
  found=$?
  case $kind:$found in
    group:0|group:2) known="$known -$id" ;;
    pid:0) known="$known $id" ;;
  esac
done
[ -z "$known" ] || kill -s KILL -- $known 2>/dev/null
frozen=
quiet=0
scans=0
while [ "$quiet" -lt ${QUIET_SCANS} ] && [ "$scans" -lt ${MAX_SCANS} ]; do
  scans=$((scans + 1))
  quiet=$((quiet + 1))
  found=
  environs=
  for environ in $(grep -lzxF -- "$1" /proc/[0-9]*/environ 2>/dev/null); do
    pid=\${environ#/proc/}
    pid=\${pid%/environ}
    started "$pid"
    case "$frozen " in *" $pid:$ticks "*) continue ;; esac
    quiet=0
    [ -z "$ticks" ] || { found="$found $pid:$ticks"; environs="$environs $environ"; }
  done
  [ -n "$found" ] || continue
  marked=$(grep -lzxF -- "$1" $environs 2>/dev/null)
  for entry in $found; do
    pid=\${entry%:*}
    case $marked in *"/proc/$pid/environ"*) same "$pid" "\${entry#*:}" && kill -s STOP "$pid" 2>/dev/null && frozen="$frozen $entry" ;; esac
  done
done
for entry in $frozen; do
  same "\${entry%:*}" "\${entry#*:}" && kill -s KILL "\${entry%:*}" 2>/dev/null
done
exit 0`;

/** Stops a call's processes if this server dies before the call ends; see startCallWatchdog. */
export interface ProcessWatchdog {
  /**
   * Kills this process group too (given by its id) if the server dies before the call ends; `leaderStart`, its leader's
   * start time (processStartTime), keeps it from killing another group given the same id once this one ended.
   */
  watchGroup(pgid: number, leaderStart?: number): void;
  /**
   * Kills this process too (the host pid of a sandbox's pid 1) if the server dies before the call ends; `startTime`
   * keeps it from killing another process given the same pid once this one ended.
   */
  watchProcess(pid: number, startTime?: number): void;
  /** The call is over: the watchdog is stopped without doing anything. */
  release(): void;
}

/**
 * Starts a small shell, in a process group of its own, that stops every process carrying `marker` (`NAME=value`,
 * in the environment of every process the call starts), and the groups and pids it is told of, if this server dies
 * while the call runs (the call's processes are detached from the server: nothing else would). Started before the
 * call's first process, so no moment of the call goes unwatched: a server killed before it could name the call's
 * group leaves only processes carrying the marker, which the watchdog finds.
 */
export function startCallWatchdog(marker: string): ProcessWatchdog {
  const watchdog = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT, 'airlock-watchdog', marker], {
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', () => undefined);
  watchdog.stdin.on('error', () => undefined);
  // Neither the watchdog nor its pipe keeps this server running.
  watchdog.unref();
  (watchdog.stdin as unknown as Socket).unref();
  // A line this short goes into the pipe at once: once this returns, it reaches the watchdog even if the server is killed.
  const tell = (line: string) => {
    if (!watchdog.stdin.destroyed) watchdog.stdin.write(`${line}\n`);
  };
  return {
    watchGroup: (pgid, leaderStart) => tell(`group ${pgid}${startField(leaderStart)}`),
    watchProcess: (pid, startTime) => tell(`pid ${pid}${startField(startTime)}`),
    release: () => {
      if (watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill('SIGKILL');
      watchdog.stdin.destroy();
    },
  };
}

/**
 * Starts the watchdog, then the call's first process with `start`, in a process group of its own whose id (its pid)
 * the watchdog is then told. The watchdog is released if `start` throws.
 */
export function spawnWatched<T extends ChildProcess>(marker: string, start: () => T): { child: T; watchdog: ProcessWatchdog } {
  const watchdog = startCallWatchdog(marker);
  try {
    const child = start();
    // Read at once: the child cannot have been reaped before this returns, so its pid is still its own.
    if (child.pid !== undefined) watchdog.watchGroup(child.pid, processStartTime(child.pid));
    return { child, watchdog };
  } catch (error) {
    watchdog.release();
    throw error;
  }
}

/** A start time as the watchdog reads it after a pid: a whole number of clock ticks, or none. */
function startField(startTime: number | undefined): string {
  return startTime !== undefined && Number.isSafeInteger(startTime) && startTime >= 0 ? ` ${startTime}` : '';
}
