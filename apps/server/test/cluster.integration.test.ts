import { randomBytes } from 'node:crypto';
import { createServer, connect, type Socket } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SessionWatchEvent, ToolSettings } from '@airlock/api';
import { killAllWith, processesWith } from '../src/tools/test-support';
import { instanceLockHolder, openTestDatabase, probeTestDatabase, terminateBackend, withClient, type TestDatabase } from './support/postgres';
import { startOrExit, startServerProcess, type ServerProcess } from './support/server-process';
import { connectClient, watchRun, type TestClient } from './support/test-airlock';

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance server tests: ${postgres.reason}`);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

interface Deployment {
  db: TestDatabase;
  workspace: string;
  token: string;
  /** Starts one more instance on the shared database, as `npm start` would with --database-url. */
  instance(name: string): Promise<ServerProcess>;
  /** The arguments `instance` starts an instance with. */
  args(name: string): string[];
}

/** One database schema and one workspace shared by every instance of a test, as behind a load balancer. */
async function deployment(leaseMs = 1000): Promise<Deployment> {
  const db = await openTestDatabase();
  cleanups.push(async () => {
    await db[Symbol.asyncDispose]();
  });
  const workspace = await mkdtemp(join(tmpdir(), 'airlock-cluster-ws-'));
  cleanups.push(() => rm(workspace, { recursive: true, force: true }));
  const token = randomBytes(24).toString('hex');
  const args = (name: string) => ['--workspace', workspace, '--database-url', db.url, '--database-schema', db.schema, '--instance-id', name, '--lease-ms', String(leaseMs)];
  return { db, workspace, token, args, instance: (name) => startServerProcess(args(name), { AIRLOCK_TOKEN: token }, cleanups) };
}

/** A run's owner and fencing token, as the shared database has them. */
async function runRow(db: TestDatabase, runId: string): Promise<{ owner: string | null; fence: number } | undefined> {
  return withClient(async (connection) => {
    const { rows } = await connection.query<{ owner: string | null; fence: string }>(`SELECT owner, fence FROM "${db.schema}".runs WHERE run_id = $1`, [runId]);
    return rows[0] === undefined ? undefined : { owner: rows[0].owner, fence: Number(rows[0].fence) };
  });
}

/** Whether the run's lease has run out by the database's clock (its owner's hold on its id went no further). */
async function leaseRanOut(db: TestDatabase, runId: string): Promise<boolean> {
  return withClient(async (connection) => {
    const { rows } = await connection.query<{ out: boolean }>(
      `SELECT lease_until < (extract(epoch from clock_timestamp()) * 1000)::bigint AS out FROM "${db.schema}".runs WHERE run_id = $1`,
      [runId],
    );
    return rows[0]?.out === true;
  });
}

/**
 * A TCP relay to the test database that can be cut: every connection through it is dropped at once, and new ones are
 * closed as they come, as when a network link to the database goes; `restore` lets connections through again. `url`
 * is the database's, through the relay.
 */
async function cuttableLink(databaseUrl: string): Promise<{ url: string; cut(): void; restore(): void }> {
  const target = new URL(databaseUrl);
  const open = new Set<Socket>();
  let down = false;
  const relay = createServer((incoming) => {
    if (down) return void incoming.destroy();
    const outgoing = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [incoming, outgoing]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    incoming.pipe(outgoing).pipe(incoming);
    incoming.on('close', () => outgoing.destroy());
    outgoing.on('close', () => incoming.destroy());
  });
  await new Promise<void>((listening) => relay.listen(0, '127.0.0.1', listening));
  cleanups.push(async () => {
    for (const socket of open) socket.destroy();
    await new Promise((closed) => relay.close(closed));
  });
  const address = relay.address();
  if (address === null || typeof address === 'string') throw new Error('the relay has no port');
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.href,
    cut: () => {
      down = true;
      for (const socket of open) socket.destroy();
    },
    restore: () => {
      down = false;
    },
  };
}

function client(server: ServerProcess, token: string): TestClient {
  const connected = connectClient(server.wsUrl, token);
  cleanups.push(() => connected.close());
  return connected;
}

describe.skipIf(!postgres.available)('Airlock instances sharing one PostgreSQL database', { timeout: 180_000 }, () => {
  it('three instances: a run started on A, followed on C, is decided from B and runs once', async () => {
    const d = await deployment();
    const [a, b, c] = await Promise.all([d.instance('a'), d.instance('b'), d.instance('c')]);
    expect(a.output()).toContain('kept in PostgreSQL, shared as instance a');
    const marker = join(d.workspace, 'ran.txt');
    const onA = client(a, d.token);
    const run = watchRun(onA, { sessionId: 's1', runId: 'run-1', message: `run \`echo once >> ${marker}\`` });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);

    const onC = client(c, d.token);
    const followed = watchRun(onC, { sessionId: 's1', runId: 'run-1' });
    await followed.next('tool-start');
    const onB = client(b, d.token);
    expect((await onB.trpc.chat.pending.query({ sessionId: 's1' })).map((p) => p.approvalId)).toStrictEqual([start.approvalId]);
    expect((await onB.trpc.sessions.list.query()).sessions.find((s) => s.sessionId === 's1')?.activeRunId).toBe('run-1');
    const decisions = await Promise.all([
      onB.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow', clientLabel: 'from-b' }),
      onC.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'deny', clientLabel: 'from-c' }),
    ]);
    expect(decisions.filter((decision) => decision.resolved)).toHaveLength(1);
    const winner = decisions.find((decision) => decision.resolved)!;
    if (winner.status === 'not-found') throw new Error('the winning decision found no call');
    expect(decisions.find((decision) => !decision.resolved)).toMatchObject({ status: 'already-decided', decision: winner.decision });

    expect((await followed.ended).reason).toBe('done');
    expect((await run.ended).reason).toBe('done');
    expect(followed.received.map((r) => r.id)).toStrictEqual(run.received.map((r) => r.id));
    expect(existsSync(marker) ? readFileSync(marker, 'utf8') : '').toBe(winner.decision === 'allow' ? 'once\n' : '');
    const audit = await onC.trpc.audit.list.query({ sessionId: 's1' });
    expect(audit.entries).toMatchObject([{ decision: winner.decision, clientLabel: winner.decision === 'allow' ? 'from-b' : 'from-c' }]);
  });

  it('a decision the database cannot store (53100 disk full) is answered with a clear error on either instance; the call still waits, and once space is back an allow runs it once', async () => {
    const d = await deployment();
    const [a, b] = await Promise.all([d.instance('a'), d.instance('b')]);
    const marker = join(d.workspace, 'ran.txt');
    const onA = client(a, d.token);
    const run = watchRun(onA, { sessionId: 's1', runId: 'run-1', message: `run \`echo once >> ${marker}\`` });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
    const onB = client(b, d.token);
    // PostgreSQL's own answer to a write when its disk is full, made by a trigger on the decisions' table.
    const schema = `"${d.db.schema}"`;
    await withClient(async (connection) => {
      await connection.query(
        `CREATE FUNCTION ${schema}.disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$`,
      );
      await connection.query(`CREATE TRIGGER disk_full BEFORE UPDATE ON ${schema}.tool_calls FOR EACH ROW EXECUTE FUNCTION ${schema}.disk_full()`);
    });
    const notStored = /^The decision could not be stored \(The database .* has no space left \(53100: could not extend file: No space left on device\): free space on the database server and try again\): the call still waits for a decision\.$/;
    await expect(onB.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).rejects.toThrow(notStored);
    await expect(onA.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'deny' })).rejects.toThrow(notStored);
    expect((await onB.trpc.chat.pending.query({ sessionId: 's1' })).map((p) => p.approvalId)).toStrictEqual([start.approvalId]);
    expect((await onA.trpc.chat.pending.query({ sessionId: 's1' })).map((p) => p.approvalId)).toStrictEqual([start.approvalId]);
    expect((await onB.trpc.audit.list.query({ sessionId: 's1' })).entries).toMatchObject([{ approvalId: start.approvalId, decision: null, outcome: null }]);
    expect(existsSync(marker)).toBe(false);

    await withClient(async (connection) => {
      await connection.query(`DROP TRIGGER disk_full ON ${schema}.tool_calls`);
    });
    await expect(onB.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true, decision: 'allow' });
    expect((await run.ended).reason).toBe('done');
    expect(readFileSync(marker, 'utf8')).toBe('once\n');
  });

  it('SIGKILL of the owner while a call waits: another instance takes the run over, and an allow there runs it once', async () => {
    const d = await deployment(1000);
    const [a, b] = await Promise.all([d.instance('a'), d.instance('b')]);
    const marker = join(d.workspace, 'ran.txt');
    const onA = client(a, d.token);
    const run = watchRun(onA, { sessionId: 's1', runId: 'run-1', message: `run \`echo once >> ${marker}\`` });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
    const onB = client(b, d.token);
    const followed = watchRun(onB, { sessionId: 's1', runId: 'run-1' });
    await followed.next('tool-start');

    await a.stop('SIGKILL');
    // B takes the run over once A's lease runs out; the call waits there with the same id.
    await expect
      .poll(async () => (await onB.trpc.chat.pending.query({ sessionId: 's1' })).map((p) => p.approvalId), { timeout: 60_000 })
      .toStrictEqual([start.approvalId]);
    await expect(onB.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    expect(await followed.next('tool-end')).toMatchObject({ outcome: 'executed' });
    expect((await followed.ended).reason).toBe('done');
    expect(readFileSync(marker, 'utf8')).toBe('once\n');
    const ids = followed.received.map((r) => r.id);
    expect(ids).toStrictEqual(ids.map((_, index) => `run-1:${index + 1}`));
    await expect(onB.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: false, status: 'already-decided' });
  });

  it('SIGSTOP of the owner while its call runs: another instance records it interrupted; once the owner goes on (SIGCONT) it stops the call’s processes at once', async () => {
    const d = await deployment(1000);
    const [a, b] = await Promise.all([d.instance('a'), d.instance('b')]);
    const token = `600.${Math.floor(Math.random() * 1e9)}`;
    cleanups.push(async () => killAllWith(token));
    cleanups.push(async () => void a.child.kill('SIGCONT'));
    const onA = client(a, d.token);
    const run = watchRun(onA, { sessionId: 's1', runId: 'run-1', message: `run \`sleep ${token}\`` });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
    const onB = client(b, d.token);
    const followed = watchRun(onB, { sessionId: 's1', runId: 'run-1' });
    await followed.next('tool-start');
    await expect(onA.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    await vi.waitFor(() => expect(processesWith(token)).not.toStrictEqual([]), { timeout: 10_000 });

    a.child.kill('SIGSTOP');
    expect(await followed.next('tool-end')).toMatchObject({ outcome: 'interrupted' });
    await followed.ended;
    // Stopped, the owner stops nothing: its call's processes run on.
    expect(processesWith(token)).not.toStrictEqual([]);
    a.child.kill('SIGCONT');
    await vi.waitFor(() => expect(processesWith(token)).toStrictEqual([]), { timeout: 10_000 });
    const audit = await onB.trpc.audit.list.query({ sessionId: 's1' });
    expect(audit.entries).toMatchObject([{ decision: 'allow', outcome: 'interrupted' }]);
  });

  it('a Stop on an owner cut off from the database past its lease: the answer says it holds only while that owner holds the run; another instance takes it over, an allow there runs, and the answer said so', async () => {
    const d = await deployment(1000);
    const link = await cuttableLink(d.db.url);
    const argsOfA = d.args('a').map((arg) => (arg === d.db.url ? link.url : arg));
    const [a, b] = await Promise.all([startServerProcess(argsOfA, { AIRLOCK_TOKEN: d.token }, cleanups), d.instance('b')]);
    const marker = join(d.workspace, 'ran.txt');
    const onA = client(a, d.token);
    const run = watchRun(onA, { sessionId: 's1', runId: 'run-1', message: `run \`echo once >> ${marker}\`` });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
    const onB = client(b, d.token);
    const followed = watchRun(onB, { sessionId: 's1', runId: 'run-1' });
    await followed.next('tool-start');

    link.cut();
    const answer = await onA.trpc.chat.cancel.mutate({ sessionId: 's1', runId: 'run-1' });
    // A cannot renew its lease: B takes the run over, without the stop, and the call waits there with the same id.
    await expect.poll(async () => (await runRow(d.db, 'run-1'))?.owner, { timeout: 60_000 }).toBe('b');
    expect((await onB.trpc.chat.pending.query({ sessionId: 's1' })).map((p) => p.approvalId)).toStrictEqual([start.approvalId]);
    await expect(onB.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    expect(await followed.next('tool-end')).toMatchObject({ outcome: 'executed' });
    expect((await followed.ended).reason).toBe('done');
    expect(readFileSync(marker, 'utf8')).toBe('once\n');
    // What happened is what the answer to the Stop said could.
    expect(answer).toStrictEqual({
      cancelled: 1,
      paused: expect.stringMatching(/^The run run-1 is stopped here, but its stop could not be stored \(.*\): it holds while this instance holds the run, and for good once stored\. /),
    });
    expect(answer.paused).toContain("If the database stays out of reach until this instance's lease on the run runs out (within 1 s), another instance may take the run over without the stop: its calls wait for a decision again, and one allowed there runs (stop it again there)");
    link.restore();
  });

  it('a second live process under the same --instance-id refuses to start, naming the id; the first keeps its run, and an allow there runs the call once', async () => {
    // Leases of a minute: the first's hold on its id cannot run out within the test.
    const d = await deployment(60_000);
    const a = await d.instance('a');
    const marker = join(d.workspace, 'ran.txt');
    const onA = client(a, d.token);
    const run = watchRun(onA, { sessionId: 's1', runId: 'run-1', message: `run \`echo once >> ${marker}\`` });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
    const before = await runRow(d.db, 'run-1');

    const second = await startOrExit(d.args('a'), { AIRLOCK_TOKEN: d.token }, cleanups);
    expect(second.exitCode).toBe(1);
    expect(second.output).toContain('--instance-id: ');
    expect(second.output).toContain('instance id "a" is held by another live Airlock process');
    expect(second.output).toContain('give this one an id of its own (--instance-id), or stop the other first');

    expect(await runRow(d.db, 'run-1')).toStrictEqual(before);
    await expect(onA.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    expect(await run.next('tool-end')).toMatchObject({ outcome: 'executed' });
    expect((await run.ended).reason).toBe('done');
    expect(readFileSync(marker, 'utf8')).toBe('once\n');
  });

  it('a holder whose lock connection was cut (pg_terminate_backend): a second process under its id is refused while it renews, it takes its lock again and its run goes on; once it is SIGKILLed a restart takes the id', async () => {
    // Leases of 30 s: a second process that finds the lock free waits 15 s for the holder to renew (every 10 s).
    const d = await deployment(30_000);
    const a = await d.instance('a');
    const marker = join(d.workspace, 'ran.txt');
    const onA = client(a, d.token);
    const run = watchRun(onA, { sessionId: 's1', runId: 'run-1', message: `run \`echo once >> ${marker}\`` });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
    const before = await runRow(d.db, 'run-1');
    const cut = await instanceLockHolder(d.db.schema, 'a');
    expect(cut).toBeDefined();

    expect(await terminateBackend(cut!)).toBe(true);
    const second = await startOrExit(d.args('a'), { AIRLOCK_TOKEN: d.token }, cleanups);
    expect(second.exitCode).toBe(1);
    expect(second.output).toContain('--instance-id: ');
    expect(second.output).toContain('instance id "a" is held by another live Airlock process');

    await vi.waitFor(() => expect(a.output()).toContain('The lock of instance id "a" is held again.'), { timeout: 60_000, interval: 100 });
    const retaken = await instanceLockHolder(d.db.schema, 'a');
    expect(retaken).toBeDefined();
    expect(retaken).not.toBe(cut);
    expect(await runRow(d.db, 'run-1')).toStrictEqual(before);
    await expect(onA.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    expect(await run.next('tool-end')).toMatchObject({ outcome: 'executed' });
    expect((await run.ended).reason).toBe('done');
    expect(readFileSync(marker, 'utf8')).toBe('once\n');

    await a.stop('SIGKILL');
    const again = await d.instance('a');
    expect(again.output()).toContain('Instance id "a" is free of its lock but its holder\'s heartbeat is recent');
    await vi.waitFor(async () => expect(await instanceLockHolder(d.db.schema, 'a')).toBeDefined(), { timeout: 30_000, interval: 100 });
  });

  it('a restart under the same --instance-id right after a SIGKILL takes its waiting run back as it starts, and an allow there runs the call once', async () => {
    // Leases of 30 s: the restart takes the id once the killed process's heartbeat stayed still for half a lease, not
    // at the lease's end, and its run with it.
    const d = await deployment(30_000);
    const a = await d.instance('a');
    const marker = join(d.workspace, 'ran.txt');
    const run = watchRun(client(a, d.token), { sessionId: 's1', runId: 'run-1', message: `run \`echo once >> ${marker}\`` });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
    await a.stop('SIGKILL');

    const again = await d.instance('a');
    const onAgain = client(again, d.token);
    await expect.poll(async () => (await onAgain.trpc.chat.pending.query({ sessionId: 's1' })).map((p) => p.approvalId), { timeout: 30_000 }).toStrictEqual([start.approvalId]);
    const resumed = watchRun(onAgain, { sessionId: 's1', runId: 'run-1', lastEventId: run.received.at(-1)!.id });
    await expect(onAgain.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    expect(await resumed.next('tool-end')).toMatchObject({ outcome: 'executed' });
    expect((await resumed.ended).reason).toBe('done');
    expect(readFileSync(marker, 'utf8')).toBe('once\n');
  });

  it('an owner SIGSTOPped past its lease, its id taken by a new process: resumed (SIGCONT), it notices, runs nothing, and its SIGTERM releases nothing of the new one’s', async () => {
    const d = await deployment(1000);
    const old = await d.instance('a');
    cleanups.push(async () => void old.child.kill('SIGCONT'));
    const marker = join(d.workspace, 'ran.txt');
    const onOld = client(old, d.token);
    const run = watchRun(onOld, { sessionId: 's1', runId: 'run-1', message: `run \`echo once >> ${marker}\`` });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);

    old.child.kill('SIGSTOP');
    await vi.waitFor(async () => expect(await leaseRanOut(d.db, 'run-1')).toBe(true), { timeout: 30_000, interval: 100 });
    const fresh = await d.instance('a');
    const onFresh = client(fresh, d.token);
    await expect.poll(async () => (await onFresh.trpc.chat.pending.query({ sessionId: 's1' })).map((p) => p.approvalId), { timeout: 30_000 }).toStrictEqual([start.approvalId]);
    const held = await runRow(d.db, 'run-1');
    expect(held?.owner).toBe('a');

    old.child.kill('SIGCONT');
    await vi.waitFor(() => expect(old.output()).toContain('Instance id "a" was taken by another process'), { timeout: 30_000 });
    await old.stop('SIGTERM');
    expect(await runRow(d.db, 'run-1')).toStrictEqual(held);

    const resumed = watchRun(onFresh, { sessionId: 's1', runId: 'run-1', lastEventId: run.received.at(-1)!.id });
    await expect(onFresh.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    expect(await resumed.next('tool-end')).toMatchObject({ outcome: 'executed' });
    expect((await resumed.ended).reason).toBe('done');
    expect(readFileSync(marker, 'utf8')).toBe('once\n');
  });

  it('a rolling restart: SIGTERM on the owner hands its waiting run over; its client reconnects elsewhere with lastEventId and decides there', async () => {
    // Leases of a minute: only the hand-over on SIGTERM, not an expiry, can move the run within the test.
    const d = await deployment(60_000);
    const [a, b] = await Promise.all([d.instance('a'), d.instance('b')]);
    const marker = join(d.workspace, 'ran.txt');
    const onA = client(a, d.token);
    const run = watchRun(onA, { sessionId: 's1', runId: 'run-1', message: `run \`echo once >> ${marker}\`` });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
    const lastEventId = run.received.at(-1)!.id;
    run.unsubscribe();
    await a.stop('SIGTERM');
    expect(a.child.exitCode).toBe(0);

    const onB = client(b, d.token);
    const resumed = watchRun(onB, { sessionId: 's1', runId: 'run-1', lastEventId });
    await expect.poll(async () => (await onB.trpc.chat.pending.query({ sessionId: 's1' })).map((p) => p.approvalId), { timeout: 30_000 }).toStrictEqual([start.approvalId]);
    await expect(onB.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    expect((await resumed.ended).reason).toBe('done');
    const ids = [...run.received, ...resumed.received].map((r) => r.id);
    expect(ids).toStrictEqual(ids.map((_, index) => `run-1:${index + 1}`));
    expect(readFileSync(marker, 'utf8')).toBe('once\n');
  });
  it('a chat deleted on B while its tool runs on A: A stops the tool, its client sees the run end, and the ledger keeps the outcome', async () => {
    const d = await deployment(60_000);
    const [a, b] = await Promise.all([d.instance('a'), d.instance('b')]);
    const onA = client(a, d.token);
    const run = watchRun(onA, { sessionId: 's1', runId: 'run-1', message: 'run `sleep 120`' });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
    await expect(onA.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    await run.next('tool-decision');

    const onB = client(b, d.token);
    await expect.poll(async () => (await onB.trpc.sessions.list.query()).sessions.find((s) => s.sessionId === 's1')?.activeRunId, { timeout: 30_000 }).toBe('run-1');
    await onB.trpc.sessions.delete.mutate({ sessionId: 's1' });

    expect(await run.next('tool-end')).toMatchObject({ outcome: 'cancelled' });
    expect((await run.ended).reason).toBe('cancelled');
    const audit = await onB.trpc.audit.list.query({});
    expect(audit.entries).toMatchObject([{ toolName: 'terminal', decision: 'allow', outcome: 'cancelled' }]);
    // A's list learns of the deletion from B's message, which may come after the run's end reached A's client.
    await expect.poll(async () => (await onA.trpc.sessions.list.query()).sessions.map((s) => s.sessionId), { timeout: 30_000 }).not.toContain('s1');
  });

  it('a tool turned off through A reaches the settings watch of a tab on B at once, and a change through B reaches A', async () => {
    const d = await deployment();
    const [a, b] = await Promise.all([d.instance('a'), d.instance('b')]);
    const watched = (server: ServerProcess) => {
      const seen: ToolSettings[] = [];
      const subscription = client(server, d.token).trpc.settings.watch.subscribe(undefined, { onData: (settings) => seen.push(settings) });
      cleanups.push(async () => subscription.unsubscribe());
      return seen;
    };
    const onA = watched(a);
    const onB = watched(b);
    // Each watch answers the settings as they are first: from then on it follows the changes.
    await expect.poll(() => [onA.length, onB.length], { timeout: 30_000 }).toStrictEqual([1, 1]);
    expect(onB[0]!.disabledTools).toStrictEqual([]);

    await client(a, d.token).trpc.settings.update.mutate({ disabledTools: ['terminal'] });
    await expect.poll(() => onB.at(-1)?.disabledTools, { timeout: 30_000 }).toStrictEqual(['terminal']);
    await expect.poll(() => onA.at(-1)?.disabledTools, { timeout: 30_000 }).toStrictEqual(['terminal']);

    await client(b, d.token).trpc.settings.update.mutate({ maxToolCalls: 3 });
    await expect.poll(() => onA.at(-1), { timeout: 30_000 }).toMatchObject({ disabledTools: ['terminal'], maxToolCalls: 3 });
    await expect.poll(() => onB.at(-1), { timeout: 30_000 }).toMatchObject({ disabledTools: ['terminal'], maxToolCalls: 3 });
  });

  it('a tab on B that follows no run is told when a call starts waiting on A and when B decides it, and reads it then', async () => {
    const d = await deployment();
    const [a, b] = await Promise.all([d.instance('a'), d.instance('b')]);
    const onB = client(b, d.token);
    const changes: SessionWatchEvent[] = [];
    const subscription = onB.trpc.sessions.watch.subscribe(undefined, { onData: (change) => changes.push(change) });
    cleanups.push(async () => subscription.unsubscribe());
    await expect.poll(() => changes[0], { timeout: 30_000 }).toStrictEqual({ type: 'ready' });
    const waitingChanges = () => changes.filter((change) => change.type === 'waiting-changed' && change.sessionId === 's1').length;

    const run = watchRun(client(a, d.token), { sessionId: 's1', runId: 'run-1', message: 'run `echo told`' });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);
    await expect.poll(waitingChanges, { timeout: 30_000 }).toBe(1);
    expect((await onB.trpc.chat.pending.query({ sessionId: 's1' })).map((p) => p.approvalId)).toStrictEqual([start.approvalId]);
    await expect(onB.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'deny' })).resolves.toMatchObject({ resolved: true });
    await expect.poll(waitingChanges, { timeout: 30_000 }).toBe(2);
    expect(await onB.trpc.chat.pending.query({ sessionId: 's1' })).toStrictEqual([]);
    await run.ended;
  });
});
