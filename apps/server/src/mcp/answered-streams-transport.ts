import type { FetchLike, Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { requestIdsOf } from './size-limited-fetch';

/** What a JSON answer's body fails with once its request was given up on; not reported as the server's error. */
const GIVEN_UP = new Error('the request was given up on before its answer ended');

/**
 * An HTTP MCP client transport whose answers to Airlock's requests end once the requests they carry are settled:
 * answered, or given up on (Airlock cancels a call at its timeout or on its signal). The SDK reads an event stream or
 * a JSON body until the server ends it, so a server that never did held a socket for each call ever made and went on
 * being read after the call was over. An event stream ends as one the server ended would, so what it already sent is
 * still read; a JSON body, whole or nothing, fails.
 *
 * `create` makes the server's transport with the fetch it is given, which wraps the one it passes in.
 */
export class AnsweredStreamsTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  readonly #inner: Transport;
  /** Each request posted and not settled yet, with the event stream it is answered on once it has one. */
  readonly #requests = new Map<RequestId, Posted>();

  constructor(create: (wrap: (baseFetch: FetchLike) => FetchLike) => Transport) {
    this.#inner = create((baseFetch) => this.#fetch(baseFetch));
    this.#inner.onclose = () => this.onclose?.();
    this.#inner.onerror = (error) => {
      if (error !== GIVEN_UP) this.onerror?.(error);
    };
    this.#inner.onmessage = (message, extra) => {
      if ('id' in message && !('method' in message) && message.id !== undefined) this.#settled(message.id);
      this.onmessage?.(message, extra);
    };
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
    const sent = this.#inner.send(message, options);
    if ('method' in message && message.method === 'notifications/cancelled') {
      const id: unknown = message.params?.requestId;
      if (typeof id === 'string' || typeof id === 'number') this.#settled(id);
    }
    return sent;
  }

  close(): Promise<void> {
    for (const posted of this.#requests.values()) posted.stream?.end();
    this.#requests.clear();
    return this.#inner.close();
  }

  #fetch(baseFetch: FetchLike): FetchLike {
    return async (url, init) => {
      const ids = init?.method === 'POST' ? requestIdsOf(init.body) : [];
      // Registered before the answer's headers come: a call given up on before then still has its stream ended.
      const posted: Posted = { waiting: new Set(ids) };
      for (const id of ids) this.#requests.set(id, posted);
      const forget = () => {
        for (const id of posted.waiting) if (this.#requests.get(id) === posted) this.#requests.delete(id);
      };
      let response: Response;
      try {
        response = await baseFetch(url, init);
      } catch (error) {
        forget();
        throw error;
      }
      if (response.body === null || ids.length === 0) {
        forget();
        return response;
      }
      // A stream the server ends, or that fails (over the size limit), is let go of with it.
      const stream = new EndableStream(response.body, forget, mediaType(response.headers.get('content-type')) === 'text/event-stream' ? undefined : GIVEN_UP);
      posted.stream = stream;
      if (posted.waiting.size === 0) stream.end();
      return new Response(stream.body, { status: response.status, statusText: response.statusText, headers: response.headers });
    };
  }

  #settled(id: RequestId): void {
    const posted = this.#requests.get(id);
    if (posted === undefined) return;
    this.#requests.delete(id);
    posted.waiting.delete(id);
    if (posted.waiting.size === 0) posted.stream?.end();
  }
}

/** A request (or a batch of them) posted to the server. */
interface Posted {
  /** Its requests not settled yet. */
  waiting: Set<RequestId>;
  /** The event stream it is answered on, once the server answered with one. */
  stream?: EndableStream;
}

/** A response body that can be ended from outside: closed (what was read of it still delivered, then done) or failed. */
class EndableStream {
  readonly body: ReadableStream<Uint8Array>;
  #ended = false;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;

  readonly #failure: Error | undefined;

  /**
   * `onFinished` is called when the source ends or fails, or its reader cancels it; not when `end` ends it, which
   * fails the stream with `failure` if given, or else closes it.
   */
  constructor(source: ReadableStream<Uint8Array>, onFinished: () => void, failure?: Error) {
    this.#failure = failure;
    this.#reader = source.getReader();
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: async (controller) => {
          let read: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;
          try {
            read = await this.#reader.read();
          } catch (error) {
            if (this.#ended) return;
            // The stream errors with it (a body over the size limit): there is nothing left to end.
            this.#ended = true;
            onFinished();
            throw error;
          }
          if (this.#ended) return;
          if (read.done) {
            this.#ended = true;
            onFinished();
            controller.close();
          } else controller.enqueue(read.value);
        },
        cancel: (reason) => {
          this.#ended = true;
          onFinished();
          return this.#reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#failure === undefined) this.#controller?.close();
    else this.#controller?.error(this.#failure);
    this.#reader.cancel().catch(() => undefined);
  }
}

function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}
