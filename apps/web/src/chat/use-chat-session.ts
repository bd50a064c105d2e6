import { isConnectionLost } from '@airlock/client';
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import type { PendingApproval, RunOptions } from '../lib/api-types';
import { randomId } from '../lib/random-id';
import { trpc } from '../lib/trpc';
import { chatReducer, earlierItems, initialChatState, undecidedCalls, type ChatItem } from './chat-reducer';
import { ChatRuns } from './chat-runs';
import { sendDecision, type DecisionRequest } from './send-decision';
import type { ToolCallView } from './tool-call-state';

export interface ChatSessionOptions {
  sessionId: string;
  /** A chat that exists only in this tab until its first message. */
  isNew: boolean;
  /** Called when the session's runs or title may have changed (to refresh the list). */
  onActivity: () => void;
}

const NO_ITEMS: readonly ChatItem[] = [];

/** A stop asked for the run followed: on its way to the server (queued while offline), taken by it, or not sent. */
/**
 * `held`: the stop does not hold for good yet (the run is paused, and the server applies the stop when it takes the run
 * up; or the stop could not be stored); `message`, the server's words, says so in full.
 */
export type StopStatus = { runId: string; state: 'sending' | 'taken' } | { runId: string; state: 'held' | 'failed'; message: string };

/**
 * One chat: its history, the run it follows and the person's decisions. The WebSocket subscription is a
 * function of state: while a run is followed there is exactly one subscription to it, and wsLink re-sends
 * it with lastEventId after a reconnect, so the view resumes instead of starting a second run.
 */
