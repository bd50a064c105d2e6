// Two instances on one PostgreSQL database, each the server as `npm start` runs it: dist/main.js (built first)
// started by the launcher with the shipped settings, plus --database-url, --database-schema (a fresh schema, dropped
// at the end) and --instance-id. The model is a server on 127.0.0.1 that answers at once with one call to the
// built-in list_directory (instant, on an empty workspace) and then a short text. Clients connect through
// @airlock/client, as integrators do. Prints one line and exits 0 when no PostgreSQL answers.
// Run: pnpm --filter @airlock/server exec tsx bench/cluster.bench.ts [round-trip] [capacity]
// (default both parts; AIRLOCK_BENCH_QUICK=1: fewer rounds and runs, for a short look, not for the docs)
// AIRLOCK_BENCH_WINDOW=N: the capacity part starts and decides runs N at a time (default 256; 0: all at once).
// PostgreSQL: AIRLOCK_TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test, as the tests use.
import { type AppRouter } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import type { TRPCClient } from '@trpc/client';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { escapeIdentifier } from 'pg';
import { WebSocket } from 'ws';
import { openTestDatabase, probeTestDatabase, withClient, type TestDatabase } from '../test/support/postgres';
import { BENCH_TOOL, startFakeModelServer, type FakeModelServer } from './support/fake-model-server';
import type { MemoryUsage } from './support/inspector';
import { buildServer, startShippedServer, type ShippedServer } from './support/shipped-server';

const probe = await probeTestDatabase();
if (!probe.available) {
  console.log(`Several instances (PostgreSQL): skipped, ${probe.reason}`);
  process.exit(0);
}

const quick = process.env.AIRLOCK_BENCH_QUICK === '1';
const sections = new Set(process.argv.length > 2 ? process.argv.slice(2) : ['round-trip', 'capacity']);
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
console.log(`Machine: ${cpus().length} cores, Node ${process.version}. At the start: ${uptime()}`);

// Everything started is stopped and the schema dropped, whatever happens; a stuck part must not hold the machine.
let db: TestDatabase | undefined;
let model: FakeModelServer | undefined;
const instances: ShippedServer[] = [];
let cleaning: Promise<void> | undefined;
const cleanUp = () =>
  (cleaning ??= (async () => {
    await Promise.allSettled(instances.map((instance) => instance.close()));
    await model?.close();
    await db?.[Symbol.asyncDispose]();
  })());
let failures = 0;
async function fail(message: string): Promise<never> {
  // Only the first: one cause often fails many runs at once.
  if (failures++ === 0) console.error(`cluster bench: ${message}`);
  await cleanUp().catch((error: unknown) => console.error(`cluster bench: cleaning up failed: ${String(error)}`));
  process.exit(1);
}
const deadline = setTimeout(() => void fail('gave up after 30 minutes'), 30 * 60_000);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void fail(`stopped by ${signal}`));
process.on('unhandledRejection', (error) => void fail(`unexpected: ${String(error)}`));

interface Instance {
  name: string;
  server: ShippedServer;
}

async function startInstances(): Promise<{ a: Instance; b: Instance; database: TestDatabase; fake: FakeModelServer }> {
  db = await openTestDatabase();
  buildServer();
  const fake = (model = await startFakeModelServer());
  const database = db;
  const start = async (name: string): Promise<Instance> => {
    for (let attempt = 1; ; attempt++) {
      try {
        const server = await startShippedServer({ modelUrl: fake.baseURL, args: ['--database-url', database.url, '--database-schema', database.schema, '--instance-id', name] });
        instances.push(server);
        return { name, server };
      } catch (error) {
        // The working tree is shared: a build made elsewhere at the same moment empties dist/ for a while.
        if (attempt === 3 || !(error instanceof Error && error.message.includes('exited before it listened'))) throw error;
        console.error(`cluster bench: instance ${name} did not start, building again`);
        buildServer();
      }
    }
  };
  // One after the other: the first applies the schema's migrations.
  const first = await start('a');
  return { a: first, b: await start('b'), database, fake };
}
const { a, b, database, fake } = await startInstances().catch((error: unknown) => fail(`could not start: ${error instanceof Error ? error.message : String(error)}`));
const { capacity } = a.server;
console.log(
  `Instances: a (pid ${a.server.pid}) and b (pid ${b.server.pid}), node bin/airlock.mjs (dist/main.js) at shipped defaults: ${capacity.runsPerConnection} runs and a burst of ${capacity.runBurst} new runs per connection, ${capacity.maxUnauthenticated} sockets without a token; one PostgreSQL schema ${database.schema}, tool ${BENCH_TOOL}.\n`,
);

