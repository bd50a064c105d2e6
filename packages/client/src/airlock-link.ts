import { TRPCClientError, type TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { observable } from '@trpc/server/observable';
import { UnsentRequestError, type AirlockSocket, type RequestMethod, type RequestOptions, type SocketError } from './airlock-socket';

/** The mutation that carries a person's decision, which is sent with a deadline (see `decisionTimeoutMs`). */
const DECISION_PATH = 'chat.confirmTool';

export const DEFAULT_DECISION_TIMEOUT_MS = 10_000;

/**
 * A terminating tRPC link over an AirlockSocket: each request is written to the socket in the call that makes
 * it. Subscriptions re-attach with their last event id after a reconnect. No transformer (events are plain JSON).
 * A decision (`chat.confirmTool`) is sent with `notAfter`, `decisionTimeoutMs` after it is written on the socket's
 * clock (a decision made while the connection is down is written once it is back, and has its whole time then), and
 * fails then if unanswered: the server refuses it from then on, so a decision reported as expired never lands later.
 * Its connection gone before then, it fails at once as `AnswerUnknownError`: it may land until the deadline. One
 * given its own `notAfter` keeps it.
 */
export function airlockLink<TRouter extends AnyRouter>(socket: AirlockSocket, options: { decisionTimeoutMs?: number } = {}): TRPCLink<TRouter> {
  return () =>
    ({ op }) =>
      observable((observer) => {
        // Given up before it was made: not written, so a decision given up so is never applied.
        if (op.signal?.aborted === true) {
          observer.complete();
          return () => undefined;
        }
        const end = socket.request(
          { method: op.type, path: op.path, input: op.input },
          {
            result: (message) => observer.next({ result: message.result, context: op.context }),
            error: (error) => observer.error(toClientError<TRouter>(error)),
            complete: () => observer.complete(),
          },
          requestOptions(op.type, op.path, op.input, options.decisionTimeoutMs),
        );
        const onAbort = () => observer.complete();
        op.signal?.addEventListener('abort', onAbort, { once: true });
        return () => {
          op.signal?.removeEventListener('abort', onAbort);
          end();
        };
      });
}

/** The deadline a request is sent with: a decision's own `notAfter`, or `decisionTimeoutMs` after it is written; none for the rest. */
export function requestOptions(method: RequestMethod, path: string, input: unknown, decisionTimeoutMs = DEFAULT_DECISION_TIMEOUT_MS): RequestOptions {
  if (method !== 'mutation' || path !== DECISION_PATH || typeof input !== 'object' || input === null) return {};
  const given = (input as { notAfter?: number }).notAfter;
  return given !== undefined ? { deadline: given } : { deadlineAfterWriteMs: decisionTimeoutMs };
}

/** The error a call throws: with the server's answer as its shape, or the client's own one (its `cause` then says so). */
export function toClientError<TRouter extends AnyRouter>(error: SocketError): TRPCClientError<TRouter> {
  if (error.response === undefined) return TRPCClientError.from<TRouter>(error);
  return TRPCClientError.from<TRouter>(error.response, error instanceof UnsentRequestError ? { cause: error } : {});
}
