/**
 * MiB a sandboxed call's /tmp and its /dev/shm may each hold. Both live in memory, so a call filling one takes
 * memory nothing frees until the call ends; 512 leaves room for a compiler's or a package manager's temporary files
 * and a browser's shared memory, and keeps a call far from a machine's memory.
 */
export const DEFAULT_TMPFS_MIB = 512;
export const MIN_TMPFS_MIB = 1;
/** 1 TiB: more bounds nothing on any machine this runs on. */
export const MAX_TMPFS_MIB = 1_048_576;

/** The value itself, when in range; anything else throws. */
export function checkedTmpfsMiB(mib: number): number {
  if (!Number.isSafeInteger(mib) || mib < MIN_TMPFS_MIB || mib > MAX_TMPFS_MIB) {
    throw new RangeError(`tmpfsMiB must be a whole number from ${MIN_TMPFS_MIB} to ${MAX_TMPFS_MIB}, not ${mib}`);
  }
  return mib;
}

/** Said at start-up when the bubblewrap found cannot bound a tmpfs (see BubblewrapProbe). */
export const UNSIZED_TMPFS_WARNING =
  'Warning: this bubblewrap cannot bound the size of a tool call’s /tmp and /dev/shm (--size came with bubblewrap 0.7.0, and a ' +
  'set-user-ID bubblewrap refuses it), so each holds up to half of this machine’s memory: one call you allow can fill it and ' +
  'leave nothing for the other programs, this server among them. Install bubblewrap 0.7.0 or later.';
