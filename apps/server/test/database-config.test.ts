import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, databaseReachWarning, loadConfig } from '../src/config';

async function load(argv: string[], env: Record<string, string> = {}) {
  const path = await realpath(await mkdtemp(join(tmpdir(), 'airlock-db-config-')));
  try {
    return loadConfig(argv, env, path);
  } finally {
    await rm(path, { recursive: true, force: true });
  }
}

async function problem(argv: string[], env: Record<string, string> = {}): Promise<string> {
  const error = await load(argv, env).then(
    () => undefined,
    (cause: unknown) => cause,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).message;
}

describe('settings for several instances on PostgreSQL', () => {
  it('are off without a database URL: the SQLite data folder is used', async () => {
    expect((await load([])).database).toBeUndefined();
  });

  it('read the URL, schema, instance id, lease and pool from flags or the environment, with defaults', async () => {
    const config = await load(['--database-schema', 'team_a', '--lease-ms', '2500'], { AIRLOCK_DATABASE_URL: 'postgres://airlock@db.internal:5432/airlock', AIRLOCK_INSTANCE_ID: 'a-1', AIRLOCK_DATABASE_POOL: '8' });
    expect(config.database).toStrictEqual({ url: 'postgres://airlock@db.internal:5432/airlock', schema: 'team_a', instanceId: 'a-1', leaseMs: 2500, poolSize: 8 });
    const defaults = await load(['--database-url', 'postgresql://127.0.0.1/test']);
    expect(defaults.database).toMatchObject({ schema: undefined, leaseMs: 10_000, poolSize: 20 });
    expect(defaults.database?.instanceId).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    // Two instances started alike get different ids.
    expect((await load(['--database-url', 'postgresql://127.0.0.1/test'])).database?.instanceId).not.toBe(defaults.database?.instanceId);
  });

  it('refuse a data folder given with a database URL, which was ignored: chats went to the database, not the folder named', async () => {
    const url = 'postgres://airlock@db.internal:5432/airlock';
    expect(await problem(['--data-dir', '/srv/chats', '--database-url', url])).toBe('--data-dir: give either --data-dir or --database-url, not both: with a database the chats are kept there');
    expect(await problem([], { AIRLOCK_DATA_DIR: '/srv/chats', AIRLOCK_DATABASE_URL: url })).toBe(
      'AIRLOCK_DATA_DIR: give either AIRLOCK_DATA_DIR or AIRLOCK_DATABASE_URL, not both: with a database the chats are kept there',
    );
  });

  it('name a bad value, and a setting given without a database', async () => {
    expect(await problem(['--database-url', 'mysql://db/x'])).toBe('--database-url: must be a postgres://user@host:port/database URL');
    expect(await problem(['--database-url', 'postgres://db/x', '--database-schema', 'Robert"); DROP'])).toMatch(/^--database-schema: must be/);
    for (const own of ['information_schema', 'pg_catalog', 'pg_mine']) {
      expect(await problem(['--database-url', 'postgres://db/x', '--database-schema', own])).toBe(
        "--database-schema: names one of PostgreSQL's own schemas (pg_…, information_schema): give one for Airlock",
      );
    }
    expect(await problem(['--database-url', 'postgres://db/x', '--lease-ms', '50'])).toBe('--lease-ms: must be a whole number of milliseconds from 200 to 600000');
    expect(await problem(['--database-url', 'postgres://db/x'], { AIRLOCK_DATABASE_POOL: '1' })).toBe('AIRLOCK_DATABASE_POOL: must be a whole number from 2 to 1000');
    expect(await problem(['--instance-id', 'a'])).toBe('--instance-id / AIRLOCK_INSTANCE_ID: only applies with --database-url / AIRLOCK_DATABASE_URL');
  });

  it('warn at start-up when tools with the network could reach a database that asks no password', async () => {
    const warning = (url: string, network = 'on') => databaseReachWarning({ toolNetwork: network === 'on', database: { url, schema: undefined, instanceId: 'a', leaseMs: 10_000, poolSize: 20 } });
    expect(warning('postgres://airlock@127.0.0.1:5432/airlock')).toMatch(/^Warning: the database URL has no password, and tools run with the network on/);
    expect(warning('postgres://airlock@127.0.0.1:5432/airlock', 'off')).toBeNull();
    expect(warning('postgres://airlock:s3cret@127.0.0.1:5432/airlock')).toBeNull();
    expect(warning('postgres://airlock@127.0.0.1:5432/airlock?password=s3cret')).toBeNull();
    expect(databaseReachWarning(await load([]))).toBeNull();
  });

  it('warn at start-up too when the database let Airlock in with a wrong password, whatever the URL holds', () => {
    const config = (url: string, network = 'on') => ({ toolNetwork: network === 'on', database: { url, schema: undefined, instanceId: 'a', leaseMs: 10_000, poolSize: 20 } });
    const url = 'postgres://airlock:s3cret@127.0.0.1:5432/airlock';
    expect(databaseReachWarning(config(url), { passwordIgnored: true })).toMatch(
      /^Warning: the database let this user in with a wrong password \(it does not check the password: trust authentication\), and tools run with the network on\./,
    );
    expect(databaseReachWarning(config(url), { passwordIgnored: false })).toBeNull();
    expect(databaseReachWarning(config(url, 'off'), { passwordIgnored: true })).toBeNull();
  });
});
