import { fstatSync, readlinkSync } from 'node:fs';

/**
 * The regular files this process's stdout and stderr write to now (`nohup npm start` makes `nohup.out`, `npm start >
 * airlock.log`), as the kernel names them (/proc/self/fd/N): they hold the start-up link, so no tool may read them.
 * The launcher passes on its own descriptors, so these are the files it was started with. None for a terminal, a
 * pipe, a socket (a journal), /dev/null, a file since deleted, or where /proc is not there to say.
 */
export function outputFiles(fds: readonly number[] = [1, 2]): string[] {
  const files = new Set<string>();
  for (const fd of fds) {
    try {
      if (!fstatSync(fd).isFile()) continue;
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith('/') && !target.endsWith(' (deleted)')) files.add(target);
    } catch {
      // Closed, or no /proc.
    }
  }
  return [...files];
}
