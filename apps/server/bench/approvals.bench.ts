// Approval benchmark over loopback, through the real tRPC WebSocket client against a server in its own process,
// configured as `npm start` ships it (see bench-server.ts): every row stays within the default capacity limits.
// Run: pnpm --filter @airlock/server bench
import { type AppRouter } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import type { TRPCClient } from '@trpc/client';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';

const require = createRequire(import.meta.url);
const tsxCli = require.resolve('tsx/cli');
const child = spawn(process.execPath, ['--expose-gc', tsxCli, fileURLToPath(new URL('./bench-server.ts', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
async function readJson<T>(): Promise<T> {
  const next = await lines.next();
  if (next.done) throw new Error('bench server exited');
  return JSON.parse(next.value) as T;
}
async function ask<T>(command: string): Promise<T> {
  child.stdin.write(`${command}\n`);
  return readJson<T>();
}
type Mem = { rss: number; heapUsed: number; pending: number; activeRuns: number };
type Capacity = { maxUnauthenticated: number; runsPerConnection: number; runBurst: number; maxConnections: number };

// Bounded in time whatever happens: a stuck row must not hold the machine.
const deadline = setTimeout(() => {
  console.error('bench: gave up after 15 minutes');
  child.kill();
  process.exit(1);
}, 15 * 60_000);

const { token, wsUrl, echoUrl, capacity } = await readJson<{ token: string; wsUrl: string; echoUrl: string; capacity: Capacity }>();
console.log(
  `Server at shipped defaults: ${capacity.maxConnections} connections, ${capacity.maxUnauthenticated} without a token, ${capacity.runsPerConnection} runs and a burst of ${capacity.runBurst} new runs per connection.\n`,
);

/** A client as integrators get it: `@airlock/client`, whose link writes each request at once. */
function connect(socketClass: new (url: string) => WebSocket = WebSocket): { trpc: TRPCClient<AppRouter>; close: () => Promise<void> } {
  const client = createAirlockClient({ url: wsUrl, token, WebSocket: socketClass });
  return { trpc: client.trpc, close: () => client.close() };
}

/** When the client socket last wrote a confirm, and when the first frame after it arrived (performance.now()). */
const wire = { confirmWritten: 0, firstAnswer: 0, awaitingAnswer: false };
class TimedWebSocket extends WebSocket {
  constructor(url: string) {
    super(url);
    this.on('message', () => {
      if (!wire.awaitingAnswer) return;
      wire.awaitingAnswer = false;
      wire.firstAnswer = performance.now();
    });
  }

  override send(data: unknown, ...rest: unknown[]): void {
    if (String(data).includes('"chat.confirmTool"')) {
      wire.confirmWritten = performance.now();
      wire.awaitingAnswer = true;
    }
    (super.send as (...args: unknown[]) => void).call(this, data, ...rest);
  }
}

interface Watch {
  approvalId: Promise<string>;
  ended: Promise<void>;
  toolEnd: Promise<number>;
  unsubscribe(): void;
}

function watch(trpc: TRPCClient<AppRouter>, sessionId: string, runId: string, message = 'go'): Watch {
  let onStart!: (id: string) => void;
  let onEnd!: () => void;
  let onToolEnd!: (at: number) => void;
  const approvalId = new Promise<string>((resolve) => (onStart = resolve));
  const ended = new Promise<void>((resolve) => (onEnd = resolve));
  const toolEnd = new Promise<number>((resolve) => (onToolEnd = resolve));
  const sub = trpc.chat.stream.subscribe(
    { sessionId, runId, message },
    {
      onData: ({ data }) => {
        if (data.type === 'tool-start' && data.awaitingConfirmation) onStart(data.approvalId);
        else if (data.type === 'tool-end') onToolEnd(performance.now());
        else if (data.type === 'run-end') onEnd();
      },
      onError: (error) => {
        console.error(`run ${runId} failed: ${error.message}`);
        process.exit(1);
      },
    },
  );
  return { approvalId, ended, toolEnd, unsubscribe: () => sub.unsubscribe() };
}

/**
 * Opens `count` authenticated connections, never more than the server's places for sockets without a token
 * at once, as clients arriving over time would: a burst beyond them makes the oldest give way.
 */
async function connectMany(count: number): Promise<ReturnType<typeof connect>[]> {
  const connections: ReturnType<typeof connect>[] = [];
  for (let i = 0; i < count; i += capacity.maxUnauthenticated) {
    const batch = Array.from({ length: Math.min(capacity.maxUnauthenticated, count - i) }, () => connect());
    await Promise.all(batch.map((c) => c.trpc.model.info.query()));
    connections.push(...batch);
  }
  return connections;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ms = (value: number) => value.toFixed(3);

// 1. Round trip: confirm sent → tool-end received, with an instant tool. A connection starts at most a burst of runs
// before the per-minute rate applies, so a fresh one is opened (outside the timing) after each burst.
{
  let current = connect(TimedWebSocket);
  let trpc = current.trpc;
  const samples: number[] = [];
  // Where the time goes, from the client's side: the client library before the frame is written; the wire and
  // the server until the first answer frame arrives; the client library until onData has the tool-end.
  const parts: [number[], number[], number[]] = [[], [], []];
  for (let i = 0; i < 320; i++) {
    if (i > 0 && i % capacity.runBurst === 0) {
      await current.close();
      current = connect(TimedWebSocket);
      trpc = current.trpc;
      await trpc.model.info.query();
    }
    const run = watch(trpc, `rt-${i}`, `rt-run-${i}`);
    const approvalId = await run.approvalId;
    const sent = performance.now();
    await trpc.chat.confirmTool.mutate({ sessionId: `rt-${i}`, approvalId, decision: 'allow' });
    const toolEndAt = await run.toolEnd;
    if (i >= 20) {
      samples.push(toolEndAt - sent);
      parts[0].push(wire.confirmWritten - sent);
      parts[1].push(wire.firstAnswer - wire.confirmWritten);
      parts[2].push(toolEndAt - wire.firstAnswer);
    }
    await run.ended;
    run.unsubscribe();
  }
  samples.sort((a, b) => a - b);
  for (const part of parts) part.sort((a, b) => a - b);
  console.log(`Approval round trip (confirm sent → tool-end received), ${samples.length} iterations after 20 warm-up:`);
  console.log(`  p50 ${ms(percentile(samples, 50))} ms, p99 ${ms(percentile(samples, 99))} ms, max ${ms(samples.at(-1)!)} ms`);
  console.log(
    `  p50 of its parts: client until the frame is written ${ms(percentile(parts[0], 50))} ms; wire and server until the first answer ${ms(percentile(parts[1], 50))} ms; client from there to onData(tool-end) ${ms(percentile(parts[2], 50))} ms`,
  );
  await current.close();
}

// 1b. The same round trip from a raw WebSocket speaking tRPC's JSON-RPC messages: no client-side batching delay.
{
  type Message = { id: number; result?: { type: string; data?: { id: string; data: { type?: string; approvalId?: string } } } };
  const waiters = new Map<number, (message: Message) => void>();
  const open = async () => {
    const opened = new WebSocket(`${wsUrl}?connectionParams=1`);
    await new Promise<void>((resolve, reject) => {
      opened.once('open', () => resolve());
      opened.once('error', reject);
    });
    opened.send(JSON.stringify({ method: 'connectionParams', data: { token } }));
    opened.on('message', (raw: Buffer) => {
      if (raw.toString() === 'PING') return opened.send('PONG');
      const message = JSON.parse(raw.toString()) as Message;
      waiters.get(message.id)?.(message);
    });
    return opened;
  };
  let socket = await open();
  let nextId = 1;
  const samples: number[] = [];
  for (let i = 0; i < 320; i++) {
    if (i > 0 && i % capacity.runBurst === 0) {
      socket.close();
      socket = await open();
    }
    const subId = nextId++;
    const confirmId = nextId++;
    const approvalId = await new Promise<string>((resolve) => {
      waiters.set(subId, (m) => {
        const event = m.result?.data?.data;
        if (event?.type === 'tool-start' && event.approvalId) resolve(event.approvalId);
      });
      socket.send(JSON.stringify({ id: subId, method: 'subscription', params: { path: 'chat.stream', input: { sessionId: `raw-${i}`, runId: `raw-run-${i}`, message: 'go' } } }));
    });
    const toolEnd = new Promise<number>((resolve) => {
      waiters.set(subId, (m) => {
        if (m.result?.data?.data.type === 'tool-end') resolve(performance.now());
      });
    });
    const sent = performance.now();
    socket.send(JSON.stringify({ id: confirmId, method: 'mutation', params: { path: 'chat.confirmTool', input: { sessionId: `raw-${i}`, approvalId, decision: 'allow' } } }));
    const at = await toolEnd;
    if (i >= 20) samples.push(at - sent);
    socket.send(JSON.stringify({ id: subId, method: 'subscription.stop' }));
    waiters.delete(subId);
  }
  samples.sort((a, b) => a - b);
  console.log(`Same, from a raw WebSocket client (tRPC JSON-RPC messages, no batching), ${samples.length} iterations:`);
  console.log(`  p50 ${ms(percentile(samples, 50))} ms, p99 ${ms(percentile(samples, 99))} ms, max ${ms(samples.at(-1)!)} ms`);
  socket.close();
}

// 1c. The floor on this machine: a bare WebSocket echo between the same two processes (no tRPC, no Airlock),
// sent at once after the previous answer and after 1 ms idle (the server process asleep, as when a person decides).
{
  const socket = new WebSocket(echoUrl);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const echoOnce = () =>
    new Promise<number>((resolve) => {
      const sent = performance.now();
      socket.once('message', () => resolve(performance.now() - sent));
      socket.send('{"ping":1}');
    });
  for (const idleMs of [0, 1]) {
    const samples: number[] = [];
    for (let i = 0; i < 320; i++) {
      if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
      const took = await echoOnce();
      if (i >= 20) samples.push(took);
    }
    samples.sort((a, b) => a - b);
    console.log(`Floor: bare WebSocket echo between the two processes, ${idleMs === 0 ? 'sent at once' : `after ${idleMs} ms idle`}, ${samples.length} iterations:`);
    console.log(`  p50 ${ms(percentile(samples, 50))} ms, p99 ${ms(percentile(samples, 99))} ms`);
  }
  socket.close();
}

// 2. N sessions each waiting on an approval at once, each connection holding as many runs as the shipped limit
// allows (4: 10,000 sessions over 2,500 connections). The baseline is taken before the connections open, so the
// per-session figures include each session's share of its connection. They are printed for 10,000 only: below
// that, one-time costs (compiled code, caches) swamp them.
console.log(
  '\n| sessions pending | connections | connecting all (ms) | time until all pending (ms) | drain after confirming all (ms) | server RSS all pending (MiB) | RSS per pending session, connection included (KiB) | heap per pending session, connection included (KiB) | RSS per connection, before its runs (KiB) | misrouted |',
);
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
// AIRLOCK_BENCH_QUICK=1 stops after the round trips (for a quick look; the figures in docs come from full runs).
for (const n of process.env.AIRLOCK_BENCH_QUICK === '1' ? [] : [1, 64, 1_000, 10_000]) {
  await ask('gc');
  const base = await ask<Mem>('mem');
  const tc = performance.now();
  const connections = await connectMany(Math.ceil(n / capacity.runsPerConnection));
  const connecting = performance.now() - tc;
  await ask('gc');
  const connected = await ask<Mem>('mem');
  const t0 = performance.now();
  const runs = Array.from({ length: n }, (_, i) => watch(connections[i % connections.length]!.trpc, `p${n}-${i}`, `p${n}-run-${i}`));
  const ids = await Promise.all(runs.map((run) => run.approvalId));
  const allPending = performance.now() - t0;
  await ask('gc');
  const loaded = await ask<Mem>('mem');
  if (loaded.pending !== n) throw new Error(`expected ${n} pending, server has ${loaded.pending}`);
  const t1 = performance.now();
  const decisions = ids.map((_, i) => (i % 2 ? 'allow' : 'deny'));
  const answers = await Promise.all(
    ids.map((approvalId, i) => connections[i % connections.length]!.trpc.chat.confirmTool.mutate({ sessionId: `p${n}-${i}`, approvalId, decision: decisions[i]! })),
  );
  await Promise.all(runs.map((run) => run.ended));
  const drain = performance.now() - t1;
  const misrouted = answers.filter((a, i) => a.status !== 'resolved' || a.decision !== decisions[i]).length;
  const rssPer = (loaded.rss - base.rss) / n / 1024;
  const rssPerConnection = (connected.rss - base.rss) / connections.length / 1024;
  const heapPer = (loaded.heapUsed - base.heapUsed) / n / 1024;
  console.log(
    `| ${n.toLocaleString('en')} | ${connections.length.toLocaleString('en')} | ${connecting.toFixed(1)} | ${allPending.toFixed(1)} | ${drain.toFixed(1)} | ${(loaded.rss / 2 ** 20).toFixed(1)} | ${n >= 10_000 ? rssPer.toFixed(2) : '–'} | ${n >= 10_000 ? heapPer.toFixed(2) : '–'} | ${n >= 10_000 ? rssPerConnection.toFixed(2) : '–'} | ${misrouted} |`,
  );
  for (const run of runs) run.unsubscribe();
  await Promise.all(connections.map((c) => c.close()));
}

// 3. Text-delta relay throughput.
{
  const { trpc, close } = connect();
  const count = 100_000;
  let received = 0;
  let bytes = 0;
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const sub = trpc.chat.stream.subscribe(
      { sessionId: 'stream', runId: 'stream-run', message: `stream ${count}` },
      {
        onData: ({ data }) => {
          if (data.type === 'text-delta') {
            received++;
            bytes += data.text.length;
          } else if (data.type === 'run-end') {
            sub.unsubscribe();
            resolve();
          }
        },
        onError: reject,
      },
    );
  });
  const seconds = (performance.now() - t0) / 1000;
  console.log(`\nText-delta relay: ${received.toLocaleString('en')} deltas (${(bytes / 1024).toFixed(0)} KiB of text) in ${seconds.toFixed(2)} s = ${Math.round(received / seconds).toLocaleString('en')} deltas/s`);
  await close();
}

await ask('quit').catch(() => undefined);
clearTimeout(deadline);
child.kill();
