import type { ToolOutput } from '@airlock/core';
import type { ProcessResult, StopCause } from './process-runner';

/**
 * What the model sees of a finished process: its output, then one status line. Anything but exit code 0 is an error.
 * Bytes left out of a long output are counted in `cut`, which is what tells the person: the marker in the text could
 * as well have been printed by the command.
 */
export function processToolOutput(result: ProcessResult): ToolOutput {
  const body = result.output.length > 0 ? result.output.replace(/\n$/, '') : '(no output)';
  const cut = result.omittedBytes > 0 ? { cut: { bytes: result.omittedBytes } } : {};
  if (result.spawnError !== undefined) {
    return { content: `${body}\nfailed to start: ${result.spawnError}`, isError: true, ...cut };
  }
  if (result.pid === undefined) {
    return { content: `not started: ${stopText(result.stoppedBy)}`, isError: true };
  }
  const status = result.signal !== null ? `killed by ${result.signal}` : `exit code: ${result.exitCode ?? 'unknown'}`;
  const suffix = result.stoppedBy === undefined ? '' : ` (${stopText(result.stoppedBy)})`;
  const strays = result.strayProcessesStopped ? '\nbackground processes still running when it exited were stopped' : '';
  const isError = result.signal !== null || result.exitCode !== 0 || result.stoppedBy !== undefined;
  return { content: `${body}\n${status}${suffix}${strays}`, isError, ...cut };
}

function stopText(cause: StopCause | undefined): string {
  if (cause === undefined) return 'stopped';
  switch (cause.kind) {
    case 'timeout':
      return `timed out after ${cause.timeoutMs} ms`;
    case 'aborted':
      return `stopped: ${cause.reason}`;
  }
}
