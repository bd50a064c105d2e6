import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

const POLL_MS = 25;

/** Sends `signal` to every process of the group; false when the group no longer exists. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
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
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const pids = entries.filter((entry) => /^\d+$/.test(entry));
  const stats = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined)));
  const members: number[] = [];
  for (const stat of stats) {
    if (stat === undefined) continue;
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [state, , pgrp] = fields;
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') members.push(Number.parseInt(stat, 10));
  }
  return members;
}

/** Whether any process of the group still runs. */
export async function processGroupIsRunning(pgid: number): Promise<boolean> {
  try {
    if (!signalProcessGroup(pgid, 0)) return false;
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
export async function terminateProcessGroup(pgid: number, graceMs: number): Promise<boolean> {
  if (!(await processGroupIsRunning(pgid))) return false;
  signalProcessGroup(pgid, 'SIGTERM');
  if (await waitUntilGone(pgid, graceMs)) return true;
  signalProcessGroup(pgid, 'SIGKILL');
  await waitUntilGone(pgid, graceMs);
  return true;
}

async function waitUntilGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (!(await processGroupIsRunning(pgid))) return true;
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
}

/**
 * Processes that left their call's process group (setsid, nohup, a daemon's double fork) keep the
 * environment they were started with. Each call's processes get a marker variable; these find and
 * stop whatever still carries it. A process that clears its own environment and leaves its group is
 * not found: only a cgroup or a PID namespace would hold that one. Linux only (reads /proc).
 */
export async function liveMarkedProcesses(marker: string): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const needle = `\0${marker}\0`;
  const marked = await Promise.all(
    entries.map(async (entry) => {
      if (!/^\d+$/.test(entry)) return undefined;
      // Unreadable (another user's process, or gone) counts as unmarked.
      const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
      if (!`\0${environ}`.includes(needle)) return undefined;
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
      return stat !== undefined && isLive(stat) ? Number(entry) : undefined;
    }),
  );
  return marked.filter((pid): pid is number => pid !== undefined);
}

/** Like liveMarkedProcesses, synchronously, for the moment this server exits. */
export function liveMarkedProcessesSync(markers: ReadonlySet<string>): number[] {
  if (markers.size === 0) return [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const needles = [...markers].map((marker) => `\0${marker}\0`);
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let environ: string;
    try {
      environ = `\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}`;
    } catch {
      continue;
    }
    if (needles.some((needle) => environ.includes(needle))) pids.push(Number(entry));
  }
  return pids;
}

/**
 * Stops every live process carrying `marker`: SIGTERM, then SIGKILL to whatever is left after
 * `graceMs`, then waits (bounded) for them to be gone. Resolves to whether anything was running.
 */
export async function terminateMarkedProcesses(marker: string, graceMs: number): Promise<boolean> {
  const found = await liveMarkedProcesses(marker);
  if (found.length === 0) return false;
  for (const pid of found) signalProcess(pid, 'SIGTERM');
  if (await waitUntil(async () => (await liveMarkedProcesses(marker)).length === 0, graceMs)) return true;
  for (const pid of await liveMarkedProcesses(marker)) signalProcess(pid, 'SIGKILL');
  await waitUntil(async () => (await liveMarkedProcesses(marker)).length === 0, graceMs);
  return true;
}

function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone in the meantime.
  }
}

function isLive(stat: string): boolean {
  const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 1)[0];
  return state !== 'Z' && state !== 'X';
}

async function waitUntil(done: () => Promise<boolean>, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await done()) return true;
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
}
