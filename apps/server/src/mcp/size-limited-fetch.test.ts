import type { OutgoingHttpHeaders } from 'node:http';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, test } from 'vitest';
import { serving } from './chunked-http-server';
import { MCP_ANSWER_TOO_MANY_MESSAGES, MCP_MESSAGE_TOO_DEEP, MCP_MESSAGE_TOO_LARGE, sizeLimitedFetch } from './size-limited-fetch';

const SSE = { 'content-type': 'text/event-stream' };
const JSON_BODY = { 'content-type': 'application/json' };

/** Reads `url` through a fetch limited to `maxBytes`, as the SDK would: the body as text. */
async function read(url: string, maxBytes: number, body?: string) {
  const tooLarge: RequestId[][] = [];
  const limited = sizeLimitedFetch({ maxBytes, onRefused: (ids) => tooLarge.push(ids) });
  const response = await limited(url, { method: 'POST', ...(body === undefined ? {} : { body }) });
  const text = await response.text().then(
    (value) => ({ text: value.length }),
    (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
  );
  return { ...text, tooLarge };
}

describe('sizeLimitedFetch', () => {
  test('lets an event stream of many events each within the limit through, however long', async () => {
    const event = `data: ${'x'.repeat(90)}\n\n`;
    await using server = await serving(SSE, Array.from({ length: 50 }, () => event.repeat(10)));
    await expect(read(server.url, 100)).resolves.toStrictEqual({ text: event.length * 500, tooLarge: [] });
  });

  test('counts an event from the last blank line, whichever line ends the stream uses', async () => {
    const events = [`data: ${'a'.repeat(80)}\r\n\r\n`, `data: ${'b'.repeat(80)}\r\r`, `data: ${'c'.repeat(40)}\n`, `data: ${'d'.repeat(40)}\n\n`];
    // The last event, of two lines, is 94 bytes: within 100, though split over chunks.
    await using server = await serving(SSE, [events.join('').slice(0, 130), events.join('').slice(130)]);
    await expect(read(server.url, 100)).resolves.toStrictEqual({ text: events.join('').length, tooLarge: [] });
  });

  test('fails an event over the limit, split over chunks and without a line end, naming the request it answered', async () => {
    await using server = await serving(SSE, ['data: {"ok":1}\n\n', `data: ${'x'.repeat(60)}`, 'x'.repeat(60)]);
    const request = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'big' } });
    await expect(read(server.url, 100, request)).resolves.toStrictEqual({ error: MCP_MESSAGE_TOO_LARGE, tooLarge: [[7]] });
  });

  test('fails any other body over the limit as a whole, and one whose declared length is over it before reading it', async () => {
    await using chunked = await serving(JSON_BODY, ['x'.repeat(60), 'x'.repeat(60)]);
    await expect(read(chunked.url, 100)).resolves.toStrictEqual({ error: MCP_MESSAGE_TOO_LARGE, tooLarge: [[]] });
    await using small = await serving(JSON_BODY, ['x'.repeat(100)]);
    await expect(read(small.url, 100)).resolves.toStrictEqual({ text: 100, tooLarge: [] });

    // The server declares 1,000 bytes and sends 10: the answer fails without waiting for the rest.
    await using declared = await serving({ ...JSON_BODY, 'content-length': '1000' }, ['x'.repeat(10)]);
    const request = JSON.stringify([{ jsonrpc: '2.0', id: 'a', method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }]);
    await expect(read(declared.url, 100, request)).resolves.toStrictEqual({ error: MCP_MESSAGE_TOO_LARGE, tooLarge: [['a']] });
  });

  test('counts the messages of a JSON array at its top level only, whatever its strings hold, split over chunks', async () => {
    const message = (n: number) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: [n, `,]}[{"\\`, { a: 1, b: 2 }] } });
    const batch = (count: number) => `[${Array.from({ length: count }, (_, n) => message(n)).join(',')}]`;
    const request = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'chatty' } });
    const readCounted = async (body: string, maxJsonMessages: number) => {
      await using server = await serving(JSON_BODY, [body.slice(0, 101), body.slice(101)]);
      const refused: string[] = [];
      const limited = sizeLimitedFetch({ maxJsonMessages, onRefused: (ids, error) => refused.push(`${ids.join()}: ${error.message}`) });
      const response = await limited(server.url, { method: 'POST', body: request });
      const text = await response.text().then(
        (value) => ({ text: value.length }),
        (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
      );
      return { ...text, refused };
    };
    await expect(readCounted(batch(5), 5)).resolves.toStrictEqual({ text: batch(5).length, refused: [] });
    await expect(readCounted(batch(6), 5)).resolves.toStrictEqual({ error: MCP_ANSWER_TOO_MANY_MESSAGES, refused: [`3: ${MCP_ANSWER_TOO_MANY_MESSAGES}`] });
    // One message, an object with many names: one.
    await expect(readCounted(message(1), 1)).resolves.toStrictEqual({ text: message(1).length, refused: [] });
  });

  // The config refuses such a URL; one given otherwise had fetch's error quote it, password and all, in the log and the status.
  test('refuses a URL holding a user name or password before fetching, without quoting it', async () => {
    let requests = 0;
    const limited = sizeLimitedFetch({ onRefused: () => undefined, fetch: () => Promise.resolve(new Response(String(++requests))) });
    const refused = (url: string | URL) => limited(url, { method: 'POST', body: '{}' }).then(() => 'fetched', (error: unknown) => String(error));
    const message = 'Error: the server\'s URL holds a user name or password, which fetch refuses: give them in an "Authorization" header';
    await expect(refused('http://alice:TOPSECRET@127.0.0.1:9/mcp')).resolves.toBe(message);
    await expect(refused(new URL('https://:TOPSECRET@mcp.example.test/'))).resolves.toBe(message);
    expect(requests).toBe(0);
    await expect(refused('https://mcp.example.test/users/@alice:x/mcp')).resolves.toBe('fetched');
  });

  test('fails a JSON answer holding a message nested deeper than the bound, in a batch or not, and lets one at the bound through', async () => {
    // The message is one level, its result another.
    const message = (levels: number) => `{"jsonrpc":"2.0","id":4,"result":{"a":${'['.repeat(levels - 2)}"[{["${']'.repeat(levels - 2)}}}`;
    const read = (body: string) => readRefusing(JSON_BODY, [body.slice(0, 150), body.slice(150)], 8, 4);
    await expect(read(message(8))).resolves.toStrictEqual({ text: message(8).length, refused: [] });
    await expect(read(message(9))).resolves.toStrictEqual({ error: MCP_MESSAGE_TOO_DEEP, refused: [`4: ${MCP_MESSAGE_TOO_DEEP}`] });
    await expect(read(`[{"jsonrpc":"2.0","method":"m"},${message(8)}]`)).resolves.toStrictEqual({ text: message(8).length + 33, refused: [] });
    await expect(read(`[{"jsonrpc":"2.0","method":"m"},${message(9)}]`)).resolves.toStrictEqual({ error: MCP_MESSAGE_TOO_DEEP, refused: [`4: ${MCP_MESSAGE_TOO_DEEP}`] });
  });

  test('fails an event whose data nests deeper than the bound, counting its data lines only, each event on its own', async () => {
    // Four levels each, in a string and in other fields what would be more, and line ends of every kind.
    const fine = ['event: [[[[[[\nid: {{{{{\ndata: [[{"a":\ndata: ["[[[[[\\"[["]}]]\n\n', ': [[[[[\r\ndata:[[[[]]]]\r\n\r\n', 'data: {"a":[[[]]]}\r\r'];
    const stream = fine.join('');
    for (const cut of [1, 20, 40, 60, 80]) {
      await expect(readRefusing(SSE, [stream.slice(0, cut), stream.slice(cut)], 4, 5)).resolves.toStrictEqual({ text: stream.length, refused: [] });
    }
    // Five levels over two data lines and two chunks: the first event went through before it.
    await expect(readRefusing(SSE, [`${fine[0]}data: [[[`, '\ndata: [[]]]]]\n\n'], 4, 5)).resolves.toStrictEqual({ error: MCP_MESSAGE_TOO_DEEP, refused: [`5: ${MCP_MESSAGE_TOO_DEEP}`] });
    await expect(readRefusing(SSE, ['data:[[[[[]]]]]\r\n'], 4, 5)).resolves.toStrictEqual({ error: MCP_MESSAGE_TOO_DEEP, refused: [`5: ${MCP_MESSAGE_TOO_DEEP}`] });
  });

  // Found in review: the SDK reads an event stream through TextDecoderStream, which drops a byte order mark at its
  // start, and its parser drops one read as Latin-1 ("ï»¿") at the start of what it is given first; the check took
  // the line after either for no field, and let 5,000 levels through.
  test('reads the first line of an event stream as the SDK does, after a byte order mark, one read as Latin-1, or both, split anywhere', async () => {
    const prefixes = [BOM, BOM_AS_LATIN_1, [...BOM, ...BOM_AS_LATIN_1]];
    for (const prefix of prefixes) {
      for (const levels of [4, 5]) {
        const stream = [...prefix, ...utf8(`data:${'['.repeat(levels)}${']'.repeat(levels)}\n\n`)];
        const expected = levels === 4 ? { text: stream.length } : { error: MCP_MESSAGE_TOO_DEEP };
        for (let cut = 0; cut <= prefix.length + 5; cut++) {
          const read = await readBytes('text/event-stream', 'POST', [stream.slice(0, cut), stream.slice(cut)], 4);
          expect(read, `${prefix.join(' ')} cut at ${cut}`).toStrictEqual(expected);
        }
      }
    }
  });

  // The SDK reads the body of each GET it makes (the server's own stream, a stream resumed) as an event stream,
  // whatever type the server says it is: read as JSON, a quote in a comment hid the data lines after it.
  test('reads the body of a GET as an event stream whatever its type, and of a POST by its type', async () => {
    const stream = utf8(': "\n\ndata: [[[[[]]]]]\n\n');
    for (const type of ['application/json', 'text/plain', undefined]) {
      await expect(readBytes(type, 'GET', [stream], 4)).resolves.toStrictEqual({ error: MCP_MESSAGE_TOO_DEEP });
    }
    await expect(readBytes('application/json', 'POST', [stream], 4)).resolves.toStrictEqual({ text: stream.length });
  });

  // Events made of the field lines the SDK's parser reads and of those it does not (another field's name, `data`
  // spelt otherwise, a byte order mark past the start), with every line end, split anywhere, read by the SDK's own
  // transport: no message it is handed nests deeper than the bound, and those within it are handed over.
  test('hands the SDK no message nested deeper than the bound, however its event stream is written and split', async () => {
    const random = seeded(20_261_206);
    let refusals = 0;
    const deepDelivered: string[] = [];
    let fineDelivered = 0;
    for (let round = 0; round < 400; round++) {
      const bytes = randomEventStream(random);
      const chunks: number[][] = [];
      for (let at = 0; at < bytes.length; ) {
        const size = 1 + Math.floor(random() * Math.min(bytes.length, 24));
        chunks.push(bytes.slice(at, at + size));
        at += size;
      }
      const { messages, refused } = await readThroughSdk(chunks, 4);
      refusals += refused ? 1 : 0;
      for (const message of messages) {
        if (depthOf(message) > 4) deepDelivered.push(Buffer.from(bytes).toString('latin1'));
        else if ('method' in message) fineDelivered += 1;
      }
    }
    expect(deepDelivered).toStrictEqual([]);
    expect(refusals).toBeGreaterThan(50);
    expect(fineDelivered).toBeGreaterThan(50);
  });
});

