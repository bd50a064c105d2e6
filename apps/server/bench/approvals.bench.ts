// Approval benchmark over loopback against the server as `npm start` runs it: dist/main.js (built first) started by
// the launcher, shipped settings (no capacity flag, the SQLite store in a temporary data folder), a model server on
// 127.0.0.1 that answers at once, and the built-in list_directory on an empty workspace as the tool. Clients connect
// through @airlock/client, as integrators do. The server's memory is read through its inspector (see support/).
// Run: pnpm --filter @airlock/server exec tsx bench/approvals.bench.ts [round-trip] [capacity] [relay]
// (default all three parts; AIRLOCK_BENCH_QUICK=1: fewer rounds and rows, for a short look, not for the docs)
import { type AppRouter } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import type { TRPCClient } from '@trpc/client';
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { startFakeModelServer } from './support/fake-model-server';
import type { MemoryUsage } from './support/inspector';
import { buildServer, startShippedServer } from './support/shipped-server';

const quick = process.env.AIRLOCK_BENCH_QUICK === '1';
const sections = new Set(process.argv.length > 2 ? process.argv.slice(2) : ['round-trip', 'capacity', 'relay']);
const load = () => loadavg().map((value) => value.toFixed(2)).join(' ');
console.log(`Machine: ${cpus().length} cores, Node ${process.version}, load average ${load()} at the start.`);

buildServer();
const model = await startFakeModelServer();
const server = await startShippedServer({ modelUrl: model.baseURL });
const { token, wsUrl, capacity } = server;
const reference = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./seed-design-server.ts', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
const { url: seedUrl, echoUrl } = JSON.parse((await createInterface({ input: reference.stdout })[Symbol.asyncIterator]().next()).value as string) as { url: string; echoUrl: string };

// Bounded in time whatever happens: a stuck row must not hold the machine.
const deadline = setTimeout(() => {
  console.error('bench: gave up after 20 minutes');
  void server.close();
  reference.kill();
  process.exit(1);
}, 20 * 60_000);

console.log(
  `Server: node bin/airlock.mjs (dist/main.js, pid ${server.pid}) at shipped defaults: ${capacity.maxConnections} connections, ${capacity.maxUnauthenticated} without a token, ${capacity.runsPerConnection} runs and a burst of ${capacity.runBurst} new runs per connection; SQLite store.\n`,
);

/**
 * A client as integrators get it: `@airlock/client`, whose link writes each request at once. Its decisions get a
 * deadline of five minutes rather than the shipped 10 s, which is meant for a person's click, and it does not ping a
 * silent server: the capacity part sends 10,000 decisions at once from this one process over 2,500 connections, and
 * on a loaded machine the last the server reaches can pass 10 s, and this process can read a PONG later than the
 * 5 s it waits for one (either failed the run, measuring nothing).
 */
function connect(socketClass: new (url: string) => WebSocket = WebSocket): { trpc: TRPCClient<AppRouter>; close: () => Promise<void> } {
  const client = createAirlockClient({ url: wsUrl, token, WebSocket: socketClass, decisionTimeoutMs: 300_000, keepAlive: false });
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
        else if (data.type === 'run-end') {
          if (data.reason !== 'done') fail(`run ${runId} ended: ${data.reason} ${data.error ?? ''}`);
          onEnd();
        }
      },
      onError: (error) => fail(`run ${runId} failed: ${error.message}`),
    },
  );
  return { approvalId, ended, toolEnd, unsubscribe: () => sub.unsubscribe() };
}

