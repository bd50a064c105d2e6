import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { clockDelay, SYSTEM_CLOCK, type McpClock } from './mcp-clock';

/** The least time between the end of an event stream the SDK opens with GET and its next GET, in ms. */
export const MIN_STREAM_REOPEN_DELAY_MS = 1000;
/** Event streams in a row that may end soon after they were opened with nothing in them; the next one is not opened. */
export const MAX_EMPTY_STREAMS_IN_A_ROW = 10;
/** A stream that lasted less than this, in ms, ended soon after it was opened. */
const SHORT_STREAM_MS = 10_000;

export const STREAM_REOPEN_STORM = `the server ended its event stream ${MAX_EMPTY_STREAMS_IN_A_ROW} times in a row, each soon after it was opened, with nothing in it`;

/** The GET that reopens a stream, refused once the server's streams kept ending empty. */
export class StreamReopenStormError extends Error {
  constructor() {
    super(STREAM_REOPEN_STORM);
    this.name = 'StreamReopenStormError';
  }
}

export interface StreamReopenOptions {
  /** Called once the server's streams ended empty MAX_EMPTY_STREAMS_IN_A_ROW times in a row; no GET is made after. */
  onStorm: () => void;
  /** The clock the floor is kept by. Default the system's. */
  clock?: McpClock;
}

/**
 * A fetch for the SDK's Streamable HTTP transport that bounds how it opens event streams again (its GET requests: the
 * server's own stream, and the resumption of an answer's). The SDK reopens a stream that ended after the delay the
 * server's `retry:` field asks for, 0 included, and counts only failed attempts, so a server whose stream ended at once
 * had it reopened at once for ever: found in review, 100 requests a second. Each GET now starts at least
 * MIN_STREAM_REOPEN_DELAY_MS after the last stream ended, and once MAX_EMPTY_STREAMS_IN_A_ROW streams ended within
 * SHORT_STREAM_MS with no `data` or `id` field in them, `onStorm` is called and no GET is made any more. A stream that
 * lasted, or brought an event, starts the count again: a server behind a proxy that ends idle streams, or one that has
 * the client poll (an event id, then the end), is reopened as before, no more often than the floor.
 */
export function streamReopenFetch(baseFetch: FetchLike, { onStorm, clock = SYSTEM_CLOCK }: StreamReopenOptions): FetchLike {
  let lastEnd: number | undefined;
  let emptyInARow = 0;
  let stormed = false;
  const ended = (openedAt: number, content: boolean) => {
    const now = clock.now();
    lastEnd = now;
    emptyInARow = !content && now - openedAt < SHORT_STREAM_MS ? emptyInARow + 1 : 0;
    if (emptyInARow < MAX_EMPTY_STREAMS_IN_A_ROW || stormed) return;
    stormed = true;
    onStorm();
  };
  return async (url, init) => {
    if (init?.method !== 'GET') return baseFetch(url, init);
    if (stormed) throw new StreamReopenStormError();
    if (lastEnd !== undefined) await clockDelay(clock, lastEnd + MIN_STREAM_REOPEN_DELAY_MS - clock.now(), init.signal ?? undefined);
    const response = await baseFetch(url, init);
    if (!response.ok || response.body === null) return response;
    const body = watched(response.body, clock.now(), ended);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** `source`, passed on as it is; `onEnd` is told when it ends or fails (not when its reader cancels it) and whether it held a field. */
function watched(source: ReadableStream<Uint8Array>, openedAt: number, onEnd: (openedAt: number, content: boolean) => void): ReadableStream<Uint8Array> {
  const fields = contentFields();
  let content = false;
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>(
    {
      pull: async (controller) => {
        let read: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;
        try {
          read = await reader.read();
        } catch (error) {
          onEnd(openedAt, content);
          throw error;
        }
        if (read.done) {
          onEnd(openedAt, content);
          controller.close();
          return;
        }
        content ||= fields(read.value);
        controller.enqueue(read.value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

const LF = 0x0a;
const COLON = 0x3a;
const NAMES = ['data', 'id'].map((name) => [...name].map((char) => char.charCodeAt(0)));
const LONGEST_NAME = Math.max(...NAMES.map((name) => name.length));

/**
 * Reads an event stream (LF line ends, as `lfLineEndsFetch` makes them) chunk by chunk and says whether a line so far
 * was a `data` or `id` field; a comment, a `retry` and any other field is nothing.
 */
function contentFields(): (chunk: Uint8Array) => boolean {
  const name: number[] = [];
  let inValue = false;
  let found = false;
  const isContent = () => NAMES.some((known) => known.length === name.length && known.every((byte, index) => name[index] === byte));
  return (chunk) => {
    for (let index = 0; index < chunk.length && !found; index += 1) {
      const byte = chunk[index]!;
      if (byte === LF) {
        found = !inValue && name.length > 0 && isContent();
        name.length = 0;
        inValue = false;
      } else if (inValue) continue;
      else if (byte === COLON) {
        found = isContent();
        inValue = true;
      } else if (name.length <= LONGEST_NAME) name.push(byte);
    }
    return found;
  };
}