const BOM = [0xef, 0xbb, 0xbf];
const BOM_AS_LATIN_1 = [0xc3, 0xaf, 0xc2, 0xbb, 0xc2, 0xbf];

function utf8(text: string): number[] {
  return [...Buffer.from(text, 'utf8')];
}

/** A fetch answering each request with a body of `chunks`, each its own read, and `contentType`. */
function bytesFetch(contentType: string | undefined, chunks: readonly (readonly number[])[]): FetchLike {
  return () => {
    const pending = chunks.map((chunk) => new Uint8Array(chunk));
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = pending.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(next);
      },
    });
    return Promise.resolve(new Response(body, { headers: contentType === undefined ? {} : { 'content-type': contentType } }));
  };
}

/** Reads `chunks` as the body of a `method` request through a fetch limited to `maxDepth`: its length in bytes, or its error. */
async function readBytes(contentType: string | undefined, method: string, chunks: readonly (readonly number[])[], maxDepth: number) {
  const limited = sizeLimitedFetch({ maxDepth, onRefused: () => undefined, fetch: bytesFetch(contentType, chunks) });
  const response = await limited('http://127.0.0.1:9/', { method });
  return response.arrayBuffer().then(
    (value) => ({ text: value.byteLength }),
    (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
  );
}

/**
 * Posts a request through the SDK's Streamable HTTP transport, answered with the event stream `chunks` and then an
 * answer to it: the messages the SDK handed over, and whether the stream was refused first.
 */
async function readThroughSdk(chunks: readonly (readonly number[])[], maxDepth: number): Promise<{ messages: JSONRPCMessage[]; refused: boolean }> {
  const end = utf8('\n\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
  let refused = false;
  const limited = sizeLimitedFetch({ maxDepth, onRefused: () => (refused = true), fetch: bytesFetch('text/event-stream', [...chunks, end]) });
  const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1:9/mcp'), { fetch: limited });
  const messages: JSONRPCMessage[] = [];
  const done = new Promise<void>((resolve) => {
    transport.onmessage = (message) => {
      messages.push(message);
      if ('id' in message && message.id === 1) resolve();
    };
    transport.onerror = () => {
      if (refused) resolve();
    };
  });
  await transport.start();
  await transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'deep' } });
  await done;
  await transport.close();
  return { messages, refused };
}

