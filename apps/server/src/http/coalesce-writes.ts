import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/** Frames held back past this many bytes go out at once rather than at the end of the tick. */
const FLUSH_BYTES = 64 * 1024;

/**
 * Makes the frames a socket sends within one tick of the event loop leave in one write.
 *
 * A decision produces several frames at once (the confirm answer, then tool-decision and tool-end
 * events); written one by one, each costs a syscall and can wake the reader again. Here the first
 * send of a tick corks the TCP socket and the uncork is queued with `process.nextTick`, which runs
 * once the tick's promise jobs are done, so everything sent in that burst goes out in one writev.
 * A burst bigger than FLUSH_BYTES is written as it grows, so nothing waits behind a long stream.
 * `afterSend` runs after each frame is handed over (the send window's check).
 */
export function coalesceWrites(client: WebSocket, socket: Duplex, afterSend?: () => void): void {
  const send = client.send.bind(client) as (...args: unknown[]) => void;
  let corked = false;
  const flush = (): void => {
    if (!corked) return;
    corked = false;
    socket.uncork();
  };
  client.send = ((...args: unknown[]): void => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(flush);
    }
    send(...args);
    if (socket.writableLength > FLUSH_BYTES) flush();
    afterSend?.();
  }) as WebSocket['send'];
}
