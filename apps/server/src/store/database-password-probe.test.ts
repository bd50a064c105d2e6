import { createServer, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import { probeTestDatabase, TEST_DATABASE_URL, withClient } from '../../test/support/postgres';
import { databaseIgnoresPassword } from './database-password-probe';

const postgres = await probeTestDatabase();

/** The test database's URL with `password` in it, as a person would give one. */
function withPassword(password: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.password = password;
  return url.href;
}

describe.skipIf(!postgres.available)(postgres.available ? 'databaseIgnoresPassword' : `databaseIgnoresPassword (skipped: ${postgres.reason})`, () => {
  test('a database that lets the user in with any password is found out, whatever password the URL holds', async (context) => {
    // The multi-instance tests' database lets its user in without checking (trust), as a local set-up often does.
    const method = await withClient(async (client) => {
      const result = await client.query<{ auth_method: string | null }>(
        "SELECT auth_method FROM pg_hba_file_rules WHERE type = 'host' AND error IS NULL ORDER BY line_number LIMIT 1",
      );
      return result.rows[0]?.auth_method ?? null;
    }).catch(() => null);
    if (method !== 'trust') context.skip(`the test database checks passwords (${method ?? 'pg_hba.conf unreadable'})`);
    expect(await databaseIgnoresPassword(withPassword('the-real-password'))).toBe(true);
    expect(await databaseIgnoresPassword(`${withPassword('x')}?password=the-real-password`)).toBe(true);
  });
});

describe('databaseIgnoresPassword', () => {
  test('a database that cannot be reached, or a URL it cannot read, is not reported', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await databaseIgnoresPassword(`postgres://airlock:pw@127.0.0.1:${port}/airlock`)).toBe(false);
    expect(await databaseIgnoresPassword('not a url')).toBe(false);
  });
});

describe('databaseIgnoresPassword on another machine', () => {
  // A failed login as the real user at every start would count against the account where lockouts are kept.
  const external = Object.values(networkInterfaces())
    .flat()
    .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal)?.address;
  test.skipIf(external === undefined)('does not connect to a database that is not on this machine', async () => {
    const reached: Socket[] = [];
    const listener = createServer((socket) => {
      reached.push(socket);
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
    const { port } = listener.address() as AddressInfo;
    try {
      expect(await databaseIgnoresPassword(`postgres://airlock:pw@${external}:${port}/airlock`)).toBe(false);
      expect(await databaseIgnoresPassword(`postgres://airlock:pw@127.0.0.1:${port}/airlock`)).toBe(false);
      // Only the loopback URL was tried.
      expect(reached).toHaveLength(1);
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });
});
