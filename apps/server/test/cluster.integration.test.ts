import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ToolSettings } from '@airlock/api';
import { killAllWith, processesWith } from '../src/tools/test-support';
import { openTestDatabase, probeTestDatabase, type TestDatabase } from './support/postgres';
import { startServerProcess, type ServerProcess } from './support/server-process';
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
  return {
    db,
    workspace,
    token,
    instance: (name) =>
      startServerProcess(
        ['--workspace', workspace, '--database-url', db.url, '--database-schema', db.schema, '--instance-id', name, '--lease-ms', String(leaseMs)],
        { AIRLOCK_TOKEN: token },
        cleanups,
      ),
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
    expect((await onB.trpc.sessions.list.query()).find((s) => s.sessionId === 's1')?.activeRunId).toBe('run-1');
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
    await expect.poll(async () => (await onB.trpc.sessions.list.query()).find((s) => s.sessionId === 's1')?.activeRunId, { timeout: 30_000 }).toBe('run-1');
    await onB.trpc.sessions.delete.mutate({ sessionId: 's1' });

    expect(await run.next('tool-end')).toMatchObject({ outcome: 'cancelled' });
    expect((await run.ended).reason).toBe('cancelled');
    const audit = await onB.trpc.audit.list.query({});
    expect(audit.entries).toMatchObject([{ toolName: 'terminal', decision: 'allow', outcome: 'cancelled' }]);
    // A's list learns of the deletion from B's message, which may come after the run's end reached A's client.
    await expect.poll(async () => (await onA.trpc.sessions.list.query()).map((s) => s.sessionId), { timeout: 30_000 }).not.toContain('s1');
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
});
