// The SQLite store's write and read costs, in-process, in a temporary data folder.
// Run: pnpm --filter @airlock/server bench (or: npx tsx bench/store.bench.ts)
import type { ChatMessage, LedgerChange } from '@airlock/api';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store';

const OPS = 10_000;
const root = await mkdtemp(join(tmpdir(), 'airlock-store-bench-'));
let folders = 0;
const quiet = { log: () => {} };

async function freshStore(): Promise<SqliteStore> {
  folders += 1;
  return SqliteStore.open({ directory: join(root, String(folders)), ...quiet });
}

function summary(sessionId: string, at: number) {
  return { sessionId, title: `chat ${sessionId}`, createdAt: at, updatedAt: at, confirmToolCalls: true, lastRunId: null };
}

function message(index: number): ChatMessage {
  return index % 2 === 0
    ? { role: 'user', content: `Please look at file number ${index} and tell me what it does. `.repeat(3) }
    : { role: 'assistant', content: `File ${index} reads its input, checks it and writes a summary to standard output. `.repeat(4) };
}

function start(toolCallId: string, at: number): LedgerChange {
  return { kind: 'start', toolCallId, toolName: 'terminal', arguments: { command: `ls -la src/${toolCallId}` }, approvalId: `a-${toolCallId}`, requestedAt: at, expiresAt: at + 60_000, executesCode: true, toolVersion: 'v1' };
}

interface Cost {
  /** Wall-clock µs per op. */
  wall: number;
  /** This process's CPU µs per op (user + system, all its threads), less sensitive to other load on the machine. */
  cpu: number;
  /** µs per op the event loop was busy (not waiting for I/O): what it could not spend on anything else. */
  loop: number;
}

async function perOp(ops: number, body: (index: number) => Promise<void>): Promise<Cost> {
  const began = performance.now();
  const cpuBefore = process.cpuUsage();
  const loopBefore = performance.eventLoopUtilization();
  for (let index = 0; index < ops; index += 1) await body(index);
  const cpu = process.cpuUsage(cpuBefore);
  const loop = performance.eventLoopUtilization(loopBefore);
  return { wall: ((performance.now() - began) * 1000) / ops, cpu: (cpu.user + cpu.system) / ops, loop: (loop.active * 1000) / ops };
}

function show(cost: Cost): string {
  return `${cost.wall.toFixed(1)} | ${cost.cpu.toFixed(1)} | ${cost.loop.toFixed(1)}`;
}