/** Levels of arrays and objects `value` nests, itself the first. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

/** A generator of numbers in [0, 1), the same ones for the same seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * An event stream of a few events, each a notification nested 3 to 6 levels written over one to three data lines,
 * among lines the parser does not read as data (comments, other fields, `data` spelt otherwise) holding brackets and
 * quotes, with any line ends, and what the stream may start with.
 */
function randomEventStream(random: () => number): number[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const starts = [[], [], BOM, BOM_AS_LATIN_1, [...BOM, ...BOM_AS_LATIN_1], [...BOM_AS_LATIN_1, ...BOM], [...BOM, ...BOM], BOM.slice(0, 2), BOM_AS_LATIN_1.slice(0, 4), utf8('\n'), utf8(': "\n')];
  const ends = ['\n', '\r', '\r\n'];
  const noise = [': [[[[[[', ': "', 'event: [[[[[[', 'retry: 5', 'Data: [[[[[[', ' data: [[[[[[', 'data [[[[[[', 'dat: [[[[[[', 'data', '\uFEFFdata: [[[[[[', '\u00ef\u00bb\u00bfdata: [[[[[['];
  const bytes = [...pick(starts)];
  for (let event = 0; event < 1 + Math.floor(random() * 3); event++) {
    const levels = 1 + Math.floor(random() * 4);
    const text = `{"jsonrpc":"2.0","method":"m","params":{"a":${'['.repeat(levels)}"[\\"{"${']'.repeat(levels)}}}`;
    // Cut between the brackets, outside the string: joined with a line end, the data is the same JSON.
    const cuts = [...new Set(Array.from({ length: Math.floor(random() * 3) }, () => 40 + Math.floor(random() * levels)))].sort((a, b) => a - b);
    const pieces = [0, ...cuts, text.length].slice(1).map((to, index, all) => text.slice(index === 0 ? 0 : all[index - 1], to));
    const lines = pieces.map((piece) => `${pick(['data:', 'data: '])}${piece}`);
    for (let extra = Math.floor(random() * 3); extra > 0; extra--) lines.splice(Math.floor(random() * (lines.length + 1)), 0, pick(noise));
    for (const line of lines) bytes.push(...utf8(line + pick(ends)));
    bytes.push(...utf8(pick(ends)));
  }
  return bytes;
}

/** Reads `chunks`, served with `headers`, through a fetch limited to `maxDepth` as the answer to request `id`: its length or error, and what was refused. */
async function readRefusing(headers: OutgoingHttpHeaders, chunks: string[], maxDepth: number, id: number) {
  await using server = await serving(headers, chunks);
  const refused: string[] = [];
  const limited = sizeLimitedFetch({ maxDepth, onRefused: (ids, error) => refused.push(`${ids.join()}: ${error.message}`) });
  const response = await limited(server.url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'deep' } }) });
  const text = await response.text().then(
    (value) => ({ text: value.length }),
    (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
  );
  return { ...text, refused };
}
