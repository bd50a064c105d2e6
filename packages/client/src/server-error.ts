import type { AppRouter } from '@airlock/api';
import type { TRPCClientError } from '@trpc/client';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { UnsentRequestError } from './airlock-socket';
import { serverCode } from './decision-refusal';

/** The tRPC codes the server answers with (`NOT_FOUND`, `TOO_MANY_REQUESTS`, …). */
export type ServerErrorCode = TRPC_ERROR_CODE_KEY;

/** An error the server answered a call with: its words as `message`, and `data` with its `code` (and `zodError`, `path`). */
export type ServerError = TRPCClientError<AppRouter> & { readonly data: NonNullable<TRPCClientError<AppRouter>['data']> };

/**
 * Whether a call failed with an answer of the server's (with `code` given, that code), rather than a failure of the
 * connection (`isConnectionLost`, an unreachable server: no code) or an error made by the client itself: a request
 * over `maxMessageBytes`, never sent, fails with `PAYLOAD_TOO_LARGE` in the server's words (`serverCode` gives that
 * code), and this answers false for it. Reads the error's shape, not its class: a project with its own copy of
 * `@trpc/client` gets `false` from `instanceof TRPCClientError` for every error this client throws.
 */
export function isServerError(error: unknown, code?: ServerErrorCode): error is ServerError {
  const found = serverCode(error);
  return error instanceof Error && !(error.cause instanceof UnsentRequestError) && found !== undefined && (code === undefined || found === code);
}
