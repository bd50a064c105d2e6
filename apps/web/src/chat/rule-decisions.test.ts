import { describe, expect, it } from 'vitest';
import type { LoopEventOf, ToolCallRecord } from '../lib/api-types';
import { ledgerRecord } from './test-ledger-record';
import { stateFromRecord } from './recorded-call-state';
import { stateAfterDecision, stateAfterEnd, stateForTurn } from './tool-call-state';

const RULE_TEXT = 'Allow commands starting with `npm test` in this workspace';

function ruleDecision(decision: 'allow' | 'deny'): LoopEventOf<'tool-decision'> {
  return {
    type: 'tool-decision',
    toolCallId: 'c1',
    approvalId: '',
    decision,
    source: 'rule',
    ruleId: 'rule_1',
    rule: RULE_TEXT,
    ...(decision === 'deny' ? { reason: 'Denied by a rule.' } : {}),
  };
}

function end(outcome: 'executed' | 'denied', result: string): LoopEventOf<'tool-end'> {
  return { type: 'tool-end', toolCallId: 'c1', toolName: 'terminal', outcome, result };
}

function record(fields: Partial<ToolCallRecord>): ToolCallRecord {
  return ledgerRecord({ arguments: { command: 'npm test' }, ...fields });
}

describe('calls a lasting rule decided', () => {
  const rule = { ruleId: 'rule_1', text: RULE_TEXT };

  it('keeps the rule that allowed a call from its decision through its turn to its end', () => {
    const allowed = stateAfterDecision(ruleDecision('allow'));
    expect(allowed).toStrictEqual({ status: 'allowed', approvedBy: 'rule', rule });
    const running = stateForTurn(allowed, true);
    expect(running).toStrictEqual({ status: 'running', approvedBy: 'rule', rule });
    expect(stateForTurn(running, false)).toStrictEqual(allowed);
    expect(stateAfterEnd(running, end('executed', 'ok'))).toStrictEqual({ status: 'done', approvedBy: 'rule', rule, result: 'ok' });
  });

  it('keeps the rule that denied a call once the model was told', () => {
    const denied = stateAfterDecision(ruleDecision('deny'));
    expect(denied).toStrictEqual({ status: 'denied', reason: 'Denied by a rule.', result: null, deniedByRule: rule });
    expect(stateAfterEnd(denied, end('denied', 'Denied by a rule.'))).toStrictEqual({ status: 'denied', reason: 'Denied by a rule.', result: 'Denied by a rule.', deniedByRule: rule });
  });

  it('after a reload shows the rule as the ledger recorded it when it decided, and by its id alone in older rows', () => {
    const pending = new Map();
    const allowed = record({ decision: 'allow', source: 'rule', decidedByRule: 'rule_1', decidedByRuleText: 'Allow commands starting with `ls` everywhere', outcome: 'executed', result: 'ok' });
    expect(stateFromRecord(allowed, null, pending)).toStrictEqual({
      status: 'done',
      approvedBy: 'rule',
      rule: { ruleId: 'rule_1', text: 'Allow commands starting with `ls` everywhere' },
      result: 'ok',
    });
    expect(stateFromRecord(record({ decision: 'deny', source: 'rule', decidedByRule: 'rule_2', reason: 'no', outcome: 'denied', result: 'no' }), null, pending)).toStrictEqual({
      status: 'denied',
      reason: 'no',
      result: 'no',
      deniedByRule: { ruleId: 'rule_2', text: null },
    });
  });
});
