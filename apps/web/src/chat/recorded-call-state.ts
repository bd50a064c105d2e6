import type { PendingApproval, ToolCallRecord, ToolOutcome } from '../lib/api-types';
import type { ApprovedBy, RuleRef, ToolCallState } from './tool-call-state';

/**
 * What a stored call shows after a reload, from its ledger row: how it was decided and how it ended.
 * `messageResult` is the text the history holds for it; `pending` is the server's list of calls still waiting.
 */
export function stateFromRecord(record: ToolCallRecord, messageResult: string | null, pending: ReadonlyMap<string, PendingApproval>): ToolCallState {
  const result = record.result ?? messageResult;
  if (record.outcome !== null) {
    const ended = result ?? '';
    const byOutcome: Record<ToolOutcome, () => ToolCallState> = {
      executed: () => ({ status: 'done', ...approverOf(record), result: ended }),
      error: () => ({ status: 'error', result: ended }),
      denied: () => deniedState(record, ended),
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
      return { status: 'running', ...approverOf(record) };
    case 'deny':
      return deniedState(record, result);
    case 'timeout':
      return { status: 'timed-out', result };
    case 'cancel':
      return { status: 'cancelled', result };
  }
}

function ruleOf(record: ToolCallRecord): RuleRef {
  return { ruleId: record.decidedByRule, text: record.decidedByRuleText };
}

function deniedState(record: ToolCallRecord, result: string | null): ToolCallState {
  if (record.source === 'rule') return { status: 'denied', reason: record.reason, result, deniedByRule: ruleOf(record) };
  return { status: 'denied', reason: record.reason, result };
}

function approverOf(record: ToolCallRecord): ApprovedBy {
  switch (record.source) {
    case 'user':
      return { approvedBy: 'you' };
    case 'grant':
      return { approvedBy: 'grant' };
    case 'rule':
      return { approvedBy: 'rule', rule: ruleOf(record) };
    case 'confirmation-off':
    case 'system': // (never with an allow: Airlock itself only ends waits)
    case null:
      return { approvedBy: 'no-confirmation' };
  }
}
