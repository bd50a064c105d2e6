import type { SessionPageQuery, StoredSessionSummary } from './store';

/** The longest text a chat search takes: a title is at most 200 characters, so a longer one matches none. */
export const MAX_SESSION_SEARCH = 200;

/** Sessions one read of a search asks its store for, of which it keeps those whose title matches. */
const SEARCH_BATCH = 500;

/**
 * Whether `title` contains `text`, whatever the case of either (JavaScript's own lower case of each). Every store
 * decides it here, not in its SQL: SQLite's lower() and LIKE fold ASCII only and PostgreSQL's follow the database's
 * locale, so the same search would find other chats in each.
 */
export function titleMatches(title: string, text: string): boolean {
  return title.toLowerCase().includes(text.toLowerCase());
}

/**
 * A page of a search (see `SessionPageQuery.titleContains`), read through `readPage`, the store's page of every
 * session, a batch at a time from `query.after` until `query.limit` match or none is left. Each session is read once
 * and its title, at most 200 characters, matched in one pass: the cost is linear in the sessions read, and each
 * batch is read along the order's index as a page of the list is.
 */
export async function searchSessionPage(readPage: (page: { limit: number; after?: SessionPageQuery['after'] }) => Promise<StoredSessionSummary[]>, query: SessionPageQuery & { titleContains: string }): Promise<StoredSessionSummary[]> {
  const found: StoredSessionSummary[] = [];
  let after = query.after;
  while (found.length < query.limit) {
    const batch = await readPage({ limit: SEARCH_BATCH, ...(after === undefined ? {} : { after }) });
    for (const session of batch) {
      if (titleMatches(session.title, query.titleContains)) found.push(session);
      if (found.length === query.limit) return found;
    }
    const last = batch.at(-1);
    if (last === undefined || batch.length < SEARCH_BATCH) break;
    after = { updatedAt: last.updatedAt, sessionId: last.sessionId };
  }
  return found;
}
