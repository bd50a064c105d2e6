import { WebSocket } from 'ws';
import type { Clock } from '../clock';

/** How long a socket the server closes has to answer with its own close frame before it is cut, in ms. */
export const CLOSE_ANSWER_MS = 2_000;

/**
 * The WebSocket class of a server whose sockets, once closed (by Airlock, by tRPC, or by `ws` itself: a frame it refused,
 * the answer to a peer's close), are cut when the closing handshake has not ended within `graceMs` on `clock`. `ws` gives
 * a peer 30 s to answer, by a timer of its own: one that never answered held its socket, its buffers and its place
 * among the open files that long (found in review). `ws` makes its sockets of the class its server is given (the
 * `WebSocket` option), and calls their own `close` for each of these, which this class extends; only a socket that
 * closes sets a timer.
 */
export function closingWithin(clock: Clock, graceMs: number): typeof WebSocket {
  return class ClosingWithinGrace extends WebSocket {
    #cut: (() => void) | undefined;

    override close(code?: number, data?: string | Buffer): void {
      super.close(code, data);
      if (this.#cut !== undefined || this.readyState === WebSocket.CLOSED) return;
      this.#cut = clock.after(graceMs, () => this.terminate());
      this.on('close', () => this.#cut?.());
    }
  };
}
