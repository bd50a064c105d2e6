import { spawn, spawnSync, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { chmod, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, test, vi } from 'vitest';
import { processStartTime } from './process-group';
import { WATCHDOG_SCRIPT } from './process-watchdog';
import { isRunning, killAllWith, processesWith, tempFolder, uniqueToken } from './test-support';

const WATCHDOG = fileURLToPath(new URL('./process-watchdog.ts', import.meta.url));

/**
 * Starts a stand-in server that runs `code` (with the watchdog's exports in scope), kills it with SIGKILL once it
 * did, and waits for `victim` to be gone. Whatever is left is killed at the end.
 */
async function expectGoneWhenServerDies(victim: ChildProcess, tag: string, code: string): Promise<void> {
  const server = startStandIn(code);
  try {
    await watching(server);
    expect(await isRunning(victim.pid!)).toBe(true);
    server.kill('SIGKILL');
    await vi.waitFor(async () => expect(await isRunning(victim.pid!)).toBe(false), { timeout: 20_000 });
  } finally {
    server.kill('SIGKILL');
    try {
      process.kill(-victim.pid!, 'SIGKILL');
    } catch {
      // Gone already.
    }
    killAllWith(tag);
  }
}

/** A stand-in server running `code`, with the watchdog's exports in scope. */
function startStandIn(code: string): ChildProcessByStdio<null, Readable, null> {
  return spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', `import { startCallWatchdog } from ${JSON.stringify(WATCHDOG)}; ${code}; console.log('watching'); setInterval(() => undefined, 1000);`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
}

/** Resolves once the stand-in ran its code. */
function watching(server: ChildProcessByStdio<null, Readable, null>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.stdout.on('data', (chunk: Buffer) => (chunk.toString().includes('watching') ? resolve() : undefined));
    server.once('exit', (exitCode) => reject(new Error(`the stand-in server exited with ${exitCode}`)));
  });
}

/** A process group of its own, found by `tag` on its command line, whose processes carry `env` and nothing else. */
function startVictim(tag: string, env: Record<string, string> = {}): ChildProcess {
  return spawn('/bin/sh', ['-c', `sleep 300 & wait # ${tag}`], { detached: true, stdio: 'ignore', env: { PATH: '/usr/bin:/bin', ...env } });
}

describe('the watchdog of a call, when the server dies', () => {
  test('kills the call’s process group, even a member without the call’s marker', async () => {
    const tag = uniqueToken();
    // Its processes do not carry the marker (as after `env -i`): only the group finds them.
    const victim = startVictim(tag);
    await expectGoneWhenServerDies(victim, tag, `startCallWatchdog(${JSON.stringify(`AIRLOCK_TOOL_CALL=${tag}`)}).watchGroup(${victim.pid!})`);
  });

  test('kills the processes carrying the call’s marker, even when the server dies before it could name any group or pid', async () => {
    const tag = uniqueToken();
    // Stands for a process of the call (or a sandbox's pid 1) in a session of its own, known only by its marker.
    const victim = startVictim(tag, { AIRLOCK_TOOL_CALL: tag });
    await expectGoneWhenServerDies(victim, tag, `startCallWatchdog(${JSON.stringify(`AIRLOCK_TOOL_CALL=${tag}`)})`);
  });

  test('kills a process it was told of, which has no marker and is in no group it knows', async () => {
    const tag = uniqueToken();
    // Stands for a sandbox's pid 1, seen from the host: named to the watchdog by its pid only.
    const victim = startVictim(tag);
    await expectGoneWhenServerDies(victim, tag, `startCallWatchdog(${JSON.stringify(`AIRLOCK_TOOL_CALL=${tag}`)}).watchProcess(${victim.pid!})`);
  });
});

describe('the watchdog of a call, when a process’s name holds a newline', () => {
  // Its name (comm, in /proc/<pid>/stat's parentheses) is its program's file name: a copy of sleep named so. Its start
  // time is the 20th field after the last ')', on the line after the newline: a parenthesis and spaces in the name
  // must not shift it either.
  test.each([
    ['found by its marker', { marked: true, told: () => '' }],
    ['told of as a group', { marked: false, told: (pid: number, start: number) => `.watchGroup(${pid}, ${start})` }],
    ['told of as a pid', { marked: false, told: (pid: number, start: number) => `.watchProcess(${pid}, ${start})` }],
  ])('kills the process %s', async (_, { marked, told }) => {
    const tag = uniqueToken();
    await using folder = await tempFolder();
    // Its command line carries the tag, in its program's folder, so that whatever is left is found.
    await mkdir(path.join(folder.path, tag));
    const program = path.join(folder.path, tag, 'odd) 1 2\nname');
    await copyFile('/bin/sleep', program);
    const env = { PATH: '/usr/bin:/bin', ...(marked ? { AIRLOCK_TOOL_CALL: tag } : {}) };
    const victim = spawn(program, ['300'], { detached: true, stdio: 'ignore', env });
    const watched = told(victim.pid!, processStartTime(victim.pid!)!);
    await expectGoneWhenServerDies(victim, tag, `startCallWatchdog(${JSON.stringify(`AIRLOCK_TOOL_CALL=${tag}`)})${watched}`);
  });
});

