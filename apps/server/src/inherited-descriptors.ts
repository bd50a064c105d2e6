import { closeSync, readdirSync, readFileSync } from 'node:fs';

const O_CLOEXEC = 0o2000000;

/**
 * Closes the descriptors above 2 this process inherited from whatever started it (`200</some/folder` in the shell
 * that ran it): every process it starts would inherit them in turn, a sandboxed call and an MCP server included,
 * and could read or write through them outside the sandbox. Node and libuv open every descriptor of their own
 * close-on-exec, and Node marks the first few inherited ones close-on-exec at start-up, so one without the flag was
 * inherited and is not used here: closing it is safe. Run it once the configuration is read (a secret file given
 * as /dev/fd/N is read by then); `keep` lists descriptors this process does use. Returns those closed.
 */
export function closeInheritedDescriptors(keep: readonly number[] = []): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc/self/fd');
  } catch {
    // No /proc: nothing to find them by.
    return [];
  }
  const closed: number[] = [];
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || fd <= 2 || keep.includes(fd)) continue;
    const flags = descriptorFlags(fd);
    if (flags === undefined || (flags & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Gone already.
    }
  }
  return closed;
}

/** The open flags of a descriptor, close-on-exec included, from /proc/self/fdinfo; undefined when it is gone. */
function descriptorFlags(fd: number): number | undefined {
  try {
    const match = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    return match === null ? undefined : Number.parseInt(match[1]!, 8);
  } catch {
    return undefined;
  }
}
