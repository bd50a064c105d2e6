// The server side of the approvals benchmark, in its own process so its memory is measured alone.
// Its configuration is the shipped one: loadConfig with no flags and no AIRLOCK_* variable but the token, handed to
// startServer as main.ts does, so every capacity limit is the default a user gets from `npm start`. Only the model
// (in-process, no network) and the tools (one instant `echo`) differ.
// Prints one JSON line {port, token, wsUrl, echoUrl, capacity}; then answers "mem" on stdin with {rss, heapUsed} and "gc" by collecting.
import { ChatService } from '@airlock/api';
import { ApprovalRegistry, defineTool, randomId, type ChatModel, type ChatRequest, type ModelPart } from '@airlock/core';
import { createInterface } from 'node:readline';
import { WebSocketServer } from 'ws';
import { z } from 'zod';
import { loadConfig } from '../src/config';
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
// maxLoadedSessions: with its default (200), a session started while more than 200 others wait loses its messages
// mid-start ("Cannot read properties of undefined (reading 'push')" in ChatService.startRun); raised here until that is fixed.
const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new BenchModel(), tools: () => [echo], finishedRunTtlMs: 0, maxLoadedSessions: 100_000 });
// finishedRunTtlMs 0: runs of one row are forgotten before the next row measures its baseline, so they neither count
// against it nor, freed during it, flatter it.
const config = loadConfig(['--port', '0'], { AIRLOCK_TOKEN: randomId('tok', 32) });
const server = await startServer({
  config,
  services: { chat, catalog: { tools: () => [echo], servers: () => [] }, modelInfo: () => ({ provider: 'bench', baseURL: null, model: 'bench', demo: false }) },
  log: (line) => {
    if (line.startsWith('Warning') || line.startsWith('Error')) console.error(line);
  },
});
// The floor: a bare WebSocket echo in this same process, no tRPC and no Airlock, to read the round trip against.
const echoServer = new WebSocketServer({ host: '127.0.0.1', port: 0 });
echoServer.on('connection', (socket) => socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary })));
await new Promise((resolve) => echoServer.once('listening', resolve));
const echoUrl = `ws://127.0.0.1:${(echoServer.address() as { port: number }).port}`;
console.log(JSON.stringify({ port: server.port, token: server.token, wsUrl: server.wsUrl, echoUrl, capacity: config.capacity }));
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
