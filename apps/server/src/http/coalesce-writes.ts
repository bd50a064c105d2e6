import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/** Frames held back past this many bytes go out at once rather than at the end of the tick. */
const FLUSH_BYTES = 64 * 1024;
/** What `ws` is told of text handed to it as bytes, which it would otherwise send as a binary frame. */
const AS_TEXT = Object.freeze({ binary: false });

/** `ws.send`'s arguments after its data (options, a callback, or both) for text handed over as bytes. */
function asText([options, callback]: unknown[]): unknown[] {
  if (typeof options === 'function') return [AS_TEXT, options];
  return [{ ...(options as object | undefined), binary: false }, callback];
}

/**
 * Makes the frames a socket sends within one tick of the event loop leave in one write.
 *
 * A decision produces several frames at once (the confirm answer, then tool-decision and tool-end
 * events); written one by one, each costs a syscall and can wake the reader again. Here the first
 * send of a tick corks the TCP socket and the uncork is queued with `process.nextTick`, which runs
 * once the tick's promise jobs are done, so everything sent in that burst goes out in one writev.
 * A burst bigger than FLUSH_BYTES is written as it grows, so nothing waits behind a long stream.
 * `afterSend` runs after each frame is handed over (the send window's check).
 *
 * Text holding a character of more than one byte is handed to the socket as its UTF-8 bytes, still sent as a text
 * frame: Node counts a string waiting to be written in characters, so the send window and the server's total unsent,
 * which read what waits, let up to three times their bounds wait in characters of 3 bytes (found in review). The
 * string would be encoded all the same on its way to the kernel; here it is encoded once, before it waits. Text all
 * of one-byte characters, most frames, is counted right as it is and handed over as it is: a buffer for each of those
 * left about 0.6 KiB of the allocator's memory per waiting session (docs/benchmarks.md).
 */
export function coalesceWrites(client: WebSocket, socket: Duplex, afterSend?: () => void): void {
  const send = client.send.bind(client) as (...args: unknown[]) => void;
  let corked = false;
  const flush = (): void => {
    if (!corked) return;
    corked = false;
    socket.uncork();
  };
  client.send = ((data: unknown, ...rest: unknown[]): void => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(flush);
    }
    if (typeof data !== 'string' || Buffer.byteLength(data) === data.length) send(data, ...rest);
    else if (rest.length === 0) send(Buffer.from(data), AS_TEXT);
    else send(Buffer.from(data), ...asText(rest));
    if (socket.writableLength > FLUSH_BYTES) flush();
    afterSend?.();
  }) as WebSocket['send'];
}
