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
