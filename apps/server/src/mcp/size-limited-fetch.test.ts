import type { OutgoingHttpHeaders } from 'node:http';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
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
});

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