export function useChatSession({ sessionId, isNew, onActivity }: ChatSessionOptions) {
  const utils = trpc.useUtils();
  const client = utils.client;
  const [state, dispatch] = useReducer(chatReducer, initialChatState);
  const [known, setKnown] = useState(!isNew);
  const startInputs = useRef(new Map<string, { message: string; options: RunOptions }>());
  const [runs] = useState(() => new ChatRuns(isNew));
  const inFlight = useRef(new Set<string>());
  const loads = useRef(0);
  const activity = useRef(onActivity);
  activity.current = onActivity;

  const followedRunId = state.run?.phase === 'following' ? state.run.runId : null;
  // Read again when the session changes on the server (see sessions.watch in ChatApp): a run started in another tab shows up here.
  const detail = trpc.sessions.get.useQuery({ sessionId }, { enabled: known, retry: false });
  const notFound = detail.error?.data?.code === 'NOT_FOUND';
  const ready = runs.loaded || notFound || !known;
  // A chat on the server whose read failed (not "not found": the server has it) cannot be shown or written to until a
  // read succeeds. Said with the reason and a retry: the watch reads it again only on a change or a reconnect. One read
  // before keeps what it showed, said to be as last read: the chat may have moved on since (a call decided elsewhere).
  const loadError = detail.error !== null && !notFound ? detail.error.message : null;
  const kept = loadError !== null && detail.data !== undefined;
  const { refetch } = detail;
  const retryLoad = useCallback(() => void refetch(), [refetch]);

  useEffect(() => {
    const data = detail.data;
    if (!data) return;
    const read = runs.read(data, followedRunId);
    if (read === null) return;
    const { follow, streamError } = read;
    const load = ++loads.current;
    const show = (pending: readonly PendingApproval[]) => {
      if (load !== loads.current) return;
      const ended = {
        ...(data.lastRunEnd === undefined ? {} : { lastRunEnd: data.lastRunEnd }),
        ...(data.leftOut === undefined ? {} : { leftOut: data.leftOut }),
        ...(data.leftOutCalls === undefined ? {} : { leftOutCalls: data.leftOutCalls }),
      };
      dispatch({ type: 'history-loaded', history: { messages: data.messages, runIds: data.runIds, toolCalls: data.toolCalls, pending, follow, streamError, ...ended } });
    };
    const waiting = data.toolCalls.some((call) => call.outcome === null && call.decision === null && call.approvalId !== '' && call.runId !== follow);
    if (!waiting) show([]);
    else void utils.chat.pending.fetch({ sessionId }, { staleTime: 0 }).then(show, () => show([]));
    // Runs on each read: followedRunId is read here, not watched.
  }, [detail.dataUpdatedAt]);

  useEffect(() => {
    if (followedRunId === null) return;
    const runId = followedRunId;
    const start = startInputs.current.get(runId);
    // Cards must not stay decidable on what the stream last said: the chat is read again and rebuilt.
    const failed = (failedRunId: string, message: string, how: 'error' | 'stopped') => {
      dispatch({ type: 'stream-failed', runId: failedRunId, message });
      runs.streamFailed(failedRunId, message, how);
      void utils.sessions.get.invalidate({ sessionId });
    };
    const subscription = client.chat.stream.subscribe(
      { sessionId, runId, ...(start === undefined ? {} : { message: start.message, options: start.options }) },
      {
        onData(tracked) {
          dispatch({ type: 'event', runId, tracked });
          const type = tracked.data.type;
          if (type === 'run-end') runs.runEnded(runId);
          if (type === 'run-start' || type === 'run-end') activity.current();
          if (type === 'tool-start' || type === 'tool-decision') void utils.chat.pending.invalidate({ sessionId });
          // The Rules page (shown over this chat while its run goes on) counts each rule's hits.
          if (type === 'tool-decision' && tracked.data.source === 'rule') void utils.rules.list.invalidate();
          // A new chat is created by its first run: a detail read sent before that answered "not found".
          if (type === 'run-start') void utils.sessions.get.invalidate({ sessionId });
          if (type === 'run-end') void utils.grants.list.invalidate({ sessionId });
        },
        onError(error) {
          failed(runId, error.message, 'error');
          activity.current();
        },
        onComplete() {
          if (!runs.hasEnded(runId)) failed(runId, 'The server stopped sending this run’s events.', 'stopped');
        },
      },
    );
    return () => subscription.unsubscribe();
  }, [client, sessionId, followedRunId, utils]);

  const send = useCallback((message: string, options: RunOptions) => {
    const runId = randomId('run');
    startInputs.current.set(runId, { message, options });
    runs.started(runId);
    loads.current++;
    dispatch({ type: 'run-followed', runId, message });
    setKnown(true);
  }, []);

  const [stopStatus, setStopStatus] = useState<StopStatus | null>(null);
  const stop = useCallback(() => {
    if (followedRunId === null) return;
    const runId = followedRunId;
    const settle = (next: StopStatus) => setStopStatus((now) => (now?.runId === runId ? next : now));
    setStopStatus({ runId, state: 'sending' });
    // The client holds it while the connection is down, and it is sent again when one goes before its answer (a second
    // stop of a run stops nothing more): until the server answers, the person is told it is not taken, never that it is.
    const send = async (): Promise<string | undefined> => {
      for (;;) {
        try {
          return (await client.chat.cancel.mutate({ sessionId, runId })).paused;
        } catch (error) {
          if (!isConnectionLost(error)) throw error;
        }
      }
    };
    send().then(
      (paused) => settle(paused === undefined ? { runId, state: 'taken' } : { runId, state: 'held', message: paused }),
      (error: unknown) => settle({ runId, state: 'failed', message: error instanceof Error ? error.message : String(error) }),
    );
  }, [client, sessionId, followedRunId]);

  const decide = useCallback(
    (call: ToolCallView, request: DecisionRequest) => {
      if (inFlight.current.has(call.key)) return;
      inFlight.current.add(call.key);
      void sendDecision({ sessionId, call, request, send: (input) => client.chat.confirmTool.mutate(input), dispatch })
        .then((result) => {
          if (result?.resolved && request.always === true) void utils.grants.list.invalidate({ sessionId });
        })
        .finally(() => inFlight.current.delete(call.key));
    },
    [client, sessionId, utils],
  );

  /** Decides the calls of `shown` that still wait: not every call waiting now, one may have come since the click was aimed. */
  const decideAll = useCallback(
    (decision: DecisionRequest['decision'], shown: readonly Pick<ToolCallView, 'key'>[]) => {
      const keys = new Set(shown.map((call) => call.key));
      for (const call of undecidedCalls(state)) if (keys.has(call.key)) decide(call, { decision });
    },
    [decide, state],
  );

  // A long chat is read its newest part first; earlier parts are read on request and shown above it, as long as
  // that newest part starts where they end (new messages move it on: then they are read again on request).
  const [earlier, setEarlier] = useState<{ sessionId: string; start: number; end: number; items: ChatItem[]; leftOut: readonly string[] } | null>(null);
  const newestStart = detail.data?.messagesBefore ?? 0;
  const shownEarlier = earlier !== null && earlier.sessionId === sessionId && earlier.end === newestStart ? earlier : null;
  const loadingEarlier = useRef(false);
  const showEarlier = useCallback(() => {
    const before = shownEarlier?.start ?? newestStart;
    if (before === 0 || loadingEarlier.current) return;
    loadingEarlier.current = true;
    void utils.sessions.get
      .fetch({ sessionId, before }, { staleTime: 0 })
      .then((page) => {
        const items = earlierItems(page.messagesBefore, page);
        const leftOut = [...(page.leftOut ?? []), ...(shownEarlier?.leftOut ?? [])];
        setEarlier({ sessionId, start: page.messagesBefore, end: shownEarlier?.end ?? newestStart, items: [...items, ...(shownEarlier?.items ?? [])], leftOut });
      })
      .catch(() => undefined)
      .finally(() => (loadingEarlier.current = false));
  }, [utils, sessionId, shownEarlier, newestStart]);
  const earlierMessages = shownEarlier?.start ?? newestStart;
  const shownStop = stopStatus !== null && stopStatus.runId === followedRunId ? stopStatus : null;
  // Why the chat's going run is paused (its data cannot be stored for now), as the server last said.
  const paused = detail.data?.paused ?? null;
  const load = { error: loadError, kept, retry: retryLoad, retrying: loadError !== null && detail.isFetching };
  // The damaged records left out of what is shown, as long as the page says so: a run's status of it is soon gone.
  const leftOut = useMemo(() => [...(shownEarlier?.leftOut ?? []), ...(detail.data?.leftOut ?? [])], [shownEarlier, detail.data]);
  return { state, ready, load, exists: known && !notFound, earlierMessages, leftOut, earlierItems: shownEarlier?.items ?? NO_ITEMS, showEarlier, send, stop, stopStatus: shownStop, decide, decideAll, paused };
}
