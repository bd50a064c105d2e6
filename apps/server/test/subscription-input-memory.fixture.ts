// Subscriptions opened with inputs their procedures do not keep, in a process started with --expose-gc: after full
// collections, is any of those inputs still in the heap while the subscriptions live? The inputs are written as bytes
// (no string of this process holds them): only the server's own parse of them can make such a string.
// Prints one line of JSON; see subscription-input-memory.test.ts.
import { ChatService, type ModelInfo } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { hangingStep, ScriptedModel } from '@airlock/core/testing';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapSnapshot } from 'node:v8';
import { WebSocket } from 'ws';
import { startServer } from '../src/start-server';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
const MODEL_INFO: ModelInfo = { provider: 'demo', baseURL: null, model: 'demo', demo: true };
const JUNK_BYTES = 100_000;

const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([hangingStep('a turn that never ends')]), tools: () => [] });
const server = await startServer({
  config: { host: '127.0.0.1', port: 0, token: TOKEN, allowedOrigins: [], capacity: {} },
  services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => MODEL_INFO },
  webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
  log: () => {},
});

const socket = new WebSocket(`${server.wsUrl}?connectionParams=1`);
await new Promise<void>((resolve, reject) => {
  socket.once('open', () => resolve());
  socket.once('error', reject);
});
const started = new Set<number>();
let bothStarted!: () => void;
const whenBothStarted = new Promise<void>((resolve) => (bothStarted = resolve));
socket.on('message', (data: Buffer) => {
  const text = data.toString('utf8');
  if (text === 'PING') return;
  const message = JSON.parse(text) as { id?: unknown; result?: { type?: string } };
  if (typeof message.id === 'number' && message.result?.type === 'started') started.add(message.id);
  if (started.size === 2) bothStarted();
});
socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));

/** A subscription request whose input carries `junk` bytes of the letter `letter` under a key its procedure ignores. */
function request(id: number, path: string, input: string, letter: string): Buffer {
  const [before, after] = JSON.stringify({ id, method: 'subscription', params: { path, input: JSON.parse(input) as unknown } }).split('"@"');
  return Buffer.concat([Buffer.from(`${before!}"`), Buffer.alloc(JUNK_BYTES, letter), Buffer.from(`"${after!}`)]);
}
// A watch, which takes no input, and a run's stream, whose schema strips keys it does not know.
socket.send(request(1, 'sessions.watch', '{"junk":"@"}', 'q'), { binary: false });
socket.send(request(2, 'chat.stream', '{"sessionId":"s","runId":"r","message":"go","junk":"@"}', 'z'), { binary: false });
await whenBothStarted;

await new Promise((resolve) => setImmediate(resolve));
global.gc!();
global.gc!();

/** Whether the heap holds a string with `count` of `letter` in a row, looked for in the snapshot's bytes. */
async function heapHolds(letters: readonly string[], count: number): Promise<Record<string, boolean>> {
  const needles = letters.map((letter) => Buffer.alloc(count, letter));
  const found = Object.fromEntries(letters.map((letter) => [letter, false]));
  let tail = Buffer.alloc(0);
  for await (const chunk of getHeapSnapshot()) {
    const bytes = Buffer.concat([tail, chunk as Buffer]);
    letters.forEach((letter, index) => {
      if (bytes.includes(needles[index]!)) found[letter] = true;
    });
    tail = bytes.subarray(Math.max(0, bytes.length - count));
  }
  return found;
}

const held = await heapHolds(['q', 'z'], 500);
socket.terminate();
await server.close();
console.log(JSON.stringify({ started: [...started].sort(), held }));
