// The server's own part of a decision's round trip, build against build, on a machine other work shares (not part of
// `pnpm bench`). On such a machine one build's figures move by more between runs than a change of a few per cent:
// here each round starts a fresh server of every build (in a rotated order: a server process can run a few per cent
// faster than another of the same build), and takes their round trips in turns, so they share the load they meet.
//   tsx bench/paired-builds.ts aside DIR
//       builds this checkout as `npm start` does, into DIR/apps/server (its dist/ and launcher, node_modules linked to
//       this checkout's; DIR stands for the installation, which the server keeps workspaces out of): a build kept
//       aside, to compare with another, e.g. one made in a worktree at an earlier commit
//   tsx bench/paired-builds.ts compare COUNT allow|deny ROUNDS DIR DIR [DIR...]
//       ROUNDS rounds of COUNT round trips per build, in turns; prints each round's p50 of the server's own part
//       (confirm message → tool-end frame written, as `profile-server.ts split` times it) per build, then the
//       difference of each build's p50 from the first's over the rounds: mean and standard error.
//       REALTIME=1 runs each server's threads at a real-time priority (chrt -f 10, as root): other processes on the
//       machine then delay them far less, and the rounds agree more closely.
import { type AppRouter } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import type { TRPCClient } from '@trpc/client';
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { BUILD_OPTIONS } from '../build-options';
import { startFakeModelServer } from './support/fake-model-server';
import { ROUND_TRIP_MARKS } from './support/round-trip-marks';
import { startShippedServer, type ShippedServer } from './support/shipped-server';
import { startWaiting } from './support/start-waiting';

const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));
const [mode, ...args] = process.argv.slice(2);

/** One build's server for a round, and the connection its round trips go over (a new one per burst of runs). */
interface Side {
  name: string;
  server: ShippedServer;
  client: { trpc: TRPCClient<AppRouter>; close: () => Promise<void> } | undefined;
  runsOnClient: number;
  /** Connections that spent their burst of runs, held open to the end (see profile-server's `spent`). */
  spent: { close: () => Promise<void> }[];
  done: number;
}

if (mode === 'aside') {
  if (args[0] === undefined) throw new Error('aside DIR');
  rmSync(resolve(args[0]), { recursive: true, force: true });
  const dir = join(resolve(args[0]), 'apps', 'server');
  mkdirSync(dir, { recursive: true });
  cpSync(join(SERVER_DIR, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(SERVER_DIR, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(SERVER_DIR, 'node_modules'), join(dir, 'node_modules'));
  await build({ ...BUILD_OPTIONS, outdir: join(dir, 'dist') });
  console.log(`built into ${resolve(args[0])}`);
} else if (mode === 'compare') {
  const [countArg, decisionArg, roundsArg, ...dirs] = args;
  const count = Number(countArg);
  const rounds = Number(roundsArg);
  const decision = decisionArg === 'allow' ? 'allow' : 'deny';
  if (!(count > 0) || !(rounds > 0) || dirs.length < 2) throw new Error('compare COUNT allow|deny ROUNDS DIR DIR [DIR...]');
  const roots = dirs.map((dir) => join(resolve(dir), 'apps', 'server'));
  const name = (root: string) => root.split('/').filter(Boolean).at(-3)!;
  const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
  const model = await startFakeModelServer();
  const differences: number[][] = roots.slice(1).map(() => []);

  const start = async (root: string): Promise<Side> => {
    const server = await startShippedServer({ modelUrl: model.baseURL, root });
    if (process.env.REALTIME === '1') {
      const set = spawnSync('chrt', ['-a', '-f', '-p', '10', String(server.pid)], { encoding: 'utf8' });
      if (set.status !== 0) throw new Error(`chrt: ${set.stderr}`);
    }
    await (await server.inspector()).send('Runtime.evaluate', { expression: ROUND_TRIP_MARKS });
    return { name: name(root), server, client: undefined, runsOnClient: 0, spent: [], done: 0 };
  };

  const roundTrip = async (side: Side, label: string): Promise<void> => {
    if (side.client === undefined || side.runsOnClient >= side.server.capacity.runBurst) {
      if (side.client) side.spent.push(side.client);
      const client = createAirlockClient({ url: side.server.wsUrl, token: side.server.token, WebSocket });
      side.client = { trpc: client.trpc, close: () => client.close() };
      side.runsOnClient = 0;
      await side.client.trpc.model.info.query();
    }
    side.runsOnClient++;
    const { trpc } = side.client;
    const sessionId = `${label}-${side.done++}`;
    const { approvalId, done, stop } = startWaiting(trpc, sessionId);
    await trpc.chat.confirmTool.mutate({ sessionId, approvalId: await approvalId, decision });
    await done;
    stop();
  };

  for (let round = 1; round <= rounds; round++) {
    const sides = new Map<string, Side>();
    for (let i = 0; i < roots.length; i++) {
      const root = roots[(i + round) % roots.length]!;
      sides.set(root, await start(root));
    }
    const inOrder = roots.map((root) => sides.get(root)!);
    for (const side of inOrder) for (let i = 0; i < 50; i++) await roundTrip(side, 'warm');
    for (const side of inOrder) await (await side.server.inspector()).send('Runtime.evaluate', { expression: 'for (const list of Object.values(globalThis.__benchMarks)) list.length = 0' });
    const load = loadavg()[0]!.toFixed(2);
    // Which build goes first in a pair alternates too.
    for (let i = 0; i < count; i++) for (const side of i % 2 === 0 ? inOrder : [...inOrder].reverse()) await roundTrip(side, `r${round}`);
    const medians: number[] = [];
    for (const side of inOrder) {
      const { result } = await (await side.server.inspector()).send<{ result: { value: string } }>('Runtime.evaluate', { expression: 'JSON.stringify(globalThis.__benchMarks)', returnByValue: true });
      const marks = JSON.parse(result.value) as { confirm: number[]; toolEnd: number[] };
      if (marks.confirm.length !== count || marks.toolEnd.length !== count) throw new Error(`marks: ${marks.confirm.length} confirms, ${marks.toolEnd.length} tool-ends`);
      medians.push(p50(marks.confirm.map((at, i) => marks.toolEnd[i]! - at)));
    }
    medians.slice(1).forEach((median, k) => differences[k]!.push(median - medians[0]!));
    console.log(`round ${round}, ${decision}, load average ${load} → ${loadavg()[0]!.toFixed(2)}: p50 ${inOrder.map((side, i) => `${side.name} ${(medians[i]! / 1000).toFixed(3)} ms`).join(', ')}`);
    for (const side of inOrder) {
      for (const client of side.spent) await client.close();
      await side.client?.close();
      await side.server.close();
    }
  }
  differences.forEach((values, k) => {
    const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
    const deviation = Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / Math.max(1, values.length - 1));
    console.log(`${name(roots[k + 1]!)} − ${name(roots[0]!)}: p50 ${mean >= 0 ? '+' : ''}${mean.toFixed(1)} µs (standard error ${(deviation / Math.sqrt(values.length)).toFixed(1)} µs over ${values.length} rounds)`);
  });
  await model.close();
} else {
  throw new Error('paired-builds.ts aside DIR | compare COUNT allow|deny ROUNDS DIR DIR [DIR...]');
}
