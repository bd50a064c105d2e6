import { lstat, mkdtemp, readdir, realpath, rmdir, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isWithin } from './path-within';

/**
 * Where the server makes its own temporary folders for tools: the server's temporary folder (TMPDIR), unless that
 * lies in the workspace, where every other running call may write; then the first of /tmp, /var/tmp and /dev/shm
 * that does not. Found by an outside probe: with TMPDIR in the workspace, another call swapped the subfolders of the
 * python tool's folder for links while the server removed it, and the removal deleted files outside the workspace.
 */
export async function scratchBase(workspace: string): Promise<string> {
  for (const candidate of [os.tmpdir(), '/tmp', '/var/tmp', '/dev/shm']) {
    const real = await realpath(candidate).catch(() => undefined);
    if (real !== undefined && !isWithin(workspace, real)) return real;
  }
  throw new Error(`no temporary folder outside the workspace ${workspace} (TMPDIR, /tmp, /var/tmp and /dev/shm all lie in it)`);
}

/**
 * Runs `use` with a new, empty folder of the server's outside the workspace (see scratchBase), then removes that
 * folder and what was made in it, never following a link (see removeOwnFolder).
 */
export async function withScratchFolder<T>(workspace: string, prefix: string, use: (folder: string) => Promise<T>): Promise<T> {
  const folder = await mkdtemp(path.join(await scratchBase(workspace), prefix));
  const made = await lstat(folder);
  try {
    return await use(folder);
  } finally {
    await removeOwnFolder(folder, made);
  }
}

/**
 * Removes `folder`, which this server made (`made` is what lstat said then), with what lies in it: links and files
 * are unlinked, never followed, folders entered only while they are the folder lstat saw, on the same file system.
 * A folder that is no longer the one made is left alone: what is there now is not the server's.
 */
export async function removeOwnFolder(folder: string, made: { dev: number; ino: number }): Promise<void> {
  const now = await lstat(folder).catch(() => undefined);
  if (now === undefined || !now.isDirectory() || now.dev !== made.dev || now.ino !== made.ino) return;
  for (const name of await readdir(folder)) {
    const entry = path.join(folder, name);
    const found = await lstat(entry).catch(() => undefined);
    if (found === undefined) continue;
    if (found.isDirectory()) {
      if (found.dev === made.dev) await removeOwnFolder(entry, found);
    } else {
      await unlink(entry).catch(() => undefined);
    }
  }
  await rmdir(folder).catch(() => undefined);
}
