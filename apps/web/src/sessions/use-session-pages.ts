import { keepPreviousData } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
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
  /** The chats shown are an earlier search's, or none yet: those of the text asked for are being read. */
  pending: boolean;
  showMore: () => void;
}

/**
 * The chat list a page at a time (`sessions.list`). Read again, every page shown, when a change is told
 * (`utils.sessions.list.invalidate()`) and after `refetchIntervalMs`: the pages are read one after the other from the
 * first, so a chat that changed comes to the top, loaded before or not, and is listed once. With `search` (not
 * empty), only the chats whose title contains it, which the server looks for among every chat, read or not; with an
 * empty `search`, nothing is read.
 */
export function useSessionPages(refetchIntervalMs: number, search?: string): SessionPages {
  const searching = search !== undefined;
  const query = trpc.sessions.list.useInfiniteQuery(
    { limit: SIDEBAR_PAGE, ...(searching ? { query: search } : {}) },
    {
      getNextPageParam: (page) => page.nextCursor ?? undefined,
      refetchInterval: refetchIntervalMs,
      refetchIntervalInBackground: true,
      enabled: !searching || search !== '',
      // The chats of the text typed before stay until those of the new one come, rather than none between two keys.
      ...(searching ? { placeholderData: keepPreviousData } : {}),
    },
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
    pending: query.data === undefined || query.isPlaceholderData,
    showMore: () => {
      if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
    },
  };
}

export interface SidebarChats {
  /** The chats of the pages read: what the tab knows of its chats' titles and settings. */
  all: SessionPages;
  /** What the sidebar lists: the pages read, or while a search is typed, the chats the server found with it. */
  listed: SessionPages;
  /** The text in the search box. */
  search: string;
  setSearch: (search: string) => void;
}

/** The sidebar's chats: the pages read, and a search of every chat (the server's) while one is typed. */
export function useSidebarChats(refetchIntervalMs: number): SidebarChats {
  const all = useSessionPages(refetchIntervalMs);
  const [search, setSearch] = useState('');
  const found = useSessionPages(refetchIntervalMs, search.trim());
  return { all, listed: search.trim() === '' ? all : found, search, setSearch };
}
