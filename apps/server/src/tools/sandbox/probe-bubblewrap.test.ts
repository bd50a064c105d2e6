import { readFileSync, readlinkSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { createBuiltinTools } from '../index';
import { runTool, tempFolder, toolNamed } from '../test-support';
import { unboundedIpcWarning } from './ipc-limits';
import { inotifyLimits, unboundedNamespaceWarning } from './namespace-limits';
import { probeBubblewrap } from './probe-bubblewrap';

const real = await probeBubblewrap(true);
const skip = real.available ? undefined : real.reason;
const realUnshare = real.available && 'unshare' in real ? real.unshare : undefined;

/** What an `unshare` says where AppArmor takes the capabilities of the user namespace it makes. */
const REFUSED = 'unshare: write failed /proc/self/uid_map: Operation not permitted';

describe.skipIf(skip !== undefined)(`where the namespace around bubblewrap cannot bound a call${skip === undefined ? '' : ` (skipped: ${skip})`}`, () => {
  const sandbox = real.available ? { available: true, bwrap: real.bwrap, ...(real.unsizedTmpfs ? { unsizedTmpfs: true } : {}) } : {};
  const consequence =
    'Warning: tool calls’ inotify instances and watches, fanotify groups and marks, POSIX message queues, pseudo-terminals, the number of ' +
    'files in their /tmp and /dev/shm, and their System V shared memory, message queues and semaphores are not bounded here, so one call ' +
    'you allow can hold every inotify watch, fanotify group and POSIX message queue this user may have while it runs (this server’s and ' +
    'your editors’ file watching then fail) and every pseudo-terminal other calls and containers take theirs from, and take gigabytes of memory in empty ' +
    'files, shared memory and message queues. The cause: ';

  /** An `unshare` that fails as one does under AppArmor's restriction, saying two lines. */
  async function failingUnshare(folder: string): Promise<string> {
    const file = path.join(folder, 'unshare');
    await writeFile(file, `#!/bin/sh\necho '${REFUSED}' >&2\necho 'a second line' >&2\nexit 1\n`, { mode: 0o755 });
    return file;
  }

  test('the probe keeps the first line of the failure, and the start-up warning says it', async () => {
    await using folder = await tempFolder();
    const unshare = await failingUnshare(folder.path);
    const probe = await probeBubblewrap(true, { unshareLocations: [unshare], apparmorRestriction: path.join(folder.path, 'absent') });
    const reason = `${unshare} could not set them up: ${REFUSED}`;
    expect(probe).toStrictEqual({ ...sandbox, unbounded: reason });
    expect(unboundedNamespaceWarning(reason)).toBe(`${consequence}${reason}.`);
  });

  test('where AppArmor restricts unprivileged user namespaces, the warning names it as the likely cause', async () => {
    await using folder = await tempFolder();
    const unshare = await failingUnshare(folder.path);
    const restriction = path.join(folder.path, 'apparmor_restrict_unprivileged_userns');
    await writeFile(restriction, '1\n');
    const probe = await probeBubblewrap(true, { unshareLocations: [unshare], apparmorRestriction: restriction });
    expect(probe).toStrictEqual({
      ...sandbox,
      unbounded:
        `${unshare} could not set them up: ${REFUSED}. AppArmor restricts unprivileged user namespaces here ` +
        '(kernel.apparmor_restrict_unprivileged_userns = 1), which likely took the capabilities of the namespace unshare made',
    });
    await writeFile(restriction, '0\n');
    expect(await probeBubblewrap(true, { unshareLocations: [unshare], apparmorRestriction: restriction })).toStrictEqual({ ...sandbox, unbounded: `${unshare} could not set them up: ${REFUSED}` });
  });

  test.skipIf(realUnshare === undefined || (real.available && real.unsizedTmpfs === true))('where a step in the namespace fails, the probe keeps that step’s error, not only that it failed', async () => {
    await using folder = await tempFolder();
    // The real unshare without --mount: the namespace is made, and the mount of the call's /tmp in it is refused.
    const unshare = path.join(folder.path, 'unshare');
    await writeFile(unshare, `#!/bin/sh\n[ "$3" = --mount ] || exit 9\nuser=$1 root=$2\nshift 3\nexec ${realUnshare} "$user" "$root" "$@"\n`, { mode: 0o755 });
    const probe = await probeBubblewrap(true, { unshareLocations: [unshare], apparmorRestriction: path.join(folder.path, 'absent') });
    expect(probe).toMatchObject(sandbox);
    const escaped = unshare.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect('unbounded' in probe && probe.unbounded).toMatch(new RegExp(`^${escaped} could not set them up: mount: /dev/shm: .*permission denied`, 'i'));
  });

  test('without unshare, the warning says where it was looked for', async () => {
    await using folder = await tempFolder();
    const [first, second] = [path.join(folder.path, 'a', 'unshare'), path.join(folder.path, 'b', 'unshare')];
    const probe = await probeBubblewrap(true, { unshareLocations: [first, second] });
    expect(probe).toStrictEqual({ ...sandbox, unbounded: `no unshare at ${first} or ${second}` });
  });

  test.skipIf(realUnshare === undefined || (real.available && real.unsizedTmpfs === true))(
    'where the kernel refuses the IPC limits, a call keeps its inotify and /tmp bounds, in an IPC namespace of bubblewrap’s, and the warning says so',
    async () => {
      if (!real.available || realUnshare === undefined) return;
      await using folder = await tempFolder();
      // A folder that cannot be written, as /proc/sys/kernel/shm* cannot by a namespace's root before Linux 6.9.
      const refused = path.join(folder.path, 'absent');
      const probe = await probeBubblewrap(true, { apparmorRestriction: path.join(folder.path, 'absent-restriction'), ipcSysctlFolder: refused });
      expect(probe).toStrictEqual({ ...sandbox, unshare: realUnshare, ipcUnbounded: expect.stringContaining(`${realUnshare} could not set the limits of the call’s IPC namespace: `) });
      const reason = 'ipcUnbounded' in probe ? String(probe.ipcUnbounded) : '';
      expect(reason).toContain(`${refused}/kernel/shmmax`);
      expect(unboundedIpcWarning(reason)).toMatch(/^Warning: tool calls’ System V shared memory, message queues and semaphores are not bounded here, .*Linux 6\.9.*The cause: /);
      expect(unboundedIpcWarning(reason).endsWith(`${reason}.`)).toBe(true);

      // A real call with what the probe found: inotify instances until refused, empty files in /tmp until refused.
      await using workspace = await tempFolder();
      const found = { kind: 'bubblewrap', bwrap: real.bwrap, network: true, unshare: realUnshare, ipcUnbounded: reason } as const;
      const terminal = toolNamed(createBuiltinTools({ workspace: workspace.path, sandbox: found, tmpfsMiB: 8 }), 'terminal');
      const take = [
        'import ctypes, os',
        'libc = ctypes.CDLL(None, use_errno=True)',
        'fds = 0',
        'while fds < 4096 and libc.inotify_init1(0) >= 0: fds += 1',
        'files = 0',
        'try:',
        '    while files < 16384: os.close(os.open(f"/tmp/{files}", os.O_CREAT | os.O_WRONLY)); files += 1',
        'except OSError: pass',
        'print(fds, files, os.readlink("/proc/self/ns/ipc"))',
      ].join('\n');
      const result = await runTool(terminal, { command: `python3 -c '${take}'` });
      expect(result.content).toMatch(/^\d+ \d+ ipc:\[\d+\]\n/);
      const [instances, files, ipc] = result.content.split('\n')[0]!.split(' ');
      const user = { instances: Number(readFileSync('/proc/sys/user/max_inotify_instances', 'utf8')), watches: Number(readFileSync('/proc/sys/user/max_inotify_watches', 'utf8')) };
      expect(Number(instances)).toBe(inotifyLimits(user)!.instances);
      // A file per 4 KiB of 8 MiB, its root folder among them.
      expect(Number(files)).toBeLessThan((8 * 1024 * 1024) / 4096);
      expect(Number(files)).toBeGreaterThan((8 * 1024 * 1024) / 4096 - 8);
      // Its own IPC namespace still, bubblewrap's.
      expect(ipc).not.toBe(readlinkSync('/proc/self/ns/ipc'));
    },
    60_000,
  );
});
