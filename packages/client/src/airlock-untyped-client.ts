import { TRPCClientError, TRPCUntypedClient, type TRPCRequestOptions } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { airlockLink, requestOptions, toClientError } from './airlock-link';
import type { AirlockSocket } from './airlock-socket';

/**
 * tRPC's untyped client over an AirlockSocket, whose queries and mutations are written to the socket straight from
 * the call, with a promise for their answer, rather than through tRPC's link chain (an observable, a shared one, an
 * AbortController and its listener per call): in Node that chain took more of a decision's time than writing it did.
 * A call settles as through `airlockLink` and `TRPCUntypedClient`: with its answer's data, or the same
 * `TRPCClientError`; one whose `signal` aborts fails with tRPC's abort error, unwritten if it was already aborted.
 * Subscriptions, and whatever else reads the untyped client, go through `airlockLink`.
 */
export class AirlockUntypedClient<TRouter extends AnyRouter> extends TRPCUntypedClient<TRouter> {
  private readonly socket: AirlockSocket;
  private readonly decisionTimeoutMs: number | undefined;

  constructor(socket: AirlockSocket, options: { decisionTimeoutMs?: number } = {}) {
    super({ links: [airlockLink<TRouter>(socket, options)] });
    this.socket = socket;
    this.decisionTimeoutMs = options.decisionTimeoutMs;
  }

  override query(path: string, input?: unknown, opts?: TRPCRequestOptions): Promise<unknown> {
    return this.call('query', path, input, opts?.signal);
  }

  override mutation(path: string, input?: unknown, opts?: TRPCRequestOptions): Promise<unknown> {
    return this.call('mutation', path, input, opts?.signal);
  }

  private call(method: 'query' | 'mutation', path: string, input: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    // Given up before it was made: not written, so a decision given up so is never applied.
    if (signal?.aborted === true) return Promise.reject(abortError<TRouter>());
    return new Promise((resolve, reject) => {
      let settled = false;
      let end: (() => void) | undefined;
      const settle = () => {
        settled = true;
        signal?.removeEventListener('abort', onAbort);
      };
      const fail = (error: TRPCClientError<TRouter>) => {
        if (settled) return;
        settle();
        reject(error);
      };
      const onAbort = () => {
        fail(abortError<TRouter>());
        end?.();
      };
      try {
        end = this.socket.request(
          { method, path, input },
          {
            result: (message) => {
              if (settled) return;
              settle();
              resolve(message.result.data);
            },
            error: (error) => fail(toClientError<TRouter>(error)),
            complete: () => fail(abortError<TRouter>()),
          },
          requestOptions(method, path, input, this.decisionTimeoutMs),
        );
      } catch (error) {
        fail(TRPCClientError.from<TRouter>(error as Error));
        return;
      }
      if (!settled) signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** What tRPC's `observableToPromise` fails with when a call ends with no answer (its signal aborted). */
function abortError<TRouter extends AnyRouter>(): TRPCClientError<TRouter> {
  return TRPCClientError.from<TRouter>(new DOMException('This operation was aborted', 'AbortError'));
}