function fail(message: string): never {
  console.error(message);
  void server.close();
  reference.kill();
  process.exit(1);
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
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${ms(percentile(sorted, 50))} ms, p99 ${ms(percentile(sorted, 99))} ms, max ${ms(sorted.at(-1)!)} ms`;
};

// 1. Round trip: confirm sent → tool-end received. The three clients take turns, a burst of runs each (a connection
// starts at most a burst of runs before the per-minute rate applies; a fresh one is opened outside the timing, and the
// spent ones stay open to the end, since a connection opened after one closed takes over what it spent), so a change
// in the machine's load falls on all three alike. The first round of each is warm-up.
const spent: (() => Promise<void>)[] = [];
const rounds = quick ? 8 : 33;
const burst = capacity.runBurst;

/**
 * The time a person takes to read a card before deciding, in the rounds that model one: no one decides within a
 * millisecond of the card showing, and what a server does in that time (see WalSyncAhead) is part of its design.
 */
const PERSON_READS_MS = 20;
const personReads = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A deny runs no tool in either design: its round trip is the design's own cost, with nothing of the tool's. */
type Decision = 'allow' | 'deny';

/** Through @airlock/client; also splits each sample into client, wire-and-server and client parts. */
async function airlockRound(round: number, samples: number[], parts: [number[], number[], number[]], decision: Decision = 'allow', pauseMs = 0): Promise<void> {
  const { trpc, close } = connect(TimedWebSocket);
  await trpc.model.info.query();
  for (let i = 0; i < burst; i++) {
    const kind = pauseMs > 0 ? `${decision}-after-${pauseMs}ms` : decision;
    const sessionId = `rt-${kind}-${round}-${i}`;
    const run = watch(trpc, sessionId, `rt-run-${kind}-${round}-${i}`);
    const approvalId = await run.approvalId;
    if (pauseMs > 0) await personReads(pauseMs);
    const sent = performance.now();
    await trpc.chat.confirmTool.mutate({ sessionId, approvalId, decision });
    const toolEndAt = await run.toolEnd;
    if (round > 0) {
      samples.push(toolEndAt - sent);
      parts[0].push(wire.confirmWritten - sent);
      parts[1].push(wire.firstAnswer - wire.confirmWritten);
      parts[2].push(toolEndAt - wire.firstAnswer);
    }
    await run.ended;
    run.unsubscribe();
  }
  spent.push(close);
}

/** From a raw WebSocket speaking tRPC's JSON-RPC messages to the same server: no client library at all. */
async function rawRound(round: number, samples: number[]): Promise<void> {
  type Message = { id: number; result?: { type: string; data?: { id: string; data: { type?: string; approvalId?: string; reason?: string } } } };
  const waiters = new Map<number, (message: Message) => void>();
  const socket = new WebSocket(`${wsUrl}?connectionParams=1`);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ method: 'connectionParams', data: { token } }));
  socket.on('message', (raw: Buffer) => {
    if (raw.toString() === 'PING') return socket.send('PONG');
    const message = JSON.parse(raw.toString()) as Message;
    waiters.get(message.id)?.(message);
  });
  let nextId = 1;
  for (let i = 0; i < burst; i++) {
    const sessionId = `raw-${round}-${i}`;
    const subId = nextId++;
    const confirmId = nextId++;
    const approvalId = await new Promise<string>((resolve) => {
      waiters.set(subId, (m) => {
        const event = m.result?.data?.data;
        if (event?.type === 'tool-start' && event.approvalId) resolve(event.approvalId);
      });
      socket.send(JSON.stringify({ id: subId, method: 'subscription', params: { path: 'chat.stream', input: { sessionId, runId: `raw-run-${round}-${i}`, message: 'go' } } }));
    });
    let toolEndAt = 0;
    const ended = new Promise<void>((resolve) => {
      waiters.set(subId, (m) => {
        const type = m.result?.data?.data.type;
        if (type === 'tool-end') toolEndAt = performance.now();
        else if (type === 'run-end') resolve();
      });
    });
    const sent = performance.now();
    socket.send(JSON.stringify({ id: confirmId, method: 'mutation', params: { path: 'chat.confirmTool', input: { sessionId, approvalId, decision: 'allow' } } }));
    await ended;
    if (round > 0) samples.push(toolEndAt - sent);
    socket.send(JSON.stringify({ id: subId, method: 'subscription.stop' }));
    waiters.delete(subId);
  }
  spent.push(async () => socket.close());
}

/** The seed design (seed-design-server.ts): events as server-sent events, the decision as a POST, both with fetch. */
async function seedRound(round: number, samples: number[], toolTimes: number[], decision: Decision = 'allow', pauseMs = 0): Promise<void> {
  for (let i = 0; i < burst; i++) {
    const sessionId = `seed-${decision}${pauseMs > 0 ? `-after-${pauseMs}ms` : ''}-${round}-${i}`;
    const response = await fetch(`${seedUrl}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session_id: sessionId, message: 'go' }) });
    const events = serverSentEvents(response.body!);
    let approvalId: string | undefined;
    while (approvalId === undefined) {
      const event = (await events.next()).value as { type: string; approval_id?: string } | undefined;
      if (event?.type === 'tool_start') approvalId = event.approval_id;
    }
    if (pauseMs > 0) await personReads(pauseMs);
    const sent = performance.now();
    const answer = await fetch(`${seedUrl}/tool-confirm`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ approval_id: approvalId, session_id: sessionId, decision }) });
    const { resolved } = (await answer.json()) as { resolved: boolean };
    if (!resolved) fail('seed design: the decision found no waiting call');
    let toolEndAt = 0;
    for await (const event of events) {
      const { type, tool_ms: toolMs } = event as { type: string; tool_ms?: number };
      if (type !== 'tool_end') continue;
      toolEndAt = performance.now();
      if (round > 0 && decision === 'allow') toolTimes.push(toolMs!);
    }
    if (round > 0) samples.push(toolEndAt - sent);
  }
}

