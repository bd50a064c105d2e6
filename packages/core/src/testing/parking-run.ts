import { Cancellation } from '../cancellation';
import type { LoopEvent } from '../events';
import { runToolLoop, type ParkedRun, type RunResult, type RunToolLoopOptions } from '../run-tool-loop';

/**
 * A run driven as a server drives one: with `park`, let go of whenever it waits on the person, and gone on with once
 * a waited call settles. Emits what `runToolLoop(options)` emits; stopping it early abandons a parked run's waits.
 */
export async function* parkingRun(options: RunToolLoopOptions): AsyncGenerator<LoopEvent, RunResult, undefined> {
  const signal = options.signal ?? new Cancellation();
  let parked: ParkedRun | undefined;
  let loop: AsyncGenerator<LoopEvent, RunResult, undefined> | undefined = runToolLoop({ ...options, signal, park: true });
  try {
    for (;;) {
      const next: IteratorResult<LoopEvent, RunResult> = await loop.next();
      if (next.done !== true) {
        yield next.value;
        continue;
      }
      loop = undefined;
      parked = next.value.parked;
      if (parked === undefined) return next.value;
      await parked.wake(signal);
      loop = runToolLoop({ ...options, signal, park: true, resume: parked });
      parked = undefined;
    }
  } finally {
    await loop?.return({ runId: '', reason: 'cancelled', messages: [] });
    parked?.abandon();
  }
}
