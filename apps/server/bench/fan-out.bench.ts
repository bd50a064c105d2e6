// The work a burst of changes to the chat list and the settings costs the server when many connections watch them:
// WATCHERS connections (default 500) each hold 4 sessions.watch and 4 settings.watch, and CHANGERS connections
// (default 50) each send CHANGES changes (default 60, alternately a chat's title and a setting) back to back. The
// server is the build as `npm start` runs it (see support/shipped-server.ts), its clients @airlock/client in this
// process. Prints the server's CPU time from the first change until the watches fall quiet, the events the watches
// received, the changes refused, and /healthz latency meanwhile. On a shared machine the figures are rough: the load
// average is printed with them.
// Run: pnpm --filter @airlock/server exec tsx bench/fan-out.bench.ts  (WATCHERS=, CHANGERS=, CHANGES= to vary)
import { type AppRouter } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import type { TRPCClient } from '@trpc/client';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { WebSocket } from 'ws';
import { startFakeModelServer } from './support/fake-model-server';
import { buildServer, startShippedServer } from './support/shipped-server';
import { probeHealthz } from './support/healthz-probe';

const WATCHERS = Number(process.env.WATCHERS ?? 500);
const CHANGERS = Number(process.env.CHANGERS ?? 50);
const CHANGES = Number(process.env.CHANGES ?? 60);
const WATCHES_PER_KIND = 4;

const load = () => loadavg().map((n) => n.toFixed(2)).join(' ');
console.log(`Machine: ${cpus().length} cores, Node ${process.version}; load average at the start ${load()}`);
buildServer();
const model = await startFakeModelServer();
const server = await startShippedServer({ modelUrl: model.baseURL });
const clockTicks = 100;
/** The server process's user + system CPU time, in ms (from /proc; clock ticks of 10 ms). */
const cpuMs = () => {
  const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
};

interface Connection {
  trpc: TRPCClient<AppRouter>;
  close: () => Promise<void>;
}
const connections: Connection[] = [];
function connect(): Connection {
  const client = createAirlockClient({ url: server.wsUrl, token: server.token, WebSocket });
  const connection = { trpc: client.trpc, close: () => client.close() };
  connections.push(connection);
  return connection;
}
async function connectMany(count: number): Promise<Connection[]> {
  const made: Connection[] = [];
  for (let i = 0; i < count; i += server.capacity.maxUnauthenticated) {
    const batch = Array.from({ length: Math.min(server.capacity.maxUnauthenticated, count - i) }, () => connect());
    await Promise.all(batch.map((c) => c.trpc.model.info.query()));
    made.push(...batch);
  }
  return made;
}

try {
  // One chat to rename: a run of one short answer.
  const [author] = await connectMany(1);
  const sessionId = 'bench-fan-out';
  await new Promise<void>((resolve, reject) => {
    const sub = author!.trpc.chat.stream.subscribe(
      { sessionId, message: 'stream 1' },
      {
        onData: ({ data }) => {
          if (data.type !== 'run-end') return;
          sub.unsubscribe();
          resolve();
        },
        onError: reject,
      },
    );
  });

  let events = 0;
  let lastEventAt = performance.now();
  let lastSettings: unknown;
  let lastChange: unknown;
  let opened = 0;
  const watchers = await connectMany(WATCHERS);
  let allOpen!: { resolve: () => void; reject: (error: unknown) => void };
  const opening = new Promise<void>((resolve, reject) => (allOpen = { resolve, reject }));
  const total = WATCHERS * WATCHES_PER_KIND * 2;
  const firstSeen = () => {
    if (++opened === total) allOpen.resolve();
  };
  for (const watcher of watchers) {
    for (let i = 0; i < WATCHES_PER_KIND; i++) {
      let first = true;
      watcher.trpc.sessions.watch.subscribe(undefined, {
        onData: (change) => {
          events++;
          lastEventAt = performance.now();
          lastChange = change;
          if (first) firstSeen();
          first = false;
        },
        onError: (error) => allOpen.reject(error),
      });
      let firstSetting = true;
      watcher.trpc.settings.watch.subscribe(undefined, {
        onData: (settings) => {
          events++;
          lastEventAt = performance.now();
          lastSettings = settings;
          if (firstSetting) firstSeen();
          firstSetting = false;
        },
        onError: (error) => allOpen.reject(error),
      });
    }
  }
  await opening;
  const changers = await connectMany(CHANGERS);
  console.log(`${WATCHERS} connections × ${WATCHES_PER_KIND * 2} watches open; ${CHANGERS} connections × ${CHANGES} changes; load average ${load()}`);

  events = 0;
  const probe = probeHealthz(server.url);
  const cpu0 = cpuMs();
  const t0 = performance.now();
  let refused = 0;
  let refusal = '';
  let lastTitle = '';
  await Promise.all(
    changers.map(async (changer, c) => {
      for (let n = 0; n < CHANGES; n++) {
        try {
          if (n % 2 === 0) {
            const title = `title ${c}.${n}`;
            await changer.trpc.sessions.update.mutate({ sessionId, title });
            lastTitle = title;
          } else await changer.trpc.settings.update.mutate({ maxToolCalls: 1 + ((c * CHANGES + n) % 200) });
        } catch (error) {
          refused++;
          refusal = error instanceof Error ? error.message : String(error);
        }
      }
    }),
  );
  const changedIn = performance.now() - t0;
  // Quiet: no event for a second.
  while (performance.now() - lastEventAt < 1000) await new Promise((resolve) => setTimeout(resolve, 100));
  const wall = lastEventAt - t0;
  const cpu = cpuMs() - cpu0;
  const healthz = await probe.stop();
  const sorted = [...healthz].sort((a, b) => a - b);
  const final = (await author!.trpc.settings.get.query()).settings;
  console.log(`changes answered in ${changedIn.toFixed(0)} ms, ${refused} refused${refused > 0 ? ` (${refusal})` : ''}`);
  console.log(`watch events received: ${events} (${(events / (WATCHERS * WATCHES_PER_KIND * 2)).toFixed(1)} a watch)`);
  console.log(`server CPU until the watches fell quiet: ${cpu.toFixed(0)} ms over ${wall.toFixed(0)} ms`);
  console.log(`/healthz: ${healthz.length} probes, median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms`);
  console.log(`last settings seen are the final ones: ${JSON.stringify(lastSettings) === JSON.stringify(final)}; last chat change: ${JSON.stringify(lastChange)} (last title sent ${lastTitle})`);
  console.log(`load average at the end ${load()}`);
} finally {
  await Promise.allSettled(connections.map((connection) => connection.close()));
  await server.close();
  await model.close();
}