async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown, void, undefined> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (frame.startsWith('data: ')) yield JSON.parse(frame.slice(6));
    }
  }
}

if (sections.has('round-trip')) {
  const airlock: number[] = [];
  const parts: [number[], number[], number[]] = [[], [], []];
  const raw: number[] = [];
  const seed: number[] = [];
  const toolTimes: number[] = [];
  const airlockDeny: number[] = [];
  const denyParts: [number[], number[], number[]] = [[], [], []];
  const seedDeny: number[] = [];
  const airlockPaused: number[] = [];
  const pausedParts: [number[], number[], number[]] = [[], [], []];
  const seedPaused: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await airlockRound(round, airlock, parts);
    await rawRound(round, raw);
    await seedRound(round, seed, toolTimes);
    await airlockRound(round, airlockDeny, denyParts, 'deny');
    await seedRound(round, seedDeny, [], 'deny');
    await airlockRound(round, airlockPaused, pausedParts, 'allow', PERSON_READS_MS);
    await seedRound(round, seedPaused, [], 'allow', PERSON_READS_MS);
  }
  const p50 = (samples: number[]) => percentile([...samples].sort((a, b) => a - b), 50);
  console.log(`Approval round trip (confirm sent → tool-end received), ${airlock.length} iterations each after ${burst} warm-up, clients taking turns:`);
  console.log(`  @airlock/client:                            ${summary(airlock)}`);
  console.log(
    `    p50 of its parts: client until the frame is written ${ms(p50(parts[0]))} ms; wire and server until the first answer ${ms(p50(parts[1]))} ms; client from there to onData(tool-end) ${ms(p50(parts[2]))} ms`,
  );
  console.log(`  raw WebSocket, tRPC messages, same server:  ${summary(raw)}`);
  console.log(`  seed design (SSE + POST, fetch), Node:      ${summary(seed)}`);
  console.log(`  seed design p50 / @airlock/client p50: ${(p50(seed) / p50(airlock)).toFixed(2)}×`);
  console.log(`  the tool itself (list_directory of an empty folder, timed in the seed design's process): p50 ${ms(p50(toolTimes))} ms`);
  console.log(`Deny round trip (confirm deny sent → tool-end received; no tool runs), ${airlockDeny.length} iterations each, taking turns with the above:`);
  console.log(`  @airlock/client:                            ${summary(airlockDeny)}`);
  console.log(
    `    p50 of its parts: client until the frame is written ${ms(p50(denyParts[0]))} ms; wire and server until the first answer ${ms(p50(denyParts[1]))} ms; client from there to onData(tool-end) ${ms(p50(denyParts[2]))} ms`,
  );
  console.log(`  seed design (SSE + POST, fetch), Node:      ${summary(seedDeny)}`);
  console.log(`  seed design p50 / @airlock/client p50: ${(p50(seedDeny) / p50(airlockDeny)).toFixed(2)}×`);
  console.log(`Allow round trip sent ${PERSON_READS_MS} ms after the card arrived (a person reading it), ${airlockPaused.length} iterations each, taking turns with the above:`);
  console.log(`  @airlock/client:                            ${summary(airlockPaused)}`);
  console.log(
    `    p50 of its parts: client until the frame is written ${ms(p50(pausedParts[0]))} ms; wire and server until the first answer ${ms(p50(pausedParts[1]))} ms; client from there to onData(tool-end) ${ms(p50(pausedParts[2]))} ms`,
  );
  console.log(`  seed design (SSE + POST, fetch), Node:      ${summary(seedPaused)}`);
  console.log(`  seed design p50 / @airlock/client p50: ${(p50(seedPaused) / p50(airlockPaused)).toFixed(2)}×`);
}

// 1b. The floor on this machine: a bare WebSocket echo between two processes (no tRPC, no Airlock), sent at once
// after the previous answer and after 1 ms idle (the other process asleep, as when a person decides).
if (sections.has('round-trip')) {
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
    console.log(`  floor, bare WebSocket echo between two processes, ${idleMs === 0 ? 'sent at once' : `after ${idleMs} ms idle`}: ${summary(samples)}`);
  }
  socket.close();
}

