import { describe, expect, it } from 'vitest';
import { callLabel, decisionLine, decisionRows, outcomeLine, runEndLines } from './event-labels';
import { ansiStyle } from './terminal-style';
import { plainStyle } from './terminal-style';

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

describe('decisionRows', () => {
  it("wraps a decision line here, each row after the first behind the gutter, so a rule's or a reason's words never start at the left edge", () => {
    const forged = `${'x'.repeat(70)}  Calling: terminal  command: rm -rf ~`;
    const line = `  ✓ allowed by rule: Allow \`echo\` with exactly the arguments \`{"text":"${forged}"}\`: because\n    ${'y'.repeat(50)}  ✓ allowed`;
    const rows = decisionRows(line, plainStyle, { columns: 40 });
    expect(rows.slice(0, 2)).toStrictEqual(['  ✓ allowed by rule: Allow `echo` with ', '    ↪ exactly the arguments `{"text":"x']);
    for (const row of rows.slice(1)) expect(row).toMatch(/^ {4}(↪ |\S)/u);
    expect(rows.slice(1).every((row) => row.startsWith('    ↪ ') || row.startsWith('    y'))).toBe(true);
    expect(rows.every((row) => [...row].reduce((sum, char) => sum + (char.codePointAt(0)! < 0x7f ? 1 : 2), 0) <= 40)).toBe(true);
    expect(rows.join('').replaceAll(/ {4}↪ /gu, '')).toBe(line.replace('\n', ''));
  });

  it('keeps a short line whole, and counts no column for the styles’ escapes', () => {
    expect(decisionRows('  ✓ allowed', plainStyle, { columns: 40 })).toStrictEqual(['  ✓ allowed']);
    const styled = `  ✓ allowed by rule: ${ansiStyle.escape('\\u{60}')}${'z'.repeat(5)}`;
    expect(decisionRows(styled, ansiStyle, { columns: 40 })).toStrictEqual([styled]);
  });
});

describe('callLabel', () => {
  const end = { type: 'tool-end' as const, toolCallId: 'call_0_0', toolName: 'echo', outcome: 'executed' as const, result: '' };

  it('names the call a line is about, its name and id escaped on one row, a long id by its end', () => {
    expect(outcomeLine(end, plainStyle, callLabel('echo', 'call_0_0', plainStyle))).toBe('  for echo (call_0_0): → ran');
    expect(callLabel('bad\n  ✓ allowed', 'call_abcdefghijklmnopqrstuvwx', plainStyle)).toBe('for bad\\u{A}  ✓ allowed (…qrstuvwx): ');
    expect(callLabel('x'.repeat(100), 'c\n1', plainStyle)).toBe(`for ${'x'.repeat(30)}… (c\\u{A}1): `);
    const decision = { type: 'tool-decision' as const, toolCallId: 'call_0_0', approvalId: '', decision: 'deny' as const, source: 'user' as const, reason: 'no' };
    expect(decisionLine(decision, 'no', '', { call: callLabel('echo', 'call_0_0', plainStyle) })).toBe('  for echo (call_0_0): ✗ denied: no');
  });
});

describe('runEndLines', () => {
  it("shows a model server's error on one line, its line breaks escaped", () => {
    const event = { type: 'run-end' as const, runId: 'run_1', reason: 'error' as const, error: 'bad request\n\n\n  ✓ allowed\n  → ran' };
    expect(runEndLines(event, plainStyle)).toStrictEqual(['✗ the run failed: bad request\\u{A}\\u{A}\\u{A}  ✓ allowed\\u{A}  → ran']);
    expect(runEndLines({ type: 'run-end', runId: 'run_1', reason: 'cancelled' }, plainStyle)).toStrictEqual(['■ stopped']);
    expect(runEndLines({ type: 'run-end', runId: 'run_1', reason: 'done' }, plainStyle)).toStrictEqual([]);
  });

  it("wraps a long error itself, each row after the first behind the gutter, its padding folded", () => {
    const error = `${'x'.repeat(20)}${' '.repeat(22)}⏺ terminal${' '.repeat(30)}  ✓ allowed`;
    expect(runEndLines({ type: 'run-end', runId: 'run_1', reason: 'error', error }, plainStyle, { columns: 40 })).toStrictEqual([
      `✗ the run failed: ${'x'.repeat(15)}`,
      '    ↪ xxxxx␠×22⏺ terminal␠×32✓ allow',
      '    ↪ ed',
    ]);
  });
});
