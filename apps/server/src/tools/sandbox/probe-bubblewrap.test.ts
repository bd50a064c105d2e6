import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempFolder } from '../test-support';
import { unboundedNamespaceWarning } from './namespace-limits';
import { probeBubblewrap } from './probe-bubblewrap';

const real = await probeBubblewrap(true);
const skip = real.available ? undefined : real.reason;
const realUnshare = real.available && 'unshare' in real ? real.unshare : undefined;

/** What an `unshare` says where AppArmor takes the capabilities of the user namespace it makes. */
const REFUSED = 'unshare: write failed /proc/self/uid_map: Operation not permitted';

describe.skipIf(skip !== undefined)(`where the namespace around bubblewrap cannot bound a call${skip === undefined ? '' : ` (skipped: ${skip})`}`, () => {
  const sandbox = real.available ? { available: true, bwrap: real.bwrap, ...(real.unsizedTmpfs ? { unsizedTmpfs: true } : {}) } : {};
  const consequence =
    'Warning: tool calls’ inotify instances and watches, the number of files in their /tmp and /dev/shm, and their System V shared memory, ' +
    'message queues and semaphores are not bounded here, so one call you allow can hold every inotify watch this user may have while it runs ' +
    '(this server’s and your editors’ file watching then fail), and take gigabytes of memory in empty files, shared memory and message ' +
    'queues. The cause: ';

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
});
