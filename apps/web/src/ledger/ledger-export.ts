import type { AuditPage, AuditQuery, ToolCallRecord } from '../lib/api-types';

const PAGE_SIZE = 1000;

/** The ledger as read: its rows, and those left out as damaged (each the record and why). */
export interface LedgerRead {
  entries: ToolCallRecord[];
  leftOut: string[];
}

/** Reads the whole ledger matching `query`, page by page, newest first. */
export async function readLedger(fetchPage: (query: AuditQuery) => Promise<AuditPage>, query: Omit<AuditQuery, 'cursor' | 'limit'> = {}): Promise<LedgerRead> {
  const read: LedgerRead = { entries: [], leftOut: [] };
  let cursor: string | null = null;
  do {
    const page: AuditPage = await fetchPage({ ...query, limit: PAGE_SIZE, ...(cursor === null ? {} : { cursor }) });
    read.entries.push(...page.entries);
    read.leftOut.push(...(page.leftOut ?? []));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return read;
}

/** What an export says of the ledger rows it left out as damaged (`records`, each the record and why). */
export function leftOutOfExport(records: readonly string[]): string {
  const which = records.length === 1 ? '1 row of the ledger is' : `${records.length} rows of the ledger are`;
  return `${which} damaged and not in the file (${records.join('; ')}); each is left as stored.`;
}

/** One JSON object a line, each line ended. */
export function toJsonLines(entries: readonly ToolCallRecord[]): string {
  return entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
}

/** `airlock-ledger-2026-11-30.jsonl`, in the person's own calendar. */
export function ledgerFileName(now: Date): string {
  const day = [now.getFullYear(), now.getMonth() + 1, now.getDate()].map((part, index) => String(part).padStart(index === 0 ? 4 : 2, '0')).join('-');
  return `airlock-ledger-${day}.jsonl`;
}
