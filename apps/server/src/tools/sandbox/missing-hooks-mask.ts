import { closeSync, lstatSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import type { WorkspaceGuard } from './workspace-guards';

/** Hooks folders this server masks for running calls, by path, with how many calls mask each. */
const masked = new Map<string, number>();

export interface HooksMask {
  /** The missing `.git/hooks`, where an empty read-only tmpfs is mounted. */
  path: string;
  /** Once the call is over: the last call masking it removes the mount point bubblewrap made. Idempotent. */
  release(): void;
}

/**
 * A `.git/hooks` missing from a repository (`.git/config` guarded) at the call's start, which the call must not make:
 * a `pre-commit` it put there would run unsandboxed at the person's next commit. bubblewrap makes the mount point, an
 * empty folder of the workspace, which the last call masking it removes once over. While one call masks it, a call
 * starting alongside finds that folder: it masks it too (its guard, taken from `guards`, is closed) rather than bind
 * a folder the first call's end removes from under it.
 */
export function maskMissingHooks(workspace: string, guards: WorkspaceGuard[]): HooksMask | undefined {
  const hooks = path.join(workspace, '.git', 'hooks');
  if (!guards.some((guard) => guard.path === path.join(workspace, '.git', 'config'))) return undefined;
  const count = masked.get(hooks) ?? 0;
  if (count === 0 && !isMissing(hooks)) return undefined;
  const index = guards.findIndex((guard) => guard.path === hooks);
  if (index >= 0) {
    closeSync(guards[index]!.fd);
    guards.splice(index, 1);
  }
  masked.set(hooks, count + 1);
  let released = false;
  return {
    path: hooks,
    release: () => {
      if (released) return;
      released = true;
      const left = (masked.get(hooks) ?? 1) - 1;
      if (left > 0) {
        masked.set(hooks, left);
        return;
      }
      masked.delete(hooks);
      try {
        rmdirSync(hooks);
      } catch {
        // Not made (bubblewrap did not start), or not empty: then it is not the mount point, and the Git check reports it.
      }
    },
  };
}

/** Whether a running call masks `hooks` now: the empty folder there is its mount point, not one a call made. */
export function hooksMaskedNow(hooks: string): boolean {
  return (masked.get(hooks) ?? 0) > 0;
}

function isMissing(file: string): boolean {
  try {
    lstatSync(file);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
