import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';

/**
 * The server's requests to Airlock that may wait for their answer to be sent at once. Airlock declares no client
 * capability, so the only request a server may make is `ping`; a real server has one in flight at a time.
 */
export const MAX_UNANSWERED_SERVER_REQUESTS = 64;

/**
 * An MCP client transport with the server's requests to the client bounded: a request counts from its arrival until
 * its answer has been sent (written to a stdio server's input, or posted to an HTTP server). Past
 * MAX_UNANSWERED_SERVER_REQUESTS, `onOverflow` is called once and nothing more the server sends is read: the owner
 * closes the connection. Found from outside: 1,000,000 `ping`s from a server that did not read its input took Airlock
 * to 3.9 GB, each answer queued toward it, and nobody's request was answered; 20,000 over HTTP opened 9,000 sockets.
 */
export class BoundedRequestsTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  readonly #inner: Transport;
  readonly #onOverflow: (reason: string) => void;
  #unanswered = 0;
  #overflowed = false;

  constructor(inner: Transport, onOverflow: (reason: string) => void) {
    this.#inner = inner;
    this.#onOverflow = onOverflow;
    inner.onclose = () => this.onclose?.();
    // Once it floods, what fails as it is disconnected (an answer's post cut short) is not the server's news.
    inner.onerror = (error) => {
      if (!this.#overflowed) this.onerror?.(error);
    };
    inner.onmessage = (message, extra) => this.#received(message, extra);
  }

  /** The server's own transport. */
  get inner(): Transport {
    return this.#inner;
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // Airlock sends requests and notifications of its own; a message with an id and no method answers the server's.
    if (!('id' in message) || 'method' in message) return this.#inner.send(message, options);
    // The server is being disconnected: its requests go unanswered, rather than written after its input was closed.
    if (this.#overflowed) return Promise.resolve();
    return this.#inner
      .send(message, options)
      .catch((error: unknown) => {
        if (!this.#overflowed) throw error;
      })
      .finally(() => {
        this.#unanswered -= 1;
      });
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #received(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    if (this.#overflowed) return;
    if ('method' in message && 'id' in message) {
      this.#unanswered += 1;
      if (this.#unanswered > MAX_UNANSWERED_SERVER_REQUESTS) {
        this.#overflowed = true;
        this.#onOverflow(`the server sent more than ${MAX_UNANSWERED_SERVER_REQUESTS} requests whose answers were not yet sent to it (a flood, or it does not read its input)`);
        return;
      }
    }
    this.onmessage?.(message, extra);
  }
}
