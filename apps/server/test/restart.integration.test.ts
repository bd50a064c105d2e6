import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAirlockClient, type LoopEvent } from '@airlock/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import Database from 'better-sqlite3';
import { WebSocket } from 'ws';
import { startFakeOpenAIServer } from './support/fake-openai-server';
import { startOrExit, startServerProcess, type ServerProcess } from './support/server-process';
import { connectClient, watchRun, type RunWatcher, type TestClient } from './support/test-airlock';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Starts the real server (demo model, SQLite in `dataDir`) as its own process and waits for its start-up line. */
function startServer(dataDir: string, workspace: string, token: string): Promise<ServerProcess> {
  return startServerProcess(['--data-dir', dataDir, '--workspace', workspace], { AIRLOCK_TOKEN: token }, cleanups);
}

async function stop(server: ServerProcess, signal: NodeJS.Signals): Promise<void> {
  await server.stop(signal);
}

async function setup() {
  const dataDir = await mkdtemp(join(tmpdir(), 'airlock-restart-data-'));
  const workspace = await mkdtemp(join(tmpdir(), 'airlock-restart-ws-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  cleanups.push(() => rm(workspace, { recursive: true, force: true }));
  return { dataDir, workspace, token: randomBytes(24).toString('hex') };
}

function client(server: ServerProcess, token: string): TestClient {
  const connected = connectClient(server.wsUrl, token);
  cleanups.push(() => connected.close());
  return connected;
}

/** Starts a server, runs `input` to its end through a client of its own and stops the server: what that client received. */
async function runToEndOnAServer(dataDir: string, workspace: string, token: string, input: Parameters<typeof watchRun>[1]): Promise<RunWatcher> {
  const server = await startServer(dataDir, workspace, token);
  const c = client(server, token);
  const run = watchRun(c, input);
  await run.ended;
  await c.close();
  await stop(server, 'SIGTERM');
  return run;
}

/** Starts a run whose terminal call waits for a decision; answers the call's approval id once it waits. */
async function startWaitingRun(server: ServerProcess, token: string, command: string, options?: { decisionTimeoutMs: number }) {
  const c = client(server, token);
  const run = watchRun(c, { sessionId: 's1', runId: 'run-1', message: `run \`${command}\``, ...(options ? { options } : {}) });
  const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
  run.unsubscribe();
  await c.close();
  return start;
}

describe('a run waiting for a decision survives a server restart', { timeout: 180_000 }, () => {
  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`after ${signal}, the call is still waiting with the same id, and an allow runs it once`, async () => {
      const { dataDir, workspace, token } = await setup();
      const marker = join(workspace, 'ran.txt');
      const first = await startServer(dataDir, workspace, token);
      const start = await startWaitingRun(first, token, `echo once >> ${marker}`);
      await stop(first, signal);
      expect(existsSync(marker)).toBe(false);

      const second = await startServer(dataDir, workspace, token);
      expect(second.output()).toContain('1 unfinished run(s) resumed, 1 call(s) waiting for a decision');
      const c = client(second, token);
      const pending = await c.trpc.chat.pending.query({ sessionId: 's1' });
      expect(pending.map((p) => [p.approvalId, p.toolName, p.arguments])).toStrictEqual([[start.approvalId, 'terminal', start.arguments]]);
      // Re-attach as a client that saw the tool-start before the restart: nothing is replayed twice.
      const seen = watchRun(c, { sessionId: 's1', runId: 'run-1' });
      await expect(c.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow', clientLabel: 'restart-test' })).resolves.toMatchObject({ resolved: true });
      const end = await seen.next('tool-end');
      expect(end.outcome).toBe('executed');
      expect((await seen.ended).reason).toBe('done');
      expect(readFileSync(marker, 'utf8')).toBe('once\n');
      const ids = seen.received.map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      // A repeat of the same decision, after the restart too, runs nothing twice.
      await expect(c.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: false, status: 'already-decided' });
      const audit = await c.trpc.audit.list.query({ sessionId: 's1' });
      expect(audit.entries).toMatchObject([{ toolName: 'terminal', decision: 'allow', source: 'user', clientLabel: 'restart-test', outcome: 'executed' }]);
      expect(readFileSync(marker, 'utf8')).toBe('once\n');
    });
  }

  it('a later call allowed before the restart, while an earlier one waited, runs at its turn after it', async () => {
    const { dataDir, workspace, token } = await setup();
    const marker = join(workspace, 'ran.txt');
    await using fake = await startFakeOpenAIServer();
    fake.enqueue(
      {
        toolCalls: [
          { name: 'terminal', arguments: { command: `echo A >> ${marker}` } },
          { name: 'terminal', arguments: { command: `echo B >> ${marker}` } },
        ],
      },
      { text: 'done' },
    );
    const args = ['--data-dir', dataDir, '--workspace', workspace, '--model-url', fake.url];
    const first = await startServerProcess(args, { AIRLOCK_TOKEN: token }, cleanups);
    const before = client(first, token);
    const run = watchRun(before, { sessionId: 's1', runId: 'run-1', message: 'go' });
    const [a, b] = [await run.next('tool-start', (e) => e.arguments.command === `echo A >> ${marker}`), await run.next('tool-start', (e) => e.arguments.command === `echo B >> ${marker}`)];
    // The person allows the second call first: it waits for the first, which still waits on them.
    await before.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: b.approvalId, decision: 'allow' });
    await run.next('tool-decision', (e) => e.toolCallId === b.toolCallId);
    await stop(first, 'SIGTERM');
    expect(existsSync(marker)).toBe(false);

    const second = await startServerProcess(args, { AIRLOCK_TOKEN: token }, cleanups);
    const c = client(second, token);
    expect((await c.trpc.chat.pending.query({ sessionId: 's1' })).map((p) => p.approvalId)).toStrictEqual([a.approvalId]);
    const seen = watchRun(c, { sessionId: 's1', runId: 'run-1' });
    await c.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: a.approvalId, decision: 'allow' });
    expect((await seen.ended).reason).toBe('done');
    // Not "interrupted": the second call had never started, and runs once, after the first.
    expect(readFileSync(marker, 'utf8')).toBe('A\nB\n');
    const ends = seen.received.flatMap(({ event }) => (event.type === 'tool-end' ? [[event.toolCallId, event.outcome]] : []));
    expect(ends).toStrictEqual([
      [a.toolCallId, 'executed'],
      [b.toolCallId, 'executed'],
    ]);
    const decisions = seen.received.filter(({ event }) => event.type === 'tool-decision' && event.toolCallId === b.toolCallId);
    expect(decisions).toHaveLength(1);
  });

  it('a deny after a restart reaches the model and nothing runs', async () => {
    const { dataDir, workspace, token } = await setup();
    const marker = join(workspace, 'ran.txt');
    const first = await startServer(dataDir, workspace, token);
    const start = await startWaitingRun(first, token, `touch ${marker}`);
    await stop(first, 'SIGKILL');
    const second = await startServer(dataDir, workspace, token);
    const c = client(second, token);
    const seen = watchRun(c, { sessionId: 's1', runId: 'run-1' });
    await c.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'deny', reason: 'not today' });
    expect(await seen.next('tool-end')).toMatchObject({ outcome: 'denied' });
    await seen.ended;
    expect(existsSync(marker)).toBe(false);
    const session = await c.trpc.sessions.get.query({ sessionId: 's1' });
    expect(session.toolCalls).toMatchObject([{ decision: 'deny', reason: 'not today', outcome: 'denied' }]);
  });

  it('a decision repeated after a SIGKILL restart is answered already-decided with the decision made before, and runs nothing', async () => {
    const { dataDir, workspace, token } = await setup();
    const marker = join(workspace, 'ran.txt');
    const first = await startServer(dataDir, workspace, token);
    const start = await startWaitingRun(first, token, `touch ${marker}`);
    const before = client(first, token);
    const seen = watchRun(before, { sessionId: 's1', runId: 'run-1' });
    await expect(before.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'deny', reason: 'no' })).resolves.toStrictEqual({ resolved: true, status: 'resolved', decision: 'deny' });
    await seen.ended;
    const repeat = { sessionId: 's1', approvalId: start.approvalId, decision: 'allow' as const };
    await expect(before.trpc.chat.confirmTool.mutate(repeat)).resolves.toStrictEqual({ resolved: false, status: 'already-decided', decision: 'deny' });
    await stop(first, 'SIGKILL');

    const second = await startServer(dataDir, workspace, token);
    const c = client(second, token);
    await expect(c.trpc.chat.confirmTool.mutate(repeat)).resolves.toStrictEqual({ resolved: false, status: 'already-decided', decision: 'deny' });
    await expect(c.trpc.chat.confirmTool.mutate({ ...repeat, sessionId: 's-other' })).resolves.toStrictEqual({ resolved: false, status: 'not-found' });
    expect(existsSync(marker)).toBe(false);
    const audit = await c.trpc.audit.list.query({ sessionId: 's1' });
    expect(audit.entries).toMatchObject([{ decision: 'deny', reason: 'no', outcome: 'denied' }]);
  });

  it('a deadline that passed while the server was down ends the call as timed out', async () => {
    const { dataDir, workspace, token } = await setup();
    const marker = join(workspace, 'ran.txt');
    const first = await startServer(dataDir, workspace, token);
    const start = await startWaitingRun(first, token, `touch ${marker}`, { decisionTimeoutMs: 1000 });
    await stop(first, 'SIGKILL');
    // Waits on the condition itself, the deadline being in the past, before the restart.
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(start.expiresAt!), { timeout: 5000, interval: 50 });
    const second = await startServer(dataDir, workspace, token);
    // Resumed, with nothing waiting for anyone: the start-up line does not say otherwise.
    expect(second.output()).toContain('1 unfinished run(s) resumed, 0 call(s) waiting for a decision');
    const c = client(second, token);
    const seen = watchRun(c, { sessionId: 's1', runId: 'run-1' });
    expect(await seen.next('tool-end')).toMatchObject({ outcome: 'timed-out' });
    await seen.ended;
    expect(existsSync(marker)).toBe(false);
    expect(await c.trpc.chat.pending.query({ sessionId: 's1' })).toStrictEqual([]);
  });

  it('a run followed through @airlock/client goes on across a SIGTERM restart to its end: the stream the server stopped follows the run again', async () => {
    const { dataDir, workspace, token } = await setup();
    const marker = join(workspace, 'ran.txt');
    const first = await startServer(dataDir, workspace, token);
    const airlock = createAirlockClient({ url: first.wsUrl, token, WebSocket, retryDelayMs: () => 100 });
    cleanups.push(() => airlock.close());
    const run = airlock.startRun({ sessionId: 's3', runId: 'run-3', message: `run \`echo once >> ${marker}\`` });
    const seen: LoopEvent[] = [];
    for await (const event of run) {
      seen.push(event);
      if (event.type !== 'tool-start' || !event.awaitingConfirmation) continue;
      // The server goes down and comes back on the same address while the call waits; the person answers after.
      await stop(first, 'SIGTERM');
      await startServerProcess(['--data-dir', dataDir, '--workspace', workspace, '--port', new URL(first.wsUrl).port], { AIRLOCK_TOKEN: token }, cleanups);
      await expect(airlock.decide({ sessionId: 's3', approvalId: event.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    }
    expect(seen.at(-1)).toMatchObject({ type: 'run-end', reason: 'done' });
    expect(seen.filter((event) => event.type === 'tool-start')).toHaveLength(1);
    expect(seen.find((event) => event.type === 'tool-end')).toMatchObject({ outcome: 'executed' });
    expect(readFileSync(marker, 'utf8')).toBe('once\n');
    expect(run.lastEventId).toBe(`run-3:${seen.length}`);
  });

  // Each damages one record of a run whose terminal call waits: the text of one of its events, the waiting call's
  // arguments, the call's decision (a word that is none, one byte from "allow"), the run's options (text that does not
  // read, and JSON that is no options).
  const damages = [
    { what: 'an event', sql: "UPDATE events SET json = substr(json, 1, length(json) - 3) WHERE run_id = 'run-1' AND seq = 2", record: /an event of run run-1: /, kept: "SELECT json FROM events WHERE run_id = 'run-1' AND seq = 2" },
    {
      what: 'an event that reads as JSON but is no event (the waiting call\'s shown arguments as a string)',
      sql: "UPDATE events SET json = json_set(json, '$.arguments', 'rm -rf ~') WHERE run_id = 'run-1' AND json_extract(json, '$.type') = 'tool-start'",
      record: /an event of run run-1: arguments: /,
      kept: "SELECT json FROM events WHERE run_id = 'run-1' AND json_extract(json, '$.type') = 'tool-start'",
    },
    {
      what: "the waiting call's arguments, JSON but no arguments object",
      sql: "UPDATE tool_calls SET arguments = json_quote(arguments) WHERE run_id = 'run-1'",
      record: /the arguments of call \S+ of run run-1: the record: /,
      kept: "SELECT arguments FROM tool_calls WHERE run_id = 'run-1'",
    },
    { what: "the waiting call's arguments", sql: "UPDATE tool_calls SET arguments = substr(arguments, 1, length(arguments) - 2) WHERE run_id = 'run-1'", record: /the arguments of call \S+ of run run-1: /, kept: "SELECT arguments FROM tool_calls WHERE run_id = 'run-1'" },
    { what: "the waiting call's decision", sql: "UPDATE tool_calls SET decision = 'allox', source = 'user', decided_at = 1 WHERE run_id = 'run-1'", record: /the decision of call \S+ of run run-1: "allox" is none of allow, deny, timeout, cancel/, kept: "SELECT decision FROM tool_calls WHERE run_id = 'run-1'" },
    { what: "the run's options", sql: "UPDATE runs SET options = '{\"decisionTim' WHERE run_id = 'run-1'", record: /the options of run run-1: /, kept: "SELECT options FROM runs WHERE run_id = 'run-1'" },
    {
      what: "the run's options, JSON but no options (its enabled tools as a string, which would offer every tool whose name it holds)",
      sql: "UPDATE runs SET options = json_set(options, '$.enabledTools', 'terminal python') WHERE run_id = 'run-1'",
      record: /the options of run run-1: enabledTools: /,
      kept: "SELECT options FROM runs WHERE run_id = 'run-1'",
    },
  ];
  for (const damage of damages) {
    it(`a waiting run whose stored record was damaged (${damage.what}) is set aside at the start, said with the record, and nothing of it runs; the server and the chat go on`, async () => {
      const { dataDir, workspace, token } = await setup();
      const marker = join(workspace, 'ran.txt');
      const first = await startServer(dataDir, workspace, token);
      const start = await startWaitingRun(first, token, `touch ${marker}`);
      await stop(first, 'SIGTERM');
      const file = join(dataDir, 'airlock.db');
      const db = new Database(file);
      expect(db.prepare(damage.sql).run().changes).toBe(1);
      const damaged: unknown = db.prepare(damage.kept).pluck().get();
      db.close();

      const second = await startServer(dataDir, workspace, token);
      const line = second.output().split('\n').find((text) => text.startsWith('Run run-1 of chat s1 was set aside: a stored record of it is damaged ('));
      expect(line).toMatch(damage.record);
      expect(line).toMatch(/\)\. Nothing more of it runs; its records were left as they are\.$/);
      const c = client(second, token);
      expect(await c.trpc.chat.pending.query({ sessionId: 's1' })).toStrictEqual([]);
      const allow = c.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' });
      // A decision the ledger holds damaged is not read as any decision: the answer names it, and nothing runs.
      if (damage.what === "the waiting call's decision") {
        await expect(allow).rejects.toThrow(
          /^A stored record is damaged \(the decision of approval \S+: "allox" is none of allow, deny, timeout, cancel\): it was not read as anything and nothing was run on it; it was left as it is\.$/,
        );
      } else await expect(allow).resolves.toStrictEqual({ resolved: false, status: 'not-found' });
      // The chat opens: a damaged row of its page is left out and named.
      const detail = await c.trpc.sessions.get.query({ sessionId: 's1' });
      expect(detail.messages[0]).toStrictEqual({ role: 'user', content: `run \`touch ${marker}\`` });
      const rowDamaged = damage.what.startsWith("the waiting call's");
      expect([detail.toolCalls.length, detail.leftOut ?? []]).toStrictEqual(rowDamaged ? [0, [expect.stringMatching(damage.record)]] : [1, []]);
      // The call whose row was left out is named by its run and id, so a client marks that call alone as damaged.
      expect(detail.leftOutCalls ?? []).toStrictEqual(rowDamaged ? [{ runId: 'run-1', toolCallId: expect.any(String) }] : []);

      // A run whose options did not read still replays, to its end as set aside.
      if (damage.what.startsWith("the run's options")) {
        const replay = watchRun(c, { sessionId: 's1', runId: 'run-1' });
        expect(await replay.ended).toMatchObject({ reason: 'error', error: expect.stringMatching(/^A stored record of this run is damaged \(the options of run run-1: /) });
      }
      const next = watchRun(c, { sessionId: 's1', runId: 'run-2', message: 'hello' });
      expect((await next.ended).reason).toBe('done');
      expect(existsSync(marker)).toBe(false);
      await stop(second, 'SIGTERM');
      const kept = new Database(file, { readonly: true });
      expect(kept.prepare("SELECT ended_at IS NOT NULL AS ended, end_reason FROM runs WHERE run_id = 'run-1'").get()).toStrictEqual({ ended: 1, end_reason: 'error' });
      expect(kept.prepare(damage.kept).pluck().get()).toBe(damaged);
      kept.close();
    });
  }

  it('a client re-attaching to a finished run one of whose stored events is JSON but no event gets the events before it, then an error naming it, never the event', async () => {
    const { dataDir, workspace, token } = await setup();
    const input = { sessionId: 's2', runId: 'run-2', message: 'hello there' };
    const run = await runToEndOnAServer(dataDir, workspace, token, input);
    const db = new Database(join(dataDir, 'airlock.db'));
    const seq = db.prepare("SELECT min(seq) FROM events WHERE run_id = 'run-2' AND json_extract(json, '$.type') = 'text-delta'").pluck().get() as number;
    expect(db.prepare("UPDATE events SET json = json_set(json, '$.text', 42) WHERE run_id = 'run-2' AND seq = ?").run(seq).changes).toBe(1);
    db.close();

    const second = await startServer(dataDir, workspace, token);
    const c2 = client(second, token);
    const again = watchRun(c2, input);
    await expect(again.failed).rejects.toThrow(/^A stored record is damaged \(an event of run run-2: text: .+\): it was not read as anything and nothing was run on it; it was left as it is\.$/);
    expect(again.received.map((r) => r.event)).toStrictEqual(run.received.slice(0, seq - 1).map((r) => r.event));
  });

  it('a chat one of whose stored messages is damaged goes on: its next message runs without it (and without the results of its calls), said in the run and the log, the chat opens without it, naming it, the row left as it is', async () => {
    const { dataDir, workspace, token } = await setup();
    await using fake = await startFakeOpenAIServer();
    fake.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo hi' } }] }, { text: 'first done' }, { text: 'second done' });
    const args = ['--data-dir', dataDir, '--workspace', workspace, '--model-url', fake.url];
    const first = await startServerProcess(args, { AIRLOCK_TOKEN: token }, cleanups);
    const before = client(first, token);
    const run = watchRun(before, { sessionId: 's1', runId: 'run-1', message: 'go' });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
    await before.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' });
    expect((await run.ended).reason).toBe('done');
    await stop(first, 'SIGTERM');
    const file = join(dataDir, 'airlock.db');
    const db = new Database(file);
    const damage = "UPDATE messages SET json = json_set(json, '$.toolCalls', 'echo hi') WHERE session_id = 's1' AND json_extract(json, '$.role') = 'assistant' AND json_extract(json, '$.content') = ''";
    expect(db.prepare(damage).run().changes).toBe(1);
    const damaged = db.prepare("SELECT seq, json FROM messages WHERE session_id = 's1' ORDER BY seq").all();
    db.close();

    const second = await startServerProcess(args, { AIRLOCK_TOKEN: token }, cleanups);
    const c = client(second, token);
    const next = watchRun(c, { sessionId: 's1', runId: 'run-2', message: 'again' });
    expect((await next.ended).reason).toBe('done');
    const said = /^A stored message of this chat is damaged \(a message of chat s1: toolCalls: .+\): left out of what the model reads, and left as stored\.$/;
    expect(next.received.map(({ event }) => event).filter((event) => event.type === 'status' && said.test(event.text))).toHaveLength(1);
    expect(second.output().split('\n').filter((line) => line.startsWith('Run run-2 of chat s1: A stored message of this chat is damaged ('))).toHaveLength(1);
    const conversation = (fake.requests.at(-1)!.messages as { role: string; content: unknown }[]).filter((message) => message.role !== 'system');
    expect(conversation.map((message) => [message.role, message.content])).toStrictEqual([
      ['user', 'go'],
      ['assistant', 'first done'],
      ['user', 'again'],
    ]);
    // The chat opens, without the damaged message, which it names.
    const detail = await c.trpc.sessions.get.query({ sessionId: 's1' });
    expect(detail.messages.map((message) => [message.role, message.content])).toStrictEqual([
      ['user', 'go'],
      ['tool', expect.any(String)],
      ['assistant', 'first done'],
      ['user', 'again'],
      ['assistant', 'second done'],
    ]);
    expect(detail.leftOut).toStrictEqual([expect.stringMatching(/^a message of chat s1: toolCalls: /)]);
    await stop(second, 'SIGTERM');
    const kept = new Database(file, { readonly: true });
    expect(kept.prepare("SELECT seq, json FROM messages WHERE session_id = 's1' AND seq <= ? ORDER BY seq").all(damaged.length)).toStrictEqual(damaged);
    kept.close();
  });

  it('a damaged rule stops the start, naming the rule and the command that deletes its row; run as said, the next start goes on without it', async () => {
    const { dataDir, workspace, token } = await setup();
    const first = await startServer(dataDir, workspace, token);
    const c = client(first, token);
    const { rule } = await c.trpc.rules.add.mutate({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm'], exact: false }, scope: { kind: 'global' }, source: 'user' });
    await c.close();
    await stop(first, 'SIGTERM');
    const file = join(dataDir, 'airlock.db');
    const db = new Database(file);
    expect(db.prepare('UPDATE rules SET json = substr(json, 1, 20) WHERE rule_id = ?').run(rule.id).changes).toBe(1);
    db.close();

    const refused = await startOrExit(['--data-dir', dataDir, '--workspace', workspace], { AIRLOCK_TOKEN: token }, cleanups);
    expect(refused.exitCode).toBe(1);
    expect(refused.output).toContain(`airlock: ${file}: holds a damaged record (rule ${rule.id}: `);
    expect(refused.output).toContain(`). To start without it, delete its row with sqlite3 '${file}' "DELETE FROM rules WHERE rule_id = '${rule.id}'", then add it again if you still want it. `);
    expect(refused.output).not.toContain('    at ');
    const command = /delete its row with (.+), then add it again/.exec(refused.output)![1]!;
    execFileSync('sh', ['-c', command]);

    const second = await startServer(dataDir, workspace, token);
    expect(await client(second, token).trpc.rules.list.query()).toMatchObject({ rules: [] });
  });

  it('a client re-sending a run’s first input after a restart re-attaches and never sends the message twice', async () => {
    const { dataDir, workspace, token } = await setup();
    await writeFile(join(workspace, 'a.txt'), 'x');
    const input = { sessionId: 's2', runId: 'run-2', message: 'hello there' };
    const run = await runToEndOnAServer(dataDir, workspace, token, input);
    const second = await startServer(dataDir, workspace, token);
    const c2 = client(second, token);
    const again = watchRun(c2, input);
    await again.ended;
    expect(again.received.map((r) => r.id)).toStrictEqual(run.received.map((r) => r.id));
    const session = await c2.trpc.sessions.get.query({ sessionId: 's2' });
    expect(session.messages.filter((m) => m.role === 'user')).toHaveLength(1);
  });
});
