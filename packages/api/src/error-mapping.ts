import { AirlockError, ConflictError, LimitExceededError, ModelError, NotFoundError } from '@airlock/core';
import { TRPCError } from '@trpc/server';
import { DecisionPastDeadlineError } from './decision-deadline';
import { RunPausedError } from './run-paused-error';

type Code = TRPCError['code'];

/** All a client is told of an error that is not an AirlockError. */
export const INTERNAL_ERROR_MESSAGE = 'internal error';

/** The one place where core errors become tRPC codes. Unknown errors keep their cause. */
export function toTRPCError(error: unknown): TRPCError {
  if (error instanceof TRPCError) return error;
  if (error instanceof AirlockError) return new TRPCError({ code: codeFor(error), message: error.message, cause: error });
  return new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: INTERNAL_ERROR_MESSAGE, cause: error });
}

function codeFor(error: AirlockError): Code {
  if (error instanceof NotFoundError) return 'NOT_FOUND';
  if (error instanceof ConflictError) return 'CONFLICT';
  if (error instanceof LimitExceededError) return 'TOO_MANY_REQUESTS';
  if (error instanceof ModelError) return 'BAD_GATEWAY';
  if (error instanceof DecisionPastDeadlineError) return 'TIMEOUT';
  // Refused, not failed: nothing was applied, and the call waits (a client tells the two apart by the code).
  if (error instanceof RunPausedError) return 'CONFLICT';
  return error.fault === 'caller' ? 'BAD_REQUEST' : 'INTERNAL_SERVER_ERROR';
}
