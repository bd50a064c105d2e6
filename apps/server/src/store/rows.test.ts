import { MAX_AUDIT_PAGE_CHARS } from '@airlock/api';
import { describe, expect, it } from 'vitest';
import { decodeCursor, readAuditPage, type LedgerRow, type SizedLedgerRow } from './rows';

const KiB = 1024;

function ledgerRow(ledgerId: number, content: string): LedgerRow {
  return {
    ledger_id: ledgerId,
    run_id: 'r',
    session_id: 's',
    tool_call_id: `call-${ledgerId}`,
    tool_name: 'write_file',
    arguments: JSON.stringify({ content }),
    edited_arguments: null,
    approval_id: '',
    executes_code: 0,
    tool_version: 'v1',
    shown_tool: null,
    exact_grants_only: 0,
    asked_because: null,
    requested_at: 10_000,
    expires_at: null,
    decision: null,
    source: null,
    reason: null,
    decided_by_grant: null,
    decided_by_rule: null,
    decided_by_rule_text: null,
    decided_at: null,
    connection_id: null,
    client_label: null,
    started_at: null,
    outcome: null,
    result: null,
    cut_bytes: null,
    cut_characters: null,
    ended_at: null,
  };
}

describe('readAuditPage', () => {
  it('reads the rows of a page in batches no larger than what the page has left, not every row the limit allows', () => {
    // 1,000 calls of 900 KiB arguments, newest first, as the sizes query answers for a page of 1,000 (one more: a next page).
    const content = 'x'.repeat(900 * KiB);
    const sized: SizedLedgerRow[] = Array.from({ length: 1001 }, (_, index) => ({ ledger_id: 1001 - index, requested_at: 10_000, bytes: content.length + 13 }));
    const batches: number[][] = [];
    const page = readAuditPage(sized, 1000, (ledgerIds) => {
      batches.push(ledgerIds);
      return ledgerIds.map((id) => ledgerRow(id, content));
    });

    expect(batches).toStrictEqual([[1001, 1000, 999, 998], [997]]);
    expect(page.entries.map((entry) => entry.toolCallId)).toStrictEqual(['call-1001', 'call-1000', 'call-999', 'call-998']);
    expect(page.entries.reduce((sum, entry) => sum + JSON.stringify(entry).length, 0)).toBeLessThanOrEqual(MAX_AUDIT_PAGE_CHARS);
    expect(decodeCursor(page.nextCursor!)).toStrictEqual({ at: 10_000, id: 998 });
  });

  it('answers one row over the bound alone, with a cursor after it, and no cursor once the rows are all read', () => {
    const huge = 'x'.repeat(MAX_AUDIT_PAGE_CHARS);
    const rows = new Map([
      [3, ledgerRow(3, huge)],
      [2, ledgerRow(2, 'small')],
      [1, ledgerRow(1, 'small')],
    ]);
    const sizes = (ids: number[]) => ids.map((id) => ({ ledger_id: id, requested_at: 10_000, bytes: JSON.parse(rows.get(id)!.arguments).content.length }));
    const load = (ids: number[]) => ids.map((id) => rows.get(id)!);

    const first = readAuditPage(sizes([3, 2, 1]), 100, load);
    expect([first.entries.map((entry) => entry.toolCallId), decodeCursor(first.nextCursor!)]).toStrictEqual([['call-3'], { at: 10_000, id: 3 }]);
    const rest = readAuditPage(sizes([2, 1]), 100, load);
    expect([rest.entries.map((entry) => entry.toolCallId), rest.nextCursor]).toStrictEqual([['call-2', 'call-1'], null]);
  });
});
