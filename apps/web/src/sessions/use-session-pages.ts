import { useMemo } from 'react';
import type { SessionSummary } from '../lib/api-types';
import { trpc } from '../lib/trpc';

/** Chats one page of the sidebar asks for: the first shows at once, the next at "Show more chats". */
export const SIDEBAR_PAGE = 100;

export interface SessionPages {
  /** The chats of every page read so far, most recently active first; undefined until the first page came. */
  sessions: readonly SessionSummary[] | undefined;
  /** Older chats remain to be read. */
  hasMore: boolean;
  loadingMore: boolean;
  showMore: () => void;
}

/**
 * The chat list a page at a time (`sessions.list`). Read again, every page shown, when a change is told
 * (`utils.sessions.list.invalidate()`) and after `refetchIntervalMs`: the pages are read one after the other from the
 * first, so a chat that changed comes to the top, loaded before or not, and is listed once.
 */
export function useSessionPages(refetchIntervalMs: number): SessionPages {
  const query = trpc.sessions.list.useInfiniteQuery(
    { limit: SIDEBAR_PAGE },
    { getNextPageParam: (page) => page.nextCursor ?? undefined, refetchInterval: refetchIntervalMs, refetchIntervalInBackground: true },
  );
  const sessions = useMemo(() => {
    if (query.data === undefined) return undefined;
    // A chat changed in the very millisecond a page ended can come twice: the first (newer) stays.
    const seen = new Set<string>();
    return query.data.pages.flatMap((page) => page.sessions).filter((session) => !seen.has(session.sessionId) && seen.add(session.sessionId));
  }, [query.data]);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = query;
  return {
    sessions,
    hasMore: hasNextPage,
    loadingMore: isFetchingNextPage,
    showMore: () => {
      if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
    },
  };
}
