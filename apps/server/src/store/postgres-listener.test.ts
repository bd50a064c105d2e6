import type { ClusterMessage } from '@airlock/api';
import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { probeTestDatabase, TEST_DATABASE_URL, withClient } from '../../test/support/postgres';
import { startStallingProxy } from '../../test/support/stalling-proxy';
import { PostgresListener } from './postgres-listener';

const postgres = await probeTestDatabase();
if (!postgres.available) console.warn(`Skipping the notification connection tests: ${postgres.reason}`);

async function notify(channel: string, message: ClusterMessage): Promise<void> {
  await withClient(async (client) => {
    await client.query('SELECT pg_notify($1, $2)', [channel, JSON.stringify(message)]);
  });
}

describe.skipIf(!postgres.available)('PostgresListener', { timeout: 60_000 }, () => {
  it('finds a connection that went silent without closing (a dropped network path), listens again on a new one and says messages may have been missed', async () => {
    await using proxy = await startStallingProxy();
    const database = new URL(TEST_DATABASE_URL);
    proxy.forwardTo(`http://${database.hostname}:${database.port || '5432'}`);
    const throughProxy = new URL(TEST_DATABASE_URL);
    throughProxy.hostname = '127.0.0.1';
    throughProxy.port = String(proxy.port);
    const channel = `listener_${randomBytes(6).toString('hex')}`;
    const lines: string[] = [];
    const listener = await PostgresListener.open({
      config: { connectionString: throughProxy.href },
      channel,
      log: (line) => lines.push(line),
      minRetryMs: 10,
      checkIntervalMs: 50,
      checkTimeoutMs: 500,
    });
    try {
      const heard: ClusterMessage[] = [];
      listener.subscribe((message) => heard.push(message));
      await notify(channel, { type: 'rules' });
      await vi.waitFor(() => expect(heard).toStrictEqual([{ type: 'rules' }]), { timeout: 10_000, interval: 20 });

      proxy.stall();
      await notify(channel, { type: 'settings' });
      await vi.waitFor(() => expect(heard).toStrictEqual([{ type: 'rules' }, { type: 'resync' }]), { timeout: 20_000, interval: 20 });
      expect(lines[0]).toMatch(/^Lost the PostgreSQL notification connection \(it did not answer within 500 ms\); reconnecting\.$/);

      await notify(channel, { type: 'session', sessionId: 's' });
      await vi.waitFor(() => expect(heard).toStrictEqual([{ type: 'rules' }, { type: 'resync' }, { type: 'session', sessionId: 's' }]), { timeout: 10_000, interval: 20 });
      expect(listener.listening).toBe(true);
    } finally {
      await listener.close();
    }
  });
});
