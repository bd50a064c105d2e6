import { useMemo } from 'react';
import type { PendingApproval, SessionSummary } from '../lib/api-types';
import { trpc } from '../lib/trpc';

/**
 * How often a chat with a run going is asked for its waiting calls: a call can start waiting at any moment of a run.
 * Also while the tab is hidden, which is when a notification is worth most.
 */
const POLL_MS = 2000;

export interface WaitingApproval extends PendingApproval {
  /** The chat's title, for lists that span chats. */
  title: string;
}

export interface WaitingApprovals {
  /** Every call waiting for the person, oldest first. */
  all: readonly WaitingApproval[];
  /** How many calls wait, per chat. */
  countBySession: ReadonlyMap<string, number>;
  /** True once every chat with a run going has answered at least once. */
  loaded: boolean;
}

/**
 * The calls waiting for a decision across all chats. Session summaries carry no pending counts, so each chat
 * with a run going is asked (`chat.pending`), again on every session change and every few seconds while it runs.
 */
export function useWaitingApprovals(sessions: readonly SessionSummary[] | undefined): WaitingApprovals {
  const active = (sessions ?? []).filter((session) => session.activeRunId !== null);
  const results = trpc.useQueries((t) => active.map((session) => t.chat.pending({ sessionId: session.sessionId }, { refetchInterval: POLL_MS, refetchIntervalInBackground: true, staleTime: 0, retry: false })));
  const key = results.map((result) => result.dataUpdatedAt).join(',');
  const titles = active.map((session) => `${session.sessionId}\u0000${session.title}`).join('\u0001');
  const loaded = sessions !== undefined && results.every((result) => !result.isPending);
  return useMemo(() => {
    const titleOf = new Map(active.map((session) => [session.sessionId, session.title]));
    const all: WaitingApproval[] = [];
    for (const result of results) for (const approval of result.data ?? []) all.push({ ...approval, title: titleOf.get(approval.sessionId) ?? '' });
    all.sort((a, b) => a.requestedAt - b.requestedAt);
    const countBySession = new Map<string, number>();
    for (const approval of all) countBySession.set(approval.sessionId, (countBySession.get(approval.sessionId) ?? 0) + 1);
    return { all, countBySession, loaded };
    // The queries' data changes exactly when their update times or the titles do.
  }, [key, titles, loaded]);
}
