import type { LoopEvent } from '@airlock/core';
import type { AirlockStore, AppendEventInput, StoredRun } from './store';
import { endOfUnended } from './unended-calls';

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
  const ended = await store.loadLastEvent(run.runId).then(
    (last) => last?.type === 'run-end',
    () => false,
  );
  if (!ended) {
    const unended = await store.listRunToolCalls(run.runId).then(
      (records) => records.filter((call) => call.outcome === null),
      () => [],
    );
    let seq = await store.lastEventSeq(run.runId);
    const write = (event: LoopEvent, extra: Partial<AppendEventInput> = {}): AppendEventInput => ({
      runId: run.runId,
      sessionId: run.sessionId,
      seq: ++seq,
      event,
      at,
      ...(fence === undefined ? {} : { fence }),
      ...extra,
    });
    const inputs = unended.map((call) => {
      const { outcome, result } = endOfUnended(call);
      const event: LoopEvent = { type: 'tool-end', toolCallId: call.toolCallId, toolName: call.toolName, outcome, result, ...(outcome === 'interrupted' && call.startedAt !== null ? { startedAt: call.startedAt } : {}) };
      return write(event, { ledger: { kind: 'end', toolCallId: call.toolCallId, outcome, result, endedAt: at } });
    });
    inputs.push(write({ type: 'run-end', runId: run.runId, reason: 'error', error: setAsideText(record) }));
    await store.appendEvents(inputs);
  }
  await store.endRun(run.runId, 'error', at, fence);
}
