// A model server for the benchmarks: a real HTTP server on 127.0.0.1 speaking OpenAI's streamed chat completions,
// so the server under test talks to it exactly as to llama.cpp or vLLM. It answers at once:
// - a conversation ending with a tool result: the text "ok", then stop;
// - a user message "stream N": N text deltas of 20 characters, then stop;
// - a user message "chars N": N text deltas of one character each (as llama.cpp streams a token a chunk), then stop;
//   "chars N held": the same, then the stream stays open (the turn goes on) until the client lets go of it;
// - any other user message: one call to `list_directory` on the workspace, then stop for the tool call.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeModelServer {
  /** The API root to pass as --model-url, e.g. http://127.0.0.1:PORT/v1. */
  baseURL: string;
  /** Chat completion requests answered so far. */
  readonly requests: number;
  /** How many messages the last request had (0 before any). */
  readonly lastMessages: number;
  /** Resolves once no connection from the server under test is open (idle keep-alive sockets included). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export const BENCH_TOOL = 'list_directory';
const CHUNK_TEXT = 'lorem ipsum dolor si';

/**
 * Starts the model server. Idle keep-alive connections are closed after `keepAliveMs`, so a memory figure
 * taken once `idle()` resolves does not count the model client's pooled sockets. Default 5 s, Node's own default (the
 * HTTP client keeps a connection only when the server keeps it alive more than its 2 s margin: at the 1 s used before,
 * the server under test opened a connection for every model request, which no real model server makes it do).
 */
export async function startFakeModelServer(options: { keepAliveMs?: number } = {}): Promise<FakeModelServer> {
  let requests = 0;
  let lastMessages = 0;
  let connections = 0;
  let idleWaiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.endsWith('/models')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'bench', object: 'model' }] }));
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    void readBody(req).then((body) => {
      requests++;
      const request = JSON.parse(body) as { messages: { role: string; content?: string | null }[] };
      lastMessages = request.messages.length;
      const last = request.messages.at(-1);
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.cork();
      if (last?.role === 'tool') {
        res.write(chunk({ role: 'assistant', content: 'ok' }, null));
        res.write(chunk({}, 'stop'));
      } else if (typeof last?.content === 'string' && last.content.startsWith('stream ')) {
        const count = Number(last.content.slice(7));
        streamText(res, count, CHUNK_TEXT);
        return;
      } else if (typeof last?.content === 'string' && last.content.startsWith('chars ')) {
        const [count, held] = last.content.slice(6).split(' ');
        streamText(res, Number(count), 'x', held === 'held');
        return;
      } else {
        const call = { index: 0, id: 'call_1', type: 'function', function: { name: BENCH_TOOL, arguments: '{"path":"."}' } };
        res.write(chunk({ role: 'assistant', tool_calls: [call] }, null));
        res.write(chunk({}, 'tool_calls'));
      }
      res.write('data: [DONE]\n\n');
      res.end();
      process.nextTick(() => res.uncork());
    });
  });
  server.keepAliveTimeout = options.keepAliveMs ?? 5_000;
  server.on('connection', (socket) => {
    connections++;
    socket.setNoDelay(true);
    socket.once('close', () => {
      connections--;
      if (connections > 0) return;
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return requests;
    },
    get lastMessages() {
      return lastMessages;
    },
    idle: () => (connections === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve))),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes `count` text deltas of `text`, pausing for the socket to drain when its buffer is full; then ends, unless `held`. */
function streamText(res: ServerResponse, count: number, text: string, held = false): void {
  let sent = 0;
  const piece = chunk({ content: text }, null);
  const more = (): void => {
    while (sent < count) {
      sent++;
      if (!res.write(piece)) {
        res.once('drain', more);
        return;
      }
    }
    if (held) return;
    res.write(chunk({}, 'stop'));
    res.write('data: [DONE]\n\n');
    res.end();
  };
  res.write(chunk({ role: 'assistant', content: '' }, null));
  res.uncork();
  more();
}

function chunk(delta: Record<string, unknown>, finishReason: string | null): string {
  return `data: ${JSON.stringify({ id: 'bench', object: 'chat.completion.chunk', created: 0, model: 'bench', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}
