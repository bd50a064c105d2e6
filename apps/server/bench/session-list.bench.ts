// What reading the chat list costs a server that keeps many chats: CHATS chats (default 10,000) in its SQLite
// database, READERS connections (default 100) each reading `sessions.list` READS times back to back (default 20),
// all at once, while /healthz is asked every 50 ms. Prints the size of one answer (the first page, and the page of
// 500 a full read asks for), the time the readers took, and /healthz latency meanwhile. The server is the build as
// `npm start` runs it (see support/shipped-server.ts), its clients @airlock/client in this process. On a shared
// machine the figures are rough: the load average is printed with them.
// Run: pnpm --filter @airlock/server exec tsx bench/session-list.bench.ts  (CHATS=, READERS=, READS=, LIMIT= to vary)
import { createAirlockClient, type AirlockClient } from '@airlock/client';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { SqliteStore } from '../src/store/sqlite-store';
import { startFakeModelServer } from './support/fake-model-server';
import { buildServer, startShippedServer } from './support/shipped-server';
import { probeHealthz } from './support/healthz-probe';

const CHATS = Number(process.env.CHATS ?? 10_000);
const READERS = Number(process.env.READERS ?? 100);
const READS = Number(process.env.READS ?? 20);
const LIMIT = process.env.LIMIT === undefined ? undefined : Number(process.env.LIMIT);

const load = () => loadavg().map((n) => n.toFixed(2)).join(' ');
const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;
console.log(`Machine: ${cpus().length} cores, Node ${process.version}; load average at the start ${load()}`);

const dataDir = await mkdtemp(join(tmpdir(), 'airlock-session-list-'));
const seeded = await SqliteStore.open({ directory: dataDir, log: () => {} });
const now = Date.now();
for (let index = 0; index < CHATS; index++) {
  const at = now - CHATS + index;
  await seeded.createSession({ sessionId: `chat-${index}`, title: `Look into the flaky test number ${index} in the suite`, createdAt: at, updatedAt: at, confirmToolCalls: true, lastRunId: null });
}
await seeded.close();

buildServer();
const model = await startFakeModelServer();
const server = await startShippedServer({ modelUrl: model.baseURL, dataDir });
const clients: AirlockClient[] = [];
try {
  for (let i = 0; i < READERS; i += server.capacity.maxUnauthenticated) {
    const batch = Array.from({ length: Math.min(server.capacity.maxUnauthenticated, READERS - i) }, () => createAirlockClient({ url: server.wsUrl, token: server.token, WebSocket }));
    await Promise.all(batch.map((client) => client.trpc.model.info.query()));
    clients.push(...batch);
  }
  const input = LIMIT === undefined ? undefined : { limit: LIMIT };
  const first = await clients[0]!.trpc.sessions.list.query(input);
  const page500 = await clients[0]!.trpc.sessions.list.query({ limit: 500 });
  console.log(
    `${CHATS} chats: one answer ${LIMIT === undefined ? 'without input' : `of limit ${LIMIT}`} holds ${first.sessions.length} chats, ${JSON.stringify(first).length} bytes of JSON; one of limit 500 ${JSON.stringify(page500).length} bytes`,
  );

  const probe = probeHealthz(server.url);
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      for (let read = 0; read < READS; read++) await client.trpc.sessions.list.query(input);
    }),
  );
  const took = performance.now() - t0;
  const healthz = await probe.stop();
  console.log(`${READERS} readers x ${READS} reads: ${(took / 1000).toFixed(2)} s; /healthz meanwhile: ${healthz.length} probes, median ${quantile(healthz, 0.5).toFixed(1)} ms, p99 ${quantile(healthz, 0.99).toFixed(1)} ms, max ${Math.max(...healthz).toFixed(1)} ms`);
  console.log(`Load average at the end ${load()}`);
} finally {
  await Promise.all(clients.map((client) => client.close()));
  await server.close();
  await model.close();
  await rm(dataDir, { recursive: true, force: true });
}
