import type { ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/** What to run for a call. */
export interface ConfinedCommand {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /**
   * Written to the command's standard input, which is then closed: text the command reads from memory, so no file
   * another call could change or link elsewhere stands between the server and it. Default none (stdin is /dev/null).
   */
  input?: string | undefined;
}

/** A started call and the means to stop everything it started, whichever way it is held. */
export interface ConfinedProcess {
  child: ChildProcessByStdio<Writable | null, Readable, Readable>;
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

/**
 * Writes a command's input and closes its standard input. A command that exits or closes its input before reading it
 * all makes the pipe fail (EPIPE): that is the command's own affair, seen in its exit, not a failure of the server.
 */
export function writeInput(stdin: Writable | null, input: string | undefined): void {
  if (stdin === null || input === undefined) return;
  stdin.on('error', () => undefined);
  stdin.end(input, 'utf8');
}
