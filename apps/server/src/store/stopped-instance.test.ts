import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { openTestDatabase, probeTestDatabase, withClient } from '../../test/support/postgres';
import { channelName, PostgresStore } from './postgres-store';

const postgres = await probeTestDatabase();
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const POLL = { timeout: 20_000, interval: 50 };

async function queueUsage(): Promise<number> {
  return withClient(async (client) => (await client.query<{ usage: number }>('SELECT pg_notification_queue_usage() AS usage')).rows[0]!.usage);
}

/** Listeners of this database whose backend waits on writing to their socket (a client that does not read). */
async function listenersBlockedWriting(): Promise<number> {
  return withClient(
    async (client) =>
      (
        await client.query<{ count: number }>(
          "SELECT count(*)::int AS count FROM pg_stat_activity WHERE application_name LIKE 'airlock listener %' AND wait_event = 'ClientWrite' AND datname = current_database()",
        )
      ).rows[0]!.count,
  );
}

describe.skipIf(!postgres.available)('an instance stopped (SIGSTOP) while connected', { timeout: 60_000 }, () => {
  it("no longer holds PostgreSQL's notification queue for every instance once it stopped renewing: its notification connection is ended, and it resyncs when it goes on", async () => {
    await using database = await openTestDatabase();
    const fixture = fileURLToPath(new URL('./stopped-instance.fixture.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', tsx, fixture, database.url, database.schema], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const logged: string[] = [];
    const live = await PostgresStore.open({ url: database.url, schema: database.schema, instanceId: 'live', leaseMs: 1_000, log: (line) => logged.push(line) });
    try {
      await vi.waitFor(() => expect(output).toContain('ready\n'), POLL);
      child.kill('SIGSTOP');

      // Distinct payloads (equal ones in one transaction are sent once), until the stopped instance's socket is full
      // and its backend, blocked writing to it, holds the queue. Seen holding it once is not enough: the kernel may
      // grow the socket's buffer and take the rest, and the queue then empties with the connection still open.
      const channel = channelName(database.schema);
      await vi.waitFor(async () => {
        await withClient((client) => client.query("SELECT pg_notify($1, json_build_object('type', 'session', 'sessionId', 'filler-' || g)::text) FROM generate_series(1, 20000) g", [channel]));
        expect(await queueUsage()).toBeGreaterThan(0);
        expect(await listenersBlockedWriting()).toBeGreaterThan(0);
      }, POLL);
      // Its id is no longer renewed: a lease later, another instance's renewal ends its notification connection.
      await vi.waitFor(async () => {
        await live.renewLeases();
        expect(logged.join('\n')).toContain('Ended the notification connection of instance(s) stopped:');
      }, POLL);
      expect(await queueUsage()).toBe(0);

      child.kill('SIGCONT');
      await vi.waitFor(() => expect(output).toContain('heard {"type":"resync"}\n'), POLL);
      await live.publish({ type: 'rules' });
      await vi.waitFor(() => expect(output).toContain('heard {"type":"rules"}\n'), POLL);
    } finally {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      await exited;
      await live.close();
    }
  });
});
