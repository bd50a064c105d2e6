/**
 * The WebSocket close codes Airlock's server sends and its clients read, in one place so the two cannot drift apart.
 * A client that only reads the close (not tRPC's error message before it) can still tell why it was closed.
 */

/** Policy violation: what the socket sent can never be accepted as it is (no valid token, no connection parameters). */
export const CLOSE_POLICY_VIOLATION = 1008;

/** A message was over the receiver's size limit (`ws` sends it for a message over its `maxPayload`). */
export const CLOSE_MESSAGE_TOO_BIG = 1009;

/** The server failed. */
export const CLOSE_INTERNAL_ERROR = 1011;

/** The server cannot take the socket now, and may later (every place taken, too many tab credentials tried). */
export const CLOSE_TRY_AGAIN_LATER = 1013;

/**
 * A socket that gave its place to a newcomer before it presented its token: nothing it sent reached a procedure, so a
 * client may send it all again on its next connection. Never used for a socket whose token was accepted.
 */
export const CLOSE_REPLACED_BEFORE_TOKEN = 4001;
