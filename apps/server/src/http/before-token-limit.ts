import type { WebSocket } from 'ws';

/**
 * What a socket may send in one message before its token is accepted. The only message it needs then is its connection
 * parameters (the token, a tab's credential, a client label of at most 100 characters, a clock): well under a KiB.
 */
export const MAX_MESSAGE_BEFORE_TOKEN_BYTES = 16 * 1024;

/** The one field of `ws`'s frame reader (its Receiver) read here: its bound on a message, checked at each frame's header. */
interface FrameReader {
  _maxPayload: number;
}

/**
 * Lets a socket whose token was accepted send messages of up to `maxBytes`. The server's `ws` takes in at most
 * MAX_MESSAGE_BEFORE_TOKEN_BYTES in a message, so a stranger's frame that says it is larger closes its socket with 1009
 * at its header, before its body is read: checked once a message had arrived, each stranger's socket could make the
 * server take in 1 MiB first (found in review). `ws` gives each socket's reader its bound once, with no public way to
 * change it (8.x, `Receiver#_maxPayload`), so it is raised here; should a later `ws` keep it elsewhere this throws, and
 * the token's acceptance fails loudly rather than leaving every client at 16 KiB. To drop this, upgrade to a `ws` with
 * a per-socket limit, or check the token in the upgrade request.
 */
export function acceptMessagesUpTo(client: WebSocket, maxBytes: number): void {
  const reader = (client as unknown as { _receiver?: Partial<FrameReader> })._receiver;
  if (typeof reader?._maxPayload !== 'number') throw new Error("ws's frame reader keeps no _maxPayload: the message limit after the token cannot be raised");
  reader._maxPayload = maxBytes;
}
