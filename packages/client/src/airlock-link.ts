import { TRPCClientError, type TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { observable } from '@trpc/server/observable';
import type { AirlockSocket, SocketError } from './airlock-socket';

/**
 * A terminating tRPC link over an AirlockSocket: each request is written to the socket in the call that makes
 * it. Subscriptions re-attach with their last event id after a reconnect. No transformer (events are plain JSON).
 */
export function airlockLink<TRouter extends AnyRouter>(socket: AirlockSocket): TRPCLink<TRouter> {
  return () =>
    ({ op }) =>
      observable((observer) => {
        const end = socket.request(
          { method: op.type, path: op.path, input: op.input },
          {
            result: (message) => observer.next({ result: message.result, context: op.context }),
            error: (error) => observer.error(toClientError<TRouter>(error)),
            complete: () => observer.complete(),
          },
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

function toClientError<TRouter extends AnyRouter>(error: SocketError): TRPCClientError<TRouter> {
  return error.response === undefined ? TRPCClientError.from<TRouter>(error) : TRPCClientError.from<TRouter>(error.response);
}
