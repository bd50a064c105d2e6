import { describe, expect, it } from 'vitest';
import type { AuditQuery, ToolCallRecord } from '../lib/api-types';
import { ledgerFileName, leftOutOfExport, readLedger, toJsonLines } from './ledger-export';

const entry = (toolCallId: string) => ({ toolCallId, toolName: 'terminal' }) as unknown as ToolCallRecord;

describe('ledger export', () => {
  it('follows the cursor until the last page and keeps the order', async () => {
    const pages = new Map<string | undefined, { entries: ToolCallRecord[]; nextCursor: string | null }>([
      [undefined, { entries: [entry('c3'), entry('c2')], nextCursor: 'p2' }],
      ['p2', { entries: [entry('c1')], nextCursor: null }],
    ]);
    const asked: AuditQuery[] = [];
    const { entries } = await readLedger(async (query) => {
      asked.push(query);
      const page = pages.get(query.cursor);
      if (!page) throw new Error(`unexpected cursor ${query.cursor}`);
      return page;
    });
    expect(entries.map((found) => found.toolCallId)).toStrictEqual(['c3', 'c2', 'c1']);
    expect(asked).toStrictEqual([{ limit: 1000 }, { limit: 1000, cursor: 'p2' }]);
  });

  // Found in review: the rows a page left out as damaged (its leftOut) were dropped unsaid, the export looking whole.
  it('keeps the rows each page left out as damaged, and says them', async () => {
    const damaged = 'the decision of call c2 of run r1: "allox" is none of allow, deny, timeout, cancel';
    const pages = new Map<string | undefined, { entries: ToolCallRecord[]; nextCursor: string | null; leftOut?: string[] }>([
      [undefined, { entries: [entry('c3')], nextCursor: 'p2', leftOut: [damaged] }],
      ['p2', { entries: [entry('c1')], nextCursor: null }],
    ]);
    const read = await readLedger(async (query) => pages.get(query.cursor)!);
    expect([read.entries.map((found) => found.toolCallId), read.leftOut]).toStrictEqual([['c3', 'c1'], [damaged]]);
    expect(leftOutOfExport(read.leftOut)).toBe(`1 row of the ledger is damaged and not in the file (${damaged}); each is left as stored.`);
  });

  it('writes one parseable line per entry', () => {
    const text = toJsonLines([entry('a\nb'), entry('c')]);
    expect(text.split('\n')).toHaveLength(3);
    expect(text.trimEnd().split('\n').map((line) => JSON.parse(line) as unknown)).toStrictEqual([entry('a\nb'), entry('c')]);
  });

  it('names the file after the local day', () => {
    expect(ledgerFileName(new Date(2026, 0, 5, 23, 59))).toBe('airlock-ledger-2026-01-05.jsonl');
  });
});
