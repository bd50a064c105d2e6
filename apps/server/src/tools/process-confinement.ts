import type { ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';

/** What to run for a call. */
export interface ConfinedCommand {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
}

/** A started call and the means to stop everything it started, whichever way it is held. */
export interface ConfinedProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** Stops every process of the call: SIGTERM, then SIGKILL after `graceMs`. Resolves to whether anything still ran. */
  stop(graceMs: number): Promise<boolean>;
  /** The exit status of the command, from that of the process that was spawned. */
  exitStatus(code: number | null, signal: NodeJS.Signals | null): { code: number | null; signal: NodeJS.Signals | null };
  /** Kills every process of the call at once, synchronously: for the moment this server exits. */
  killNow(): void;
  /** Frees what the call held (a watchdog) once it is over. */
  release(): void;
}

/** One pipe for both streams, so stdout and stderr interleave exactly as written: a tiny shell points stderr at stdout, then becomes the program. */
export const WRAPPER_SCRIPT = 'exec "$0" "$@" 2>&1';
