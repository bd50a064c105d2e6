import type { RawData, WebSocket } from 'ws';
import { sizeOf } from './socket-read-budget';

/**
 * What a socket may send in one message before its token is accepted. The only message it needs then is its connection
 * parameters (the token, a tab's credential, a client label of at most 100 characters, a clock): well under a KiB.
 */
export const MAX_MESSAGE_BEFORE_TOKEN_BYTES = 16 * 1024;

type MessageListener = (data: RawData, isBinary: boolean) => void;

/**
 * Closes with 1009 a socket that sends a message over `maxBytes` while `accepted` says its token is not, before anything
 * reads the message; nothing it sends after is read. Found in review: anyone, without the token, had each new socket's
 * first message of up to 1 MiB scanned and parsed (about 20 ms of the server's thread each), as fast as it could open
 * sockets, since a stranger's place goes to the next one. Installed after the listeners it guards, which it wraps.
 */
export function limitMessagesBeforeToken(client: WebSocket, accepted: () => boolean, maxBytes = MAX_MESSAGE_BEFORE_TOKEN_BYTES): void {
  const listeners = client.listeners('message') as MessageListener[];
  client.removeAllListeners('message');
  let refused = false;
  client.on('message', (data, isBinary) => {
    if (refused) return;
    if (!accepted() && sizeOf(data) > maxBytes) {
      refused = true;
      client.close(1009, `at most ${maxBytes / 1024} KiB in a message before the token`);
      return;
    }
    for (const listener of listeners) listener.call(client, data, isBinary);
  });
}
