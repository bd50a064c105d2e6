import { describe, expect, it } from 'vitest';
import { decisionLine } from './event-labels';

describe('decisionLine', () => {
  const base = { type: 'tool-decision' as const, toolCallId: 'c', approvalId: '' };

  it('names the rule that decided', () => {
    const rule = 'Allow commands starting with `npm test` in this workspace';
    expect(decisionLine({ ...base, decision: 'allow', source: 'rule', ruleId: 'rule_1', rule }, '', rule)).toBe(`  ✓ allowed by rule: ${rule}`);
  });

  it('gives a deny rule its reason, and a grant or confirmation-off its own words', () => {
    expect(decisionLine({ ...base, decision: 'deny', source: 'rule', rule: 'Deny rm -rf' }, 'never delete', 'Deny rm -rf')).toBe('  ✗ denied by rule: Deny rm -rf: never delete');
    expect(decisionLine({ ...base, decision: 'allow', source: 'grant' }, '')).toBe('  ✓ allowed by an "always" grant');
    expect(decisionLine({ ...base, decision: 'allow', source: 'confirmation-off' }, '')).toBe('  ✓ allowed (confirmation is off)');
  });

  it('says a person decided in another client when the decision withdrew the question asked here', () => {
    expect(decisionLine({ ...base, decision: 'allow', source: 'user' }, '', '', { elsewhere: true })).toBe('  ✓ allowed in another client');
    expect(decisionLine({ ...base, decision: 'deny', source: 'user', reason: 'no' }, 'no', '', { elsewhere: true })).toBe('  ✗ denied in another client: no');
    expect(decisionLine({ ...base, decision: 'timeout', source: 'system' }, '', '', { elsewhere: true })).toBe('  ⌛ no decision in time');
    expect(decisionLine({ ...base, decision: 'allow', source: 'grant' }, '', '', { elsewhere: true })).toBe('  ✓ allowed by an "always" grant');
  });
});
