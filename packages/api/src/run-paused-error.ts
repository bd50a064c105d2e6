import { AirlockError } from '@airlock/core';

/**
 * A run is paused: a write of it failed because its store could not take it for now (a full disk, a failing or
 * read-only data folder), so nothing of it is decided or stopped until the store takes writes again; the server tries
 * again by itself and takes the run up from what is stored. What was asked (a decision, a stop) was not applied.
 */
export class RunPausedError extends AirlockError {
  readonly fault = 'system';
  override readonly name = 'RunPausedError';
  constructor(
    readonly runId: string,
    /** Why the store could not take the run's write, as it said it. */
    readonly storeError: string,
    /** What was asked and refused. */
    readonly asked: 'decision' | 'stop',
  ) {
    super(
      `The run ${runId} is paused until its data can be stored (${storeError}). ` +
        (asked === 'decision'
          ? 'Nothing was decided: the call still waits, and can be decided once Airlock can store again (it tries again by itself).'
          : 'It was not stopped: it can be stopped once Airlock can store again (it tries again by itself).'),
    );
  }
}
