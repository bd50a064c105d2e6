import type { FetchLike, Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { randomUUID } from 'node:crypto';
import { ErrorCode, type JSONRPCMessage, type MessageExtraInfo, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { McpAnswerRefusedError, requestIdsOf } from './size-limited-fetch';

const STREAM_ENDED = 'the MCP server ended the stream of its answer before it answered';

/** What a JSON answer's body fails with once its request was given up on; not reported as the server's error. */
const GIVEN_UP = new Error('the request was given up on before its answer ended');

/**
 * An HTTP MCP client transport whose answers to Airlock's requests end once the requests they carry are settled:
 * answered, or given up on (Airlock cancels a call at its timeout or on its signal). The SDK reads an event stream or
 * a JSON body until the server ends it, so a server that never did held a socket for each call ever made and went on
 * being read after the call was over. An event stream ends as one the server ended would, so what it already sent is
 * still read; a JSON body, whole or nothing, fails. An event stream the server ends (or that breaks off) first, which
 * the SDK will not resume, fails the requests it leaves unanswered (`#trailer`).
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
  /** Each request sent and neither answered nor given up on, however its answer is to come (a stream resumed, too). */
  readonly #unanswered = new Set<RequestId>();
  /** Marks the errors put at the end of a stream that ended unanswered (`#trailer`): no server can send one. */
  readonly #mark = randomUUID();

  constructor(create: (wrap: (baseFetch: FetchLike) => FetchLike) => Transport) {
    this.#inner = create((baseFetch) => this.#fetch(baseFetch));
    this.#inner.onclose = () => this.onclose?.();
    this.#inner.onerror = (error) => {
      if (error !== GIVEN_UP) this.onerror?.(error);
    };
    this.#inner.onmessage = (message, extra) => {
      if ('id' in message && !('method' in message) && message.id !== undefined) {
        // The answer came after all, before the end of its stream: the error put after it is no answer.
        if (this.#isTrailer(message) && !this.#requests.has(message.id)) return;
        this.#unanswered.delete(message.id);
        this.#settled(message.id);
      }
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

  /** Whether a request sent waits for its answer. */
  get awaitingAnswer(): boolean {
    return this.#unanswered.size > 0;
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const request = 'method' in message && 'id' in message ? message.id : undefined;
    if (request !== undefined) this.#unanswered.add(request);
    const sent = this.#inner.send(message, options);
    // A request that could not be sent is failed by the client, with no cancellation sent for it.
    if (request !== undefined) sent.catch(() => this.#unanswered.delete(request));
    if ('method' in message && message.method === 'notifications/cancelled') {
      const id: unknown = message.params?.requestId;
      if (typeof id === 'string' || typeof id === 'number') {
        this.#unanswered.delete(id);
        this.#settled(id);
      }
    }
    return sent;
  }

  close(): Promise<void> {
    this.#unanswered.clear();
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
      const eventStream = mediaType(response.headers.get('content-type')) === 'text/event-stream';
      const stream = new EndableStream(response.body, forget, eventStream ? { trailer: () => this.#trailer(posted) } : { failure: GIVEN_UP });
      posted.stream = stream;
      if (posted.waiting.size === 0) stream.end();
      return new Response(stream.body, { status: response.status, statusText: response.statusText, headers: response.headers });
    };
  }

  /**
   * For an event stream that ended (the server ended it, or it broke) with requests unanswered and no event id to
   * resume it from: an error answer to each, put after what it sent, as the SDK would otherwise wait for them until
   * their timeout. The SDK reads them after everything before, so an answer in the stream still comes first.
   */
  #trailer(posted: Posted): string | undefined {
    if (posted.waiting.size === 0) return undefined;
    return [...posted.waiting]
      .map((id) => {
        const error = { code: ErrorCode.InternalError, message: STREAM_ENDED, data: { mark: this.#mark } };
        return `\n\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, error })}\n\n`;
      })
      .join('');
  }

  #isTrailer(message: JSONRPCMessage): boolean {
    if (!('error' in message)) return false;
    const data: unknown = message.error.data;
    return typeof data === 'object' && data !== null && 'mark' in data && data.mark === this.#mark;
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

  readonly #options: EndableStreamOptions;
  /** Whether an event of it had an id, from which the SDK resumes a stream that ended (`eventIds`). */
  readonly #resumable: (chunk: Uint8Array) => boolean = eventIds();

  /**
   * `onFinished` is called when the source ends or fails, or its reader cancels it; not when `end` ends it, which
   * fails the stream with `options.failure` if given, or else closes it.
   */
  constructor(source: ReadableStream<Uint8Array>, onFinished: () => void, options: EndableStreamOptions) {
    this.#options = options;
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
            this.#ended = true;
            // A stream broken off (the server crashed) ends as one the server ended, its requests failed after it.
            const trailer = error instanceof McpAnswerRefusedError ? undefined : this.#trailer();
            if (trailer === undefined) {
              // The stream errors with it (a body over the size limit, or one the SDK resumes).
              onFinished();
              throw error;
            }
            controller.enqueue(trailer);
            controller.close();
            return;
          }
          if (this.#ended) return;
          if (read.done) {
            this.#ended = true;
            const trailer = this.#trailer();
            if (trailer === undefined) onFinished();
            else controller.enqueue(trailer);
            controller.close();
          } else {
            this.#resumable(read.value);
            controller.enqueue(read.value);
          }
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

  /** What to put at the end of a stream that ended unanswered, when the SDK will not resume it. */
  #trailer(): Uint8Array | undefined {
    if (this.#resumable(EMPTY)) return undefined;
    const text = this.#options.trailer?.();
    return text === undefined ? undefined : new TextEncoder().encode(text);
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#options.failure === undefined) this.#controller?.close();
    else this.#controller?.error(this.#options.failure);
    this.#reader.cancel().catch(() => undefined);
  }
}

interface EndableStreamOptions {
  /** What `end` fails the stream with; without it, `end` closes the stream. */
  failure?: Error;
  /** Text put at the end of the stream when it ends of itself and no event of it had an id. */
  trailer?: () => string | undefined;
}

const EMPTY = new Uint8Array(0);
const LF = 0x0a;
const ID_FIELD = [0x69, 0x64, 0x3a]; // "id:"

/**
 * Reads an event stream (LF line ends only, as `lfLineEndsFetch` makes them) chunk by chunk and says whether a line
 * so far was an `id:` field with a value: the SDK resumes a stream that ended from the last such id.
 */
function eventIds(): (chunk: Uint8Array) => boolean {
  let column = 0;
  let matched = 0;
  let found = false;
  return (chunk) => {
    for (let index = 0; index < chunk.length && !found; index += 1) {
      const byte = chunk[index]!;
      if (byte === LF) {
        column = 0;
        matched = 0;
        continue;
      }
      if (column === matched && matched === ID_FIELD.length) found = true;
      else if (column === matched && byte === ID_FIELD[matched]) matched += 1;
      column += 1;
    }
    return found;
  };
}

function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}
