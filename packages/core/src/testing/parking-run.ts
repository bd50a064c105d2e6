import { Cancellation } from '../cancellation';
import type { LoopEvent } from '../events';
import type { ChatMessage } from '../messages';
import { runToolLoop, type ParkedRun, type RunResult, type RunToolLoopOptions } from '../run-tool-loop';

/**
 * A run driven as a server drives one: with `park`, let go of whenever it waits on the person, and gone on with once
 * a waited call settles; the conversation is not kept while it waits but read back from what the loop reported
 * (`history`, as a host reads its store). Emits what `runToolLoop(options)` emits; stopping it early abandons a
 * parked run's waits.
 */
export async function* parkingRun(options: RunToolLoopOptions): AsyncGenerator<LoopEvent, RunResult, undefined> {
  const signal = options.signal ?? new Cancellation();
  const stored = [...options.messages];
  const reported = options.onMessage;
  const onMessage = (message: ChatMessage) => {
    stored.push(message);
    reported?.(message);
  };
  options = { history: async () => [...stored], ...options, onMessage };
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
      if (parked === undefined) return options.history === undefined ? next.value : { ...next.value, messages: [...(await options.history())] };
      await parked.wake(signal);
      loop = runToolLoop({ ...options, signal, park: true, resume: parked });
      parked = undefined;
    }
  } finally {
    await loop?.return({ runId: '', reason: 'cancelled', messages: [] });
    parked?.abandon();
  }
}
