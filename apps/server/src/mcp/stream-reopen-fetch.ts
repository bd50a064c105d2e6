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
 * Airlock's waits for its answer (`awaitingAnswer`) the floor is the delay of a GET that resumes an answer's stream: one
 * whose Last-Event-ID is the last id of the event stream a request was answered on, or of such a GET's. The server's
 * own stream keeps its delay then: given the floor too, a server that left a call of Airlock's unanswered had its
 * own stream reopened every second as well, for as long as the call waited (up to 10 minutes, found in review).
 */
export function streamReopenFetch(baseFetch: FetchLike, { onStorm, awaitingAnswer = () => false, clock = SYSTEM_CLOCK }: StreamReopenOptions): FetchLike {
  let lastEnd: number | undefined;
  /** Streams in a row that ended soon with an event (or a field) in them, as many as make the delay its most. */
  let thinInARow = 0;
  let emptyInARow = 0;
  let stormed = false;
  /** The last event id of each stream of an answer (a POST's, or a GET's resuming one), the latest MAX_ANSWER_STREAM_IDS. */
  const answerIds = new Set<string>();
  const answerStreamEnded = (lastId: string | undefined) => {
    if (lastId === undefined) return;
    answerIds.delete(lastId);
    answerIds.add(lastId);
    if (answerIds.size > MAX_ANSWER_STREAM_IDS) answerIds.delete(answerIds.values().next().value!);
  };
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
    if (init?.method !== 'GET') {
      const response = await baseFetch(url, init);
      if (init?.method !== 'POST' || !isEventStream(response)) return response;
      const body = watched(response.body!, clock.now(), (_, { lastId }) => answerStreamEnded(lastId));
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    if (stormed) throw new StreamReopenStormError();
    const resumed = new Headers(init.headers).get('last-event-id');
    const resumesAnswer = resumed !== null && answerIds.has(resumed);
    const doublings = awaitingAnswer() && resumesAnswer ? 0 : Math.max(0, thinInARow - 1);
    const wait = Math.min(MIN_STREAM_REOPEN_DELAY_MS * 2 ** doublings, MAX_STREAM_REOPEN_DELAY_MS);
    if (lastEnd !== undefined) await clockDelay(clock, lastEnd + wait - clock.now(), init.signal ?? undefined);
    const response = await baseFetch(url, init);
    if (!response.ok || response.body === null) return response;
    const body = watched(response.body, clock.now(), (openedAt, content) => {
      // An id the server's own stream ended on resumes no answer, whatever stream it also ended.
      if (resumesAnswer) answerStreamEnded(content.lastId);
      else if (content.lastId !== undefined) answerIds.delete(content.lastId);
      ended(openedAt, content);
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** What an event stream held: whether a line of it was a `data` or `id` field, and the value of its last `id` (undefined for none, or one over MAX_ID_BYTES). */
interface StreamContent {
  fields: boolean;
  lastId: string | undefined;
}

/** Answer streams whose last event id is kept, to know a GET that resumes one. */
const MAX_ANSWER_STREAM_IDS = 64;
/** The longest event id kept, in bytes. */
const MAX_ID_BYTES = 256;

function isEventStream(response: Response): boolean {
  return response.body !== null && (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
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
const SPACE = 0x20;
const DECODER = new TextDecoder();
const NAMES = ['data', 'id'].map((name) => [...name].map((char) => char.charCodeAt(0)));
const ID = NAMES[1]!;
const LONGEST_NAME = Math.max(...NAMES.map((name) => name.length));

/**
 * Reads an event stream (LF line ends, as `lfLineEndsFetch` makes them) chunk by chunk: whether a line so far was a
 * `data` or `id` field, and the last `id` field's value. A comment, a `retry` and any other field is nothing.
 */
function contentOf(): { held: StreamContent; read(chunk: Uint8Array): void } {
  const held: StreamContent = { fields: false, lastId: undefined };
  const name: number[] = [];
  let inValue = false;
  /** The bytes of the `id` field being read, while it is one and within MAX_ID_BYTES (one more tells it is over). */
  let id: number[] | undefined;
  const is = (known: number[]) => known.length === name.length && known.every((byte, index) => name[index] === byte);
  const isContent = () => NAMES.some(is);
  const idEnded = () => {
    if (id === undefined) return;
    // The value starts after the colon and one space, if there is one.
    const value = id[0] === SPACE ? id.slice(1) : id;
    held.lastId = id.length > MAX_ID_BYTES ? undefined : DECODER.decode(Uint8Array.from(value));
    id = undefined;
  };
  return {
    held,
    read: (chunk) => {
      for (let index = 0; index < chunk.length; index += 1) {
        const byte = chunk[index]!;
        if (byte === LF) {
          if (!inValue && isContent()) {
            held.fields = true;
            if (is(ID)) held.lastId = '';
          }
          idEnded();
          name.length = 0;
          inValue = false;
        } else if (inValue) {
          if (id !== undefined && id.length <= MAX_ID_BYTES) id.push(byte);
        } else if (byte === COLON) {
          if (isContent()) held.fields = true;
          if (is(ID)) id = [];
          inValue = true;
        } else if (name.length <= LONGEST_NAME) name.push(byte);
      }
    },
  };
}
