// Where the shipped server's time and memory go, for whoever works on them (not part of `pnpm bench`).
//   (cpu and split take a third argument, allow or deny: the decision each round trip sends; default allow)
//   tsx bench/profile-server.ts cpu [iterations]   CPU profile of the server during approval round trips through
//                                                  @airlock/client: writes server-round-trip.cpuprofile (open it in
//                                                  Chrome DevTools) and prints where the server's own part of each
//                                                  round trip (as in split) goes: CPU busy time, self and inclusive.
//   tsx bench/profile-server.ts split [iterations] the server's own part of each round trip, on its own clock: from the
//                                                  confirm's WebSocket message to the write of the frame holding the
//                                                  tool-end (hooks put in through the inspector, none in the code).
//   tsx bench/profile-server.ts start [sessions]  CPU profile of the server while N sessions start at once, 4 per
//                                                  connection, until every one waits on its call (default 2,000).
//   tsx bench/profile-server.ts heap [sessions]    heap snapshots of the server before and with N sessions waiting
//                                                  (4 per connection): writes heap-before/after.heapsnapshot and
//                                                  prints the retained size per waiting session by constructor.
// The server is the build, started as `npm start` does (see support/shipped-server.ts).
import { type AppRouter } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import type { TRPCClient } from '@trpc/client';
import { readFileSync, writeFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { startFakeModelServer } from './support/fake-model-server';
import { ROUND_TRIP_MARKS } from './support/round-trip-marks';
import { startWaiting } from './support/start-waiting';
import { buildServer, startShippedServer } from './support/shipped-server';

/** Where an object's memory is charged in the heap report: the per-session objects of Airlock, tRPC and ws. */
const OWNERS = new Set([
  'Slot',
  'EventLog',
  'LogFollower',
  'runToolLoop',
  'runCalls',
  'Cancellation',
  'AbortController',
  'AbortSignal',
  'EventTarget',
  'WebSocket',
  'Socket',
  'TCP',
  'Receiver',
  'Sender',
  'IncomingMessage',
  'ConnectionState',
  'SocketSendWindow',
]);

const [mode = 'cpu', countArg, decisionArg = 'allow'] = process.argv.slice(2);
const decision = decisionArg === 'deny' ? 'deny' : 'allow';
buildServer();
const model = await startFakeModelServer();
const server = await startShippedServer({ modelUrl: model.baseURL });
const inspector = await server.inspector();

type Client = { trpc: TRPCClient<AppRouter>; close: () => Promise<void> };
function connect(): Client {
  const client = createAirlockClient({ url: server.wsUrl, token: server.token, WebSocket });
  return { trpc: client.trpc, close: () => client.close() };
}

/** Opens `count` connections, as many at once as the server keeps places for sockets without a token. */
async function connectMany(count: number): Promise<Client[]> {
  const clients: Client[] = [];
  while (clients.length < count) {
    const batch = Array.from({ length: Math.min(server.capacity.maxUnauthenticated, count - clients.length) }, connect);
    await Promise.all(batch.map((client) => client.trpc.model.info.query()));
    clients.push(...batch);
  }
  return clients;
}

/**
 * Connections that spent their burst of runs, held open to the end: one opened after they closed would take over
 * what they spent (the shipped rates carry over from a closed connection to the next).
 */
const spent: Client[] = [];

/** Round trips through @airlock/client, a fresh connection per burst of runs (the shipped limit). */
async function roundTrips(label: string, count: number): Promise<void> {
  for (let done = 0; done < count; ) {
    const client = connect();
    await client.trpc.model.info.query();
    for (let i = 0; i < server.capacity.runBurst && done < count; i++, done++) {
      const sessionId = `${label}-${done}`;
      const run = startWaiting(client.trpc, sessionId);
      const approvalId = await run.approvalId;
      await client.trpc.chat.confirmTool.mutate({ sessionId, approvalId, decision });
      await run.done;
      run.stop();
    }
    spent.push(client);
  }
}

async function readMarks(iterations: number): Promise<{ confirm: number[]; decision: number[]; toolEnd: number[] }> {
  const { result } = await inspector.send<{ result: { value: string } }>('Runtime.evaluate', { expression: 'JSON.stringify(globalThis.__benchMarks)', returnByValue: true });
  const marks = JSON.parse(result.value) as { confirm: number[]; decision: number[]; toolEnd: number[] };
  if (marks.confirm.length !== iterations || marks.toolEnd.length !== iterations) throw new Error(`marks: ${marks.confirm.length} confirms, ${marks.toolEnd.length} tool-ends`);
  return marks;
}

if (mode === 'split') {
  const iterations = Number(countArg ?? 300);
  await inspector.send('Runtime.evaluate', { expression: ROUND_TRIP_MARKS });
  await roundTrips('warm', 50);
  await inspector.send('Runtime.evaluate', { expression: 'for (const list of Object.values(globalThis.__benchMarks)) list.length = 0' });
  await roundTrips('split', iterations);
  const marks = await readMarks(iterations);
  const p = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))]! / 1000;
  const toDecision = marks.confirm.map((at, i) => marks.decision[i]! - at);
  const toEnd = marks.confirm.map((at, i) => marks.toolEnd[i]! - at);
  console.log(`Server's own part over ${iterations} round trips (confirm message → frame written), ms:`);
  console.log(`  to the tool-decision frame: p50 ${p(toDecision, 0.5).toFixed(3)}, p90 ${p(toDecision, 0.9).toFixed(3)}`);
  console.log(`  to the tool-end frame:      p50 ${p(toEnd, 0.5).toFixed(3)}, p90 ${p(toEnd, 0.9).toFixed(3)}`);
} else if (mode === 'start') {
  const sessions = Number(countArg ?? 2000);
  const clients = await connectMany(Math.ceil(sessions / 4));
  await inspector.startProfile(200);
  const from = Number(process.hrtime.bigint() / 1000n);
  const runs = Array.from({ length: sessions }, (_, i) => startWaiting(clients[i % clients.length]!.trpc, `start-${i}`));
  await Promise.all(runs.map((run) => run.approvalId));
  const to = Number(process.hrtime.bigint() / 1000n);
  const profile = (await inspector.stopProfile()) as CpuProfile;
  writeFileSync('server-start.cpuprofile', JSON.stringify(profile));
  console.log(`${sessions} sessions waiting after ${((to - from) / 1000).toFixed(0)} ms; per session:`);
  printSelfTimes(profile, [[from, to]], sessions);
  for (const run of runs) run.stop();
  await Promise.all(clients.map((c) => c.close()));
} else if (mode === 'cpu') {
  const iterations = Number(countArg ?? 400);
  await inspector.send('Runtime.evaluate', { expression: ROUND_TRIP_MARKS });
  await roundTrips('warm', 50);
  await inspector.send('Runtime.evaluate', { expression: 'for (const list of Object.values(globalThis.__benchMarks)) list.length = 0' });
  await inspector.startProfile(50);
  await roundTrips('rt', iterations);
  const profile = (await inspector.stopProfile()) as CpuProfile;
  writeFileSync('server-round-trip.cpuprofile', JSON.stringify(profile));
  const marks = await readMarks(iterations);
  const windows = marks.confirm.map((at, i): [number, number] => [at, marks.toolEnd[i]!]);
  const spans = windows.map(([from, to]) => to - from).sort((a, b) => a - b);
  console.log(`${iterations} round trips; the server's own part (confirm message → tool-end written) p50 ${(spans[spans.length >> 1]! / 1000).toFixed(3)} ms with the profiler on`);
  printSelfTimes(profile, windows);
} else if (mode === 'connections') {
  const count = Number(countArg ?? 1000);
  const warm = connect();
  await warm.trpc.model.info.query();
  await warm.close();
  await inspector.collectGarbage();
  await inspector.heapSnapshot('heap-before.heapsnapshot');
  const clients = await connectMany(count);
  await inspector.collectGarbage();
  await inspector.heapSnapshot('heap-after.heapsnapshot');
  printRetainedPerSession(readSnapshot('heap-before.heapsnapshot'), readSnapshot('heap-after.heapsnapshot'), count, 'connection');
  await Promise.all(clients.map((c) => c.close()));
} else {
  const sessions = Number(countArg ?? 2000);
  // Warm: every code path compiled before the first snapshot, so the difference is the sessions' own.
  const warm = connect();
  for (let i = 0; i < 8; i++) {
    const run = startWaiting(warm.trpc, `warm-${i}`);
    await warm.trpc.chat.confirmTool.mutate({ sessionId: `warm-${i}`, approvalId: await run.approvalId, decision: i % 2 ? 'allow' : 'deny' });
    await run.done;
    run.stop();
  }
  spent.push(warm);
  await model.idle();
  await inspector.collectGarbage();
  await inspector.heapSnapshot('heap-before.heapsnapshot');
  const clients = await connectMany(Math.ceil(sessions / 4));
  const runs = Array.from({ length: sessions }, (_, i) => startWaiting(clients[i % clients.length]!.trpc, `heap-${i}`));
  await Promise.all(runs.map((run) => run.approvalId));
  await model.idle();
  await inspector.collectGarbage();
  await inspector.heapSnapshot('heap-after.heapsnapshot');
  printRetainedPerSession(readSnapshot('heap-before.heapsnapshot'), readSnapshot('heap-after.heapsnapshot'), sessions);
  for (const run of runs) run.stop();
  await Promise.all(clients.map((c) => c.close()));
}
await Promise.all(spent.map((c) => c.close()));
await server.close();
await model.close();

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Self time by function over the samples taken inside `windows` (µs on the monotonic clock). */
function printSelfTimes(profile: CpuProfile, windows: [number, number][], perCount = windows.length): void {
  const byNode = new Map<number, number>();
  let at = profile.startTime;
  let w = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    while (w < windows.length && windows[w]![1] < at) w++;
    if (w < windows.length && windows[w]![0] <= at) byNode.set(id, (byNode.get(id) ?? 0) + delta);
  });
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const self = byNode.get(node.id) ?? 0;
    total += self;
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?)?/, '')}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + self);
  }
  const idle = [...byFunction].filter(([key]) => key.startsWith('(idle)')).reduce((sum, [, us]) => sum + us, 0);
  // Inclusive time: each sample counts once for every function on its stack.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));
  const inclusive = new Map<string, number>();
  for (const [id, us] of byNode) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url, lineNumber } = nodeById.get(at)!.callFrame;
      if (functionName === '' || functionName === '(root)' || functionName === '(idle)') continue;
      const key = `${functionName} ${url.replace(/^.*\//, '')}:${lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const n = perCount;
  console.log(`Inside the windows: ${(total / n).toFixed(0)} µs sampled per item, ${((total - idle) / n).toFixed(0)} µs busy. Self time per item, busiest first:`);
  for (const [key, us] of [...byFunction].filter(([key]) => !key.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, 45)) {
    console.log(`${(us / n).toFixed(1).padStart(8)} µs ${((us / (total - idle)) * 100).toFixed(1).padStart(5)}%  ${key}`);
  }
  console.log('Inclusive time per item (the function and what it calls), busiest first:');
  for (const [key, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 70)) {
    console.log(`${(us / n).toFixed(1).padStart(8)} µs  ${key}`);
  }
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

function readSnapshot(file: string): Snapshot {
  return JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
}

/**
 * The objects in `after` that were not in `before` (heap object ids are kept across snapshots), per session: by
 * constructor, and by owner, the nearest of `OWNERS` on a chain of first retainers (a heuristic: a cycle between a
 * generator, its promise and a closure is charged to whichever the chain meets first).
 */
function printRetainedPerSession(before: Snapshot, after: Snapshot, sessions: number, unit = 'waiting session'): void {
  const meta = after.snapshot.meta;
  const width = meta.node_fields.length;
  const edgeWidth = meta.edge_fields.length;
  const [typeAt, nameAt, idAt, sizeAt, edgesAt] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((field) => meta.node_fields.indexOf(field)) as [number, number, number, number, number];
  const [edgeTypeAt, toAt] = ['type', 'to_node'].map((field) => meta.edge_fields.indexOf(field)) as [number, number];
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const beforeIds = new Set<number>();
  for (let i = 0; i < before.nodes.length; i += width) beforeIds.add(before.nodes[i + idAt]!);
  const count = after.nodes.length / width;
  const added = new Uint8Array(count);
  for (let n = 0; n < count; n++) if (!beforeIds.has(after.nodes[n * width + idAt]!)) added[n] = 1;
  const retainer = new Int32Array(count).fill(-1);
  for (let n = 0, e = 0; n < count; n++) {
    for (let k = after.nodes[n * width + edgesAt]!; k > 0; k--, e += edgeWidth) {
      const kind = edgeTypes[after.edges[e + edgeTypeAt]!];
      if (kind === 'weak' || kind === 'shortcut') continue;
      const to = after.edges[e + toAt]! / width;
      if (retainer[to] === -1 || (added[n] && !added[retainer[to]!])) retainer[to] = n;
    }
  }
  const type = (n: number) => nodeTypes[after.nodes[n * width + typeAt]!]!;
  const name = (n: number) => after.strings[after.nodes[n * width + nameAt]!]!;
  const byConstructor = new Map<string, { count: number; size: number }>();
  const byOwner = new Map<string, { count: number; size: number }>();
  const add = (map: typeof byOwner, key: string, size: number) => {
    const entry = map.get(key) ?? { count: 0, size: 0 };
    entry.count++;
    entry.size += size;
    map.set(key, entry);
  };
  let total = 0;
  for (let n = 0; n < count; n++) {
    if (!added[n]) continue;
    const size = after.nodes[n * width + sizeAt]!;
    total += size;
    add(byConstructor, type(n) === 'object' || type(n) === 'closure' ? `${type(n) === 'closure' ? 'closure ' : ''}${name(n)}` : `(${type(n)})`, size);
    let owner = '(other)';
    for (let at = n, last = n, steps = 0; at !== -1 && steps < 40; last = at, at = retainer[at]!, steps++) {
      if ((type(at) === 'object' || type(at) === 'closure') && OWNERS.has(name(at))) {
        owner = name(at);
        break;
      }
      if (!added[at]) {
        owner = `(held by an older ${name(at).slice(0, 30) || type(at)}, through ${name(last).slice(0, 30) || type(last)})`;
        break;
      }
      owner = `(reached from ${type(last)} ${name(last).slice(0, 40)})`;
    }
    add(byOwner, owner, size);
  }
  const print = (title: string, map: typeof byOwner) => {
    console.log(title);
    for (const [key, { count: objects, size }] of [...map].sort((a, b) => b[1].size - a[1].size).slice(0, 40)) {
      if (size / sessions >= 8) console.log(`${(size / sessions).toFixed(0).padStart(7)} B ${(objects / sessions).toFixed(2).padStart(7)} objects  ${key}`);
    }
  };
  console.log(`Heap objects added per ${unit} (${sessions} of them): ${(total / sessions).toFixed(0)} bytes of self size.`);
  print('By constructor:', byConstructor);
  print('By owner:', byOwner);
}
