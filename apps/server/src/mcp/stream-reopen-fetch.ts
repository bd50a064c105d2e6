import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { clockDelay, SYSTEM_CLOCK, type McpClock } from './mcp-clock';

/** The least time between the end of an event stream the SDK opens with GET and its next GET, in ms. */
export const MIN_STREAM_REOPEN_DELAY_MS = 1000;
/** The most that time grows to while the server's streams end soon, in ms. */
export const MAX_STREAM_REOPEN_DELAY_MS = 30_000;
/** Event streams in a row that may end soon after they were opened with nothing in them; the next one is not opened. */
export const MAX_EMPTY_STREAMS_IN_A_ROW = 10;
/** Doublings of the floor that reach MAX_STREAM_REOPEN_DELAY_MS. */
const MOST_DOUBLINGS = Math.ceil(Math.log2(MAX_STREAM_REOPEN_DELAY_MS / MIN_STREAM_REOPEN_DELAY_MS));
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
  /**
   * Whether a request of Airlock's waits for its answer, which a server may have the client poll for: the delay is the
   * floor then, however it grew. Default never.
   */
  awaitingAnswer?: () => boolean;
  /** The clock the delays are kept by. Default the system's. */
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
 * the client poll (an event id, then the end), is reopened as before. While streams end soon with events in them (an
 * idle server that has the client poll, or one that sends events a stream for ever), the delay doubles after each
 * from the second, up to MAX_STREAM_REOPEN_DELAY_MS, however many events each brought: a stream that brought two
 * brought the delay back to the floor, so a server putting two in each had its stream reopened every second for as
 * long as it ran (found in review). Only a stream that lasted brings it back to the floor, and while a request of
 * Airlock's waits for its answer (`awaitingAnswer`) the floor is the delay.
 */
export function streamReopenFetch(baseFetch: FetchLike, { onStorm, awaitingAnswer = () => false, clock = SYSTEM_CLOCK }: StreamReopenOptions): FetchLike {
  let lastEnd: number | undefined;
  /** Streams in a row that ended soon with an event (or a field) in them, as many as make the delay its most. */
  let thinInARow = 0;
  let emptyInARow = 0;
  let stormed = false;
  const ended = (openedAt: number, { fields }: StreamContent) => {
    const now = clock.now();
    lastEnd = now;
    const short = now - openedAt < SHORT_STREAM_MS;
    if (!short) thinInARow = 0;
    else if (fields) thinInARow = Math.min(thinInARow + 1, MOST_DOUBLINGS + 1);
    emptyInARow = short && !fields ? emptyInARow + 1 : 0;
    if (emptyInARow < MAX_EMPTY_STREAMS_IN_A_ROW || stormed) return;
    stormed = true;
    onStorm();
  };
  return async (url, init) => {
    if (init?.method !== 'GET') return baseFetch(url, init);
    if (stormed) throw new StreamReopenStormError();
    const doublings = awaitingAnswer() ? 0 : Math.max(0, thinInARow - 1);
    const wait = Math.min(MIN_STREAM_REOPEN_DELAY_MS * 2 ** doublings, MAX_STREAM_REOPEN_DELAY_MS);
    if (lastEnd !== undefined) await clockDelay(clock, lastEnd + wait - clock.now(), init.signal ?? undefined);
    const response = await baseFetch(url, init);
    if (!response.ok || response.body === null) return response;
    const body = watched(response.body, clock.now(), ended);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** What an event stream held: whether a line of it was a `data` or `id` field. */
interface StreamContent {
  fields: boolean;
}

/** `source`, passed on as it is; `onEnd` is told when it ends or fails (not when its reader cancels it) and what it held. */
function watched(source: ReadableStream<Uint8Array>, openedAt: number, onEnd: (openedAt: number, content: StreamContent) => void): ReadableStream<Uint8Array> {
  const content = contentOf();
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>(
    {
      pull: async (controller) => {
        let read: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;
        try {
          read = await reader.read();
        } catch (error) {
          onEnd(openedAt, content.held);
          throw error;
        }
        if (read.done) {
          onEnd(openedAt, content.held);
          controller.close();
          return;
        }
        content.read(read.value);
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
 * Reads an event stream (LF line ends, as `lfLineEndsFetch` makes them) chunk by chunk: whether a line so far was a
 * `data` or `id` field. A comment, a `retry` and any other field is nothing.
 */
function contentOf(): { held: StreamContent; read(chunk: Uint8Array): void } {
  const held: StreamContent = { fields: false };
  const name: number[] = [];
  let inValue = false;
  const isContent = () => NAMES.some((known) => known.length === name.length && known.every((byte, index) => name[index] === byte));
  return {
    held,
    read: (chunk) => {
      for (let index = 0; index < chunk.length && !held.fields; index += 1) {
        const byte = chunk[index]!;
        if (byte === LF) {
          if (!inValue && isContent()) held.fields = true;
          name.length = 0;
          inValue = false;
        } else if (inValue) continue;
        else if (byte === COLON) {
          if (isContent()) held.fields = true;
          inValue = true;
        } else if (name.length <= LONGEST_NAME) name.push(byte);
      }
    },
  };
}
