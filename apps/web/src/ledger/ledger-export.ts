import type { AuditPage, AuditQuery, ToolCallRecord } from '../lib/api-types';

const PAGE_SIZE = 1000;

/** Reads the whole ledger matching `query`, page by page, newest first. */
export async function readLedger(fetchPage: (query: AuditQuery) => Promise<AuditPage>, query: Omit<AuditQuery, 'cursor' | 'limit'> = {}): Promise<ToolCallRecord[]> {
  const entries: ToolCallRecord[] = [];
  let cursor: string | null = null;
  do {
    const page: AuditPage = await fetchPage({ ...query, limit: PAGE_SIZE, ...(cursor === null ? {} : { cursor }) });
    entries.push(...page.entries);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return entries;
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
