import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** How long the probe waits for the database to answer; a database that does not is left to the store to report. */
const PROBE_TIMEOUT_MS = 5_000;

/**
 * Whether the database lets the URL's user in with a password nobody has: trust authentication (or a `pg_hba.conf`
 * line that asks none for this address), which a tool call with the network on meets as well as the server does,
 * whatever password the URL holds. Connects once with a random password and runs nothing; false when the database
 * refuses it, or cannot be reached (the store says why when it connects). Only a database on this machine (loopback,
 * or a socket folder) is probed: a remote one with a password check would log a failed login as the real user at
 * every start, which lockout and alerting tools count against the account.
 */
export async function databaseIgnoresPassword(url: string): Promise<boolean> {
  let probeUrl: URL;
  try {
    probeUrl = new URL(url);
  } catch {
    return false;
  }
  if (probeUrl.username === '' || !onThisMachine(probeUrl)) return false;
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

/** A URL whose host is a loopback name or address, or none (a socket folder given as `?host=/run/postgresql`). */
function onThisMachine(url: URL): boolean {
  const socketFolder = url.searchParams.get('host');
  if (socketFolder !== null) return socketFolder.startsWith('/') || isLoopback(socketFolder);
  return url.hostname === '' || isLoopback(url.hostname);
}

function isLoopback(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
