import { describe, expect, it } from 'vitest';
import { MemoryStore } from './memory-store';
import type { AppendEventInput } from './store';

describe('MemoryStore.appendEvents', () => {
  it('applies a batch whole before any other task runs: a Stop made as it is written comes before all of it or after all of it', async () => {
    const store = new MemoryStore();
    await store.createSession({ sessionId: 's', title: 't', createdAt: 1, updatedAt: 1, confirmToolCalls: true, lastRunId: null });
    await store.createRun({ runId: 'r', sessionId: 's', options: {}, startedAt: 2, endedAt: null, endReason: null });
    const at = (seq: number, ledger: AppendEventInput['ledger']): AppendEventInput => ({ runId: 'r', sessionId: 's', seq, event: { type: 'status', text: String(seq) }, at: seq, ledger });
    const batch = store.appendEvents([
      at(1, { kind: 'start', toolCallId: 'c', toolName: 't', arguments: {}, approvalId: '', requestedAt: 3, expiresAt: null, executesCode: true, toolVersion: 'v' }),
      at(2, { kind: 'decision', toolCallId: 'c', decision: 'allow', source: 'confirmation-off', decidedAt: 4 }),
      at(3, { kind: 'running', toolCallId: 'c', startedAt: 5 }),
    ]);
    // Another task's Stop, as soon as the batch gives way.
    await Promise.resolve();
    expect(await store.requestCancel('r')).toBe(true);
    await batch;
    // The batch went in whole before the Stop: its running mark stands, as one the Stop came after.
    expect(await store.lastEventSeq('r')).toBe(3);
    expect((await store.listRunToolCalls('r')).map(({ decision, startedAt }) => ({ decision, startedAt }))).toStrictEqual([{ decision: 'allow', startedAt: 5 }]);
  });
});
