import type { LoopEvent } from '../events';
import type { RunResult } from '../run-tool-loop';

export interface CollectedRun {
  events: LoopEvent[];
  result: RunResult;
}

/**
 * Drains a run. `onEvent` sees each event as it is emitted, before the loop resumes,
 * so a test can answer a tool-start the way a client would.
 */
export async function collectRun(
  run: AsyncGenerator<LoopEvent, RunResult, undefined>,
  onEvent?: (event: LoopEvent) => void | Promise<void>,
): Promise<CollectedRun> {
  const events: LoopEvent[] = [];
  for (;;) {
    const next = await run.next();
    if (next.done) return { events, result: next.value };
    events.push(next.value);
    await onEvent?.(next.value);
  }
}
