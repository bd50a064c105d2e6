import { useMemo } from 'react';
import type { PendingApproval, SessionSummary, ToolInfo } from '../lib/api-types';
import { trpc } from '../lib/trpc';

export interface WaitingApproval extends PendingApproval {
  /** The chat's title, for lists that span chats. */
  title: string;
  /**
   * The tool's JSON Schema as the server lists it now, for a call whose `tool` does not say what it declared when put
   * up (stored before it did); undefined when the server does not list the tool, or the list is not read yet. A
   * preview then counts every argument as one the tool does not declare, and offers no Allow.
   */
  inputSchema?: ToolInfo['inputSchema'] | undefined;
}

export interface WaitingApprovals {
  /** Every call waiting for the person, oldest first. */
  all: readonly WaitingApproval[];
  /** How many calls wait, per chat. */
  countBySession: ReadonlyMap<string, number>;
  /** True once every chat with a run going has answered at least once. */
  loaded: boolean;
}

/** A number per answer of a query, so a list of answers makes one key: the same answer, the same number. */
const answerIds = new WeakMap<object, number>();
let lastAnswerId = 0;
function answerId(data: object | undefined): number {
  if (data === undefined) return 0;
  let id = answerIds.get(data);
  if (id === undefined) answerIds.set(data, (id = ++lastAnswerId));
  return id;
}

/**
 * How long a chat's waiting list goes unread when nothing said it changed, hidden tab or not: a safety net for a
 * change the server could not tell (a read it refused, which is not asked again; with several instances, a call put
 * up by an instance of an older version). Not less: a waiting call's arguments may hold a megabyte, read by every
 * open tab.
 */
export const WAITING_FALLBACK_MS = 30_000;

/**
 * The calls waiting for a decision across all chats. Session summaries carry no pending counts, so each chat
 * with a run going is asked (`chat.pending`) once, and again when sessions.watch says its waiting list changed
 * (ChatApp marks the query stale then; after a reconnect, when changes may have been missed, every query is), or
 * after WAITING_FALLBACK_MS without a read.
 */
export function useWaitingApprovals(sessions: readonly SessionSummary[] | undefined): WaitingApprovals {
  const active = (sessions ?? []).filter((session) => session.activeRunId !== null);
  const results = trpc.useQueries((t) =>
    active.map((session) =>
      t.chat.pending({ sessionId: session.sessionId }, { staleTime: Infinity, refetchInterval: WAITING_FALLBACK_MS, refetchIntervalInBackground: true, retry: false }),
    ),
  );
  // An answer equal to the one before keeps its identity (the query's structural sharing): then nothing is rebuilt.
  const key = results.map((result) => answerId(result.data)).join(',');
  const titles = active.map((session) => `${session.sessionId}\u0000${session.title}`).join('\u0001');
  // The same query as the chat's (one request): a preview checks each name against the tool's schema. Until it has
  // answered, no call is listed: a notification is shown once, and one shown before would offer Review for any call.
  const tools = trpc.tools.list.useQuery(undefined, { staleTime: 30_000, refetchInterval: 30_000 });
  const toolsRead = tools.data !== undefined || tools.isError;
  const loaded = sessions !== undefined && toolsRead && results.every((result) => !result.isPending);
  return useMemo(() => {
    const titleOf = new Map(active.map((session) => [session.sessionId, session.title]));
    const schemaOf = new Map((tools.data?.tools ?? []).map((tool) => [tool.name, tool.inputSchema]));
    const all: WaitingApproval[] = [];
    for (const result of toolsRead ? results : []) {
      for (const approval of result.data ?? []) all.push({ ...approval, title: titleOf.get(approval.sessionId) ?? '', inputSchema: schemaOf.get(approval.toolName) });
    }
    all.sort((a, b) => a.requestedAt - b.requestedAt);
    const countBySession = new Map<string, number>();
    for (const approval of all) countBySession.set(approval.sessionId, (countBySession.get(approval.sessionId) ?? 0) + 1);
    return { all, countBySession, loaded };
    // The queries' data changes exactly when their answers' identities, the titles or the tool list do.
  }, [key, titles, loaded, toolsRead, tools.data]);
}
