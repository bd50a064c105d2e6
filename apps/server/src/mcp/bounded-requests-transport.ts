import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';

/**
 * Answers to the server's requests handed to its transport and not yet taken by it (written to a stdio server's
 * input past what the pipe buffers, or posted to an HTTP server and not yet answered). Airlock declares no client
 * capability, so the only request a server may make is `ping`.
 */
export const MAX_ANSWERS_IN_FLIGHT = 64;
/** Answers that may wait, in order, behind those in flight: what a server that sends faster than it reads makes grow. */
export const MAX_QUEUED_ANSWERS = 4096;
/** What the answers waiting behind those in flight may add up to, in characters of JSON. */
export const MAX_QUEUED_ANSWER_CHARS = 16 * 1024 * 1024;

interface Waiting {
  message: JSONRPCMessage;
  options: TransportSendOptions | undefined;
  chars: number;
}

/**
 * An MCP client transport with the answers to the server's requests bounded by what they hold in this process, not
 * by how many requests arrive at once. Answers are sent in order, at most MAX_ANSWERS_IN_FLIGHT at a time; the rest
 * wait in a queue, and the SDK is told at once that each was sent, so it keeps nothing per request meanwhile. A server
 * that reads its input takes its answers, the queue drains, and a burst of any size is answered. One that does not
 * (or sends faster than it reads) makes the queue grow: past MAX_QUEUED_ANSWERS or MAX_QUEUED_ANSWER_CHARS,
 * `onOverflow` is called once and nothing more the server sends is read: the owner closes the connection. Found from
 * outside: 1,000,000 `ping`s from a server that did not read its input took Airlock to 3.9 GB, each answer queued
 * toward it with the SDK's state for its request, and nobody's request was answered; 20,000 over HTTP opened 9,000
 * sockets. The first bound, 64 requests unanswered at once, also cut off a server that sent 65 in one write and read
 * every answer.
 */
export class BoundedRequestsTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  readonly #inner: Transport;
  readonly #onOverflow: (reason: string) => void;
  #inFlight = 0;
  readonly #queue: Waiting[] = [];
  #queueStart = 0;
  #queuedChars = 0;
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

  /** Answers waiting behind those in flight, for tests of the bound. */
  get queuedAnswers(): number {
    return this.#queue.length - this.#queueStart;
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
    if (this.#inFlight < MAX_ANSWERS_IN_FLIGHT && this.queuedAnswers === 0) {
      this.#hand(message, options);
      return Promise.resolve();
    }
    const chars = JSON.stringify(message).length;
    this.#queue.push({ message, options, chars });
    this.#queuedChars += chars;
    if (this.queuedAnswers > MAX_QUEUED_ANSWERS || this.#queuedChars > MAX_QUEUED_ANSWER_CHARS) this.#overflow();
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#dropQueue();
    return this.#inner.close();
  }

  #hand(message: JSONRPCMessage, options: TransportSendOptions | undefined): void {
    this.#inFlight += 1;
    this.#inner
      .send(message, options)
      .catch((error: unknown) => {
        if (!this.#overflowed) this.onerror?.(new Error(`Failed to send response: ${error instanceof Error ? error.message : String(error)}`));
      })
      .finally(() => {
        this.#inFlight -= 1;
        this.#next();
      });
  }

  #next(): void {
    if (this.#overflowed || this.queuedAnswers === 0) return;
    const waiting = this.#queue[this.#queueStart]!;
    this.#queueStart += 1;
    this.#queuedChars -= waiting.chars;
    // Taken from the front without shifting the array each time; let go of once half of it is spent.
    if (this.#queueStart * 2 >= this.#queue.length) {
      this.#queue.splice(0, this.#queueStart);
      this.#queueStart = 0;
    }
    this.#hand(waiting.message, waiting.options);
  }

  #overflow(): void {
    this.#overflowed = true;
    this.#dropQueue();
    this.#onOverflow(
      `the server sent requests faster than it read their answers: over ${MAX_QUEUED_ANSWERS} answers or ${MAX_QUEUED_ANSWER_CHARS / (1024 * 1024)} MiB waited to be sent to it (a flood, or it does not read its input)`,
    );
  }

  #dropQueue(): void {
    this.#queue.length = 0;
    this.#queueStart = 0;
    this.#queuedChars = 0;
  }

  #received(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    if (this.#overflowed) return;
    // What the SDK throws as it handles a message is the server's error, not the inner transport's: for a stdio
    // server, a throw out of here left the data handler of its output and ended Airlock's process.
    try {
      this.onmessage?.(message, extra);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
