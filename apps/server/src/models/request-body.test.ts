import type { ChatMessage, ChatRequest, ModelPart } from '@airlock/core';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { OpenAICompatibleModel } from './openai-compatible-model';
import { toOpenAIMessages } from './openai-messages';
import { requestBody } from './request-body';

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return await new Response(stream).text();
}

describe('requestBody', () => {
  it('is the JSON of the request, messages last, with its length in bytes', async () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'é 😀 \ud800 "quoted"' }, { role: 'assistant', content: 'x'.repeat(100_000) }], stream: true };
    const { stream, length } = requestBody(body);
    const sent = await text(stream);
    expect(JSON.parse(sent)).toStrictEqual(body);
    expect(sent).toBe(JSON.stringify({ model: 'm', stream: true, messages: body.messages }));
    expect(length).toBe(Buffer.byteLength(sent));
  });

  it('writes an object with nothing but messages, and no messages', async () => {
    expect(await text(requestBody({ messages: [] }).stream)).toBe('{"messages":[]}');
    expect(await text(requestBody({ messages: [1] }).stream)).toBe('{"messages":[1]}');
  });
});

describe('OpenAICompatibleModel sending a long chat', () => {
  it('sends the conversation with a Content-Length, not chunked, and the server reads the same JSON the client would have written', async () => {
    let seen: { headers: IncomingHttpHeaders; body: string } | undefined;
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (part: Buffer) => parts.push(part));
      req.on('end', () => {
        seen = { headers: req.headers, body: Buffer.concat(parts).toString('utf8') };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const messages: ChatMessage[] = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i} ünïcode 😀 ${'y'.repeat(20_000)}` }));
      const request: ChatRequest = { messages, tools: [] };
      const model = new OpenAICompatibleModel({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, model: 'm' });
      const parts: ModelPart[] = [];
      for await (const part of model.stream(request, new AbortController().signal)) parts.push(part);
      expect(parts).toContainEqual({ type: 'text-delta', text: 'ok' });
      expect(seen!.headers['transfer-encoding']).toBeUndefined();
      expect(Number(seen!.headers['content-length'])).toBe(Buffer.byteLength(seen!.body));
      expect(seen!.headers['content-type']).toBe('application/json');
      expect(JSON.parse(seen!.body)).toStrictEqual({ model: 'm', messages: toOpenAIMessages(messages), stream: true, stream_options: { include_usage: true } });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('never hands its HTTP client the conversation as one string', async () => {
    const bodies: unknown[] = [];
    const recording = (async (input: string | URL | Request, init?: RequestInit) => {
      bodies.push(init?.body);
      return new Response('data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n', { headers: { 'content-type': 'text/event-stream' } });
    }) as typeof fetch;
    const model = new OpenAICompatibleModel({ baseURL: 'http://127.0.0.1:9/v1', model: 'm', fetch: recording });
    for await (const part of model.stream({ messages: [{ role: 'user', content: 'hello' }], tools: [] }, new AbortController().signal)) void part;
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toBeInstanceOf(ReadableStream);
  });
});
