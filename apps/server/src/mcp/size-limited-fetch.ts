import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

/** The most one message from an MCP server may hold: what the SDK's stdio transport allows a line. */
export const MAX_MCP_MESSAGE_BYTES = 10 * 1024 * 1024;

export const MCP_MESSAGE_TOO_LARGE = `the MCP server's answer was over ${MAX_MCP_MESSAGE_BYTES / (1024 * 1024)} MiB`;

export class McpMessageTooLargeError extends Error {
  constructor() {
    super(MCP_MESSAGE_TOO_LARGE);
    this.name = 'McpMessageTooLargeError';
  }
}

export interface SizeLimitedFetchOptions {
  /** Called once per response that went over the limit, with the ids of the requests it was to answer (none for the server's own stream). */
  onTooLarge: (requestIds: RequestId[]) => void;
  /** Default: the global fetch. */
  fetch?: FetchLike;
  /** Default: MAX_MCP_MESSAGE_BYTES. */
  maxBytes?: number;
}

/**
 * A fetch for the SDK's Streamable HTTP transport whose response bodies fail once they go over the limit: one event of
 * an event stream, or any other body as a whole. The SDK reads them whole (`response.json()`, `response.text()`, its
 * event parser) however large they are: one 500 MB event line took the server from 110 to 690 MB.
 */
export function sizeLimitedFetch(options: SizeLimitedFetchOptions): FetchLike {
  const { onTooLarge, fetch: baseFetch = fetch, maxBytes = MAX_MCP_MESSAGE_BYTES } = options;
  return async (url, init) => {
    const response = await baseFetch(url, init);
    if (response.body === null) return response;
    const tooLarge = (): Error => {
      onTooLarge(requestIdsOf(init?.body));
      return new McpMessageTooLargeError();
    };
    const eventStream = mediaType(response.headers.get('content-type')) === 'text/event-stream';
    const declared = Number(response.headers.get('content-length') ?? 0);
    let body: ReadableStream<Uint8Array>;
    if (!eventStream && declared > maxBytes) {
      void response.body.cancel().catch(() => undefined);
      // Fails at the first read, so a body the SDK only cancels (the answer to a notification) fails nothing.
      body = new ReadableStream({ pull: (controller) => controller.error(tooLarge()) }, { highWaterMark: 0 });
    } else {
      const fits = eventStream ? eventSizeCounter(maxBytes) : totalSizeCounter(maxBytes);
      body = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            if (fits(chunk)) controller.enqueue(chunk);
            else controller.error(tooLarge());
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
