import type { AirlockStore, AppendEventInput, LedgerChange, StoredRun, StoredSessionSummary } from '@airlock/api';
import type { LoopEvent } from '@airlock/core';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempFolder extends AsyncDisposable {
  path: string;
}

export async function tempFolder(): Promise<TempFolder> {
  const path = await realpath(await mkdtemp(join(tmpdir(), 'airlock-store-')));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}

export function session(sessionId: string, at = 1_000, changes: Partial<StoredSessionSummary> = {}): StoredSessionSummary {
  return { sessionId, title: `title of ${sessionId}`, createdAt: at, updatedAt: at, confirmToolCalls: true, lastRunId: null, ...changes };
}

export function run(runId: string, sessionId: string, startedAt = 2_000): StoredRun {
  return { runId, sessionId, options: { maxToolCalls: 5, decisionTimeoutMs: 'never', enabledTools: ['terminal'] }, startedAt, endedAt: null, endReason: null };
}

export function statusEvent(text: string): LoopEvent {
  return { type: 'status', text };
}

export function startChange(toolCallId: string, requestedAt: number, toolName = 'terminal'): Extract<LedgerChange, { kind: 'start' }> {
  return {
    kind: 'start',
    toolCallId,
    toolName,
    arguments: { command: `echo ${toolCallId}` },
    approvalId: `approval-${toolCallId}`,
    requestedAt,
    expiresAt: requestedAt + 60_000,
    executesCode: true,
    toolVersion: 'v1',
  };
}

/** Appends events 1, 2, … to a run, each with the given ledger change, and returns the next seq. */
export async function appendAll(store: AirlockStore, base: Omit<AppendEventInput, 'seq' | 'event' | 'at' | 'ledger'>, changes: (LedgerChange | undefined)[], firstSeq = 1): Promise<number> {
  let seq = firstSeq;
  for (const ledger of changes) {
    await store.appendEvent({ ...base, seq, event: statusEvent(`event ${seq}`), at: 3_000 + seq, ...(ledger === undefined ? {} : { ledger }) });
    seq += 1;
  }
  return seq;
}
