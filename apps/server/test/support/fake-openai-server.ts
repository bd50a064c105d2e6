import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from '@airlock/core';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A native tool call the fake model makes; its argument text is streamed in several pieces. */
export interface FakeToolCall {
  name: string;
  /** An object is sent as JSON; a string is sent as written (to script broken JSON). */
  arguments: Record<string, unknown> | string;
  /** Default `call_<request>_<n>`. */
  id?: string;
}

/** One scripted answer of the fake server, used by the next chat-completions request. */
export interface FakeTurn {
  /** Answer text; an array is sent as one chunk per element. */
  text?: string | readonly string[];
  /** Sent as `reasoning_content` before the text (the llama.cpp / vLLM / DeepSeek field). */
  reasoning?: string | readonly string[];
  /** Native calls in `delta.tool_calls`; several calls have their pieces interleaved by index. */
  toolCalls?: readonly FakeToolCall[];
  /** Calls written into the text as `<tool_call>{"name":…,"arguments":…}</tool_call>`, after `text`. */
  textToolCalls?: readonly Omit<FakeToolCall, 'id'>[];
  /** Default "tool_calls" with native calls, otherwise "stop". */
  finishReason?: string;
  /** Reported in the last chunk when the request asked for usage. Default 10 prompt and 20 completion tokens. */
  usage?: { promptTokens: number; completionTokens: number };
  /** Answer with this HTTP status and `errorBody` instead of a stream. */
  status?: number;
  /** Default `{error: {message: "fake error", type: "server_error", code: status}}`. */
  errorBody?: unknown;
  /** Destroy the socket after this many `data:` chunks, without `[DONE]`. */
  cutAfterChunks?: number;
  /** Send a chunk that is not JSON early in the stream, after the first delta. */
  malformed?: boolean;
  /** Wait for this before the final chunk (to observe a stream in progress, or cancel it). */
  hold?: Promise<void>;
}

export interface FakeOpenAIServer {
  /** The API root, e.g. "http://127.0.0.1:43123/v1". */
  readonly url: string;
  /** Parsed JSON bodies of every chat-completions request, in order (including unscripted ones). */
  readonly requests: readonly Record<string, unknown>[];
  /** The Authorization header of each chat-completions request ("" when absent). */
  readonly authorizations: readonly string[];
  /** Turns queued but not yet used. */
  readonly pending: number;
  /** TCP connections accepted so far (a client that keeps its connection alive makes one for many requests). */
  readonly connections: number;
  /** Queues answers for the next requests, in order. A request with nothing queued gets HTTP 500. */
  enqueue(...turns: FakeTurn[]): void;
  /** Stops the server and cuts open connections. */
  close(): Promise<void>;
}

export interface FakeOpenAIServerOptions {
  /** Ids listed by GET /v1/models. Default ["fake-model"]. */
  models?: readonly string[];
}

/**
 * A real HTTP server on 127.0.0.1 (ephemeral port) speaking the OpenAI chat-completions wire format:
 * SSE `data: {chat.completion.chunk}` lines ending with `data: [DONE]`, and GET /v1/models.
 */
