import { useEffect, useMemo, useRef } from 'react';
import type { SessionSummary } from '../lib/api-types';
import { trpc } from '../lib/trpc';

/** Chats with a run going one read asks for: the most one `sessions.list` answers. */
export const RUNNING_PAGE = 500;

/**
 * Every chat with a run going, on whichever page of the chat list (`sessions.list` with `running: true`), read a page
 * at a time until none is left: the waiting calls of each are listed in Waiting for you, however many chats run.
 * Undefined until every page has been read once, so a list built from it is never taken for whole while it is not
 * (drafts of the calls of a page not read yet would be dropped as decided); after that, the list of the last read
 * that reached the last page, never the pages of a read still going. Read again, every page, when a change is told and after `refetchIntervalMs`.
 */
export function useRunningChats(refetchIntervalMs: number, pageSize = RUNNING_PAGE): readonly SessionSummary[] | undefined {
  const query = trpc.sessions.list.useInfiniteQuery(
    { running: true, limit: pageSize },
    { getNextPageParam: (page) => page.nextCursor ?? undefined, refetchInterval: refetchIntervalMs, refetchIntervalInBackground: true },
  );
  const { hasNextPage, isFetching, fetchNextPage } = query;
  // Each page read asks for the next (a quick answer may come before a render sees the read going).
  const pages = query.data?.pages.length ?? 0;
  useEffect(() => {
    if (hasNextPage && !isFetching) void fetchNextPage();
  }, [hasNextPage, isFetching, fetchNextPage, pages]);
  const sessions = useMemo(() => {
    if (query.data === undefined) return undefined;
    // A chat whose run started in the very millisecond a page ended can come twice: the first (newer) stays.
    const seen = new Set<string>();
    return query.data.pages.flatMap((page) => page.sessions).filter((session) => !seen.has(session.sessionId) && seen.add(session.sessionId));
  }, [query.data]);
  // The list as of its last whole read: while a read again finds more pages than before (more chats run), the pages
  // read so far are not given for whole.
  const whole = useRef<readonly SessionSummary[] | undefined>(undefined);
  if (sessions !== undefined && !hasNextPage) whole.current = sessions;
  return whole.current;
}
