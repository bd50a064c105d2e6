import { ConcurrencyLimit, type ChatRequest, type ModelPart } from '@airlock/core';
import { deferred } from '@airlock/core/testing';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errors } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { manualClock } from '../mcp/fixtures/manual-clock';
import { toModelError } from './model-server-errors';
import { OpenAIChunkReader } from './openai-chunk-reader';
import { OpenAICompatibleModel, type OpenAICompatibleModelOptions } from './openai-compatible-model';
import { failure } from './test-support';

const hello: ChatRequest = { messages: [{ role: 'user', content: 'hello' }], tools: [] };

function textChunk(text: string): string {
  return `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
}

/** A model server run by `answer`; it records whether each request's connection was closed, and counts the pieces it trickled. */
async function startModelServer(answer: (response: ServerResponse, request: IncomingMessage) => void) {
  const connections: { closed: boolean }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((request, response) => {
    const connection = { closed: false };
    connections.push(connection);
    request.resume();
    response.on('close', () => (connection.closed = true));
    request.on('end', () => answer(response, request));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const started = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    connections,
    /** Pieces trickled so far, over every connection. */
    trickled: 0,
    /** Writes `piece` every few ms until the connection closes: a server that trickles. */
    trickle(response: ServerResponse, piece: () => string) {
      const timer = setInterval(() => {
        response.write(piece());
        started.trickled++;
      }, 10);
      timers.add(timer);
      response.on('close', () => clearInterval(timer));
    },
    async close() {
      for (const timer of timers) clearInterval(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return started;
}

function eventStream(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.flushHeaders();
}

/** Node's fetch, resolving `answered` once a response's headers have arrived. */
function fetchTelling(answered: () => void): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    answered();
    return response;
  };
}

// Each limit is counted on a clock the test moves, once the server has got as far as the test needs: no limit runs
// out on a machine's time, and none runs out before what it is to follow has happened.
describe('OpenAICompatibleModel time limits', () => {
  let server: Awaited<ReturnType<typeof startModelServer>> | undefined;
  const model = (options: Partial<OpenAICompatibleModelOptions>) => new OpenAICompatibleModel({ baseURL: server!.url, model: 'm', label: 'llama.cpp', ...options });

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('stops a turn whose server trickles pieces of an answer past the turn limit, closes its connection and gives its place back', async () => {
    server = await startModelServer((response) => {
      eventStream(response);
      server!.trickle(response, () => textChunk('a'));
    });
    const requests = new ConcurrencyLimit(1);
    const parts: ModelPart[] = [];
    const clock = manualClock();

    const failed = failure(model({ turnTimeoutMs: 2000, idleTimeoutMs: 30_000, requests, clock }).stream(hello, new AbortController().signal), parts);
    await vi.waitFor(() => expect(parts.length).toBeGreaterThan(0));
    clock.advance(2000);
    const error = await failed;

    expect(error.message).toBe(
      `llama.cpp: the model server at ${server.url} was still answering after 2000 ms, the most one turn may take; the turn was stopped ` +
        `(the limit is set by --model-turn-timeout-ms / AIRLOCK_MODEL_TURN_TIMEOUT_MS)`,
    );
    expect(parts.length).toBeGreaterThan(0);
    expect(requests.size).toBe(0);
    await vi.waitFor(() => expect(server!.connections).toStrictEqual([{ closed: true }]), { timeout: 10_000 });
  });

  it('counts keep-alive comments as no progress: a server that sent one piece and then only comments meets the idle limit', async () => {
    server = await startModelServer((response) => {
      eventStream(response);
      response.write(textChunk('Hel'));
      server!.trickle(response, () => ': keep-alive\n\n');
    });
    const parts: ModelPart[] = [];
    const clock = manualClock();

    const failed = failure(model({ idleTimeoutMs: 200, turnTimeoutMs: 60_000, clock }).stream(hello, new AbortController().signal), parts);
    await vi.waitFor(() => expect(parts).toStrictEqual([{ type: 'text-delta', text: 'Hel' }]));
    // Comments come all through the limit.
    await vi.waitFor(() => expect(server!.trickled).toBeGreaterThanOrEqual(3));
    clock.advance(100);
    const sent = server.trickled;
    await vi.waitFor(() => expect(server!.trickled).toBeGreaterThanOrEqual(sent + 3));
    clock.advance(100);
    const error = await failed;

    expect(error.message).toBe(
      `llama.cpp: the model server at ${server.url} sent no further part of the answer for 200 ms; the turn was stopped ` +
        `(the limit is set by --model-idle-timeout-ms / AIRLOCK_MODEL_IDLE_TIMEOUT_MS)`,
    );
    expect(parts).toStrictEqual([{ type: 'text-delta', text: 'Hel' }]);
    await vi.waitFor(() => expect(server!.connections).toStrictEqual([{ closed: true }]), { timeout: 10_000 });
  });

  it('stops a stream that stalls after one piece at the idle limit, naming it', async () => {
    server = await startModelServer((response) => {
      eventStream(response);
      response.write(textChunk('Hel'));
    });
    const parts: ModelPart[] = [];
    const clock = manualClock();

    const failed = failure(model({ idleTimeoutMs: 200, clock }).stream(hello, new AbortController().signal), parts);
    await vi.waitFor(() => expect(parts).toStrictEqual([{ type: 'text-delta', text: 'Hel' }]));
    clock.advance(200);
    const error = await failed;

    expect(error.message).toBe(
      `llama.cpp: the model server at ${server.url} sent no further part of the answer for 200 ms; the turn was stopped ` +
        `(the limit is set by --model-idle-timeout-ms / AIRLOCK_MODEL_IDLE_TIMEOUT_MS)`,
    );
    await vi.waitFor(() => expect(server!.connections).toStrictEqual([{ closed: true }]), { timeout: 10_000 });
  });

  it('gives a server that answered headers and sends keep-alives until its first piece the request limit, not the shorter idle one', async () => {
    server = await startModelServer((response) => {
      eventStream(response);
      server!.trickle(response, () => ': loading model\n\n');
    });
    const answered = deferred();
    const clock = manualClock();

    // Its own fetch, so that the test knows when the headers are in: no time limit of the HTTP client's own besides.
    const failed = failure(model({ requestTimeoutMs: 60_000, idleTimeoutMs: 20, clock, fetch: fetchTelling(answered.resolve) }).stream(hello, new AbortController().signal));
    await answered.promise;
    await vi.waitFor(() => expect(server!.trickled).toBeGreaterThanOrEqual(3));
    // Past the idle limit, many times over, with keep-alives arriving: still waiting for the first piece.
    for (let step = 0; step < 10; step++) clock.advance(20);
    const sent = server.trickled;
    await vi.waitFor(() => expect(server!.trickled).toBeGreaterThanOrEqual(sent + 3));
    clock.advance(60_000 - 200);
    const error = await failed;

    expect(error.message).toBe(
      `llama.cpp: the model server at ${server.url} did not start answering within 60 s; the turn was stopped ` +
        `(the limit is set by --model-timeout-ms / AIRLOCK_MODEL_TIMEOUT_MS)`,
    );
    await vi.waitFor(() => expect(server!.connections).toStrictEqual([{ closed: true }]), { timeout: 10_000 });
  });

  it('stops a server that never sends its headers at the request limit, naming it', async () => {
    server = await startModelServer(() => undefined);
    const requests = new ConcurrencyLimit(1);
    const clock = manualClock();

    // A limit the HTTP client's own timers, on the machine's time, cannot reach first while the test runs.
    const failed = failure(model({ requestTimeoutMs: 60_000, requests, clock }).stream(hello, new AbortController().signal));
    await vi.waitFor(() => expect(server!.connections).toHaveLength(1));
    clock.advance(60_000);
    const error = await failed;

    expect(error.message).toBe(
      `llama.cpp: the model server at ${server.url} did not start answering within 60 s; the turn was stopped ` +
        `(the limit is set by --model-timeout-ms / AIRLOCK_MODEL_TIMEOUT_MS)`,
    );
    expect(requests.size).toBe(0);
    await vi.waitFor(() => expect(server!.connections).toStrictEqual([{ closed: true }]), { timeout: 10_000 });
  });
});

describe('OpenAIChunkReader progress', () => {
  it('counts text, reasoning and fragments of tool calls, not empty deltas or usage', () => {
    const reader = new OpenAIChunkReader();
    reader.push({ choices: [{ delta: { role: 'assistant', content: '' } }] });
    reader.push({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } });
    expect(reader.progress).toBe(0);

    reader.push({ choices: [{ delta: { reasoning_content: 'think' } }] });
    reader.push({ choices: [{ delta: { content: 'text' } }] });
    reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'read_file' } }] } }] });
    reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '{' } }] } }] });
    reader.push({ choices: [{ delta: { tool_calls: [{ index: 0 }] } }] });

    expect(reader.progress).toBe(4);
  });

  it('counts an id or a name a call already has as no progress: a server resending them holds a stalled turn no longer', () => {
    const reader = new OpenAIChunkReader();
    reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'read_file' } }] } }] });
    expect(reader.progress).toBe(1);

    for (let repeat = 0; repeat < 3; repeat++) {
      reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'read_file' } }] } }] });
      reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'read_file', arguments: '' } }] } }] });
      reader.push({ choices: [{ delta: { tool_calls: [{ id: 'c1' }] } }] });
    }
    expect(reader.progress).toBe(1);

    reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', function: { arguments: '{' } }] } }] });
    reader.push({ choices: [{ delta: { tool_calls: [{ index: 1, id: 'c2', function: { name: 'read_file' } }] } }] });
    expect(reader.progress).toBe(3);
  });

  it('counts object arguments as progress once: a server resending them is stalled', () => {
    const reader = new OpenAIChunkReader();
    reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'read_file', arguments: { path: 'a' } } }] } }] });
    reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: { path: 'a' } } }] } }] });
    reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: { path: 'a' } } }] } }] });

    expect(reader.progress).toBe(1);
  });

  it('counts a piece as progress only when the call grows past the longest it has been: a server alternating whole arguments and one character is stalled', () => {
    const reader = new OpenAIChunkReader();
    reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'read_file', arguments: { path: 'a' } } }] } }] });
    for (let repeat = 0; repeat < 3; repeat++) {
      reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: 'x' } }] } }] });
      reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: { path: 'a' } } }] } }] });
    }
    expect(reader.progress).toBe(1);

    // Text that goes on past the whole arguments' length is new again, one piece at a time.
    const longer = '{"path":"abc"}';
    for (const character of longer) reader.push({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: character } }] } }] });
    expect(reader.progress).toBe(1 + longer.length - JSON.stringify({ path: 'a' }).length);
    expect(reader.finish()[0]).toStrictEqual({ type: 'tool-call', id: 'c1', name: 'read_file', arguments: longer });
  });
});

describe('toModelError of the HTTP client\'s own timeouts', () => {
  const context = { provider: 'llama.cpp', baseURL: 'http://127.0.0.1:8080/v1', limits: { request: 600_000, idle: 300_000, turn: 7_200_000 }, midStream: true };
  const fetchFailed = (cause: Error) => new TypeError('fetch failed', { cause });

  it('names the limit each stands for and its setting, not the client\'s own name for it', () => {
    expect(toModelError(fetchFailed(new errors.HeadersTimeoutError()), { ...context, midStream: false }).message).toBe(
      'llama.cpp: the model server at http://127.0.0.1:8080/v1 did not start answering within 10 min; the turn was stopped (the limit is set by --model-timeout-ms / AIRLOCK_MODEL_TIMEOUT_MS)',
    );
    expect(toModelError(fetchFailed(new errors.BodyTimeoutError()), { ...context, progressed: true }).message).toBe(
      'llama.cpp: the model server at http://127.0.0.1:8080/v1 sent no further part of the answer for 300 s; the turn was stopped (the limit is set by --model-idle-timeout-ms / AIRLOCK_MODEL_IDLE_TIMEOUT_MS)',
    );
    expect(toModelError(fetchFailed(new errors.BodyTimeoutError()), { ...context, progressed: false }).message).toMatch(/did not start answering within 10 min; .*--model-timeout-ms/);
  });
});
