import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startServerProcess, type ServerProcess } from './support/server-process';
import { connectClient, watchRun, type TestClient } from './support/test-airlock';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function client(server: ServerProcess, token: string): TestClient {
  const connected = connectClient(server.wsUrl, token);
  cleanups.push(() => connected.close());
  return connected;
}

/** Whether the process is stopped (SIGSTOP): its state in /proc is T. */
function isStopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
}

describe('a decision that reaches the server as SIGTERM does', { timeout: 180_000 }, () => {
  it('is refused, stores nothing and starts nothing: after the restart the call still waits, and an allow runs it once', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'airlock-term-decision-data-'));
    const workspace = await mkdtemp(join(tmpdir(), 'airlock-term-decision-ws-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    cleanups.push(() => rm(workspace, { recursive: true, force: true }));
    const token = randomBytes(24).toString('hex');
    const marker = join(workspace, 'ran.txt');
    const args = ['--data-dir', dataDir, '--workspace', workspace];
    const first = await startServerProcess(args, { AIRLOCK_TOKEN: token }, cleanups);
    const c = client(first, token);
    const run = watchRun(c, { sessionId: 's1', runId: 'run-1', message: `run \`echo once >> ${marker}\`` });
    const start = await run.next('tool-start', (e) => e.awaitingConfirmation);

    // The allow's frame and the SIGTERM are both waiting when the server next looks at its events: the frame first.
    // Node runs a signal's handlers after the other events of that look, so the allow is read before the shutdown
    // begins, and nothing of it may be applied once the signal is in.
    const pid = first.child.pid!;
    process.kill(pid, 'SIGSTOP');
    await vi.waitFor(() => expect(isStopped(pid)).toBe(true));
    const socket = c.sockets.at(-1)!;
    const send = socket.send.bind(socket);
    let sent = false;
    socket.send = ((data: string) => send(data, () => (sent = true))) as typeof socket.send;
    const answer = c.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' }).then(
      (value) => ({ value }),
      (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
    );
    await vi.waitFor(() => expect(sent).toBe(true));
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    process.kill(pid, 'SIGTERM');
    process.kill(pid, 'SIGCONT');
    await exited;
    run.unsubscribe();

    expect(await answer).toStrictEqual({ error: expect.stringMatching(/stopping/) as unknown });
    expect(existsSync(marker)).toBe(false);
    const second = await startServerProcess(args, { AIRLOCK_TOKEN: token }, cleanups);
    expect(second.output()).toContain('1 unfinished run(s) resumed, 1 call(s) waiting for a decision');
    const c2 = client(second, token);
    expect((await c2.trpc.chat.pending.query({ sessionId: 's1' })).map((p) => p.approvalId)).toStrictEqual([start.approvalId]);
    const seen = watchRun(c2, { sessionId: 's1', runId: 'run-1' });
    await expect(c2.trpc.chat.confirmTool.mutate({ sessionId: 's1', approvalId: start.approvalId, decision: 'allow' })).resolves.toMatchObject({ resolved: true });
    expect((await seen.next('tool-end')).outcome).toBe('executed');
    expect(readFileSync(marker, 'utf8')).toBe('once\n');
  });
});
