import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { indexGitlinks, indexReads, readIndexGitlinks } from './git-index-gitlinks';

describe('indexGitlinks', () => {
  let folder = '';
  const git = (repository: string, ...args: string[]) => execFileSync('git', ['-C', repository, '-c', 'user.name=P', '-c', 'user.email=p@example.com', ...args]);
  /**
   * A repository with files, a name longer than an entry's length field holds, and the gitlinks `vendor/lib` and `z`,
   * in the index version asked for.
   */
  const repository = (name: string, init: string[], version: number): string => {
    const top = path.join(folder, name);
    execFileSync('git', ['init', '-q', ...init, top]);
    for (const file of ['a.txt', 'src/deep/b.txt']) {
      mkdirSync(path.dirname(path.join(top, file)), { recursive: true });
      writeFileSync(path.join(top, file), file);
    }
    git(top, 'add', '.');
    const commit = git(top, 'commit-tree', git(top, 'write-tree').toString().trim(), '-m', 'x').toString().trim();
    const blob = execFileSync('git', ['-C', top, 'hash-object', '-w', '--stdin'], { input: 'x' }).toString().trim();
    git(top, 'update-index', '--add', '--cacheinfo', `100644,${blob},${'long-name/'.repeat(420)}x.txt`);
    for (const link of ['vendor/lib', 'z']) git(top, 'update-index', '--add', '--cacheinfo', `160000,${commit},${link}`);
    if (version === 3) {
      // An intent-to-add entry carries version 3's extended flags.
      writeFileSync(path.join(top, 'later.txt'), 'later');
      git(top, 'add', '--intent-to-add', 'later.txt');
    }
    git(top, 'update-index', '--index-version', String(version));
    return top;
  };
  beforeEach(() => {
    folder = mkdtempSync(path.join(tmpdir(), 'airlock-index-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it.each([2, 3, 4])('finds the gitlinks of an index git writes in version %i', (version) => {
    const top = repository(`v${version}`, [], version);
    expect(readFileSync(path.join(top, '.git/index')).readUInt32BE(4)).toBe(version);
    expect(indexGitlinks(readFileSync(path.join(top, '.git/index')), 20)).toStrictEqual(['vendor/lib', 'z']);
  });

  it('reads object names of SHA-256 repositories', () => {
    const top = repository('sha256', ['--object-format=sha256'], 4);
    expect(indexGitlinks(readFileSync(path.join(top, '.git/index')), 32)).toStrictEqual(['vendor/lib', 'z']);
  });

  it('reads none of a split index, a cut file or another format, whose entries it cannot all see', () => {
    const top = repository('split', [], 2);
    const whole = readFileSync(path.join(top, '.git/index'));
    expect(indexGitlinks(whole.subarray(0, 200), 20)).toBeUndefined();
    expect(indexGitlinks(Buffer.from('not an index at all'), 20)).toBeUndefined();
    git(top, 'update-index', '--split-index');
    expect(indexGitlinks(readFileSync(path.join(top, '.git/index')), 20)).toBeUndefined();
  });

  /** A version 4 index of SHA-1 entries, each `[mode, bytes of the name before to drop, bytes to add]`. */
  const version4 = (entries: [number, number, string][]): Buffer => {
    const parts = [Buffer.from('DIRC'), Buffer.alloc(8)];
    parts[1]!.writeUInt32BE(4, 0);
    parts[1]!.writeUInt32BE(entries.length, 4);
    for (const [mode, strip, added] of entries) {
      const fixed = Buffer.alloc(40 + 20 + 2);
      fixed.writeUInt32BE(mode, 24);
      const drop: number[] = [];
      // Git's offset varint: seven bits a byte, high bit on all but the last, each continuation adding one.
      let value = strip;
      drop.unshift(value & 0x7f);
      while ((value >>= 7) > 0) drop.unshift(0x80 | (--value & 0x7f));
      parts.push(fixed, Buffer.from(drop), Buffer.from(added), Buffer.alloc(1));
    }
    return Buffer.concat([...parts, Buffer.alloc(20)]);
  };

  it('builds each version 4 name from the one before, in place', () => {
    const file = 0o100644;
    const link = 0o160000;
    expect(indexGitlinks(version4([[file, 0, 'a/b/c'], [link, 1, 'd'], [link, 3, 'x/y'], [file, 5, 'long/name/here'], [link, 9, '']]), 20)).toStrictEqual(['a/b/d', 'a/x/y', 'long/']);
    expect(indexGitlinks(version4([[file, 0, 'a'], [link, 2, 'b']]), 20)).toBeUndefined();
  });

  it('reads no index whose names grow past any path, nor one of more gitlink names than bound: each name read whole cost its full length', () => {
    const file = 0o100644;
    const link = 0o160000;
    // A name as long as the file, each next one adding a byte: read whole, one name after another, it was quadratic.
    const growing = version4([[file, 0, 'x'.repeat(65_530)], ...Array.from({ length: 10 }, (): [number, number, string] => [file, 0, 'y'])]);
    expect(indexGitlinks(growing, 20)).toBeUndefined();
    const manyLinks = version4([[file, 0, 'x'.repeat(60_000)], ...Array.from({ length: 150 }, (_, index): [number, number, string] => [link, 1, String(index % 10)])]);
    expect(indexGitlinks(manyLinks, 20)).toBeUndefined();
    const fewLinks = version4([[file, 0, 'x'.repeat(60_000)], ...Array.from({ length: 3 }, (_, index): [number, number, string] => [link, 1, String(index)])]);
    expect(indexGitlinks(fewLinks, 20)).toHaveLength(3);
  });

  it('reads an index once while it stays as read, and again once it changes (its device, inode, size or change times)', async () => {
    const top = repository('kept', [], 2);
    const index = path.join(top, '.git/index');
    // Kept only once the read is two seconds past the file's last change: a time far after it.
    const later = () => BigInt(Date.now() + 60_000) * 1_000_000n;
    const reads = indexReads.count;
    expect(await readIndexGitlinks(index, 20, 1 << 20, later)).toStrictEqual(['vendor/lib', 'z']);
    expect(await readIndexGitlinks(index, 20, 1 << 20, later)).toStrictEqual(['vendor/lib', 'z']);
    expect(indexReads.count - reads).toBe(1);
    git(top, 'rm', '-q', '--cached', 'z');
    expect(await readIndexGitlinks(index, 20, 1 << 20, later)).toStrictEqual(['vendor/lib']);
    expect(indexReads.count - reads).toBe(2);
    // Written in place, the same size, its times set back: its change time is not.
    const bytes = readFileSync(index);
    const before = statSync(index);
    const changed = Buffer.from(bytes);
    changed.write('vendor/lix', changed.indexOf('vendor/lib'), 'latin1');
    writeFileSync(index, changed);
    utimesSync(index, before.atime, before.mtime);
    expect(await readIndexGitlinks(index, 20, 1 << 20, later)).toStrictEqual(['vendor/lix']);
    // Read fresh, not kept: the file changed in the last two seconds, so a write in the same tick of the file clock
    // may follow with the times unchanged.
    const fresh = indexReads.count;
    writeFileSync(index, bytes);
    expect(await readIndexGitlinks(index, 20, 1 << 20)).toStrictEqual(['vendor/lib']);
    expect(await readIndexGitlinks(index, 20, 1 << 20)).toStrictEqual(['vendor/lib']);
    expect(indexReads.count - fresh).toBe(2);
    // The time is taken when the file is looked at, not after its read: a read that took past the two seconds, of a
    // file changed just before it was looked at, may hold a change made during it in the same tick, and is not kept.
    const slow = indexReads.count;
    writeFileSync(index, changed);
    const changedAt = statSync(index, { bigint: true }).ctimeNs;
    const duringRead = () => changedAt + (indexReads.count > slow ? 3_000_000_000n : 1_000_000_000n);
    expect(await readIndexGitlinks(index, 20, 1 << 20, duringRead)).toStrictEqual(['vendor/lix']);
    expect(await readIndexGitlinks(index, 20, 1 << 20, later)).toStrictEqual(['vendor/lix']);
    expect(indexReads.count - slow).toBe(2);
    // Past the size given, a link, or no file: undefined.
    expect(await readIndexGitlinks(index, 20, 10, later)).toBeUndefined();
    expect(await readIndexGitlinks(path.join(top, 'missing'), 20, 1 << 20, later)).toBeUndefined();
  });
});
