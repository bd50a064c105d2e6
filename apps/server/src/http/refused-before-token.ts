import { CLOSE_INTERNAL_ERROR, CLOSE_POLICY_VIOLATION, CLOSE_TRY_AGAIN_LATER } from '@airlock/core';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server';

/** The code and reason of a WebSocket close frame. */
export interface CloseFrame {
  code: number;
  reason: string;
}


/**
 * How a socket refused before its token was accepted is closed, by the refusal's code. tRPC sends the refusal's message
 * (`{"id": null, "error": …}`), then closes the socket with no code (1005): a client that does not read tRPC's errors,
 * or reads only the close, could not tell a wrong token from a server that went away. The reason names only what was
 * refused, never the refusal's message (which for a server's own failure may say what failed).
 */
export function refusedBeforeTokenClose(refusal: TRPC_ERROR_CODE_KEY): CloseFrame {
  return CLOSES.get(refusal) ?? { code: CLOSE_INTERNAL_ERROR, reason: 'the server could not accept this connection' };
}

const NO_TOKEN: CloseFrame = { code: CLOSE_POLICY_VIOLATION, reason: 'no valid token presented' };
const NO_PARAMETERS: CloseFrame = { code: CLOSE_POLICY_VIOLATION, reason: 'the first message was not connection parameters' };
const LATER: CloseFrame = { code: CLOSE_TRY_AGAIN_LATER, reason: 'not accepted now: try again later' };
const CLOSES = new Map<TRPC_ERROR_CODE_KEY, CloseFrame>([
  ['UNAUTHORIZED', NO_TOKEN],
  ['PARSE_ERROR', NO_PARAMETERS],
  ['BAD_REQUEST', NO_PARAMETERS],
  // Every place taken, too many tab credentials tried, or a tab's credential whose connection is still seen open.
  ['TOO_MANY_REQUESTS', LATER],
  ['CONFLICT', LATER],
]);
