import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { describe, expect, test, vi } from 'vitest';
import { manualClock } from './fixtures/manual-clock';
import { MAX_EMPTY_STREAMS_IN_A_ROW, MAX_STREAM_REOPEN_DELAY_MS, MIN_STREAM_REOPEN_DELAY_MS, streamReopenFetch, StreamReopenStormError } from './stream-reopen-fetch';

const PRIMING = 'id: e1\nretry: 0\ndata: \n\n';
/** What each POST is answered with: a stream that ends after an event id, as a server that has the client poll sends it. */
const ANSWER_STREAM = 'id: call-0\nretry: 0\ndata: \n\n';

/**
 * A streamReopenFetch over a server answering each GET with the next of `bodies` (the last again once they run out),
 * on a clock the test moves, and what opens one stream and reads it to its end. The body `held` stays open until the
 * test ends it (`held.end`).
 */
function reopening(bodies: string[], options: { awaitingAnswer?: () => boolean } = {}) {
  const clock = manualClock();
  const storms: number[] = [];
  const opened: number[] = [];
  const held = { controller: undefined as ReadableStreamDefaultController<Uint8Array> | undefined };
  const base: FetchLike = (_url, init) => {
    if (init?.method !== 'GET') return Promise.resolve(new Response(ANSWER_STREAM, { headers: { 'content-type': 'text/event-stream' } }));
    opened.push(clock.now());
    const text = bodies[Math.min(opened.length, bodies.length) - 1]!;
    const body = text === 'held' ? new ReadableStream<Uint8Array>({ start: (controller) => void (held.controller = controller) }) : text;
    return Promise.resolve(new Response(body, { headers: { 'content-type': 'text/event-stream' } }));
  };
  const fetch = streamReopenFetch(base, { onStorm: () => storms.push(clock.now()), clock, ...options });
  /** Opens a stream as the SDK does (GET), moving the clock on to when the fetch lets it open, and reads it whole; says how long it waited and read. */
  const open = async (lastEventId?: string): Promise<number> => {
    const before = clock.now();
    const count = opened.length;
    const response = fetch('http://127.0.0.1/mcp', { method: 'GET', headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId } });
    await vi.waitFor(() => expect(opened.length > count || clock.pending().length > 0).toBe(true));
    if (opened.length === count) {
      const [due] = clock.pending();
      clock.advance(due! - clock.now() - 1);
      expect(opened).toHaveLength(count);
      clock.advance(1);
    }
    await (await response).text();
    return clock.now() - before;
  };
  return {
    clock,
    fetch,
    open,
    storms,
    held: {
      opened: () => held.controller !== undefined,
      end: (text: string) => {
        held.controller!.enqueue(new TextEncoder().encode(text));
        held.controller!.close();
      },
    },
  };
}

