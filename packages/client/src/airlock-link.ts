import { TRPCClientError, type TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { observable } from '@trpc/server/observable';
import { socketClock, UnsentRequestError, type AirlockSocket, type SocketError } from './airlock-socket';

/** The mutation that carries a person's decision, which is sent with a deadline (see `decisionTimeoutMs`). */
const DECISION_PATH = 'chat.confirmTool';

export const DEFAULT_DECISION_TIMEOUT_MS = 10_000;

/**
 * A terminating tRPC link over an AirlockSocket: each request is written to the socket in the call that makes
 * it. Subscriptions re-attach with their last event id after a reconnect. No transformer (events are plain JSON).
 * A decision (`chat.confirmTool`) is sent with `notAfter`, `decisionTimeoutMs` from now on the socket's clock, and
 * fails then if unanswered: the server refuses it from then on, so a decision reported as expired never lands later.
 * Its connection gone before then, it fails at once as `AnswerUnknownError`: it may land until the deadline.
 */
export function airlockLink<TRouter extends AnyRouter>(socket: AirlockSocket, options: { decisionTimeoutMs?: number } = {}): TRPCLink<TRouter> {
  return () =>
    ({ op }) =>
      observable((observer) => {
        const decision = op.type === 'mutation' && op.path === DECISION_PATH && typeof op.input === 'object' && op.input !== null;
        const deadline = decision ? ((op.input as { notAfter?: number }).notAfter ?? socketClock() + (options.decisionTimeoutMs ?? DEFAULT_DECISION_TIMEOUT_MS)) : undefined;
        const end = socket.request(
          { method: op.type, path: op.path, input: deadline === undefined ? op.input : { ...(op.input as object), notAfter: deadline } },
          {
            result: (message) => observer.next({ result: message.result, context: op.context }),
            error: (error) => observer.error(toClientError<TRouter>(error)),
            complete: () => observer.complete(),
          },
          deadline === undefined ? {} : { deadline },
        );
        const onAbort = () => observer.complete();
        if (op.signal?.aborted) onAbort();
        else op.signal?.addEventListener('abort', onAbort, { once: true });
        return () => {
          op.signal?.removeEventListener('abort', onAbort);
          end();
        };
      });
}

/** The error a call throws: with the server's answer as its shape, or the client's own one (its `cause` then says so). */
function toClientError<TRouter extends AnyRouter>(error: SocketError): TRPCClientError<TRouter> {
  if (error.response === undefined) return TRPCClientError.from<TRouter>(error);
  return TRPCClientError.from<TRouter>(error.response, error instanceof UnsentRequestError ? { cause: error } : {});
}
