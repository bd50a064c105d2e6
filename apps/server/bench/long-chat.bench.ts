// Memory of a run waiting on a decision in a long chat, against the server as `npm start` runs it (see
// support/shipped-server.ts): a chat of 6,000 stored messages of 20 KB each (120 MB of text, written into the SQLite
// store before the server starts), then a message in it whose model turn calls list_directory, which waits for the
// person. The server's RSS is read while that call waits, again after a restart has resumed the waiting run, and the
// run is then allowed and goes on to its next model turn, which must read the whole conversation again.
// Run: pnpm --filter @airlock/server exec tsx bench/long-chat.bench.ts [messages] [bytes per message]
import type { AppRouter } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import type { TRPCClient } from '@trpc/client';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { SqliteStore } from '../src/store';
import { startFakeModelServer } from './support/fake-model-server';
import { buildServer, startShippedServer, type ShippedServer } from './support/shipped-server';

const count = Number(process.argv[2] ?? 6000);
const bytes = Number(process.argv[3] ?? 20_000);
const SESSION = 'long-chat';
const RUN = 'run-long-chat';
const MiB = 1024 * 1024;
const mib = (value: number) => `${(value / MiB).toFixed(0)} MiB`;
console.log(`Machine: ${cpus().length} cores, Node ${process.version}, load average ${loadavg().map((v) => v.toFixed(2)).join(' ')} at the start.`);

const deadline = setTimeout(() => {
  console.error('bench: gave up after 15 minutes');
  process.exit(1);
}, 15 * 60_000);

const dataDir = mkdtempSync(join(tmpdir(), 'airlock-long-chat-'));
{
  const store = await SqliteStore.open({ directory: dataDir });
  const now = Date.now();
  await store.createSession({ sessionId: SESSION, title: 'A long chat', createdAt: now, updatedAt: now, confirmToolCalls: true, lastRunId: null });
  const filler = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27));
  for (let i = 0; i < count; i++) {
    const content = `${i} ${filler}`.slice(0, bytes);
    await store.appendMessage(SESSION, { role: i % 2 === 0 ? 'user' : 'assistant', content }, now);
  }
  await store.close();
}
console.log(`Chat: ${count} messages of ${bytes} bytes (${mib(count * bytes)} of text) in the SQLite store.\n`);

const model = await startFakeModelServer();
/** Resident and peak resident set of the process, from /proc, as a probe outside it sees them. */
const status = (server: ShippedServer) => {
  const text = readFileSync(`/proc/${server.pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(text)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
};
/** After two full collections, once the RSS holds still (V8 gives pages back from its own threads). */
const collected = async (server: ShippedServer) => {
  const inspector = await server.inspector();
  await model.idle();
  return inspector.settledMemoryUsage();
};
/** RSS as seen from outside at once, and after 30 s left alone (V8 collects an idle process's garbage by itself); then collected. */
const report = async (label: string, server: ShippedServer) => {
  await model.idle();
  const seen = status(server);
  await new Promise((resolve) => setTimeout(resolve, 30_000));
  const later = status(server);
  const after = await collected(server);
  console.log(
    `${label}: RSS ${mib(seen.rss)} (peak ${mib(seen.peak)}), ${mib(later.rss)} 30 s later; after two collections RSS ${mib(after.rss)}, V8 heap used ${mib(after.heapUsed)} of ${mib(after.heapTotal)}, C allocator's arena ${mib(after.mallocArena)}`,
  );
};

function connect(server: ShippedServer): { trpc: TRPCClient<AppRouter>; close: () => Promise<void> } {
  const client = createAirlockClient({ url: server.wsUrl, token: server.token, WebSocket });
  return { trpc: client.trpc, close: () => client.close() };
}

/** Follows the run (started by the first subscription, re-attached by the next) until it waits or ends. */
function follow(trpc: TRPCClient<AppRouter>): { waiting: Promise<void>; ended: Promise<string>; stop: () => void } {
  let onWaiting!: () => void;
  let onEnded!: (reason: string) => void;
  const waiting = new Promise<void>((resolve) => (onWaiting = resolve));
  const ended = new Promise<string>((resolve) => (onEnded = resolve));
  const sub = trpc.chat.stream.subscribe(
    { sessionId: SESSION, runId: RUN, message: 'go' },
    {
      onData: ({ data }) => {
        if (data.type === 'tool-start' && data.awaitingConfirmation) onWaiting();
        if (data.type === 'run-end') onEnded(`${data.reason}${data.error === undefined ? '' : `: ${data.error}`}`);
      },
      onError: (error) => onEnded(`subscription failed: ${error.message}`),
    },
  );
  return { waiting, ended, stop: () => sub.unsubscribe() };
}

/** Built first each time: the launcher runs the sources through tsx when one is newer than the build (edited meanwhile). */
async function builtAndStarted(): Promise<ShippedServer> {
  for (let tries = 1; ; tries++) {
    buildServer();
    try {
      return await startShippedServer({ modelUrl: model.baseURL, dataDir });
    } catch (error) {
      if (tries === 3 || !String(error).includes('does not run')) throw error;
    }
  }
}

let server = await builtAndStarted();
await report('Idle, the chat stored', server);
let client = connect(server);
const first = follow(client.trpc);
await first.waiting;
first.stop();
await report('One call waiting in the chat', server);
await client.close();
await server.close();

server = await builtAndStarted();
client = connect(server);
const [pending] = await client.trpc.chat.pending.query({ sessionId: SESSION });
if (pending === undefined) throw new Error('the run did not resume waiting after the restart');
await report('After a restart, the call waiting again', server);

const again = follow(client.trpc);
const requests = model.requests;
await client.trpc.chat.confirmTool.mutate({ sessionId: SESSION, approvalId: pending.approvalId, decision: 'allow' });
const reason = await again.ended;
again.stop();
if (reason !== 'done') throw new Error(`the run ended: ${reason}`);
const sent = model.lastMessages;
console.log(`Allowed: the run ended ${reason}; its next model turn sent ${sent} messages (${model.requests - requests} request).`);
// The system prompt, the chat, the person's message, the call and its result.
if (sent !== count + 4) throw new Error(`the model was sent ${sent} messages, not the ${count + 4} of the conversation`);
await report('After the run ended', server);

await client.close();
await server.close();
await model.close();
rmSync(dataDir, { recursive: true, force: true });
clearTimeout(deadline);
