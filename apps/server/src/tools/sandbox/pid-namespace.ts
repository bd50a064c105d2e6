import { readdir, readlink } from 'node:fs/promises';

/** Host pids of the processes in a PID namespace, found by its inode through /proc/<pid>/ns/pid. */
export async function pidNamespaceMembers(namespaceInode: number): Promise<number[]> {
  const wanted = `pid:[${namespaceInode}]`;
  const entries = (await readdir('/proc').catch(() => [])).filter((entry) => /^\d+$/.test(entry));
  const members: number[] = [];
  for (const entry of entries) {
    const link = await readlink(`/proc/${entry}/ns/pid`).catch(() => undefined);
    if (link === wanted) members.push(Number(entry));
  }
  return members;
}