function medianCost(costs: Cost[]): Cost {
  return { wall: median(costs.map((c) => c.wall)), cpu: median(costs.map((c) => c.cpu)), loop: median(costs.map((c) => c.loop)) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const rows: [string, string][] = [];
const times: [string, string][] = [];

// Events: the same run, seq 1…; each ledger row is started by one event and decided by another.
{
  const store = await freshStore();
  await store.createSession(summary('s', 1));
  for (const runId of ['warm', 'plain', 'started', 'decided']) await store.createRun({ runId, sessionId: 's', options: {}, startedAt: 1, endedAt: null, endReason: null });
  const event = { type: 'text-delta' as const, text: 'a few words of the answer ' };
  await perOp(1_000, (i) => store.appendEvent({ runId: 'warm', sessionId: 's', seq: i + 1, event, at: i }));
  const plain = await perOp(OPS, (i) => store.appendEvent({ runId: 'plain', sessionId: 's', seq: i + 1, event, at: i }));
  const toolStart = { type: 'tool-start' as const, toolCallId: 'x', toolName: 'terminal', arguments: { command: 'ls -la src' }, approvalId: 'a', awaitingConfirmation: true, expiresAt: null };
  const started = await perOp(OPS, (i) => store.appendEvent({ runId: 'started', sessionId: 's', seq: i + 1, event: toolStart, at: i, ledger: start(`call-${i}`, i) }));
  const decision = { type: 'tool-decision' as const, toolCallId: 'x', approvalId: 'a', decision: 'allow' as const, source: 'user' as const };
  const decided = await perOp(OPS, (i) =>
    store.appendEvent({ runId: 'started', sessionId: 's', seq: OPS + i + 1, event: decision, at: i, ledger: { kind: 'decision', toolCallId: `call-${i}`, decision: 'allow', source: 'user', decidedAt: i, by: { connectionId: 'c1' } } }),
  );
  rows.push([`appendEvent, no ledger change (${OPS.toLocaleString('en')})`, show(plain)]);
  rows.push([`appendEvent + ledger start, a row inserted (${OPS.toLocaleString('en')})`, show(started)]);
  rows.push([`appendEvent + ledger decision, a row updated (${OPS.toLocaleString('en')})`, show(decided)]);
  await store.close();
}

// What syncing costs. A commit that lets a call run (an allow with its call's start) is synced by SQLite before it
// returns (synchronous = FULL); the allows asked for in one turn of the event loop share one transaction and one sync
// (GroupedCommits). Other commits (a status event, a text delta) are not synced. Each row gives the wall time per
// commit, the process's CPU time, and the time the event loop was busy, sync included (what it could not spend
// answering anyone else). Allows are made one at a time (a person's click), and 100 at once (many people, or a
// drain). `AIRLOCK_BENCH_SYNC_OPS` sets how many commits (default 1,000); the data folder is under the system's
// temporary folder (`TMPDIR`), so its disk is what is measured.
{
  const syncOps = Number(process.env.AIRLOCK_BENCH_SYNC_OPS ?? 1_000);
  const store = await freshStore();
  await store.createSession(summary('s', 1));
  await store.createRun({ runId: 'r', sessionId: 's', options: {}, startedAt: 1, endedAt: null, endReason: null });
  for (let i = 0; i < 2 * syncOps; i += 1) await store.appendEvent({ runId: 'r', sessionId: 's', seq: i + 1, event: { type: 'status', text: 'asks' }, at: i, ledger: start(`call-${i}`, i) });
  let seq = 2 * syncOps;
  const decision = { type: 'tool-decision' as const, toolCallId: 'x', approvalId: 'a', decision: 'allow' as const, source: 'user' as const };
  const allow = (call: number) => {
    seq += 2;
    return store.appendEvents([
      { runId: 'r', sessionId: 's', seq: seq - 1, event: decision, at: call, ledger: { kind: 'decision', toolCallId: `call-${call}`, decision: 'allow', source: 'user', decidedAt: call, by: { connectionId: 'c1' } } },
      { runId: 'r', sessionId: 's', seq, event: { type: 'status', text: 'Running: ls' }, at: call, ledger: { kind: 'running', toolCallId: `call-${call}`, startedAt: call } },
    ]);
  };
  const oneByOne = await perOp(syncOps, (i) => allow(i));
  const atOnce = await perOp(syncOps / 100, async (batch) => {
    await Promise.all(Array.from({ length: 100 }, (_, i) => allow(syncOps + batch * 100 + i)));
  });
  const statuses = await perOp(syncOps, () => store.appendEvent({ runId: 'r', sessionId: 's', seq: ++seq, event: { type: 'status', text: 'Thinking' }, at: 1 }));
  const delta = { type: 'text-delta' as const, text: 'a few words of the answer ' };
  const deltas = await perOp(syncOps, () => store.appendEvent({ runId: 'r', sessionId: 's', seq: ++seq, event: delta, at: 1 }));
  const count = syncOps.toLocaleString('en');
  rows.push([`an allow with its call's start, one commit, one at a time (${count})`, show(oneByOne)]);
  rows.push([`an allow with its call's start, 100 at once, per allow (${count})`, show({ wall: atOnce.wall / 100, cpu: atOnce.cpu / 100, loop: atOnce.loop / 100 })]);
  rows.push([`a status event, one commit (not synced) (${count})`, show(statuses)]);
  rows.push([`a text delta, one commit (not synced) (${count})`, show(deltas)]);
  await store.close();
}

// Messages: the cost of an append must not depend on how long the chat already is.
{
  const store = await freshStore();
  await store.createSession(summary('warm', 1));
  await perOp(1_000, (i) => store.appendMessage('warm', message(i), i));
  const fresh: Cost[] = [];
  const long: Cost[] = [];
  await store.createSession(summary('long', 1));
  for (let i = 0; i < 2_000; i += 1) await store.appendMessage('long', message(i), i);
  for (let round = 0; round < 5; round += 1) {
    const sessionId = `new-${round}`;
    await store.createSession(summary(sessionId, 1));
    fresh.push(await perOp(1_000, (i) => store.appendMessage(sessionId, message(i), i)));
    long.push(await perOp(1_000, (i) => store.appendMessage('long', message(i), i)));
  }
  rows.push(['appendMessage in a new chat (median of 5 × 1,000)', show(medianCost(fresh))]);
  rows.push(['appendMessage in a chat of 2,000 to 7,000 messages (median of 5 × 1,000)', show(medianCost(long))]);
  await store.close();
}

// Opening a long chat: its messages and its ledger rows.
{
  const store = await freshStore();
  await store.createSession(summary('chat', 1));
  await store.createRun({ runId: 'r', sessionId: 'chat', options: {}, startedAt: 1, endedAt: null, endReason: null });
  for (let i = 0; i < 2_000; i += 1) await store.appendMessage('chat', message(i), i);
  for (let i = 0; i < 500; i += 1) await store.appendEvent({ runId: 'r', sessionId: 'chat', seq: i + 1, event: { type: 'status', text: 'x' }, at: i, ledger: start(`call-${i}`, i) });
  const opened: number[] = [];
  for (let round = 0; round < 21; round += 1) {
    const began = performance.now();
    const [messages, calls] = await Promise.all([store.loadMessages('chat'), store.listSessionToolCalls('chat')]);
    opened.push(performance.now() - began);
    if (messages.length !== 2_000 || calls.length !== 500) throw new Error('the chat is not what was written');
  }
  times.push(['open a chat of 2,000 messages and 500 ledger rows: loadMessages + listSessionToolCalls (median of 21)', median(opened).toFixed(2)]);
  await store.close();
}

// Start-up: open the file (quick_check, migrations) and list 1,000 chats of 20 messages each.
{
  folders += 1;
  const directory = join(root, String(folders));
  const store = await SqliteStore.open({ directory, ...quiet });
  for (let chat = 0; chat < 1_000; chat += 1) {
    await store.createSession(summary(`chat-${chat}`, chat));
    for (let i = 0; i < 20; i += 1) await store.appendMessage(`chat-${chat}`, message(i), i);
  }
  await store.close();
  const started: number[] = [];
  for (let round = 0; round < 9; round += 1) {
    const began = performance.now();
    const reopened = await SqliteStore.open({ directory, ...quiet });
    const sessions = await reopened.listSessions();
    started.push(performance.now() - began);
    if (sessions.length !== 1_000) throw new Error('the chats are not what was written');
    await reopened.close();
  }
  times.push(['open the store (quick_check, migrations) and list 1,000 chats, 20,000 messages in the file (median of 9)', median(started).toFixed(2)]);
}

await rm(root, { recursive: true, force: true });
console.log('\n| write | wall µs per op | CPU µs per op | event loop busy µs per op |\n|---|---:|---:|---:|');
for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
console.log('\n| read | ms |\n|---|---:|');
for (const [name, value] of times) console.log(`| ${name} | ${value} |`);
