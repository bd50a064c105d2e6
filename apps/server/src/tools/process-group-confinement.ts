import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { randomId } from '@airlock/core';
import { WRAPPER_SCRIPT, writeInput, type ConfinedCommand, type ConfinedProcess } from './process-confinement';
import { freezeAndKill, processStartTime, terminateMarkedProcesses, terminateProcessGroup, type MarkedScope } from './process-group';
import { spawnWatched } from './process-watchdog';

/** Set in every tool process's environment, with a value unique to the call, to find processes that left the group. */
export const CALL_MARKER_VARIABLE = 'AIRLOCK_TOOL_CALL';

/**
 * Without a sandbox: the command runs in a process group of its own, and every process of the call carries a
 * marker variable, so one that left the group (setsid, nohup, a daemon's double fork) is still found. A watchdog,
 * started before the command, stops them all if this server dies first.
 */
export function confineToProcessGroup(command: ConfinedCommand): ConfinedProcess {
  const callId = randomId('call', 12);
  const marker = `${CALL_MARKER_VARIABLE}=${callId}`;
  const { child, watchdog } = spawnWatched(
    marker,
    () =>
      // stdout and stderr are pipes, so they are never null.
      spawn('/bin/sh', ['-c', WRAPPER_SCRIPT, command.file, ...command.args], {
        cwd: command.cwd,
        env: { ...command.env, [CALL_MARKER_VARIABLE]: callId },
        detached: true,
        stdio: [command.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      }) as ChildProcessByStdio<Writable | null, Readable, Readable>,
  );
  writeInput(child.stdin, command.input);
  const release = () => watchdog.release();
  const pid = child.pid;
  if (pid === undefined) return { child, stop: async () => false, exitStatus, killNow: () => undefined, release };
  // Everything the call starts, in its group or not, starts at or after its leader. Without /proc, no process is marked (0 is never a group).
  const scope: MarkedScope = { marker, group: pid, startedSince: processStartTime(pid) ?? Infinity };
  return {
    child,
    stop: (graceMs) => stopCall(scope, graceMs),
    exitStatus,
    killNow: () => void freezeAndKill(scope),
    release,
  };
}

/** The group and the marked processes outside it get SIGTERM and a grace period, then a last freezing sweep kills whatever is left. */
async function stopCall(scope: MarkedScope, graceMs: number): Promise<boolean> {
  const [inGroup, outside] = await Promise.all([
    terminateProcessGroup(scope.group, graceMs, scope.startedSince).catch(() => true),
    terminateMarkedProcesses(scope, graceMs).catch(() => true),
  ]);
  const missed = freezeAndKill(scope);
  return inGroup || outside || missed.length > 0;
}

function exitStatus(code: number | null, signal: NodeJS.Signals | null) {
  return { code, signal };
}
