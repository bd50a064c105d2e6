import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** How long the probe waits for the database to answer; a database that does not is left to the store to report. */
const PROBE_TIMEOUT_MS = 5_000;

/**
 * Whether the database lets the URL's user in with a password nobody has: trust authentication (or a `pg_hba.conf`
 * line that asks none for this address), which a tool call with the network on meets as well as the server does,
 * whatever password the URL holds. Connects once with a random password and runs nothing; false when the database
 * refuses it, or cannot be reached (the store says why when it connects).
 */
export async function databaseIgnoresPassword(url: string): Promise<boolean> {
  let probeUrl: URL;
  try {
    probeUrl = new URL(url);
  } catch {
    return false;
  }
  if (probeUrl.username === '') return false;
  const wrong = `airlock-probe-${randomBytes(16).toString('hex')}`;
  probeUrl.password = wrong;
  if (probeUrl.searchParams.has('password')) probeUrl.searchParams.set('password', wrong);
  const client = new Client({ connectionString: probeUrl.href, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
