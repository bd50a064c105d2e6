import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { stoppableFetch } from '../http/stoppable-fetch';
import { JsonDepth, MAX_MCP_MESSAGE_DEPTH } from './json-depth';
import { hasCredentials } from './mcp-config';

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
export const MCP_MESSAGE_TOO_DEEP = `the MCP server's answer was nested deeper than ${MAX_MCP_MESSAGE_DEPTH} levels`;

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

/** A message nested deeper than MAX_MCP_MESSAGE_DEPTH: refused whole, on any transport, before the SDK reads it. */
export class McpMessageTooDeepError extends McpAnswerRefusedError {
  readonly disconnect = `the server sent a message nested deeper than ${MAX_MCP_MESSAGE_DEPTH} levels`;
  constructor(message = MCP_MESSAGE_TOO_DEEP) {
    super(message);
    this.name = 'McpMessageTooDeepError';
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
  /** Levels one message may nest. Default: MAX_MCP_MESSAGE_DEPTH. */
  maxDepth?: number;
}

type Refusal = 'too-large' | 'too-many-messages' | 'too-deep';

const REFUSALS: Record<Refusal, () => McpAnswerRefusedError> = {
  'too-large': () => new McpMessageTooLargeError(),
  'too-many-messages': () => new McpAnswerTooManyMessagesError(),
  'too-deep': () => new McpMessageTooDeepError(),
};

/**
 * A fetch for the SDK's Streamable HTTP transport whose response bodies fail once they go over the limit: one event of
 * an event stream, or any other body as a whole; once a JSON array holds more than `maxJsonMessages` messages; and
 * once a message (an event's data, or a JSON body or an item of its array) nests deeper than `maxDepth`. The SDK reads
 * them whole (`response.json()`, `response.text()`, its event parser) however large they are: one 500 MB event line
 * took the server from 110 to 690 MB. Each check reads each byte once, as it arrives.
 */
export function sizeLimitedFetch(options: SizeLimitedFetchOptions): FetchLike {
  const {
    onRefused,
    fetch: givenFetch = fetch,
    maxBytes = MAX_MCP_MESSAGE_BYTES,
    maxJsonMessages = MAX_MESSAGES_PER_JSON_ANSWER,
    maxDepth = MAX_MCP_MESSAGE_DEPTH,
  } = options;
  const baseFetch = stoppableFetch(givenFetch);
  return async (url, init) => {
    // The config refuses such a URL; fetch's own error for one quoted it, password and all, in the log and the status.
    if (hasCredentials(url)) throw new Error('the server\'s URL holds a user name or password, which fetch refuses: give them in an "Authorization" header');
    const response = await baseFetch(url, init);
    if (response.body === null) return response;
    const refused = (error: McpAnswerRefusedError): Error => {
      onRefused(requestIdsOf(init?.body), error);
      return error;
    };
    // The SDK reads the body of each GET it makes as an event stream, whatever its type (see eventChecker).
    const eventStream = (init?.method ?? 'GET').toUpperCase() === 'GET' || mediaType(response.headers.get('content-type')) === 'text/event-stream';
    const declared = Number(response.headers.get('content-length') ?? 0);
    let body: ReadableStream<Uint8Array>;
    if (!eventStream && declared > maxBytes) {
      void response.body.cancel().catch(() => undefined);
      // Fails at the first read, so a body the SDK only cancels (the answer to a notification) fails nothing.
      body = new ReadableStream({ pull: (controller) => controller.error(refused(new McpMessageTooLargeError())) }, { highWaterMark: 0 });
    } else {
      const check = eventStream ? eventChecker(maxBytes, maxDepth) : jsonChecker(maxBytes, maxJsonMessages, maxDepth);
      body = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            const refusal = check(chunk);
            if (refusal === undefined) controller.enqueue(chunk);
            else controller.error(refused(REFUSALS[refusal]()));
          },
        }),
      );
    }
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** What is wrong with a JSON body so far, `chunk` included: over `maxBytes` in all, or as `jsonShapeChecker` finds. */
function jsonChecker(maxBytes: number, maxMessages: number, maxDepth: number): (chunk: Uint8Array) => Refusal | undefined {
  let total = 0;
  const shape = jsonShapeChecker(maxMessages, maxDepth);
  return (chunk) => {
    total += chunk.byteLength;
    return total > maxBytes ? 'too-large' : shape(chunk);
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
 * Whether the JSON body so far, `chunk` included, holds more than `maxMessages` messages (the items of an array at its
 * top level, a comma outside any string at depth one starting another; one for anything else) or one nested deeper
 * than `maxDepth`. One pass, nothing kept.
 */
function jsonShapeChecker(maxMessages: number, maxDepth: number): (chunk: Uint8Array) => Refusal | undefined {
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
        // The items of a batch are one level down.
        if (depth > maxDepth + (array ? 1 : 0)) return 'too-deep';
      } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) depth -= 1;
      else if (byte === COMMA && depth === 1 && array) {
        messages += 1;
        if (messages > maxMessages) return 'too-many-messages';
      }
    }
    return undefined;
  };
}

