import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from './support/server-process';
import { connectClient, watchRun } from './support/test-airlock';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Has the data folder's database refuse every new message, as a full disk refuses the write that needs a new page
 * (the run's row fits in a free one): SQLite's RAISE in a trigger, the write's own statement failing.
 */
function refuseMessages(file: string, refuse: boolean): void {
  const db = new Database(file);
  db.exec(refuse ? "CREATE TRIGGER refuse_messages BEFORE INSERT ON messages BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END" : 'DROP TRIGGER refuse_messages');
  db.close();
}

describe('a run is started by one write', { timeout: 120_000 }, () => {
  it('a start whose message the database refused leaves nothing of the run: the same start sent again after a restart runs, with the message once', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'airlock-start-data-'));
    const workspace = await mkdtemp(join(tmpdir(), 'airlock-start-ws-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    cleanups.push(() => rm(workspace, { recursive: true, force: true }));
    const token = randomBytes(24).toString('hex');
    const start = (): Promise<ServerProcess> => startServerProcess(['--data-dir', dataDir, '--workspace', workspace], { AIRLOCK_TOKEN: token }, cleanups);
    const file = join(dataDir, 'airlock.db');
    const input = { sessionId: 's1', runId: 'run-1', message: 'hello' };

    await (await start()).stop('SIGTERM');
    refuseMessages(file, true);
    const first = await start();
    const refused = connectClient(first.wsUrl, token);
    cleanups.push(() => refused.close());
    await expect(watchRun(refused, input).ended).rejects.toThrow();
    await refused.close();
    await first.stop('SIGTERM');
    const db = new Database(file, { readonly: true });
    expect(db.prepare("SELECT count(*) AS runs FROM runs WHERE run_id = 'run-1'").get()).toStrictEqual({ runs: 0 });
    db.close();

    refuseMessages(file, false);
    const second = await start();
    const c = connectClient(second.wsUrl, token);
    cleanups.push(() => c.close());
    const run = watchRun(c, input);
    expect(await run.ended).toMatchObject({ reason: 'done' });
    const chat = await c.trpc.sessions.get.query({ sessionId: 's1' });
    expect(chat.messages.filter((message) => message.role === 'user')).toStrictEqual([{ role: 'user', content: 'hello' }]);
  });
});
