/** What the client needs of a WebSocket: the browser's, or `ws`'s in Node 20 (which has no global one). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  /** `ws`'s: drops the connection at once, with no closing handshake (which a dead path would never finish). */
  terminate?(): void;
  addEventListener(type: 'open', listener: () => void): void;
  /** The close event's `code` says why (1009: a message was over the other side's size limit). */
  addEventListener(type: 'close', listener: (event?: { code?: number }) => void): void;
  /** `ws` passes an event with the `error`; a browser passes a plain event. */
  addEventListener(type: 'error', listener: (event?: unknown) => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export const WEB_SOCKET_OPEN = 1;
export const WEB_SOCKET_CLOSING = 2;
export const WEB_SOCKET_CLOSED = 3;
