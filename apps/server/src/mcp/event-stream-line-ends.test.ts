import { describe, expect, test } from 'vitest';
import { serving } from './chunked-http-server';
import { lfLineEnds, lfLineEndsFetch } from './event-stream-line-ends';

const encoder = new TextEncoder();

/** `chunks` through the rewriting, as one text. */
async function rewritten(chunks: readonly (string | Uint8Array)[]): Promise<string> {
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
  return new Response(source.pipeThrough(lfLineEnds())).text();
}

/** `text` split at each of `cuts`. */
function splitAt(text: string, cuts: readonly number[]): string[] {
  const pieces: string[] = [];
  let from = 0;
  for (const cut of cuts) {
    pieces.push(text.slice(from, cut));
    from = cut;
  }
  pieces.push(text.slice(from));
  return pieces;
}

describe('lfLineEnds', () => {
  const cases: [string, string, string][] = [
    ['lone CRs', 'data: a\rdata: b\r\rdata: c\r\r', 'data: a\ndata: b\n\ndata: c\n\n'],
    ['CRLFs', 'data: a\r\ndata: b\r\n\r\n', 'data: a\ndata: b\n\n'],
    ['LFs', 'data: a\ndata: b\n\n', 'data: a\ndata: b\n\n'],
    ['mixed line ends', ': x\r\n\rdata: é\n\r\r\ndata: 日本\r\n\n\r', ': x\n\ndata: é\n\n\ndata: 日本\n\n\n'],
    ['no line end', 'data: a', 'data: a'],
    ['only line ends', '\r\r\n\n\r\n\r', '\n\n\n\n\n'],
  ];

  test.each(cases)('rewrites %s to LF, in one chunk and cut at every position', async (_, input, expected) => {
    await expect(rewritten([input])).resolves.toBe(expected);
    for (let cut = 0; cut <= input.length; cut += 1) {
      await expect(rewritten(splitAt(input, [cut])), `cut at ${cut}`).resolves.toBe(expected);
    }
  });

  test.each(cases)('rewrites %s to LF cut at every pair of positions, and a byte at a time', async (_, input, expected) => {
    for (let first = 0; first <= input.length; first += 1) {
      for (let second = first; second <= input.length; second += 1) {
        await expect(rewritten(splitAt(input, [first, second])), `cut at ${first} and ${second}`).resolves.toBe(expected);
      }
    }
    const bytes = encoder.encode(input);
    await expect(rewritten(Array.from(bytes, (byte) => Uint8Array.of(byte)))).resolves.toBe(expected);
  });

  test('reads a CR at the end of one chunk and an LF at the start of the next as one line end, across empty chunks too', async () => {
    await expect(rewritten(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).resolves.toBe('data: a\ndata: b\n\n');
    await expect(rewritten(['data: a\r', '', '\n', '\n'])).resolves.toBe('data: a\n\n');
    await expect(rewritten(['data: a\r', '\r', '\n'])).resolves.toBe('data: a\n\n');
    // An LF after a chunk that ended otherwise is a line end of its own.
    await expect(rewritten(['data: a\r\n', '\n'])).resolves.toBe('data: a\n\n');
  });

  test('leaves no CR in a long stream of lone CRs, and keeps its size', async () => {
    const chunk = 'data: x\r'.repeat(16 * 1024);
    const text = await rewritten(Array.from({ length: 8 }, () => chunk));
    expect(text).not.toContain('\r');
    expect(text).toBe('data: x\n'.repeat(8 * 16 * 1024));
  });
});

describe('lfLineEndsFetch', () => {
  test('rewrites the line ends of an event stream, keeping its status and headers', async () => {
    await using server = await serving({ 'content-type': 'Text/Event-Stream; charset=utf-8', 'x-kept': 'yes' }, ['data: a\r', '\ndata: b\r\r']);
    const response = await lfLineEndsFetch(fetch)(server.url, { method: 'POST' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-kept')).toBe('yes');
    await expect(response.text()).resolves.toBe('data: a\ndata: b\n\n');
  });

  test('leaves any other body as it is', async () => {
    await using server = await serving({ 'content-type': 'application/json' }, ['{"a":\r', '\n"b\\r"}\r']);
    const response = await lfLineEndsFetch(fetch)(server.url, { method: 'POST' });
    await expect(response.text()).resolves.toBe('{"a":\r\n"b\\r"}\r');
  });
});
