import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** A gitlink's mode in the index: the entry is a submodule's commit, its work tree a repository of its own. */
const GITLINK = 0o160000;
/** A sparse index's entry for a folder outside the sparse checkout, which stands for the entries below it. */
const SPARSE_FOLDER = 0o040000;
/** What an entry holds before its object name: ctime, mtime, dev, ino, mode, uid, gid, size. */
const STAT_BYTES = 40;
/**
 * The longest entry name read (Linux's paths stop at 4,096 bytes; git's index takes longer ones). Past it, or past
 * `MAX_GITLINK_BYTES` of gitlink names in all, the index is not read: a file a call wrote can make version 4's
 * names, each the one before with a byte added, as long as the file, and reading each whole is quadratic.
 */
const MAX_NAME_BYTES = 65_536;
const MAX_GITLINK_BYTES = 8 * 1024 * 1024;

/**
 * The paths of the gitlinks (submodules) an index file records, as Git writes the file (`DIRC`, versions 2 to 4, the
 * path compression of version 4), with object names of `hashBytes` (20 for SHA-1, 32 for SHA-256). Undefined when
 * the file is not read whole so: another version, a cut entry, or a split or sparse index (`link` extension, a folder
 * entry), whose other entries are elsewhere; the caller then cannot tell which submodules git goes into.
 */
export function indexGitlinks(data: Buffer, hashBytes: number): string[] | undefined {
  if (data.length < 12 || data.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = data.readUInt32BE(8);
  const found: string[] = [];
  let at = 12;
  // Version 4's names: each is kept in one buffer, the part shared with the name before left in place, so reading an
  // entry costs the bytes it adds, not its whole name.
  let names: Buffer | undefined;
  let nameLength = 0;
  let gitlinkBytes = 0;
  for (let entry = 0; entry < count; entry += 1) {
    const flagsAt = at + STAT_BYTES + hashBytes;
    if (flagsAt + 2 > data.length) return undefined;
    const mode = data.readUInt32BE(at + 24);
    const extended = version >= 3 && (data.readUInt16BE(flagsAt) & 0x4000) !== 0;
    const nameAt = flagsAt + 2 + (extended ? 2 : 0);
    let name: Buffer;
    if (version === 4) {
      const strip = varint(data, nameAt);
      if (strip === undefined || strip.value > nameLength) return undefined;
      const end = data.indexOf(0, strip.next);
      if (end < 0) return undefined;
      const kept = nameLength - strip.value;
      if (kept + end - strip.next > MAX_NAME_BYTES) return undefined;
      names ??= Buffer.allocUnsafe(MAX_NAME_BYTES);
      nameLength = kept + data.copy(names, kept, strip.next, end);
      name = names.subarray(0, nameLength);
      at = end + 1;
    } else {
      const end = data.indexOf(0, nameAt);
      if (end < 0 || end - nameAt > MAX_NAME_BYTES) return undefined;
      name = data.subarray(nameAt, end);
      // Each entry is padded with one to eight NULs to a multiple of eight bytes from its start.
      at += (nameAt - at + name.length + 8) & ~7;
    }
    if (at > data.length) return undefined;
    const kind = mode & 0o170000;
    if (kind === SPARSE_FOLDER) return undefined;
    if (kind === GITLINK) {
      gitlinkBytes += name.length;
      if (gitlinkBytes > MAX_GITLINK_BYTES) return undefined;
      found.push(name.toString('utf8'));
    }
  }
  // Extensions, each a four-letter name and a length, before the file's own hash.
  while (at + 8 + hashBytes <= data.length) {
    if (data.toString('latin1', at, at + 4) === 'link') return undefined;
    at += 8 + data.readUInt32BE(at + 4);
  }
  return found;
}

/** Git's offset varint (varint.c): seven bits a byte, high bit set on all but the last, each continuation adding one. */
function varint(data: Buffer, at: number): { value: number; next: number } | undefined {
  let next = at;
  let byte = data[next++];
  if (byte === undefined) return undefined;
  let value = byte & 0x7f;
  while ((byte & 0x80) !== 0) {
    byte = data[next++];
    if (byte === undefined || value > 0xffffff) return undefined;
    value = ((value + 1) << 7) | (byte & 0x7f);
  }
  return { value, next };
}

/** Indexes whose gitlinks are kept between judgings, by path and object name size. */
const KEPT_INDEXES = 16;

/**
 * A read no younger than this after the file's last change is kept: the kernel's file clock is coarse, so a write in
 * the same tick as the change read would leave the times as they were (as readConfigFile).
 */
const SETTLED_NS = 2_000_000_000n;

const keptIndexes = new Map<string, { identity: string; links: string[] | undefined }>();

/** Indexes read whole, for tests. */
export const indexReads = { count: 0 };

/**
 * The gitlinks of the index file `file` (see indexGitlinks), read once per change: each git call under a rule reads
 * the workspace repository's index, which in a large project is megabytes. Kept by path while the file's device,
 * inode, size and change times stay as read (none of which a process can set back), once the file is looked at two
 * seconds past its last change; at most `KEPT_INDEXES`. Opened with no link followed and no fifo waited on. Undefined
 * for a file missing, no regular file, over `maxBytes`, or not read whole. `now` is for tests.
 */
export async function readIndexGitlinks(file: string, hashBytes: number, maxBytes: number, now: () => bigint = () => BigInt(Date.now()) * 1_000_000n): Promise<string[] | undefined> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    // Taken before the file is looked at: a change made after that has a change time past it, so the check below
    // holds for what the read finds however long it takes (taken after, a read outlasting two seconds could keep a
    // change made during it in the tick of the change seen).
    const lookedAt = now();
    const info = await handle.stat({ bigint: true });
    if (!info.isFile() || info.size > BigInt(maxBytes)) return undefined;
    const key = `${hashBytes}\0${file}`;
    const identity = `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
    const known = keptIndexes.get(key);
    if (known?.identity === identity) {
      // Most recently used last, so that the bound drops the one used longest ago.
      keptIndexes.delete(key);
      keptIndexes.set(key, known);
      return known.links;
    }
    indexReads.count += 1;
    const links = indexGitlinks(await handle.readFile(), hashBytes);
    keptIndexes.delete(key);
    if (lookedAt - info.ctimeNs >= SETTLED_NS) {
      keptIndexes.set(key, { identity, links });
      if (keptIndexes.size > KEPT_INDEXES) keptIndexes.delete(keptIndexes.keys().next().value!);
    }
    return links;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}
