import type { SessionSummary } from '../lib/api-types';
import { proseText } from '../chat/prose-text';
import { trpc } from '../lib/trpc';

/**
 * The title of the chat `sessionId` (a chat rule's), its hidden characters as escapes (`proseText`), from the chats loaded so far (`loaded`, undefined until the first
 * page came) or, for an older one beyond them, read on its own with `sessions.get`; undefined until known, or when
 * there is no such chat (deleted). Without a `sessionId`, nothing is read.
 */
export function useChatTitle(sessionId: string | undefined, loaded: readonly SessionSummary[] | undefined): string | undefined {
  const listed = sessionId === undefined ? undefined : loaded?.find((session) => session.sessionId === sessionId);
  const read = sessionId !== undefined && loaded !== undefined && listed === undefined;
  const detail = trpc.sessions.get.useQuery({ sessionId: sessionId ?? '' }, { enabled: read, retry: false, staleTime: 60_000 });
  const title = listed?.title ?? (read ? detail.data?.title : undefined);
  return title === undefined ? undefined : proseText(title);
}