describe('streamReopenFetch', () => {
  test('reopens a stream that ends soon with one event in it the floor after the first, then twice as late each time, up to the most', async () => {
    const { open } = reopening([PRIMING]);
    const waits: number[] = [];
    for (let count = 0; count < 9; count++) waits.push(await open());
    expect(waits).toStrictEqual([0, MIN_STREAM_REOPEN_DELAY_MS, 2_000, 4_000, 8_000, 16_000, MAX_STREAM_REOPEN_DELAY_MS, MAX_STREAM_REOPEN_DELAY_MS, MAX_STREAM_REOPEN_DELAY_MS]);
  });

  test('grows the delay after a short stream however many events it brought', async () => {
    const { open } = reopening([`${PRIMING}id: e2\ndata: {"jsonrpc":"2.0","method":"notifications/message"}\n\n`]);
    const waits: number[] = [];
    for (let count = 0; count < 5; count++) waits.push(await open());
    expect(waits).toStrictEqual([0, MIN_STREAM_REOPEN_DELAY_MS, 2_000, 4_000, 8_000]);
  });

  test('brings the delay back to the floor after a stream that lasted 10 s, one event in it or none', async () => {
    const { open, clock, held } = reopening([PRIMING, PRIMING, PRIMING, 'held', PRIMING]);
    expect([await open(), await open(), await open()]).toStrictEqual([0, MIN_STREAM_REOPEN_DELAY_MS, 2_000]);
    const opening = open();
    await vi.waitFor(() => expect(held.opened()).toBe(true));
    clock.advance(10_000);
    held.end(PRIMING);
    expect(await opening).toBe(14_000);
    expect(await open()).toBe(MIN_STREAM_REOPEN_DELAY_MS);
  });

  test('waits only the floor to resume an answer’s stream while a request waits for it, which the server may have polled for, however the delay grew', async () => {
    const waiting = { now: false };
    const { open, fetch } = reopening(['id: idle\nretry: 0\ndata: \n\n', 'id: idle\nretry: 0\ndata: \n\n', 'id: idle\nretry: 0\ndata: \n\n', 'id: idle\nretry: 0\ndata: \n\n', 'id: call-1\nretry: 0\ndata: \n\n', 'id: call-2\nretry: 0\ndata: \n\n'], { awaitingAnswer: () => waiting.now });
    expect([await open(), await open('idle'), await open('idle'), await open('idle')]).toStrictEqual([0, MIN_STREAM_REOPEN_DELAY_MS, 2_000, 4_000]);
    waiting.now = true;
    // The request's answer comes as an event stream that ends after its id: each GET resuming it, or the one before, waits the floor.
    await (await fetch('http://127.0.0.1/mcp', { method: 'POST', body: '{}' })).text();
    expect([await open('call-0'), await open('call-1')]).toStrictEqual([MIN_STREAM_REOPEN_DELAY_MS, MIN_STREAM_REOPEN_DELAY_MS]);
    waiting.now = false;
    // Grown meanwhile, the polls having each held one event.
    expect(await open('call-2')).toBe(MAX_STREAM_REOPEN_DELAY_MS);
  });

  // Found in review: given the floor while a request waited, the server's own stream was reopened every second too, for
  // as long as a call it left unanswered waited.
  test('keeps the delay of the server’s own stream while a request waits, even one ending on an id an answer’s stream ended on', async () => {
    const waiting = { now: true };
    const { open, fetch } = reopening(['id: idle\nretry: 0\ndata: \n\n', 'id: idle\nretry: 0\ndata: \n\n', 'id: call-0\nretry: 0\ndata: \n\n'], { awaitingAnswer: () => waiting.now });
    await (await fetch('http://127.0.0.1/mcp', { method: 'POST', body: '{}' })).text();
    expect([await open(), await open('idle'), await open('idle'), await open('idle')]).toStrictEqual([0, MIN_STREAM_REOPEN_DELAY_MS, 2_000, 4_000]);
    // The server's own stream ended on the answer stream's id: resuming from it is no poll for an answer.
    expect(await open('call-0')).toBe(8_000);
    expect(await open('call-0')).toBe(16_000);
  });

  test('leaves the delay as it was for a stream with nothing in it, each of which counts toward the storm, and opens none past it', async () => {
    const { open, fetch, storms } = reopening([PRIMING, PRIMING, ': keep-alive\nretry: 0\n\n']);
    expect([await open(), await open()]).toStrictEqual([0, MIN_STREAM_REOPEN_DELAY_MS]);
    const waits: number[] = [];
    for (let count = 0; count < MAX_EMPTY_STREAMS_IN_A_ROW; count++) waits.push(await open());
    expect(waits).toStrictEqual(Array.from({ length: MAX_EMPTY_STREAMS_IN_A_ROW }, () => 2_000));
    expect(storms).toHaveLength(1);
    await expect(fetch('http://127.0.0.1/mcp', { method: 'GET' })).rejects.toBeInstanceOf(StreamReopenStormError);
  });
});
