import { setTimeout as delay } from 'node:timers/promises';
import { errorMessage } from '@airlock/core';
import type { Clock } from '../clock';
import { CappedOutput } from './capped-output';
import type { ConfinedCommand, ConfinedProcess } from './process-confinement';
import { confineToProcessGroup } from './process-group-confinement';
import { confineToBubblewrap, type BubblewrapSandbox } from './sandbox/bubblewrap-confinement';

export { CALL_MARKER_VARIABLE } from './process-group-confinement';

export const DEFAULT_KILL_GRACE_MS = 2_000;
export const DEFAULT_DRAIN_MS = 500;
/** setTimeout fires at once for longer delays. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What a command's timeout is counted on: the server's clock, its timers alone. */
export type ProcessClock = Pick<Clock, 'after'>;

/** The process's own timers. */
export const PROCESS_TIMERS: ProcessClock = {
  after: (ms, callback) => {
    const timer = setTimeout(callback, Math.min(ms, MAX_TIMER_MS));
    return () => clearTimeout(timer);
  },
};

export interface RunProcessOptions {
  /** Executable to run (absolute, or looked up on `env.PATH`); a missing one ends with exit code 127 and a message in the output. */
  file: string;
  args: readonly string[];
  cwd: string;
  /** The child's whole environment; nothing of this process's own environment is added. */
  env: Record<string, string>;
  /** Stops the call when aborted. */
  signal?: AbortSignal;
  /** Kills every process of the call at once when aborted, with no grace: what the call may do from then on is not allowed. */
  killSignal?: AbortSignal;
  /** The call is stopped after this long. */
  timeoutMs: number;
  /** Bytes of output kept, head and tail together. */
  maxOutputBytes: number;
  /** Time between SIGTERM and SIGKILL. Default 2,000 ms. */
  killGraceMs?: number;
  /** How long output is still read after the command exited, when something outside its group holds the pipes. Default 500 ms. */
  drainMs?: number;
  /** Called with the pid of the spawned process, which is also its process group id, as soon as it started. */
  onSpawn?: (pid: number) => void;
  /** Runs the command in this bubblewrap sandbox. Default none: in a process group of its own, with a marker variable. */
  sandbox?: BubblewrapSandbox;
  /** Written to the command's standard input, then closed. Default none: stdin is /dev/null. */
  input?: string;
  /** The clock `timeoutMs` is counted on. Default the process's timers (PROCESS_TIMERS); a test's own, to move. */
  clock?: ProcessClock;
}

export type StopCause = { kind: 'timeout'; timeoutMs: number } | { kind: 'aborted'; reason: string };

export interface ProcessResult {
  /** Pid of the spawned process (bubblewrap's, in a sandbox), also its process group id; undefined when it could not start. */
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
  /** The command exited but left processes running, which were then stopped (seen without a sandbox only: in one they end with it). */
  strayProcessesStopped: boolean;
}

/**
 * Runs a process with stdin closed (or fed `input`, then closed), and makes sure that nothing it started outlives the call: on timeout, on
 * abort, and also when it exits while its background children still run. In a bubblewrap sandbox the call's PID
 * namespace ends with it; without one, its process group and every process carrying its marker are stopped
 * (SIGTERM, then SIGKILL after a grace period).
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

  const command: ConfinedCommand = { file: options.file, args: options.args, cwd: options.cwd, env: options.env, input: options.input };
  const confined = options.sandbox === undefined ? confineToProcessGroup(command) : confineToBubblewrap(command, options.sandbox);
  const { child } = confined;
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
    confined.release();
    return notStarted({ spawnError: 'error' in failure ? failure.error.message : 'the process did not start' });
  }
  runningCalls.add(confined);
  options.onSpawn?.(pid);

  let stoppedBy: StopCause | undefined;
  let termination: Promise<boolean> | undefined;
  const terminate = () => (termination ??= confined.stop(graceMs).catch(() => true));
  const stop = (cause: StopCause) => {
    stoppedBy ??= cause;
    void terminate();
  };
  const cancelTimeout = (options.clock ?? PROCESS_TIMERS).after(options.timeoutMs, () => stop({ kind: 'timeout', timeoutMs: options.timeoutMs }));
  const onAbort = () => stop({ kind: 'aborted', reason: reasonText(options.signal?.reason) });
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const onKill = () => {
    stoppedBy ??= { kind: 'aborted', reason: reasonText(options.killSignal?.reason) };
    confined.killNow();
    void terminate();
  };
  if (options.killSignal?.aborted) onKill();
  else options.killSignal?.addEventListener('abort', onKill, { once: true });
  try {
    const exit = await exited;
    cancelTimeout();
    // The leader is gone; whatever it left behind is stopped now, so nothing outlives the call.
    const leftovers = await terminate();
    // A process that escaped (a cleared environment and setsid, without a sandbox) can keep the pipes open forever: read on only briefly.
    await Promise.race([closed, delay(options.drainMs ?? DEFAULT_DRAIN_MS)]);
    child.stdout.destroy();
    child.stderr.destroy();
    const { text, omittedBytes } = output.result();
    if ('error' in exit) {
      return { ...notStarted({ output: text, omittedBytes }), pid, spawnError: exit.error.message, stoppedBy };
    }
    const status = confined.exitStatus(exit.code, exit.signal);
    return {
      pid,
      exitCode: status.code,
      signal: status.signal,
      output: text,
      omittedBytes,
      stoppedBy,
      strayProcessesStopped: stoppedBy === undefined && leftovers,
    };
  } finally {
    cancelTimeout();
    options.signal?.removeEventListener('abort', onAbort);
    options.killSignal?.removeEventListener('abort', onKill);
    runningCalls.delete(confined);
    confined.release();
  }
}

/** Calls still in progress; killed if this server exits first. */
const runningCalls = new Set<ConfinedProcess>();
process.once('exit', () => {
  for (const call of runningCalls) {
    try {
      call.killNow();
    } catch {
      // Best effort while exiting.
    }
  }
});

function reasonText(reason: unknown): string {
  return reason === undefined ? 'cancelled' : errorMessage(reason);
}
