/** A gitlink's mode in the index: the entry is a submodule's commit, its work tree a repository of its own. */
const GITLINK = 0o160000;
/** A sparse index's entry for a folder outside the sparse checkout, which stands for the entries below it. */
const SPARSE_FOLDER = 0o040000;
/** What an entry holds before its object name: ctime, mtime, dev, ino, mode, uid, gid, size. */
const STAT_BYTES = 40;

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
  let previous: Buffer = Buffer.alloc(0);
  for (let entry = 0; entry < count; entry += 1) {
    const flagsAt = at + STAT_BYTES + hashBytes;
    if (flagsAt + 2 > data.length) return undefined;
    const mode = data.readUInt32BE(at + 24);
    const extended = version >= 3 && (data.readUInt16BE(flagsAt) & 0x4000) !== 0;
    const nameAt = flagsAt + 2 + (extended ? 2 : 0);
    let name: Buffer;
    if (version === 4) {
      const strip = varint(data, nameAt);
      if (strip === undefined || strip.value > previous.length) return undefined;
      const end = data.indexOf(0, strip.next);
      if (end < 0) return undefined;
      name = Buffer.concat([previous.subarray(0, previous.length - strip.value), data.subarray(strip.next, end)]);
      at = end + 1;
    } else {
      const end = data.indexOf(0, nameAt);
      if (end < 0) return undefined;
      name = data.subarray(nameAt, end);
      // Each entry is padded with one to eight NULs to a multiple of eight bytes from its start.
      at += (nameAt - at + name.length + 8) & ~7;
    }
    if (at > data.length) return undefined;
    previous = name;
    const kind = mode & 0o170000;
    if (kind === SPARSE_FOLDER) return undefined;
    if (kind === GITLINK) found.push(name.toString('utf8'));
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
