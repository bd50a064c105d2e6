import { readdir, readlink } from 'node:fs/promises';
import { processStartTime, type FoundProcess } from '../process-group';

/**
 * Host pids of the processes in a PID namespace, found by its inode through /proc/<pid>/ns/pid, each with its start
 * time (`FoundProcess`), read between two looks at its namespace: a pid that went to a process of another namespace
 * in between is left out.
 */
export async function pidNamespaceMembers(namespaceInode: number): Promise<FoundProcess[]> {
  const wanted = `pid:[${namespaceInode}]`;
  const inNamespace = async (pid: string) => (await readlink(`/proc/${pid}/ns/pid`).catch(() => undefined)) === wanted;
  const entries = (await readdir('/proc').catch(() => [])).filter((entry) => /^\d+$/.test(entry));
  const members: FoundProcess[] = [];
  for (const entry of entries) {
    if (!(await inNamespace(entry))) continue;
    const startTime = processStartTime(Number(entry));
    if (startTime !== undefined && (await inNamespace(entry))) members.push({ pid: Number(entry), startTime });
  }
  return members;
}