/** Sockets that closed under a client: a reconnect in the middle of a figure would distort it. */
let socketsClosed = 0;

interface Connection {
  trpc: TRPCClient<AppRouter>;
  close: () => Promise<void>;
}

function connect(instance: Instance): Connection {
  let closing = false;
  const client = createAirlockClient({
    url: instance.server.wsUrl,
    token: instance.server.token,
    WebSocket,
    onClose: () => {
      if (!closing) socketsClosed++;
    },
  });
  return {
    trpc: client.trpc,
    close: () => {
      closing = true;
      return client.close();
    },
  };
}

/** Opens `count` connections to an instance, no more at once than it keeps sockets without a token. */
async function connectMany(instance: Instance, count: number): Promise<Connection[]> {
  const connections: Connection[] = [];
  for (let i = 0; i < count; i += capacity.maxUnauthenticated) {
    const batch = Array.from({ length: Math.min(capacity.maxUnauthenticated, count - i) }, () => connect(instance));
    await Promise.all(batch.map((c) => c.trpc.model.info.query()));
    connections.push(...batch);
  }
  return connections;
}

interface Watch {
  /** The waiting call's approval id, from its tool-start. */
  approvalId: Promise<string>;
  /** When tool-end arrived (performance.now()). */
  toolEnd: Promise<number>;
  ended: Promise<void>;
  unsubscribe(): void;
}

/** Starts a run (with `message`) or follows one that exists (without). */
function watch(trpc: TRPCClient<AppRouter>, sessionId: string, runId: string, message?: string): Watch {
  let onStart!: (id: string) => void;
  let onToolEnd!: (at: number) => void;
  let onEnd!: () => void;
  const approvalId = new Promise<string>((resolve) => (onStart = resolve));
  const toolEnd = new Promise<number>((resolve) => (onToolEnd = resolve));
  const ended = new Promise<void>((resolve) => (onEnd = resolve));
  const sub = trpc.chat.stream.subscribe(message === undefined ? { sessionId, runId } : { sessionId, runId, message }, {
    onData: ({ data }) => {
      if (data.type === 'tool-start' && data.awaitingConfirmation) onStart(data.approvalId);
      else if (data.type === 'tool-end') {
        if (data.outcome !== 'executed') void fail(`run ${runId}: the tool ended ${data.outcome}`);
        onToolEnd(performance.now());
      } else if (data.type === 'run-end') {
        if (data.reason !== 'done') void fail(`run ${runId} ended: ${data.reason} ${data.error ?? ''}`);
        onEnd();
      }
    },
    onError: (error) => void fail(`run ${runId}: ${error.message}`),
  });
  return { approvalId, toolEnd, ended, unsubscribe: () => sub.unsubscribe() };
}

async function allow(trpc: TRPCClient<AppRouter>, sessionId: string, approvalId: string): Promise<void> {
  const answer = await trpc.chat.confirmTool.mutate({ sessionId, approvalId, decision: 'allow' });
  if (answer.status !== 'resolved') await fail(`the decision on ${sessionId} was not resolved: ${answer.status}`);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ms = (value: number) => value.toFixed(2);
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const kib = (bytes: number) => (bytes / 1024).toFixed(2);
/** CPU time a process has used so far, user and system (ms), from /proc (clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

/** Calls `work(i)` for i = 0 … count-1, at most `window` at a time, in order. */
async function inWindow(count: number, window: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(window, count) }, worker));
}

