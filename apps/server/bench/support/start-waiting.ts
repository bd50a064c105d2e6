import { type AppRouter } from '@airlock/api';
import type { TRPCClient } from '@trpc/client';

/** Starts a run and answers when its call waits, with a way to allow it and to wait for the end. */
export function startWaiting(trpc: TRPCClient<AppRouter>, sessionId: string) {
  let approved!: (id: string) => void;
  let ended!: () => void;
  const approvalId = new Promise<string>((resolve) => (approved = resolve));
  const done = new Promise<void>((resolve) => (ended = resolve));
  const sub = trpc.chat.stream.subscribe(
    { sessionId, runId: `${sessionId}-run`, message: 'go' },
    {
      onData: ({ data }) => {
        if (data.type === 'tool-start' && data.awaitingConfirmation) approved(data.approvalId);
        if (data.type === 'run-end') ended();
      },
      onError: (error) => {
        console.error(error);
        process.exit(1);
      },
    },
  );
  return { approvalId, done, stop: () => sub.unsubscribe() };
}
