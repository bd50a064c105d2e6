import { AirlockError } from '@airlock/core';

/**
 * A run is paused: a write of it failed because its store could not take it for now (a full disk, a failing or
 * read-only data folder), so nothing of it is decided until the store takes writes again; the server tries again by
 * itself and takes the run up from what is stored. The decision asked for was not applied. (A stop is not refused:
 * it is kept and applied when the run is taken up, see ChatService.stop.)
 */
export class RunPausedError extends AirlockError {
  readonly fault = 'system';
  override readonly name = 'RunPausedError';
  constructor(
    readonly runId: string,
    /** Why the store could not take the run's write, as it said it. */
    readonly storeError: string,
  ) {
    super(
      `The run ${runId} is paused until its data can be stored (${storeError}). ` +
        'Nothing was decided: the call still waits, and can be decided once Airlock can store again (it tries again by itself).',
    );
  }
}