// 1. Decision round trip, confirm sent → tool-end received. Runs are started from a client of A, so A owns them.
// Across: a client of B follows the run, waits until B has shown the waiting call, decides on B and times tool-end
// on its own subscription (B → database → A runs the tool → database → B); the time tool-end reached A's client is
// kept too. Same instance: a client of A decides and times tool-end on its own subscription. The two kinds take turns
// a burst of runs each (a connection starts at most a burst of runs before the per-minute rate applies; fresh ones are
// opened outside the timing, and the spent ones stay open to the end, since a connection opened after one closed takes
// over what it spent), so a change in the machine's load falls on both alike. The first round is warm-up.
const spent: Connection[] = [];
async function roundTrip(): Promise<void> {
  const rounds = quick ? 6 : 56;
  const burst = capacity.runBurst;
  const across: number[] = [];
  const acrossAtOwner: number[] = [];
  const local: number[] = [];
  for (let round = 0; round < rounds; round++) {
    {
      const starter = connect(a);
      const decider = connect(b);
      await Promise.all([starter.trpc.model.info.query(), decider.trpc.model.info.query()]);
      for (let i = 0; i < burst; i++) {
        const sessionId = `x-${round}-${i}`;
        const runId = `x-run-${round}-${i}`;
        const owned = watch(starter.trpc, sessionId, runId, 'go');
        const approvalId = await owned.approvalId;
        const followed = watch(decider.trpc, sessionId, runId);
        if ((await followed.approvalId) !== approvalId) await fail(`${runId}: B shows another waiting call than A`);
        const sent = performance.now();
        await allow(decider.trpc, sessionId, approvalId);
        const [onB, onA] = await Promise.all([followed.toolEnd, owned.toolEnd]);
        if (round > 0) {
          across.push(onB - sent);
          acrossAtOwner.push(onA - sent);
        }
        await Promise.all([owned.ended, followed.ended]);
        owned.unsubscribe();
        followed.unsubscribe();
      }
      spent.push(starter);
      await decider.close();
    }
    {
      const client = connect(a);
      await client.trpc.model.info.query();
      for (let i = 0; i < burst; i++) {
        const sessionId = `l-${round}-${i}`;
        const run = watch(client.trpc, sessionId, `l-run-${round}-${i}`, 'go');
        const approvalId = await run.approvalId;
        const sent = performance.now();
        await allow(client.trpc, sessionId, approvalId);
        const at = await run.toolEnd;
        if (round > 0) local.push(at - sent);
        await run.ended;
        run.unsubscribe();
      }
      spent.push(client);
    }
  }
  console.log(`Decision round trip (confirm sent → tool-end received), ${across.length} decisions of each kind after ${burst} warm-up, the kinds taking turns:`);
  console.log(`| decided on | timed on the subscription of | p50 (ms) | p99 (ms) | max (ms) |`);
  console.log(`|---|---|---:|---:|---:|`);
  const row = (decidedOn: string, timedOn: string, samples: number[]) => {
    const sorted = [...samples].sort((x, y) => x - y);
    console.log(`| ${decidedOn} | ${timedOn} | ${ms(percentile(sorted, 50))} | ${ms(percentile(sorted, 99))} | ${ms(sorted.at(-1)!)} |`);
  };
  row('B (run owned by A)', 'B (following)', across);
  row('B (run owned by A)', 'A (the run’s client)', acrossAtOwner);
  row('A (run owned by A)', 'A', local);

  // What the database costs on this machine, without Airlock: a durable commit, and a notification between two
  // connections (the way instances wake each other).
  const floorRounds = quick ? 50 : 300;
  const commits: number[] = [];
  const notifications: number[] = [];
  await withClient(async (writer) => {
    await withClient(async (listener) => {
      const table = `${escapeIdentifier(database.schema)}.bench_floor`;
      await writer.query(`CREATE TABLE ${table} (n integer)`);
      for (let i = 0; i < floorRounds; i++) {
        const sent = performance.now();
        await writer.query(`INSERT INTO ${table} VALUES ($1)`, [i]);
        commits.push(performance.now() - sent);
      }
      const channel = escapeIdentifier(`${database.schema}_bench_floor`);
      await listener.query(`LISTEN ${channel}`);
      for (let i = 0; i < floorRounds; i++) {
        const heard = new Promise<number>((resolve) => listener.once('notification', () => resolve(performance.now())));
        const sent = performance.now();
        await writer.query(`NOTIFY ${channel}`);
        notifications.push((await heard) - sent);
      }
    });
  });
  row('floor: one single-row INSERT, committed', '–', commits.slice(floorRounds / 10));
  row('floor: NOTIFY from one connection heard on another', '–', notifications.slice(floorRounds / 10));
  console.log('');
}