describe('the watchdog of a call, told a start time', () => {
  /** Starts a stand-in server that runs `code`, kills it once it did, and waits until the watchdog (found by `marker`) is done. */
  async function serverDiesAndWatchdogEnds(marker: string, code: string): Promise<void> {
    const server = startStandIn(code);
    try {
      await watching(server);
      // The watchdog and this stand-in carry the marker on their command lines; once the stand-in is gone, the watchdog is what is left.
      server.kill('SIGKILL');
      await vi.waitFor(() => expect(processesWith(marker)).toStrictEqual([]), { timeout: 20_000 });
    } finally {
      server.kill('SIGKILL');
      killAllWith(marker);
    }
  }

  test.each(['pid', 'group'] as const)(
    'does not kill the %s it was told of once that pid names another process: its start time differs',
    async (kind) => {
      const tag = uniqueToken();
      const marker = uniqueToken();
      // Stands for a process whose pid went, after the call's own ended, to a new process: anyone's.
      const bystander = startVictim(tag);
      try {
        const stale = processStartTime(bystander.pid!)! - 1;
        const told = kind === 'pid' ? `watchProcess(${bystander.pid!}, ${stale})` : `watchGroup(${bystander.pid!}, ${stale})`;
        await serverDiesAndWatchdogEnds(marker, `startCallWatchdog(${JSON.stringify(`AIRLOCK_TOOL_CALL=${marker}`)}).${told}`);
        expect(await isRunning(bystander.pid!)).toBe(true);
      } finally {
        try {
          process.kill(-bystander.pid!, 'SIGKILL');
        } catch {
          // Gone already.
        }
        killAllWith(tag);
      }
    },
    60_000,
  );

  test.each(['pid', 'group'] as const)('kills the %s it was told of while that pid is still its process: its start time is the same', async (kind) => {
    const tag = uniqueToken();
    const victim = startVictim(tag);
    const start = processStartTime(victim.pid!)!;
    const told = kind === 'pid' ? `watchProcess(${victim.pid!}, ${start})` : `watchGroup(${victim.pid!}, ${start})`;
    await expectGoneWhenServerDies(victim, tag, `startCallWatchdog(${JSON.stringify(`AIRLOCK_TOOL_CALL=${tag}`)}).${told}`);
  });
});

// Stands in for grep, first on PATH: writes to the folder's `greps` whether it reads every environment (`scan`, pid 1's
// among them) or only some (`look`), and runs the real one.
const COUNTING_GREP = `#!/bin/sh
case " $* " in *" /proc/1/environ "*) echo scan ;; *) echo look ;; esac >> "\${0%/*}/greps"
exec /usr/bin/grep "$@"
`;

describe('the watchdog of a call, sweeping many marked processes', () => {
  test('reads the environments of those a scan found new with one grep, however many', async () => {
    await using folder = await tempFolder();
    await writeFile(path.join(folder.path, 'grep'), COUNTING_GREP);
    await chmod(path.join(folder.path, 'grep'), 0o755);
    const tag = uniqueToken();
    const marked = Array.from({ length: 20 }, () => spawn('sleep', ['300'], { stdio: 'ignore', env: { PATH: '/usr/bin:/bin', AIRLOCK_TOOL_CALL: tag } }));
    try {
      const ended = marked.map(async (sleeper) => (await once(sleeper, 'exit'))[1] as NodeJS.Signals | null);
      // Run as once the server died: its pipe is closed from the start.
      const watchdog = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT, 'airlock-watchdog', `AIRLOCK_TOOL_CALL=${tag}`], {
        stdio: 'ignore',
        env: { PATH: `${folder.path}:/usr/bin:/bin` },
      });
      expect(await once(watchdog, 'close')).toStrictEqual([0, null]);
      expect(await Promise.all(ended)).toStrictEqual(marked.map(() => 'SIGKILL'));
      // The scan that finds them all and one look that confirms them; then three scans that find none new.
      const greps = (await readFile(path.join(folder.path, 'greps'), 'utf8')).split('\n').filter(Boolean);
      expect(greps).toStrictEqual(['scan', 'look', 'scan', 'scan', 'scan']);
    } finally {
      for (const sleeper of marked) sleeper.kill('SIGKILL');
    }
  }, 60_000);
});

