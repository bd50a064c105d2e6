import type { AirlockStore, StoredRun } from './store';
import { closeUnendedCalls } from './unended-calls';

/** What the run-end of a run set aside says: `record` names the damaged record and why it does not read. */
export function setAsideText(record: string): string {
  return `A stored record of this run is damaged (${record}): the run was set aside at the start, nothing more of it runs, and its records were left as they are.`;
}

/**
 * Ends a run one of whose records is damaged, as far as its records read: each call with no end ends as stopped
 * (one that waited, or was allowed and never started, as cancelled; one that started as interrupted), never as
 * allowed, then its run-end, and its row is marked ended. Nothing is deleted and the damaged record is not touched. A
 * call whose own row does not read keeps no end; nothing restores it, so a decision given on it finds no call. The
 * store reads a run's call rows together: one damaged among them, and none gets an end (none is listed as waiting
 * either: the run has ended).
 */
export async function setAsideRun(store: AirlockStore, run: StoredRun, record: string, fence?: number): Promise<void> {
  const at = Date.now();
  await closeUnendedCalls(store, { runId: run.runId, sessionId: run.sessionId, answer: new Set(), error: setAsideText(record), at, damaged: true, ...(fence === undefined ? {} : { fence }) });
  await store.endRun(run.runId, 'error', at, fence);
}
