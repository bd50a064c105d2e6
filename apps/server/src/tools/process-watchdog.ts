import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { MarkedScope } from './process-group';

// Both scripts read their stdin, which only this server writes to, until it closes: that happens when the server
// dies, even by SIGKILL. A group is signalled with `kill -s SIG -- -pgid`: dash (/bin/sh on Debian and Ubuntu) takes
// the `--` of `kill -SIG -- -pgid` for a pid, fails, and signals nothing.

// Then it freezes the call's group and every process carrying the call's marker, and kills them all.
const GROUP_SCRIPT = `
while read -r _; do :; done
kill -s STOP -- "-$1" 2>/dev/null
found=
for round in 1 2 3; do
  for environ in /proc/[0-9]*/environ; do
    grep -qzxF -- "$2" "$environ" 2>/dev/null || continue
    pid=\${environ#/proc/}; pid=\${pid%/environ}
    kill -STOP "$pid" 2>/dev/null && found="$found $pid"
  done
done
kill -s KILL -- "-$1" 2>/dev/null
[ -z "$found" ] || kill -KILL $found 2>/dev/null
exit 0`;

// Each line is a pid to kill as well (the host pid of a sandbox's pid 1: killing it ends its whole PID namespace).
// Then it kills those, the call's group, and every process carrying the call's marker: bubblewrap and its pid 1
// have it in their own environment, which nothing in the sandbox can change, so pid 1 is found even when the
// server died before it could say which pid that is.
const SANDBOX_SCRIPT = `
pids=
while read -r pid; do
  case $pid in ''|*[!0-9]*) ;; *) pids="$pids $pid" ;; esac
done
[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
kill -s KILL -- "-$1" 2>/dev/null
for round in 1 2 3; do
  for environ in /proc/[0-9]*/environ; do
    grep -qzxF -- "$2" "$environ" 2>/dev/null || continue
    pid=\${environ#/proc/}; pid=\${pid%/environ}
    kill -KILL "$pid" 2>/dev/null
  done
done
exit 0`;

export interface ProcessWatchdog {
  /** The call is over: the watchdog is stopped without doing anything. */
  release(): void;
}

export interface SandboxWatchdog extends ProcessWatchdog {
  /** Kills this pid too if the server dies before the call ends. */
  alsoKill(pid: number): void;
}

/**
 * Starts a small shell, in a process group of its own, that stops the call's processes if this server dies
 * while the call runs (without a sandbox nothing else would: the call's group is detached from the server).
 */
export function startProcessWatchdog(scope: MarkedScope): ProcessWatchdog {
  const { release } = startWatchdog(GROUP_SCRIPT, [String(scope.group), scope.marker]);
  return { release };
}

/**
 * The same for a sandboxed call: bubblewrap's --die-with-parent leaves a window (its pid 1 asks for the signal
 * only after the command has started), and a server killed in it would leave the sandbox running for good.
 * `marker` is `NAME=value`, set in bubblewrap's environment.
 */
export function startSandboxWatchdog(group: number, marker: string): SandboxWatchdog {
  const { release, stdin } = startWatchdog(SANDBOX_SCRIPT, [String(group), marker]);
  return {
    release,
    alsoKill: (pid) => {
      if (!stdin.destroyed) stdin.write(`${pid}\n`);
    },
  };
}

function startWatchdog(script: string, args: string[]) {
  const watchdog = spawn('/bin/sh', ['-c', script, 'airlock-watchdog', ...args], {
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
  return {
    stdin: watchdog.stdin,
    release: () => {
      if (watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill('SIGKILL');
      watchdog.stdin.destroy();
    },
  };
}
