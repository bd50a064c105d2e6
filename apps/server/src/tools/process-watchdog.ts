import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { MarkedScope } from './process-group';

// Reads its stdin, which only this server writes to, until it closes: that happens when the server dies, even by
// SIGKILL. Then it freezes the call's group and every process carrying the call's marker, and kills them all.
const SCRIPT = `
while read -r _; do :; done
kill -STOP -- "-$1" 2>/dev/null
found=
for round in 1 2 3; do
  for environ in /proc/[0-9]*/environ; do
    grep -qzxF -- "$2" "$environ" 2>/dev/null || continue
    pid=\${environ#/proc/}; pid=\${pid%/environ}
    kill -STOP "$pid" 2>/dev/null && found="$found $pid"
  done
done
kill -KILL -- "-$1" 2>/dev/null
[ -z "$found" ] || kill -KILL $found 2>/dev/null
exit 0`;

export interface ProcessWatchdog {
  /** The call is over: the watchdog is stopped without doing anything. */
  release(): void;
}

/**
 * Starts a small shell, in a process group of its own, that stops the call's processes if this server dies
 * while the call runs (without a sandbox nothing else would: the call's group is detached from the server).
 */
export function startProcessWatchdog(scope: MarkedScope): ProcessWatchdog {
  const watchdog = spawn('/bin/sh', ['-c', SCRIPT, 'airlock-watchdog', String(scope.group), scope.marker], {
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
    release: () => {
      if (watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill('SIGKILL');
      watchdog.stdin.destroy();
    },
  };
}
