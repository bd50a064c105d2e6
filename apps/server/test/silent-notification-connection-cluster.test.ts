import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import type { Client } from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { cleanupsAfterEach } from './support/cleanups';
import { clusterInstance, waitingCalls } from './support/cluster-instance';
import { probeTestDatabase } from './support/postgres';
import { startStallingProxy } from './support/stalling-proxy';
import { recordingTool } from './support/test-airlock';

// An instance's notification connection only listens: a path to the database that dies without closing it (a network
// or a proxy dropping it, a firewall forgetting an idle connection) must not leave the instance deaf for good.

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the multi-instance silent notification connection: ${postgres.reason}`);

const cleanups = cleanupsAfterEach();

describe.skipIf(!postgres.available)('an instance whose notification connection went silent', { timeout: 120_000 }, () => {
  it('runs a call waiting on it once a person allows it on another instance: it finds the connection dead and reads what it missed', async () => {
    const db = await cleanups.database();
    const proxy = await startStallingProxy();
    cleanups.push(() => proxy.close());
    const direct = new URL(db.url);
    proxy.forwardTo(`http://${direct.hostname}:${direct.port || '5432'}`);
    const throughProxy = new URL(db.url);
    throughProxy.hostname = '127.0.0.1';
    throughProxy.port = String(proxy.port);
    const { tool, calls } = recordingTool();
    const model = () => new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'once' } }), textStep('done')]);
    const a = await clusterInstance({ ...db, url: throughProxy.href }, cleanups, { name: 'a', model: model(), tools: () => [tool] });
    const b = await clusterInstance(db, cleanups, { name: 'b', model: model(), tools: () => [tool] });
    await a.chat.startRun({ sessionId: 's', runId: 'r1', message: 'echo' });
    const [waiting] = await waitingCalls(a.chat, 's');

    // Only A's notification connection stops passing anything; its other connections to the database go on.
    const listening = (a.store as unknown as { listener: { client: Client } }).listener.client;
    proxy.stall((listening.connection.stream as unknown as { localPort: number }).localPort);
    expect(await b.chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'allow' })).toMatchObject({ status: 'resolved' });

    await vi.waitFor(async () => expect((await b.chat.getSession('s')).activeRunId).toBeNull(), { timeout: 60_000, interval: 50 });
    expect((await b.chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'allow', outcome: 'executed' }]);
    expect(calls).toStrictEqual(['once']);
  });
});
