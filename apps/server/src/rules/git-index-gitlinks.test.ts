import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { indexGitlinks } from './git-index-gitlinks';

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
});
