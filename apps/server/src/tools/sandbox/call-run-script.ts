import { WRAPPER_SCRIPT } from '../process-confinement';

/** Below this many KiB left, a call's /tmp or /dev/shm is said to have run out: a failed write leaves it at 0. */
const FULL_BELOW_KIB = 64;

/**
 * How the sandbox's shell runs the command, once the limit on processes is set (see limitedWrapperScript).
 *
 * First it asks the kernel to kill the call's processes before any other when memory runs out
 * (oom_score_adj 1000, which they inherit): a call that allocates without end, or many processes of one, is what goes,
 * not this server or the person's other programs, which a process larger than each of them would be. A command can
 * lower it back to the server's own value, not below (that takes a capability).
 *
 * Then, with `tmpfsMiB` (the size of the call's /tmp and /dev/shm), it runs the command as its child rather than in
 * its place, and once it ended says which of the two ran out of space: the command's own error ("No space left on
 * device") does not say that the space is the call's, nor where there is more. The command's exit status is kept.
 */
export function sandboxRunScript(tmpfsMiB: number | undefined): string {
  const adjust = 'echo 1000 > /proc/self/oom_score_adj 2>/dev/null';
  if (tmpfsMiB === undefined) return [adjust, WRAPPER_SCRIPT].join('\n');
  const size = String(Math.trunc(tmpfsMiB));
  return [
    adjust,
    '"$0" "$@" 2>&1',
    'status=$?',
    // df's POSIX lines: "<file system> <1024-blocks> <used> <available> <capacity> <mounted on>".
    `df -Pk /tmp /dev/shm 2>/dev/null | while read -r fs blocks used avail rest; do case $avail in ''|*[!0-9]*) continue ;; esac; ` +
      `if [ "$avail" -lt ${FULL_BELOW_KIB} ]; then echo "airlock: this call's \${rest#* } ran out of space: it holds at most ${size} MiB, in memory (--tool-tmp-size); write larger files in the workspace"; fi; done`,
    'exit $status',
  ].join('\n');
}