const DATA_FIELD = [0x64, 0x61, 0x74, 0x61, 0x3a]; // "data:"

/**
 * What the SDK drops from the start of an event stream before its first line, in this order: TextDecoderStream a byte
 * order mark, then its parser (eventsource-parser) the three characters of one read as Latin-1, "ï»¿" (which UTF-8
 * writes in six bytes), if they open the text it is given first.
 */
const STREAM_LEADS = [
  [0xef, 0xbb, 0xbf],
  [0xc3, 0xaf, 0xc2, 0xbb, 0xc2, 0xbf],
];

/**
 * What is wrong with the event being read, `chunk` included: over `maxBytes` (the bytes since the last blank line,
 * which ends an event), or its data (the values of its `data:` lines, which the SDK parses as one message) nested
 * deeper than `maxDepth`. Lines end with CRLF, LF or CR, and are read as the SDK's parser reads them: one is data
 * when it starts with `data:`, in that case (a line `data` alone adds an empty line, nothing to count), and the first
 * starts after what the stream may open with (STREAM_LEADS). Found in review: read from the first byte, a stream
 * opening with a byte order mark had its first data line, nested 5,000 deep, taken for another field and read by the
 * SDK. The parser drops "ï»¿" only when the text it is given first holds all three characters, which depends on how
 * the stream was split: those bytes are passed over here always, so a line the parser reads as data is checked
 * however the stream was split.
 */
function eventChecker(maxBytes: number, maxDepth: number): (chunk: Uint8Array) => Refusal | undefined {
  let eventBytes = 0;
  let atLineStart = true;
  let afterCR = false;
  // Bytes of "data:" matched at the start of the line; DATA_FIELD.length in a data line's value; -1 in another line.
  let field = 0;
  // The lead (of STREAM_LEADS) being matched at the stream's start, and the bytes of it matched; past them, the count.
  let lead = 0;
  let leadAt = 0;
  /** Whether `byte` belongs to what the stream starts with (STREAM_LEADS), and is no part of its first line. */
  const inLead = (byte: number): boolean => {
    while (lead < STREAM_LEADS.length) {
      const bytes = STREAM_LEADS[lead]!;
      if (byte === bytes[leadAt]) {
        leadAt += 1;
        if (leadAt === bytes.length) {
          lead += 1;
          leadAt = 0;
        }
        return true;
      }
      // A lead begun and broken is dropped by neither: the line it opens is no field the parser knows. It is read on
      // from here as a line of its own, which at worst checks a line the parser ignores.
      lead = leadAt > 0 ? STREAM_LEADS.length : lead + 1;
      leadAt = 0;
    }
    return false;
  };
  const depth = new JsonDepth(maxDepth);
  return (chunk) => {
    // Where the part of a data line's value in this chunk starts, -1 for none.
    let dataFrom = -1;
    for (let index = 0; index < chunk.length; index += 1) {
      const byte = chunk[index]!;
      if (lead < STREAM_LEADS.length && inLead(byte)) continue;
      if (byte === LF && afterCR) {
        afterCR = false;
        continue;
      }
      if (byte === LF || byte === CR) {
        if (dataFrom !== -1 && !depth.read(chunk, dataFrom, index)) return 'too-deep';
        dataFrom = -1;
        if (atLineStart) {
          eventBytes = 0;
          depth.reset();
        } else {
          eventBytes += 1;
        }
        atLineStart = true;
        afterCR = byte === CR;
        field = 0;
        continue;
      }
      eventBytes += 1;
      atLineStart = false;
      afterCR = false;
      if (eventBytes > maxBytes) return 'too-large';
      if (field === DATA_FIELD.length) {
        if (dataFrom === -1) dataFrom = index;
      } else if (field !== -1) {
        field = byte === DATA_FIELD[field] ? field + 1 : -1;
      }
    }
    if (dataFrom !== -1 && !depth.read(chunk, dataFrom, chunk.length)) return 'too-deep';
    return undefined;
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
