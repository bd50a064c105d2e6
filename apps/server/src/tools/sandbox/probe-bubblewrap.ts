import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { bubblewrapArgs } from './sandbox-policy';

/** Where bubblewrap is looked for: fixed system folders only, never a PATH a tool could write to. */
const BWRAP_LOCATIONS = ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'];
const PROBE_TIMEOUT_MS = 10_000;

export type BubblewrapProbe = { available: true; bwrap: string } | { available: false; reason: string };

const probes = new Map<string, Promise<BubblewrapProbe>>();

/** Whether bubblewrap can start a call with the given network setting here: tried once with a trivial command, then remembered. */
export function probeBubblewrap(network: boolean): Promise<BubblewrapProbe> {
  const key = network ? 'network' : 'no-network';
  let probe = probes.get(key);
  if (probe === undefined) {
    probe = runProbe(network);
    probes.set(key, probe);
  }
  return probe;
}

async function runProbe(network: boolean): Promise<BubblewrapProbe> {
  const bwrap = await firstExecutable(BWRAP_LOCATIONS);
  if (bwrap === undefined) return { available: false, reason: `bubblewrap is not installed (no ${BWRAP_LOCATIONS.join(', ')})` };
  const args = [...bubblewrapArgs({ workspace: '/tmp', network }), '--', '/bin/sh', '-c', 'exit 0'];
  return new Promise((resolve) => {
    execFile(bwrap, args, { timeout: PROBE_TIMEOUT_MS, env: {}, cwd: '/' }, (error, _stdout, stderr) => {
      if (error === null) return resolve({ available: true, bwrap });
      const detail = stderr.trim().split('\n')[0] || error.message;
      resolve({ available: false, reason: `${bwrap} cannot start a sandbox here: ${detail}` });
    });
  });
}

async function firstExecutable(candidates: readonly string[]): Promise<string | undefined> {
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
