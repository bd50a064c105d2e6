// A model that streams its answer one character per chunk (as llama.cpp streams a token a chunk), against the server
// as `npm start` runs it (see support/shipped-server.ts): one run of N one-character text deltas (default 1,000,000,
// a turn's limit), after which the model holds its stream open, so the run is still going when it is measured.
// Reports the events a client receives and the server stores, the server's RSS before, at its peak and (after two
// collections) what the going run holds, the SQLite database's size, and /healthz latency while the run streams.
// The run is then stopped.
// Run: pnpm --filter @airlock/server exec tsx bench/delta-flood.bench.ts [deltas]
import type { AppRouter } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import type { TRPCClient } from '@trpc/client';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { SqliteStore } from '../src/store';
import { startFakeModelServer } from './support/fake-model-server';
import { probeHealthz } from './support/healthz-probe';
import { buildServer, startShippedServer, type ShippedServer } from './support/shipped-server';

const deltas = Number(process.argv[2] ?? 1_000_000);
const SESSION = 'flood';
const RUN = 'run-flood';
const MiB = 1024 * 1024;
const mib = (value: number) => `${(value / MiB).toFixed(0)} MB`;
console.log(`Machine: ${cpus().length} cores, Node ${process.version}, load average ${loadavg().map((v) => v.toFixed(2)).join(' ')} at the start.`);

const deadline = setTimeout(() => {
  console.error('bench: gave up after 15 minutes');
  process.exit(1);
}, 15 * 60_000);

const dataDir = mkdtempSync(join(tmpdir(), 'airlock-delta-flood-'));
const model = await startFakeModelServer();
/** Resident and peak resident set of the process, from /proc, as a probe outside it sees them. */
const status = (server: ShippedServer) => {
  const text = readFileSync(`/proc/${server.pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(text)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
};
const dbSize = () => ['airlock.db', 'airlock.db-wal'].reduce((sum, name) => sum + (statSync(join(dataDir, name), { throwIfNoEntry: false })?.size ?? 0), 0);

buildServer();
const server = await startShippedServer({ modelUrl: model.baseURL, dataDir });
const client = createAirlockClient({ url: server.wsUrl, token: server.token, WebSocket });
const trpc: TRPCClient<AppRouter> = client.trpc;
const idle = await (await server.inspector()).settledMemoryUsage();
const before = status(server);

const healthz = probeHealthz(server.url);
let events = 0;
let textEvents = 0;
let chars = 0;
const t0 = performance.now();
let streamed!: () => void;
const allStreamed = new Promise<void>((resolve) => (streamed = resolve));
const end = new Promise<string>((resolve, reject) => {
  const sub = trpc.chat.stream.subscribe(
    { sessionId: SESSION, runId: RUN, message: `chars ${deltas} held` },
    {
      onData: ({ data }) => {
        events++;
        if (data.type === 'text-delta') {
          textEvents++;
          chars += data.text.length;
          if (chars === deltas) streamed();
        }
        if (data.type === 'run-end') {
          sub.unsubscribe();
          streamed();
          resolve(`${data.reason}${data.error === undefined ? '' : `: ${data.error}`}`);
        }
      },
      onError: reject,
    },
  );
});
await allStreamed;
const seconds = (performance.now() - t0) / 1000;
const latencies = (await healthz.stop()).sort((a, b) => a - b);
const after = status(server);
const settled = await (await server.inspector()).settledMemoryUsage();
await trpc.chat.cancel.mutate({ sessionId: SESSION });
const ended = await end;
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(0);
await client.close();
await server.close();
await model.close();

const store = await SqliteStore.open({ directory: dataDir });
const stored = (await store.loadEvents(RUN, 0)).length;
await store.close();
console.log(`${deltas.toLocaleString('en')} one-character deltas streamed in ${seconds.toFixed(1)} s; the run, stopped then, ended ${ended}.`);
console.log(`Events: ${events.toLocaleString('en')} received (${textEvents.toLocaleString('en')} text deltas holding ${chars.toLocaleString('en')} characters), ${stored.toLocaleString('en')} stored; database ${mib(dbSize())}.`);
console.log(`Server RSS: ${mib(before.rss)} before the run (V8 heap used ${mib(idle.heapUsed)}), ${mib(after.rss)} once streamed (peak ${mib(after.peak)}); with the run still going, after two collections: RSS ${mib(settled.rss)}, V8 heap used ${mib(settled.heapUsed)}.`);
console.log(`/healthz while it streamed: ${latencies.length} probes, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${latencies.at(-1)!.toFixed(0)} ms.`);
rmSync(dataDir, { recursive: true, force: true });
clearTimeout(deadline);
