import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

const POLL_MS = 25;

/**
 * Whether `pid` names another process now than the one that started at `startTime` (clock ticks since boot, see
 * processStartTime): that one ended, and its pid went to a new process (pids wrap: with 32,768 of them, every few
 * minutes on a busy machine). Gone, or unreadable, or no start time known, is not another.
 */
export function pidTakenByAnother(pid: number, startTime: number | undefined): boolean {
  if (startTime === undefined || !Number.isFinite(startTime)) return false;
  const now = processStartTime(pid);
  return now !== undefined && now !== startTime;
}

/**
 * Sends `signal` to every process of the group; false when the group no longer exists. With `leaderStart` (its
 * leader's start time), a group whose id names another process now is not signalled: a group's id is not given to a
 * new process while any member lives, so this one ended, and the id may be another group's.
 */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0, leaderStart?: number): boolean {
  if (pidTakenByAnother(pgid, leaderStart)) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/**
 * Pids of the group's processes that are still running. Zombies do not count: a killed orphan
 * stays in the group until init reaps it, which can take seconds, yet it runs nothing.
 * Linux only (reads /proc); empty elsewhere.
 */
export async function liveProcessGroupMembers(pgid: number): Promise<number[]> {
  return inBatches(await procPids(), async (pid) => {
    const info = await readStat(pid);
    return info && info.live && info.group === pgid ? Number(pid) : undefined;
  });
}

/** Whether any process of the group still runs. */
export async function processGroupIsRunning(pgid: number, leaderStart?: number): Promise<boolean> {
  try {
    if (!signalProcessGroup(pgid, 0, leaderStart)) return false;
  } catch {
    return true;
  }
  if (process.platform !== 'linux') return true;
  return (await liveProcessGroupMembers(pgid)).length > 0;
}

/**
 * Stops a whole process group: SIGTERM, then SIGKILL to whatever is left after `graceMs`,
 * then waits (bounded) for the group to be gone. Resolves to whether anything was running.
 */
export async function terminateProcessGroup(pgid: number, graceMs: number, leaderStart?: number): Promise<boolean> {
  if (!(await processGroupIsRunning(pgid, leaderStart))) return false;
  signalProcessGroup(pgid, 'SIGTERM', leaderStart);
  if (await waitUntilGone(pgid, graceMs, leaderStart)) return true;
  signalProcessGroup(pgid, 'SIGKILL', leaderStart);
  await waitUntilGone(pgid, graceMs, leaderStart);
  return true;
}

async function waitUntilGone(pgid: number, withinMs: number, leaderStart: number | undefined): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (!(await processGroupIsRunning(pgid, leaderStart))) return true;
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
}

/** Which processes belong to a call but left its process group. */
export interface MarkedScope {
  /** `NAME=value`: the variable every process of the call inherits. */
  marker: string;
  /** The call's process group: its members are stopped with the group, so they are left out here. */
  group: number;
  /** Only processes started at or after this (clock ticks since boot, as in /proc/<pid>/stat): the call's leader's start. */
  startedSince: number;
}

/**
 * A process a scan of /proc found, with its start time as the scan read it (clock ticks since boot): signalled only
 * while its pid still names that process (`signalFound`).
 */
export interface FoundProcess {
  pid: number;
  startTime: number;
}

/**
 * Sends `signal` to a process a scan found, unless its pid names another process now: the one found ended since the
 * scan, and its pid went to a new process, which may be anyone's (pids wrap). Gone is no error.
 */
export function signalFound(found: FoundProcess, signal: NodeJS.Signals): void {
  if (pidTakenByAnother(found.pid, found.startTime)) return;
  try {
    process.kill(found.pid, signal);
  } catch {
    // Gone in the meantime.
  }
}

/** Files read at once while scanning /proc; more would risk running out of file descriptors. */
const SCAN_BATCH = 64;

/**
 * Processes that left their call's process group (setsid, nohup, a daemon's double fork) keep the
 * environment they were started with. Each call's processes get a marker variable; this finds the live
 * ones that still carry it. Only processes started since the call began and outside its group have their
 * environment read (reading another process's environment can block while that process is stuck), so
 * the scan stays cheap. A process that clears its own environment and leaves its group is not found:
 * only a cgroup or a PID namespace would hold that one. Linux only (reads /proc).
 */
export async function liveMarkedProcesses(scope: MarkedScope): Promise<FoundProcess[]> {
  const candidates = await inBatches(await procPids(), async (pid) => {
    const info = await readStat(pid);
    return info && info.live && info.group !== scope.group && info.startTime >= scope.startedSince ? { pid: Number(pid), startTime: info.startTime } : undefined;
  });
  const needle = `\0${scope.marker}\0`;
  // The environment is read after the start time: read from a process that took the pid since, it is told with a
  // start time that is not its own, and not signalled.
  return inBatches(candidates, async (found) => {
    // Unreadable (another user's process, or gone) counts as unmarked.
    const environ = await readFile(`/proc/${found.pid}/environ`, 'latin1').catch(() => '');
    return `\0${environ}`.includes(needle) ? found : undefined;
  });
}