export async function startFakeOpenAIServer(options: FakeOpenAIServerOptions = {}): Promise<FakeOpenAIServer & AsyncDisposable> {
  const models = options.models ?? ['fake-model'];
  const queue: FakeTurn[] = [];
  const requests: Record<string, unknown>[] = [];
  const authorizations: string[] = [];

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody(`fake OpenAI server failed: ${String(error)}`, 'server_error', 500));
      else res.destroy();
    });
  });
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })) });
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      sendJson(res, 404, errorBody(`fake OpenAI server: no route for ${req.method} ${path}`, 'not_found_error', 404));
      return;
    }
    const raw = await readBody(req);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      sendJson(res, 400, errorBody('fake OpenAI server: the request body is not JSON', 'invalid_request_error', 400));
      return;
    }
    requests.push(body);
    authorizations.push(req.headers.authorization ?? '');
    const turn = queue.shift();
    if (!turn) {
      sendJson(res, 500, errorBody(`fake OpenAI server: no turn queued for request #${requests.length}`, 'server_error', 500));
      return;
    }
    if (turn.status !== undefined) {
      sendJson(res, turn.status, turn.errorBody ?? errorBody('fake error', 'server_error', turn.status));
      return;
    }
    if (body.stream !== true) {
      sendJson(res, 400, errorBody('fake OpenAI server: only streaming requests are supported', 'invalid_request_error', 400));
      return;
    }
    await streamTurn(res, turn, {
      requestNumber: requests.length,
      model: typeof body.model === 'string' ? body.model : 'fake-model',
      includeUsage: isRecord(body.stream_options) && body.stream_options.include_usage === true,
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    authorizations,
    get pending() {
      return queue.length;
    },
    get connections() {
      return connections;
    },
    enqueue(...turns) {
      queue.push(...turns);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

interface StreamContext {
  requestNumber: number;
  model: string;
  includeUsage: boolean;
}

async function streamTurn(res: ServerResponse, turn: FakeTurn, context: StreamContext): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
  const id = `chatcmpl-fake-${context.requestNumber}`;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: context.model,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });

  const events: unknown[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of pieces(turn.reasoning)) events.push(chunk({ reasoning_content: piece }));
  const text = [...pieces(turn.text)];
  for (const call of turn.textToolCalls ?? []) {
    text.push(`${TOOL_CALL_OPEN}${JSON.stringify({ name: call.name, arguments: call.arguments })}${TOOL_CALL_CLOSE}`);
  }
  for (const piece of text) events.push(chunk({ content: piece }));
  events.push(...toolCallChunks(turn.toolCalls ?? [], context.requestNumber).map((toolCalls) => chunk({ tool_calls: toolCalls })));
  if (turn.malformed) events.splice(Math.min(2, events.length), 0, MALFORMED);

  const finishReason = turn.finishReason ?? ((turn.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop');
  const closing: unknown[] = [chunk({}, finishReason)];
  if (context.includeUsage) {
    const usage = turn.usage ?? { promptTokens: 10, completionTokens: 20 };
    closing.push({
      id,
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: context.model,
      choices: [],
      usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens },
    });
  }

  let sent = 0;
  /** Writes one event and waits until it is flushed, so a cut that follows cannot swallow it. */
  const send = async (event: unknown): Promise<boolean> => {
    if (res.destroyed) return false;
    if (turn.cutAfterChunks !== undefined && sent >= turn.cutAfterChunks) {
      res.destroy();
      return false;
    }
    const line = event === MALFORMED ? 'data: {"id": "chatcmpl-broken", "choices": [\n\n' : `data: ${JSON.stringify(event)}\n\n`;
    await new Promise<void>((resolve) => res.write(line, () => resolve()));
    sent++;
    return true;
  };
  for (const event of events) if (!(await send(event))) return;
  if (turn.hold && !res.destroyed) {
    const gone = new Promise<void>((resolve) => res.once('close', resolve));
    await Promise.race([turn.hold, gone]);
  }
  for (const event of closing) if (!(await send(event))) return;
  if (res.destroyed) return;
  if (turn.cutAfterChunks !== undefined && sent >= turn.cutAfterChunks) {
    res.destroy();
    return;
  }
  res.end('data: [DONE]\n\n');
}

const MALFORMED = Symbol('malformed');

/**
 * Tool-call deltas the way real servers send them: a first piece with index, id and name,
 * then the argument text in several pieces; with several calls the pieces interleave.
 */
function toolCallChunks(calls: readonly FakeToolCall[], requestNumber: number): Record<string, unknown>[][] {
  const argumentPieces = calls.map((call) => splitInto(typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments), 3));
  const out: Record<string, unknown>[][] = calls.map((call, index) => [
    { index, id: call.id ?? `call_${requestNumber}_${index}`, type: 'function', function: { name: call.name, arguments: '' } },
  ]);
  const longest = Math.max(0, ...argumentPieces.map((list) => list.length));
  for (let step = 0; step < longest; step++) {
    argumentPieces.forEach((list, index) => {
      const piece = list[step];
      if (piece !== undefined) out.push([{ index, function: { arguments: piece } }]);
    });
  }
  return out;
}

function splitInto(text: string, count: number): string[] {
  if (text.length === 0) return [];
  const size = Math.max(1, Math.ceil(text.length / count));
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

function pieces(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : [...value];
}

function errorBody(message: string, type: string, code: number) {
  return { error: { message, type, code } };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