// 2. N sessions each waiting on an approval at once, each connection holding as many runs as the shipped limit
// allows (4: 10,000 sessions over 2,500 connections). The baseline is taken before the connections open, so the
// per-session figures include each session's share of its connection. Memory is read after two full collections,
// once the model client's pooled connections have closed and the RSS has settled. Per-session figures are printed for 10,000 only:
// below that, one-time costs (compiled code, caches) swamp them.
const memory = async () => {
  const inspector = await server.inspector();
  await model.idle();
  return inspector.settledMemoryUsage();
};
/**
 * Where the RSS per waiting session goes: V8's heap in use, V8's heap pages committed but free (after the
 * collections: fragmentation and room to grow), the C allocator's main arena (SQLite, sockets, buffers; it seldom
 * gives memory back, so it holds the high-water mark of the start-up burst), and the rest.
 */
const breakdowns: string[] = [];
function breakdown(base: MemoryUsage, loaded: MemoryUsage, n: number): string {
  const per = (bytes: number) => (bytes / n / 1024).toFixed(2);
  const used = loaded.heapUsed - base.heapUsed;
  const free = loaded.heapTotal - loaded.heapUsed - (base.heapTotal - base.heapUsed);
  const arena = loaded.mallocArena - base.mallocArena;
  const rest = loaded.rss - base.rss - used - free - (Number.isNaN(arena) ? 0 : arena);
  return `  ${n.toLocaleString('en')} waiting: RSS per session ${per(loaded.rss - base.rss)} KiB = V8 heap in use ${per(used)} + V8 heap free ${per(free)} + malloc main arena ${Number.isNaN(arena) ? '–' : per(arena)} + the rest ${per(rest)} (KiB)`;
}
if (sections.has('capacity')) console.log(
  '\n| sessions pending | connections | connecting all (ms) | time until all pending (ms) | drain after confirming all (ms) | server RSS all pending (MiB) | RSS per pending session, connection included (KiB) | heap per pending session, connection included (KiB) | RSS per connection, before its runs (KiB) | misrouted |',
);
if (sections.has('capacity')) console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const n of !sections.has('capacity') ? [] : quick ? [1, 64] : [1, 64, 1_000, 10_000]) {
  const base = await memory();
  const tc = performance.now();
  const connections = await connectMany(Math.ceil(n / capacity.runsPerConnection));
  const connecting = performance.now() - tc;
  const connected = await memory();
  const t0 = performance.now();
  const runs = Array.from({ length: n }, (_, i) => watch(connections[i % connections.length]!.trpc, `p${n}-${i}`, `p${n}-run-${i}`));
  const ids = await Promise.all(runs.map((run) => run.approvalId));
  const allPending = performance.now() - t0;
  const loaded = await memory();
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
  const big = n >= 10_000;
  console.log(
    `| ${n.toLocaleString('en')} | ${connections.length.toLocaleString('en')} | ${connecting.toFixed(1)} | ${allPending.toFixed(1)} | ${drain.toFixed(1)} | ${(loaded.rss / 2 ** 20).toFixed(1)} | ${big ? rssPer.toFixed(2) : '–'} | ${big ? heapPer.toFixed(2) : '–'} | ${big ? rssPerConnection.toFixed(2) : '–'} | ${misrouted} |`,
  );
  if (big) {
    // Read again once every run has ended (the sessions and connections stay): what the arena holds then is what
    // the burst left behind, not what the waiting runs need.
    const ended = await memory();
    breakdowns.push(breakdown(base, loaded, n), `    after every run ended: malloc main arena ${((ended.mallocArena - base.mallocArena) / 2 ** 20).toFixed(1)} MiB above the baseline (${((loaded.mallocArena - base.mallocArena) / 2 ** 20).toFixed(1)} MiB while all waited)`);
  }
  for (const run of runs) run.unsubscribe();
  await Promise.all(connections.map((c) => c.close()));
}
for (const line of breakdowns) console.log(line);

// 3. Text-delta relay throughput: the model server streams, the server relays and stores, the client receives.
if (sections.has('relay')) {
  const { trpc, close } = connect();
  const count = quick ? 20_000 : 100_000;
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
  // The server joins deltas that come while the one before is not yet handed on: fewer events than deltas arrive.
  const relayed = bytes / 20;
  console.log(`\nText-delta relay: ${relayed.toLocaleString('en')} deltas (${(bytes / 1024).toFixed(0)} KiB of text, in ${received.toLocaleString('en')} events) in ${seconds.toFixed(2)} s = ${Math.round(relayed / seconds).toLocaleString('en')} deltas/s`);
  await close();
}

await Promise.all(spent.map((close) => close()));
console.log(`\nLoad average at the end: ${load()}.`);
clearTimeout(deadline);
await server.close();
await model.close();
reference.stdin.end();
