import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { inotifyLimits, limitedNamespaceCommand, UNSHARE_LOCATIONS, type InotifyLimits } from './namespace-limits';
import { bubblewrapArgs } from './sandbox-policy';

/** Where bubblewrap is looked for: fixed system folders only, never a PATH a tool could write to. */
const BWRAP_LOCATIONS = ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'];
const PROBE_TIMEOUT_MS = 10_000;

/**
 * `unsizedTmpfs`: this bubblewrap cannot bound a tmpfs (--size came in 0.7.0, and a set-user-ID one refuses it), so a
 * call's /tmp and /dev/shm hold up to the kernel's default, half the machine's memory each. `unshare`: where the
 * `unshare` that starts bubblewrap with a call's inotify limits and its own /tmp and /dev/shm is (see
 * limitedNamespaceCommand); absent when none is installed, or it cannot set them here (a read-only /proc/sys, as in
 * many containers).
 */
export type BubblewrapProbe = { available: true; bwrap: string; unsizedTmpfs?: true; unshare?: string } | { available: false; reason: string };

/** What the probe's /tmp is bounded to: any size tells whether bubblewrap takes one. */
const PROBE_TMPFS_BYTES = 1024 * 1024;

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
  const sized = await tryStart(bwrap, network, PROBE_TMPFS_BYTES);
  const unsized = sized === undefined ? undefined : await tryStart(bwrap, network, undefined);
  if (sized !== undefined && unsized !== undefined) return { available: false, reason: `${bwrap} cannot start a sandbox here: ${unsized}` };
  const tmpfsBytes = sized === undefined ? PROBE_TMPFS_BYTES : undefined;
  const unshare = await firstExecutable(UNSHARE_LOCATIONS);
  const limits = inotifyLimits();
  const limited = unshare !== undefined && limits !== undefined && (await tryStart(bwrap, network, tmpfsBytes, { unshare, limits })) === undefined;
  return { available: true, bwrap, ...(sized === undefined ? {} : { unsizedTmpfs: true }), ...(limited ? { unshare } : {}) };
}

/**
 * Starts a trivial command in a sandbox (in a namespace of its own with `namespace`, as limitedNamespaceCommand makes
 * it): undefined when it ran, else the first line bubblewrap said.
 */
function tryStart(bwrap: string, network: boolean, tmpfsBytes: number | undefined, namespace?: { unshare: string; limits: InotifyLimits }): Promise<string | undefined> {
  const staged = namespace !== undefined && tmpfsBytes !== undefined;
  const args = [...bubblewrapArgs({ workspace: '/tmp', network, ...(tmpfsBytes === undefined ? {} : { tmpfsBytes }), ...(staged ? { stagedTmpfs: true } : {}) }), '--', '/bin/sh', '-c', 'exit 0'];
  const start = namespace === undefined ? { file: bwrap, args } : limitedNamespaceCommand({ ...namespace, bwrap, args, ...(staged ? { tmpfsBytes } : {}) });
  return new Promise((resolve) => {
    execFile(start.file, start.args, { timeout: PROBE_TIMEOUT_MS, env: {}, cwd: '/' }, (error, _stdout, stderr) => {
      resolve(error === null ? undefined : stderr.trim().split('\n')[0] || error.message);
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
