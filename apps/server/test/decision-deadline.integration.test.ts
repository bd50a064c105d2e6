import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAirlockClient, isAnswerUnknown, isConnectionLost, isExpired, type AirlockClient, type AirlockClientOptions, type LoopEvent } from '@airlock/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startServerProcess } from './support/server-process';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function connect(wsUrl: string, token: string, options: Partial<AirlockClientOptions> = {}): AirlockClient {
  const client = createAirlockClient({ url: wsUrl, token, WebSocket, retryDelayMs: () => 50, connectAttempts: Infinity, ...options });
  cleanups.push(() => client.close());
  return client;
}

describe('a decision sent into a server that stopped answering', () => {
  it('fails when the connection is found silent, its answer unknown, and the server, woken after its deadline, refuses it: the call still waits and nothing runs', async () => {
    const workspace = await tempDir('airlock-deadline-ws-');
    const token = randomBytes(24).toString('hex');
    const server = await startServerProcess(['--data-dir', await tempDir('airlock-deadline-data-'), '--workspace', workspace], { AIRLOCK_TOKEN: token }, cleanups);
    const marker = join(workspace, 'ran.txt');
    const person = connect(server.wsUrl, token, { keepAlive: { pingMs: 200, pongWaitMs: 300 }, decisionTimeoutMs: 1_500 });
    let start: Extract<LoopEvent, { type: 'tool-start' }> | undefined;
    const run = person.startRun({ sessionId: 's1', message: `run \`touch ${marker}\`` });
    for await (const event of run) {
      if (event.type === 'tool-start' && event.awaitingConfirmation) {
        start = event;
        break;
      }
    }

    server.child.kill('SIGSTOP');
    const woken = () => server.child.kill('SIGCONT');
    cleanups.push(async () => void woken());
    // Clicked while the server is frozen: the allow sits in its socket buffer, unread.
    const failed = await person.decide({ sessionId: 's1', approvalId: start!.approvalId, decision: 'allow' }).catch((error: unknown) => error);
    expect([isAnswerUnknown(failed), isExpired(failed), isConnectionLost(failed)]).toStrictEqual([true, false, true]);
    // Sent before it failed: its deadline is at most decisionTimeoutMs from then.
    const failedAt = performance.now();
    await vi.waitFor(() => expect(performance.now()).toBeGreaterThan(failedAt + 1_500), { timeout: 20_000, interval: 50 });
    woken();

    // The frozen socket's buffer is read first, as the server wakes; then this client's request.
    const other = connect(server.wsUrl, token);
    expect((await other.pending('s1')).map((call) => call.approvalId)).toStrictEqual([start!.approvalId]);
    expect(await other.decide({ sessionId: 's1', approvalId: start!.approvalId, decision: 'deny', reason: 'too late' })).toMatchObject({ resolved: true, decision: 'deny' });
    const ends: LoopEvent[] = [];
    for await (const event of other.attachRun({ sessionId: 's1', runId: run.runId })) {
      if (event.type === 'tool-end') ends.push(event);
    }
    expect(ends).toMatchObject([{ outcome: 'denied' }]);
    expect(existsSync(marker)).toBe(false);
  });
});

