import { WRAPPER_SCRIPT } from '../process-confinement';

/** Where the shell tries a one-byte write in each, once the command ended: emptied after, and gone with the call. */
const PROBE_NAME = '.airlock-space-left';

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
    // Stopping a call sends SIGTERM to each of its processes: this shell waits on, so the command has the grace period
    // to clean up (else the shell's end took pid 1 and the whole call with it at once). A caught signal is not passed
    // on: the command gets SIGTERM's own default.
    'trap : TERM',
    // The command's output on descriptor 3, this shell's own on /dev/null meanwhile: it says "Terminated" of a command a
    // stop ended, which the command did not. In a subshell, as the shell sets a command's redirections up in itself.
    'exec 3>&1 1>/dev/null 2>&1',
    '(exec "$0" "$@" 1>&3 2>&3 3>&-)',
    'status=$?',
    'exec 1>&3 3>&-',
    // Builtins only: the command's processes may hold every process the call may run, and a shell that cannot fork
    // ends there, its command's exit status lost. A write of one byte takes a page of a tmpfs: it fails only when
    // the space (or the room for files) ran out.
    // Only into a regular file or none: one the command left as a FIFO would hold the write, and the call, for good.
    ...['/tmp', '/dev/shm'].map(
      (place) =>
        `if [ ! -e ${place}/${PROBE_NAME} ] || { [ -f ${place}/${PROBE_NAME} ] && [ ! -L ${place}/${PROBE_NAME} ]; }; then if ! { printf x > ${place}/${PROBE_NAME}; } 2>/dev/null; then echo "airlock: this call's ${place} ran out of space: it holds at most ${size} MiB, in memory (--tool-tmp-size); write larger files in the workspace"; fi; : > ${place}/${PROBE_NAME} 2>/dev/null; fi`,
    ),
    'exit $status',
  ].join('\n');
}
