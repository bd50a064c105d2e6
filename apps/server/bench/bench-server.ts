// The server side of the approvals benchmark, in its own process so its memory is measured alone.
// Prints one JSON line {port, token, wsUrl, echoUrl}; then answers "mem" on stdin with {rss, heapUsed} and "gc" by collecting.
import { ChatService } from '@airlock/api';
import { ApprovalRegistry, defineTool, randomId, type ChatModel, type ChatRequest, type ModelPart } from '@airlock/core';
import { createInterface } from 'node:readline';
import { WebSocketServer } from 'ws';
import { z } from 'zod';
import { startServer } from '../src/start-server';

/** In-process model: calls `echo` once, then answers; a message starting "stream N" streams N text deltas instead. */
class BenchModel implements ChatModel {
  readonly name = 'bench';
  async *stream(request: ChatRequest): AsyncGenerator<ModelPart> {
    const last = request.messages.at(-1);
    if (last?.role === 'tool') {
      yield { type: 'text-delta', text: 'ok' };
    } else if (last?.role === 'user' && last.content.startsWith('stream ')) {
      const count = Number(last.content.slice(7));
      const chunk = 'lorem ipsum dolor si';
      for (let i = 0; i < count; i++) yield { type: 'text-delta', text: chunk };
    } else {
      yield { type: 'tool-call', id: 'call_1', name: 'echo', arguments: '{"text":"hi"}' };
    }
    yield { type: 'finish', reason: 'stop' };
  }
}

const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), execute: async ({ text }) => text });
const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new BenchModel(), tools: () => [echo], finishedRunTtlMs: 0, maxSessions: 100_000 });
// finishedRunTtlMs 0: runs of one row are forgotten before the next row measures its baseline, so they neither count
// against it nor, freed during it, flatter it.
const server = await startServer({
  config: { host: '127.0.0.1', port: 0, token: randomId('tok', 32), allowedOrigins: [] },
  services: { chat, catalog: { tools: () => [echo], servers: () => [] }, modelInfo: () => ({ provider: 'bench', baseURL: null, model: 'bench', demo: false }) },
  log: () => undefined,
  limits: { maxConcurrentRuns: 100_000, messagesPerMinute: 1_000_000, messageBurst: 1_000_000 },
  maxConnections: 1000,
});
// The floor: a bare WebSocket echo in this same process, no tRPC and no Airlock, to read the round trip against.
const echoServer = new WebSocketServer({ host: '127.0.0.1', port: 0 });
echoServer.on('connection', (socket) => socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary })));
await new Promise((resolve) => echoServer.once('listening', resolve));
const echoUrl = `ws://127.0.0.1:${(echoServer.address() as { port: number }).port}`;
console.log(JSON.stringify({ port: server.port, token: server.token, wsUrl: server.wsUrl, echoUrl }));
const gc = (globalThis as { gc?: () => void }).gc;
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'gc') {
    gc?.();
    gc?.();
    console.log(JSON.stringify({ ok: true }));
  } else if (line === 'mem') {
    const { rss, heapUsed } = process.memoryUsage();
    console.log(JSON.stringify({ rss, heapUsed, pending: chat.registry.pendingCount, activeRuns: chat.activeRunCount }));
  } else if (line === 'quit') {
    await server.close();
    process.exit(0);
  }
}