// 2. 10,000 waiting approvals over two instances: 1,250 connections to each, 4 runs each (the shipped limit per
// connection), every run waiting on its call. Then every call is allowed, half of the decisions sent to the other
// instance than the run's owner. Memory is read through each instance's inspector after two full collections
// and once the model client's pooled connections have closed; the baseline is taken before the connections open,
// so the per-session figures include each session's share of its connection.
async function atCapacity(): Promise<void> {
  const connectionsPerInstance = quick ? 64 : 1_250;
  const perInstance = connectionsPerInstance * capacity.runsPerConnection;
  const window = Number(process.env.AIRLOCK_BENCH_WINDOW ?? 256) || 2 * perInstance;
  const both = [a, b];
  const memory = async (instance: Instance): Promise<MemoryUsage> => {
    const inspector = await instance.server.inspector();
    await fake.idle();
    await inspector.collectGarbage();
    return inspector.memoryUsage();
  };
  const memoryOfBoth = async () => Promise.all(both.map((instance) => memory(instance)));
  const closedBefore = socketsClosed;

  const base = await memoryOfBoth();
  const tc = performance.now();
  const connections = await Promise.all(both.map((instance) => connectMany(instance, connectionsPerInstance)));
  const connecting = performance.now() - tc;

  // Runs are started (and later decided) through a window of at most `window` at a time, clients arriving over time:
  // all at once, the instances' database pools (10 connections each, a 10 s wait for one) are the limit, and past
  // about 1,000 runs per instance on this machine runs fail with "timeout exceeded when trying to connect".
  const plan: { sessionId: string; owner: number; connection: number }[] = [];
  for (let connection = 0; connection < connectionsPerInstance; connection++) {
    for (const owner of [0, 1]) {
      for (let k = 0; k < capacity.runsPerConnection; k++) plan.push({ sessionId: `w-${both[owner]!.name}-${connection}-${k}`, owner, connection });
    }
  }
  const runs: Watch[] = [];
  const ids: string[] = [];
  const cpuOfBoth = () => both.map((instance) => cpuMs(instance.server.pid));
  const cpu0 = cpuOfBoth();
  const t0 = performance.now();
  await inWindow(plan.length, window, async (i) => {
    const { sessionId, owner, connection } = plan[i]!;
    runs[i] = watch(connections[owner]![connection]!.trpc, sessionId, `${sessionId}-run`, 'go');
    ids[i] = await runs[i].approvalId;
  });
  const allWaiting = performance.now() - t0;
  const cpu1 = cpuOfBoth();
  const waitingInDb = await withClient(async (client) => {
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${escapeIdentifier(database.schema)}.tool_calls WHERE approval_id <> '' AND decision IS NULL`);
    return Number(rows[0]!.n);
  });
  const loaded = await memoryOfBoth();

  const cpu2 = cpuOfBoth();
  const t1 = performance.now();
  await inWindow(plan.length, window, async (i) => {
    const { sessionId, owner, connection } = plan[i]!;
    // Every other decision goes to the instance that does not own the run, through the same connection index there.
    const decideOn = i % 2 === 0 ? owner : 1 - owner;
    await allow(connections[decideOn]![connection]!.trpc, sessionId, ids[i]!);
    await runs[i]!.ended;
  });
  const drain = performance.now() - t1;
  const cpu3 = cpuOfBoth();

  // From the database: each run ended done, its one ledger row allowed and executed, one tool-end in its log, and
  // no run moved to another instance on the way.
  const check = await withClient(async (client) => {
    const schema = escapeIdentifier(database.schema);
    const runs = await client.query<{ done: string; other: string; moved: string }>(
      `SELECT count(*) FILTER (WHERE end_reason = 'done') AS done, count(*) FILTER (WHERE end_reason IS DISTINCT FROM 'done') AS other, count(*) FILTER (WHERE fence <> 1) AS moved
         FROM ${schema}.runs WHERE run_id LIKE 'w-%'`,
    );
    const ledger = await client.query<{ once: string; not_once: string }>(
      `SELECT count(*) FILTER (WHERE executed = 1 AND calls = 1) AS once, count(*) FILTER (WHERE executed <> 1 OR calls <> 1) AS not_once
         FROM (SELECT run_id, count(*) AS calls, count(*) FILTER (WHERE decision = 'allow' AND outcome = 'executed') AS executed
                 FROM ${schema}.tool_calls WHERE run_id LIKE 'w-%' GROUP BY run_id) AS per_run`,
    );
    const events = await client.query<{ once: string; not_once: string }>(
      `SELECT count(*) FILTER (WHERE ends = 1) AS once, count(*) FILTER (WHERE ends <> 1) AS not_once
         FROM (SELECT r.run_id, count(e.seq) AS ends FROM ${schema}.runs r
                 LEFT JOIN ${schema}.events e ON e.run_id = r.run_id AND e.json::jsonb ->> 'type' = 'tool-end'
                WHERE r.run_id LIKE 'w-%' GROUP BY r.run_id) AS per_run`,
    );
    const n = (value: string | undefined) => Number(value ?? 0);
    return {
      done: n(runs.rows[0]?.done),
      notDone: n(runs.rows[0]?.other),
      moved: n(runs.rows[0]?.moved),
      executedOnce: n(ledger.rows[0]?.once),
      notOnce: n(ledger.rows[0]?.not_once),
      toolEndOnce: n(events.rows[0]?.once),
      toolEndNotOnce: n(events.rows[0]?.not_once),
    };
  });

  const total = plan.length;
  console.log(`${total.toLocaleString('en')} waiting approvals over two instances, ${(2 * connectionsPerInstance).toLocaleString('en')} connections (${connectionsPerInstance.toLocaleString('en')} to each, ${capacity.runsPerConnection} runs each):`);
  console.log(`| figure | a | b |`);
  console.log(`|---|---:|---:|`);
  console.log(`| connecting all (ms), both at once | ${connecting.toFixed(0)} | |`);
  console.log(`| time until all ${total.toLocaleString('en')} wait, ${window} starts at a time (ms) | ${allWaiting.toFixed(0)} | |`);
  console.log(`| drain, allowing all ${window} at a time, half on the other instance (ms) | ${drain.toFixed(0)} | |`);
  const perRun = (after: number[], before: number[], owner: number) => ((after[owner]! - before[owner]!) / perInstance).toFixed(2);
  console.log(`| instance CPU while starting, per run it owns (ms) | ${perRun(cpu1, cpu0, 0)} | ${perRun(cpu1, cpu0, 1)} |`);
  console.log(`| instance CPU while draining, per run it owns (ms) | ${perRun(cpu3, cpu2, 0)} | ${perRun(cpu3, cpu2, 1)} |`);
  console.log(`| RSS before the connections (MiB) | ${mib(base[0]!.rss)} | ${mib(base[1]!.rss)} |`);
  console.log(`| RSS while all wait (MiB) | ${mib(loaded[0]!.rss)} | ${mib(loaded[1]!.rss)} |`);
  console.log(`| RSS per waiting session, connection included (KiB) | ${kib((loaded[0]!.rss - base[0]!.rss) / perInstance)} | ${kib((loaded[1]!.rss - base[1]!.rss) / perInstance)} |`);
  console.log(`| heap per waiting session, connection included (KiB) | ${kib((loaded[0]!.heapUsed - base[0]!.heapUsed) / perInstance)} | ${kib((loaded[1]!.heapUsed - base[1]!.heapUsed) / perInstance)} |`);
  console.log(
    `Waiting in the ledger when all had shown: ${waitingInDb.toLocaleString('en')}. Runs ended done: ${check.done.toLocaleString('en')} (otherwise ${check.notDone}); tool allowed and executed exactly once per run in the ledger: ${check.executedOnce.toLocaleString('en')} (otherwise ${check.notOnce}); one tool-end per run log: ${check.toolEndOnce.toLocaleString('en')} (otherwise ${check.toolEndNotOnce}); runs taken over by the other instance: ${check.moved}; sockets closed under a client: ${socketsClosed - closedBefore}.`,
  );
  const exact = waitingInDb === total && check.done === total && check.notDone === 0 && check.executedOnce === total && check.notOnce === 0 && check.toolEndOnce === total && check.toolEndNotOnce === 0;
  for (const run of runs) run.unsubscribe();
  await Promise.all(connections.flat().map((c) => c.close()));
  if (!exact) await fail('a run did not end with its tool executed exactly once (see the line above)');
}

try {
  if (sections.has('round-trip')) await roundTrip();
  if (sections.has('capacity')) await atCapacity();
} catch (error) {
  await fail(error instanceof Error ? error.message : String(error));
}
await Promise.all(spent.map((c) => c.close()));
if (socketsClosed > 0) console.log(`Note: ${socketsClosed} client socket(s) closed and reconnected during the bench.`);
console.log(`At the end: ${uptime()}`);
clearTimeout(deadline);
await cleanUp();
