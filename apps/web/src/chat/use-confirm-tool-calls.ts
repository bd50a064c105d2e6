import { useCallback, useEffect, useState } from 'react';
import type { SessionSummary } from '../lib/api-types';
import { trpc } from '../lib/trpc';

export interface ConfirmToolCalls {
  /** Whether this chat's calls stop for a decision; undefined while the chat's own setting is being read. */
  value: boolean | undefined;
  /** Set for a chat not yet on the server: sent with its first message, which makes the server keep it. */
  forFirstMessage: boolean | undefined;
  set: (value: boolean) => void;
  /** Why the last change did not take. */
  error: string | null;
}

/**
 * The chat's own "Confirm tool calls", kept on the server: read from its summary, written through
 * sessions.update (every tab sees the change through sessions.watch). A chat not yet on the server keeps it
 * here until its first message carries it. With `reading` (a chat on the server whose summary has not come yet), it
 * is not known and cannot be changed: the default shown meanwhile would be the wrong one for a chat that has it off,
 * and a change made then would be kept as a new chat's.
 */
export function useConfirmToolCalls(sessionId: string, summary: SessionSummary | undefined, reading = false): ConfirmToolCalls {
  const utils = trpc.useUtils();
  const [draft, setDraft] = useState<{ sessionId: string; value: boolean } | null>(null);
  // What the person just chose, shown at once and kept until the server's summary says the same (or the change
  // fails): between the answer and the re-read list, the old value would flash back.
  const [chosen, setChosen] = useState<{ sessionId: string; value: boolean } | null>(null);
  const update = trpc.sessions.update.useMutation({
    onError: () => setChosen(null),
    onSettled: () => Promise.all([utils.sessions.list.invalidate(), utils.sessions.get.invalidate({ sessionId })]),
  });
  const drafted = draft?.sessionId === sessionId ? draft.value : undefined;
  const chosenHere = chosen?.sessionId === sessionId ? chosen.value : undefined;
  const stored = summary?.confirmToolCalls;
  useEffect(() => {
    if (chosenHere !== undefined && stored === chosenHere) setChosen(null);
  }, [chosenHere, stored]);
  const exists = summary !== undefined;
  const { mutate } = update;
  const set = useCallback(
    (value: boolean) => {
      if (reading) return;
      if (exists) {
        setChosen({ sessionId, value });
        mutate({ sessionId, confirmToolCalls: value });
      } else setDraft({ sessionId, value });
    },
    [exists, reading, mutate, sessionId],
  );
  return {
    value: reading ? undefined : (chosenHere ?? stored ?? drafted ?? true),
    forFirstMessage: exists || reading ? undefined : drafted,
    set,
    error: update.error?.message ?? null,
  };
}
