import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
 * limitedNamespaceCommand); else `unbounded`, why that cannot be done here (none installed, or it cannot set them: a
 * read-only /proc/sys, as in many containers, or a namespace without capabilities, as AppArmor makes them), said at
 * start-up.
 */
export type BubblewrapProbe = ({ available: true; bwrap: string; unsizedTmpfs?: true } & NamespaceProbe) | { available: false; reason: string };

/**
 * Whether bubblewrap can start in a namespace that bounds the call (see BubblewrapProbe). `ipcUnbounded`: it can, but
 * not with the call's System V IPC limits (see ipcSysctls), which this kernel lets no namespace's root set, and why:
 * the call then gets an IPC namespace of bubblewrap's making, and keeps the other bounds.
 */
export type NamespaceProbe = { unshare: string; ipcUnbounded?: string } | { unbounded: string };

export interface ProbeOptions {
  /** Where `unshare` is looked for, the first found taken. Default UNSHARE_LOCATIONS. */
  unshareLocations?: readonly string[];
  /** The file that says whether AppArmor restricts unprivileged user namespaces. Default APPARMOR_USERNS_RESTRICTION. */
  apparmorRestriction?: string;
  /** Where the IPC limits are written (see limitedNamespaceCommand). Default SYSCTL_FOLDER; one that cannot be written fails as an older kernel does. */
  ipcSysctlFolder?: string;
}

/** Reads 1 where AppArmor takes the capabilities of a user namespace an unconfined program makes (Ubuntu 23.10 on). */
const APPARMOR_USERNS_RESTRICTION = '/proc/sys/kernel/apparmor_restrict_unprivileged_userns';

/** What the probe's /tmp is bounded to: any size tells whether bubblewrap takes one. */
const PROBE_TMPFS_BYTES = 1024 * 1024;

const probes = new Map<string, Promise<BubblewrapProbe>>();

/**
 * Whether bubblewrap can start a call with the given network setting here: tried once with a trivial command, then
 * remembered (not with `options`, which tests give).
 */
export function probeBubblewrap(network: boolean, options?: ProbeOptions): Promise<BubblewrapProbe> {
  if (options !== undefined) return runProbe(network, options);
  const key = network ? 'network' : 'no-network';
  let probe = probes.get(key);
  if (probe === undefined) {
    probe = runProbe(network, {});
    probes.set(key, probe);
  }
  return probe;
}

async function runProbe(network: boolean, options: ProbeOptions): Promise<BubblewrapProbe> {
  const bwrap = await firstExecutable(BWRAP_LOCATIONS);
  if (bwrap === undefined) return { available: false, reason: `bubblewrap is not installed (no ${BWRAP_LOCATIONS.join(', ')})` };
  const sized = await tryStart(bwrap, network, PROBE_TMPFS_BYTES);
  const unsized = sized === undefined ? undefined : await tryStart(bwrap, network, undefined);
  if (sized !== undefined && unsized !== undefined) return { available: false, reason: `${bwrap} cannot start a sandbox here: ${unsized}` };
  const namespace = await probeNamespace(bwrap, network, sized === undefined ? PROBE_TMPFS_BYTES : undefined, options);
  return { available: true, bwrap, ...(sized === undefined ? {} : { unsizedTmpfs: true }), ...namespace };
}

/** Whether bubblewrap starts in a namespace that sets a call's limits (see limitedNamespaceCommand), or why not. */
async function probeNamespace(bwrap: string, network: boolean, tmpfsBytes: number | undefined, options: ProbeOptions): Promise<NamespaceProbe> {
  const locations = options.unshareLocations ?? UNSHARE_LOCATIONS;
  const unshare = await firstExecutable(locations);
  if (unshare === undefined) return { unbounded: `no unshare at ${locations.join(' or ')}` };
  const limits = inotifyLimits();
  if (limits === undefined) return { unbounded: 'this user’s inotify limits cannot be read (/proc/sys/user/max_inotify_instances and max_inotify_watches)' };
  const ipcFailure = await tryStart(bwrap, network, tmpfsBytes, { unshare, limits, ipc: true, ...(options.ipcSysctlFolder === undefined ? {} : { ipcSysctlFolder: options.ipcSysctlFolder }) });
  if (ipcFailure === undefined) return { unshare };
  // Kernels before Linux 6.9 refuse the IPC limits alone: the other bounds are kept without them.
  const failure = await tryStart(bwrap, network, tmpfsBytes, { unshare, limits, ipc: false });
  if (failure === undefined) return { unshare, ipcUnbounded: `${unshare} could not set the limits of the call’s IPC namespace: ${ipcFailure}` };
  // Its namespace is made, without the capabilities to set anything in it: unshare's or the shell's error says no more.
  const restricted = readFile(options.apparmorRestriction ?? APPARMOR_USERNS_RESTRICTION) === '1';
  const apparmor = restricted
    ? '. AppArmor restricts unprivileged user namespaces here (kernel.apparmor_restrict_unprivileged_userns = 1), which likely took the capabilities of the namespace unshare made'
    : '';
  return { unbounded: `${unshare} could not set them up: ${failure}${apparmor}` };
}

/**
 * Starts a trivial command in a sandbox (in a namespace of its own with `namespace`, as limitedNamespaceCommand makes
 * it): undefined when it ran, else the first line bubblewrap said.
 */
function tryStart(
  bwrap: string,
  network: boolean,
  tmpfsBytes: number | undefined,
  namespace?: { unshare: string; limits: InotifyLimits; ipc: boolean; ipcSysctlFolder?: string },
): Promise<string | undefined> {
  const staged = namespace !== undefined && tmpfsBytes !== undefined;
  const policy = { workspace: '/tmp', network, ...(tmpfsBytes === undefined ? {} : { tmpfsBytes }), ...(staged ? { stagedTmpfs: true } : {}), ...(namespace?.ipc === true ? { ipcNamespaceGiven: true } : {}) };
  const args = [...bubblewrapArgs(policy), '--', '/bin/sh', '-c', 'exit 0'];
  let start = { file: bwrap, args };
  if (namespace !== undefined) {
    const { ipc, ipcSysctlFolder, ...limited } = namespace;
    const ipcLimits = ipc ? { sharedMemoryBytes: PROBE_TMPFS_BYTES, ...(ipcSysctlFolder === undefined ? {} : { ipcSysctlFolder }) } : {};
    start = limitedNamespaceCommand({ ...limited, bwrap, args, ...ipcLimits, ...(staged ? { tmpfsBytes } : {}) });
  }
  return new Promise((resolve) => {
    execFile(start.file, start.args, { timeout: PROBE_TIMEOUT_MS, env: {}, cwd: '/' }, (error, _stdout, stderr) => {
      resolve(error === null ? undefined : stderr.trim().split('\n')[0] || error.message);
    });
  });
}

/** A small file's text, trimmed; undefined when it cannot be read. */
function readFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
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