/** The start time (clock ticks since boot) of a process, from /proc; undefined when it cannot be read. */
export function processStartTime(pid: number): number | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).startTime;
  } catch {
    return undefined;
  }
}

/** The pids in /proc, as its entry names; none where there is no /proc. */
async function procPids(): Promise<string[]> {
  const entries = await readdir('/proc').catch(() => []);
  return entries.filter((entry) => /^\d+$/.test(entry));
}

/** A process's state from /proc/<pid>/stat; undefined when it is gone or unreadable. */
async function readStat(pid: string): Promise<{ live: boolean; group: number; startTime: number } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat === undefined ? undefined : parseStat(stat);
}

/** Zombies are not live: a killed orphan stays listed until it is reaped, which can take seconds, yet it runs nothing. */
function parseStat(stat: string): { live: boolean; group: number; startTime: number } {
  // The command name is in parentheses and may itself contain spaces or parentheses: fields count from after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  return { live: state !== 'Z' && state !== 'X', group: Number(fields[2]), startTime: Number(fields[19]) };
}

async function inBatches<T, R>(items: readonly T[], map: (item: T) => Promise<R | undefined>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += SCAN_BATCH) {
    for (const result of await Promise.all(items.slice(i, i + SCAN_BATCH).map(map))) if (result !== undefined) results.push(result);
  }
  return results;
}

export interface TerminateMarkedOptions {
  /** Finds the scope's live processes, each with its start time. Default: liveMarkedProcesses. */
  scan?: (scope: MarkedScope) => Promise<FoundProcess[]>;
}

/**
 * Stops every live process of the scope outside its group: SIGTERM, then SIGKILL to whatever is left after
 * `graceMs`, then waits (bounded) for them to be gone. Resolves to whether anything was running.
 */
export async function terminateMarkedProcesses(scope: MarkedScope, graceMs: number, options: TerminateMarkedOptions = {}): Promise<boolean> {
  const scan = options.scan ?? liveMarkedProcesses;
  const found = await scan(scope);
  if (found.length === 0) return false;
  for (const each of found) signalFound(each, 'SIGTERM');
  if (await waitUntil(async () => (await scan(scope)).length === 0, graceMs)) return true;
  for (const each of await scan(scope)) signalFound(each, 'SIGKILL');
  await waitUntil(async () => (await scan(scope)).length === 0, graceMs);
  return true;
}

async function waitUntil(done: () => Promise<boolean>, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await done()) return true;
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
}

export interface FreezeOptions {
  /** Scans in a row that must find nothing new before the frozen processes are killed. Default 3. */
  quietScans?: number;
  /** Scans at most, however many keep finding something. Default 1,000. */
  maxScans?: number;
}

/**
 * Stops for good every process of the call, including one that keeps forking away from its pid (setsid, then fork
 * and exit every few milliseconds), which a single scan misses: the group and every marked process found are
 * frozen with SIGSTOP the moment they are found, so a frozen one forks no more; /proc is scanned again (only the
 * pids not looked at yet) until several scans in a row find nothing new, then everything frozen is SIGKILLed.
 * Synchronous, so no scan waits behind other work. Returns the marked processes found outside the group.
 */
export function freezeAndKill(scope: MarkedScope, options: FreezeOptions = {}): number[] {
  const quietScans = options.quietScans ?? 3;
  const maxScans = options.maxScans ?? 1_000;
  const needle = `\0${scope.marker}\0`;
  const frozen: FoundProcess[] = [];
  const examined = new Set<string>();
  quietSignalGroup(scope.group, 'SIGSTOP', scope.startedSince);
  let quiet = 0;
  for (let scan = 0; scan < maxScans && quiet < quietScans; scan += 1) {
    let entries: string[];
    try {
      entries = readdirSync('/proc');
    } catch {
      break;
    }
    let foundNew = false;
    for (const entry of entries) {
      if (examined.has(entry) || !/^\d+$/.test(entry)) continue;
      examined.add(entry);
      try {
        const info = parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
        if (!info.live || info.group === scope.group || info.startTime < scope.startedSince) continue;
        if (!`\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}`.includes(needle)) continue;
        const found = { pid: Number(entry), startTime: info.startTime };
        foundNew = true;
        // Ours ended since its stat was read, and its pid went to another process: that one is looked at anew.
        if (pidTakenByAnother(found.pid, found.startTime)) {
          examined.delete(entry);
          continue;
        }
        process.kill(found.pid, 'SIGSTOP');
        frozen.push(found);
      } catch {
        // Gone before it could be read: it may have been one of ours that forked on, so this scan is not a quiet one.
        foundNew = true;
      }
    }
    quiet = foundNew ? 0 : quiet + 1;
  }
  quietSignalGroup(scope.group, 'SIGKILL', scope.startedSince);
  // A frozen process runs no more, but another's SIGKILL may still end it, and its pid go to a new process.
  for (const found of frozen) signalFound(found, 'SIGKILL');
  return frozen.map(({ pid }) => pid);
}

function quietSignalGroup(pgid: number, signal: NodeJS.Signals, leaderStart: number): void {
  try {
    signalProcessGroup(pgid, signal, leaderStart);
  } catch {
    // Not ours to signal.
  }
}
