import { closeSync, lstatSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import type { WorkspaceGuard } from './workspace-guards';

/** Paths this server masks for running calls, with how many calls mask each. */
const masked = new Map<string, number>();

/** The empty files this server made as mount points of masked files, by the device and inode it made. */
const madeFiles = new Map<string, { dev: number; ino: number }>();

/** A path of a repository that a call must not make: a hooks folder, or the config. */
export interface MaskedPath {
  path: string;
  /** A folder gets an empty read-only tmpfs, a file a read-only /dev/null. */
  folder: boolean;
}

export interface GitPathsMask {
  /** The paths masked for this call. */
  paths: readonly MaskedPath[];
  /** Once the call is over: the last call masking a path removes the mount point bubblewrap made there. Idempotent. */
  release(): void;
}

/**
 * Those of `candidates` missing at the call's start (see missingGitPaths), which the call must not make: a
 * `pre-commit` it put in a hooks folder would run unsandboxed at the person's next commit, and a config it wrote would
 * name a hooks folder, an fsmonitor, an alias. bubblewrap makes each mount point, an empty folder or file of the
 * workspace, which the last call masking it removes once over. While one call masks a path, a call starting alongside
 * finds its mount point there: it masks it too (its guard, taken from `guards`, is closed) rather than bind what the
 * first call's end removes from under it.
 */
export function maskMissingGitPaths(candidates: readonly MaskedPath[], guards: WorkspaceGuard[]): GitPathsMask | undefined {
  const paths = candidates.filter((candidate) => maskedNow(candidate.path) || isMissing(candidate.path));
  if (paths.length === 0) return undefined;
  for (const entry of paths) {
    const maskedPath = entry.path;
    const index = guards.findIndex((guard) => guard.path === maskedPath);
    if (index >= 0) {
      closeSync(guards[index]!.fd);
      guards.splice(index, 1);
    }
    if (!maskedNow(maskedPath)) makeMountPoint(entry);
    masked.set(maskedPath, (masked.get(maskedPath) ?? 0) + 1);
  }
  let released = false;
  return {
    paths,
    release: () => {
      if (released) return;
      released = true;
      for (const entry of paths) {
        const left = (masked.get(entry.path) ?? 1) - 1;
        if (left > 0) {
          masked.set(entry.path, left);
          continue;
        }
        masked.delete(entry.path);
        const made = madeFiles.get(entry.path);
        madeFiles.delete(entry.path);
        removeMountPoint(entry, made);
      }
    },
  };
}

/** Whether a running call masks `file` now: the empty folder or file there is its mount point, not one a call made. */
export function maskedNow(file: string): boolean {
  return (masked.get(file) ?? 0) > 0;
}

/**
 * Whether `file` is masked by a running call and is still the empty file this server made as its mount point: a
 * rename over it (Git writes its config so) or its removal lifts the mask in every call masking it, and a watch on it
 * tells those apart from the server making it (see watchReplacements).
 */
export function isOwnMountPoint(file: string): boolean {
  const made = madeFiles.get(file);
  if (made === undefined || !maskedNow(file)) return false;
  try {
    const now = lstatSync(file);
    return now.dev === made.dev && now.ino === made.ino;
  } catch {
    return false;
  }
}

/**
 * Makes the empty file a masked file is mounted on before bubblewrap starts (bubblewrap would make it otherwise), so
 * that its identity is known: a watch on the missing file then fires for a file renamed over it, not for this one.
 */
function makeMountPoint({ path: mountPoint, folder }: MaskedPath): void {
  if (folder) return;
  try {
    writeFileSync(mountPoint, '', { flag: 'wx', mode: 0o444 });
    const made = lstatSync(mountPoint);
    madeFiles.set(mountPoint, { dev: made.dev, ino: made.ino });
  } catch {
    // Made meanwhile, or the folder is not writable: bubblewrap mounts on what is there, unwatched as before.
  }
}

/**
 * Removes the mount point once no call masks it. A file this server made is removed only while it is still that file:
 * one renamed over it meanwhile is the person's (their `git config`), empty or not, and stays.
 */
function removeMountPoint({ path: mountPoint, folder }: MaskedPath, made: { dev: number; ino: number } | undefined): void {
  try {
    if (folder) {
      rmdirSync(mountPoint);
      return;
    }
    const info = lstatSync(mountPoint);
    if (made !== undefined && (info.dev !== made.dev || info.ino !== made.ino)) return;
    if (info.isFile() && info.size === 0) unlinkSync(mountPoint);
  } catch {
    // Not made (bubblewrap did not start), or not empty: then it is not the mount point and stays (the Git check
    // reports a hooks folder that appeared).
  }
}

function isMissing(file: string): boolean {
  try {
    lstatSync(file);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
