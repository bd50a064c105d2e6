import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { errorMessage, randomId } from '@airlock/core';
import { CappedOutput } from './capped-output';
import { liveMarkedProcessesSync, processStartTime, signalProcessGroup, terminateMarkedProcesses, terminateProcessGroup, type MarkedScope } from './process-group';

/** Set in every tool process's environment, with a value unique to the call, to find processes that left the group. */
export const CALL_MARKER_VARIABLE = 'AIRLOCK_TOOL_CALL';

export const DEFAULT_KILL_GRACE_MS = 2_000;
export const DEFAULT_DRAIN_MS = 500;
/** setTimeout fires at once for longer delays. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface RunProcessOptions {
  /** Executable to run (absolute, or looked up on `env.PATH`); a missing one ends with exit code 127 and a message in the output. */
  file: string;
  args: readonly string[];
  cwd: string;
  /** The child's whole environment; nothing of this process's own environment is added. */
  env: Record<string, string>;
  /** Stops the process group when aborted. */
  signal?: AbortSignal;
  /** The process group is stopped after this long. */
  timeoutMs: number;
  /** Bytes of output kept, head and tail together. */
  maxOutputBytes: number;
  /** Time between SIGTERM and SIGKILL. Default 2,000 ms. */
  killGraceMs?: number;
  /** How long output is still read after the command exited, when something outside its group holds the pipes. Default 500 ms. */
  drainMs?: number;
  /** Called with the pid, which is also the process group id, as soon as the process started. */
  onSpawn?: (pid: number) => void;
}

export type StopCause = { kind: 'timeout'; timeoutMs: number } | { kind: 'aborted'; reason: string };

export interface ProcessResult {
  /** Also the process group id; undefined when the process could not start. */
  pid: number | undefined;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** stdout and stderr interleaved as they arrived, capped. */
  output: string;
  omittedBytes: number;
  /** Set when the runner stopped the process rather than it ending by itself. */
  stoppedBy?: StopCause;
  /** Set when the process could not be started. */
  spawnError?: string;
  /** The command exited but left processes running in its group, which were then stopped. */
  strayProcessesStopped: boolean;
}

/**
 * Runs a process in its own process group with stdin closed, and makes sure that nothing it started
 * outlives the call: on timeout, abort, and also when it exits while its background children still run,
 * the whole group is sent SIGTERM, then SIGKILL after a grace period; so is every process that left the
 * group but still carries the call's marker variable (setsid, nohup, a daemon's double fork).
 */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const output = new CappedOutput(options.maxOutputBytes);
  const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const notStarted = (fields: Partial<ProcessResult>): ProcessResult => ({
    pid: undefined,
    exitCode: null,
    signal: null,
    output: '',
    omittedBytes: 0,
    strayProcessesStopped: false,
    ...fields,
  });
  if (options.signal?.aborted) return notStarted({ stoppedBy: { kind: 'aborted', reason: reasonText(options.signal.reason) } });

  // One pipe for both streams, so stdout and stderr interleave exactly as written: a tiny shell points
  // stderr at stdout, then becomes the program (same pid, same group).
  const callId = randomId('call', 12);
  const marker = `${CALL_MARKER_VARIABLE}=${callId}`;
  const child = spawn('/bin/sh', ['-c', 'exec "$0" "$@" 2>&1', options.file, ...options.args], {
    cwd: options.cwd,
    env: { ...options.env, [CALL_MARKER_VARIABLE]: callId },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null } | { error: Error }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => resolve({ error }));
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk));

  const pid = child.pid;
  if (pid === undefined) {
    const failure = await exited;
    return notStarted({ spawnError: 'error' in failure ? failure.error.message : 'the process did not start' });
  }
  // Everything the call starts, in its group or not, starts at or after its leader. Without /proc, no process is marked (0 is never a group).
  const scope: MarkedScope = { marker, group: pid, startedSince: processStartTime(pid) ?? Infinity };
  runningCalls.set(pid, scope);
  options.onSpawn?.(pid);

  let stoppedBy: StopCause | undefined;
  let termination: Promise<boolean> | undefined;
  const terminate = () => (termination ??= stopCall(scope, graceMs));
  const stop = (cause: StopCause) => {
    stoppedBy ??= cause;
    void terminate();
  };
  const timer = setTimeout(() => stop({ kind: 'timeout', timeoutMs: options.timeoutMs }), Math.min(options.timeoutMs, MAX_TIMER_MS));
  const onAbort = () => stop({ kind: 'aborted', reason: reasonText(options.signal?.reason) });
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const exit = await exited;
    clearTimeout(timer);
    // The leader is gone; whatever it left behind, in its group or out of it, is stopped now, so nothing outlives the call.
    const leftovers = await terminate();
    // A process that escaped both (a cleared environment and setsid) can keep the pipes open forever: read on only briefly.
    await Promise.race([closed, delay(options.drainMs ?? DEFAULT_DRAIN_MS)]);
    child.stdout.destroy();
    child.stderr.destroy();
    const { text, omittedBytes } = output.result();
    if ('error' in exit) {
      return { ...notStarted({ output: text, omittedBytes }), pid, spawnError: exit.error.message, stoppedBy };
    }
    return {
      pid,
      exitCode: exit.code,
      signal: exit.signal,
      output: text,
      omittedBytes,
      stoppedBy,
      strayProcessesStopped: stoppedBy === undefined && leftovers,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    runningCalls.delete(pid);
  }
}

/** The call's process group and the processes that left it: SIGTERM, then SIGKILL after the grace period. */
async function stopCall(scope: MarkedScope, graceMs: number): Promise<boolean> {
  const [inGroup, outside] = await Promise.all([
    terminateProcessGroup(scope.group, graceMs).catch(() => true),
    terminateMarkedProcesses(scope, graceMs).catch(() => true),
  ]);
  return inGroup || outside;
}

/** Calls still in progress, by group id; killed if this server exits first, since detached children would otherwise survive it. */
const runningCalls = new Map<number, MarkedScope>();
process.once('exit', () => {
  for (const pgid of runningCalls.keys()) {
    try {
      signalProcessGroup(pgid, 'SIGKILL');
    } catch {
      // Best effort while exiting.
    }
  }
  for (const pid of liveMarkedProcessesSync([...runningCalls.values()])) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Best effort while exiting.
    }
  }
});

function reasonText(reason: unknown): string {
  return reason === undefined ? 'cancelled' : errorMessage(reason);
}
