import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { stoppableFetch } from '../http/stoppable-fetch';

/** The most one message from an MCP server may hold: what the SDK's stdio transport allows a line. */
export const MAX_MCP_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * The most messages one JSON answer (not an event stream) may hold. The specification has a JSON answer hold the one
 * answer to the one request posted, and Airlock posts no batch; the SDK parsed an answer of any number of messages at
 * once and handled each: found in review, 100,000 notifications in 9 MB held Airlock's thread for 1.3 s and took 163 MB.
 */
export const MAX_MESSAGES_PER_JSON_ANSWER = 64;

export const MCP_MESSAGE_TOO_LARGE = `the MCP server's answer was over ${MAX_MCP_MESSAGE_BYTES / (1024 * 1024)} MiB`;
export const MCP_ANSWER_TOO_MANY_MESSAGES = `the MCP server's answer held more than ${MAX_MESSAGES_PER_JSON_ANSWER} messages`;

/** An answer refused for what it holds; `disconnect` says why, when it came on the server's own stream. */
export abstract class McpAnswerRefusedError extends Error {
  abstract readonly disconnect: string;
}

export class McpMessageTooLargeError extends McpAnswerRefusedError {
  readonly disconnect = `the server sent a message over ${MAX_MCP_MESSAGE_BYTES / (1024 * 1024)} MiB`;
  constructor(message = MCP_MESSAGE_TOO_LARGE) {
    super(message);
    this.name = 'McpMessageTooLargeError';
  }
}

export class McpAnswerTooManyMessagesError extends McpAnswerRefusedError {
  readonly disconnect = `the server sent an answer of more than ${MAX_MESSAGES_PER_JSON_ANSWER} messages`;
  constructor(message = MCP_ANSWER_TOO_MANY_MESSAGES) {
    super(message);
    this.name = 'McpAnswerTooManyMessagesError';
  }
}

export interface SizeLimitedFetchOptions {
  /**
   * Called once per response refused (over the size limit, or a JSON answer of too many messages), with the ids of the
   * requests it was to answer (none for the server's own stream) and why.
   */
  onRefused: (requestIds: RequestId[], error: McpAnswerRefusedError) => void;
  /** Default: the global fetch. */
  fetch?: FetchLike;
  /** Default: MAX_MCP_MESSAGE_BYTES. */
  maxBytes?: number;
  /** Default: MAX_MESSAGES_PER_JSON_ANSWER. */
  maxJsonMessages?: number;
}

/**
 * A fetch for the SDK's Streamable HTTP transport whose response bodies fail once they go over the limit: one event of
 * an event stream, or any other body as a whole; and once a JSON array holds more than `maxJsonMessages` messages. The
 * SDK reads them whole (`response.json()`, `response.text()`, its event parser) however large they are: one 500 MB
 * event line took the server from 110 to 690 MB.
 */
export function sizeLimitedFetch(options: SizeLimitedFetchOptions): FetchLike {
  const { onRefused, fetch: givenFetch = fetch, maxBytes = MAX_MCP_MESSAGE_BYTES, maxJsonMessages = MAX_MESSAGES_PER_JSON_ANSWER } = options;
  const baseFetch = stoppableFetch(givenFetch);
  return async (url, init) => {
    const response = await baseFetch(url, init);
    if (response.body === null) return response;
    const refused = (error: McpAnswerRefusedError): Error => {
      onRefused(requestIdsOf(init?.body), error);
      return error;
    };
    const tooLarge = () => refused(new McpMessageTooLargeError());
    const eventStream = mediaType(response.headers.get('content-type')) === 'text/event-stream';
    const declared = Number(response.headers.get('content-length') ?? 0);
    let body: ReadableStream<Uint8Array>;
    if (!eventStream && declared > maxBytes) {
      void response.body.cancel().catch(() => undefined);
      // Fails at the first read, so a body the SDK only cancels (the answer to a notification) fails nothing.
      body = new ReadableStream({ pull: (controller) => controller.error(tooLarge()) }, { highWaterMark: 0 });
    } else {
      const fits = eventStream ? eventSizeCounter(maxBytes) : totalSizeCounter(maxBytes);
      const fewEnough = eventStream ? () => true : jsonMessageCounter(maxJsonMessages);
      body = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            if (!fits(chunk)) controller.error(tooLarge());
            else if (!fewEnough(chunk)) controller.error(refused(new McpAnswerTooManyMessagesError()));
            else controller.enqueue(chunk);
          },
        }),
      );
    }
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** Whether the body so far, `chunk` included, is within `maxBytes`. */
function totalSizeCounter(maxBytes: number): (chunk: Uint8Array) => boolean {
  let total = 0;
  return (chunk) => {
    total += chunk.byteLength;
    return total <= maxBytes;
  };
}

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Whether the JSON body so far, `chunk` included, holds at most `maxMessages` messages: the items of an array at its
 * top level (a comma outside any string at depth one starts another), one for anything else. One pass, nothing kept.
 */
function jsonMessageCounter(maxMessages: number): (chunk: Uint8Array) => boolean {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let array = false;
  let messages = 1;
  return (chunk) => {
    for (let index = 0; index < chunk.length; index += 1) {
      const byte = chunk[index];
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === BACKSLASH) escaped = true;
        else if (byte === QUOTE) inString = false;
      } else if (byte === QUOTE) inString = true;
      else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
        if (depth === 0) array = byte === OPEN_BRACKET;
        depth += 1;
      } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) depth -= 1;
      else if (byte === COMMA && depth === 1 && array) {
        messages += 1;
        if (messages > maxMessages) return false;
      }
    }
    return true;
  };
}

/**
 * Whether the event being read, `chunk` included, is within `maxBytes`: the bytes since the last blank line, which
 * ends an event. Lines end with CRLF, LF or CR, as the event stream format has them.
 */
function eventSizeCounter(maxBytes: number): (chunk: Uint8Array) => boolean {
  let eventBytes = 0;
  let atLineStart = true;
  let afterCR = false;
  return (chunk) => {
    for (let index = 0; index < chunk.length; index += 1) {
      const byte = chunk[index];
      if (byte === LF && afterCR) {
        afterCR = false;
        continue;
      }
      if (byte === LF || byte === CR) {
        eventBytes = atLineStart ? 0 : eventBytes + 1;
        atLineStart = true;
        afterCR = byte === CR;
        continue;
      }
      eventBytes += 1;
      atLineStart = false;
      afterCR = false;
      if (eventBytes > maxBytes) return false;
    }
    return true;
  };
}

function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The ids of the requests in a JSON-RPC message or batch the SDK sent; none for anything else. */
export function requestIdsOf(body: RequestInit['body']): RequestId[] {
  if (typeof body !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const ids: RequestId[] = [];
  for (const message of Array.isArray(parsed) ? (parsed as unknown[]) : [parsed]) {
    if (typeof message !== 'object' || message === null || !('method' in message) || !('id' in message)) continue;
    const id = message.id;
    if (typeof id === 'string' || typeof id === 'number') ids.push(id);
  }
  return ids;
}
