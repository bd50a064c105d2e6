import type { DecisionSource, PendingApproval, ToolCallRecord, ToolOutcome } from '../lib/api-types';
import type { Approver, ToolCallState } from './tool-call-state';

/**
 * What a stored call shows after a reload, from its ledger row: how it was decided and how it ended.
 * `messageResult` is the text the history holds for it; `pending` is the server's list of calls still waiting.
 */
export function stateFromRecord(record: ToolCallRecord, messageResult: string | null, pending: ReadonlyMap<string, PendingApproval>): ToolCallState {
  const result = record.result ?? messageResult;
  if (record.outcome !== null) {
    const ended = result ?? '';
    const byOutcome: Record<ToolOutcome, () => ToolCallState> = {
      executed: () => ({ status: 'done', approvedBy: approverOf(record.source), result: ended }),
      error: () => ({ status: 'error', result: ended }),
      denied: () => ({ status: 'denied', reason: record.reason, result: ended }),
      'timed-out': () => ({ status: 'timed-out', result: ended }),
      cancelled: () => ({ status: 'cancelled', result: ended }),
      disabled: () => ({ status: 'disabled', result: ended }),
      duplicate: () => ({ status: 'duplicate', result: ended }),
      interrupted: () => ({ status: 'interrupted', result: ended }),
    };
    return byOutcome[record.outcome]();
  }
  switch (record.decision) {
    case null: {
      const waiting = record.approvalId === '' ? undefined : pending.get(record.approvalId);
      if (waiting) return { status: 'awaiting-decision', approvalId: waiting.approvalId, expiresAt: waiting.expiresAt, problem: null };
      return { status: 'recorded', result };
    }
    case 'allow':
      return { status: 'running', approvedBy: approverOf(record.source) };
    case 'deny':
      return { status: 'denied', reason: record.reason, result };
    case 'timeout':
      return { status: 'timed-out', result };
    case 'cancel':
      return { status: 'cancelled', result };
  }
}

function approverOf(source: DecisionSource | null): Approver {
  switch (source) {
    case 'user':
      return 'you';
    case 'grant':
      return 'grant';
    case 'confirmation-off':
    case null:
      return 'no-confirmation';
  }
}
