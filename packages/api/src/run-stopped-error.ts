import { AirlockError } from '@airlock/core';

/**
 * The write that marks a call running, the last before its tool starts, refused because a person stopped the call's
 * run and the Stop is stored (the run's `cancelRequested`), checked in that same write. With several instances, the
 * run's owner may not have heard of the Stop yet: it stops the run as on the Stop's message, and the tool never starts.
 */
export class RunStoppedError extends AirlockError {
  readonly fault = 'system';
  override readonly name = 'RunStoppedError';
  constructor(
    readonly runId: string,
    readonly toolCallId: string,
  ) {
    super(`Run ${runId} was stopped: call ${toolCallId} does not start.`);
  }
}