// Stands in for grep, first on PATH: runs the real one, and right after the run named in the folder's `moment` file
// (`scan N`: the Nth grep of every environment, pid 1's among them, `look N`: the Nth of those a scan found new), if
// that run found the marked process, ends it and starts an unmarked one, the bystander, at its pid, under a parent
// that writes how it ended to `ended`.
const STAND_IN_GREP = `#!/bin/sh
dir=\${0%/*}
case $1 in -l*) ;; *) exec /usr/bin/grep "$@" ;; esac
case " $* " in *" /proc/1/environ "*) kind=scan ;; *) kind=look ;; esac
count=0
[ -e "$dir/$kind" ] && read -r count < "$dir/$kind"
count=$((count + 1))
echo "$count" > "$dir/$kind"
out=$(/usr/bin/grep "$@")
status=$?
read -r moment < "$dir/moment"
read -r marked < "$dir/marked"
case $status:$out in 0:*"/proc/$marked/environ"*) found=yes ;; *) found=no ;; esac
if [ "$kind $count" = "$moment" ] && [ "$found" = yes ]; then
  read -r stat < "/proc/$marked/stat"
  set -- \${stat##*) }
  started=\${20}
  # The bystander starts at least a clock tick after the marked process, as it would once pids wrapped.
  ticks=0
  while [ "$ticks" -le $((started + 1)) ]; do read -r up idle < /proc/uptime; ticks=\${up%.*}\${up#*.}; done
  kill -s KILL "$marked"
  while [ -e "/proc/$marked" ]; do :; done
  bystander=$( (echo $((marked - 1)) > /proc/sys/kernel/ns_last_pid; sleep 300 < /dev/null > /dev/null 2>&1 & echo "$!"; exec > /dev/null; wait "$!"; echo "$?" > "$dir/ended") & )
  echo "$bystander" > "$dir/bystander"
fi
[ -z "$out" ] || printf '%s\\n' "$out"
exit $status
`;

// PID 1 of a PID namespace of its own, where nothing else starts a process, so the pid after ns_last_pid is the next
// one given: starts a process carrying the marker ($2), runs the watchdog's script from the folder ($1) with the
// stand-in grep, as the watchdog runs once the server died, then ends the bystander with SIGTERM and tells how it
// ended. A SIGKILL the watchdog sent has begun its exit by then, which drops the SIGTERM, however soon it is sent; a
// SIGSTOP it sent is still pending (SIGSTOP is signal 19) or has stopped the bystander (state T), read in that order.
const DRIVER = `
dir=$1
env "$2" sleep 300 < /dev/null > /dev/null 2>&1 &
echo "$!" > "$dir/marked"
until grep -qzxF -- "$2" "/proc/$!/environ"; do :; done
PATH="$dir:/usr/bin:/bin" sh "$dir/watchdog.sh" "$2" < /dev/null
read -r marked < "$dir/marked"
if ! read -r bystander < "$dir/bystander" 2>/dev/null; then echo 'no bystander was started'; exit 0; fi
if [ "$bystander" != "$marked" ]; then echo "the bystander got pid $bystander, not $marked"; exit 0; fi
stopped=no
while read -r field value; do
  case $field in SigPnd:|ShdPnd:) [ $((0x$value >> 18 & 1)) = 0 ] || stopped=yes ;; esac
done < "/proc/$bystander/status"
read -r stat < "/proc/$bystander/stat"
set -- \${stat##*) }
[ "$1" != T ] || stopped=yes
kill -s TERM "$bystander"
kill -s CONT "$bystander"
until [ -s "$dir/ended" ]; do :; done
read -r ended < "$dir/ended"
case $ended:$stopped in
  137:*) echo 'the bystander was killed' ;;
  *:yes) echo 'the bystander was stopped' ;;
  143:no) echo 'the bystander ran until the end' ;;
  *) echo "the bystander ended with status $ended" ;;
esac
`;

/** Whether this machine lets these tests make a PID namespace and set its next pid (root, or a user namespace's). */
const pidNamespaces =
  spawnSync('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', '/bin/sh', '-c', 'echo 10 > /proc/sys/kernel/ns_last_pid'], { stdio: 'ignore' }).status === 0;
if (!pidNamespaces) console.warn('Skipping the watchdog pid-reuse tests: this machine lets them make no PID namespace whose next pid they set (run them as root)');

describe.skipIf(!pidNamespaces)('the watchdog of a call, when a marked process its scan found ends and its pid goes to another process', () => {
  // Its pid is given to the bystander for real: the script runs in a PID namespace of its own (unshare, as root).
  test.each([
    ['scan 1', 'the scan that found it'],
    ['scan 2', 'it was frozen'],
    ['look 1', 'its environment was read a second time'],
  ])('neither stops nor kills the process that took that pid (%s: after %s)', async (moment) => {
    await using folder = await tempFolder();
    await writeFile(path.join(folder.path, 'watchdog.sh'), WATCHDOG_SCRIPT);
    await writeFile(path.join(folder.path, 'grep'), STAND_IN_GREP);
    await chmod(path.join(folder.path, 'grep'), 0o755);
    await writeFile(path.join(folder.path, 'moment'), `${moment}\n`);
    const marker = `AIRLOCK_TOOL_CALL=${uniqueToken()}`;
    const driver = spawn('unshare', ['--pid', '--kill-child', '--mount-proc', '/bin/sh', '-c', DRIVER, 'driver', folder.path, marker], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      let told = '';
      driver.stdout.on('data', (chunk: Buffer) => (told += chunk.toString()));
      const [exitCode] = await once(driver, 'close');
      expect({ exitCode, told }).toStrictEqual({ exitCode: 0, told: 'the bystander ran until the end\n' });
    } finally {
      driver.kill('SIGKILL');
    }
  }, 30_000);
});
