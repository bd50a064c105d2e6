import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPathGlob, matchPathGlob, normalisePathGlob } from '@airlock/api';
import { workspaceRelativeNames } from './workspace-relative-names';

describe('checkPathGlob', () => {
  it.each(['src/**', '**', '*.md', 'src/**/*.test.ts', 'a/?/b', '.github/workflows/*.yml', 'odd\\*name'])('accepts %j', (glob) => {
    expect(checkPathGlob(glob)).toBeUndefined();
  });

  it.each([
    ['', 'empty'],
    ['/etc/**', 'absolute'],
    ['../x', 'out of the workspace'],
    ['src/../../x', 'out of the workspace'],
    ['./src/**', 'write "src/**"'],
    ['src//a', 'write "src/a"'],
    ['src/', 'write "src"'],
    ['src/a**', 'whole name'],
    ['a\\', 'lone'],
    ['a\0b', 'NUL'],
    ['x'.repeat(2000), 'longer'],
  ])('refuses %j', (glob, problem) => {
    expect(checkPathGlob(glob)).toContain(problem);
  });

  it('normalises the spellings it refuses', () => {
    expect(normalisePathGlob('./src//a/')).toBe('src/a');
  });
});

describe('matchPathGlob', () => {
  it.each([
    ['src/**', 'src', true],
    ['src/**', 'src/a.ts', true],
    ['src/**', 'src/a/b/c.ts', true],
    ['src/**', 'srcx/a.ts', false],
    ['src/**', 'lib/src/a.ts', false],
    ['**/*.test.ts', 'a.test.ts', true],
    ['**/*.test.ts', 'a/b/c.test.ts', true],
    ['**/*.test.ts', 'a/b/c.test.tsx', false],
    ['*.md', 'README.md', true],
    ['*.md', 'docs/README.md', false],
    ['a/?/b', 'a/x/b', true],
    ['a/?/b', 'a/xy/b', false],
    ['a/*/b', 'a//b', false],
    ['src/**', 'src/.env', false],
    ['**', '.git/hooks/pre-commit', false],
    ['**', '.airlock/rules.json', false],
    ['**/*', 'a/.hidden', false],
    ['.airlock/*', '.airlock/rules.json', true],
    ['src/.*', 'src/.env', true],
    ['odd\\*name', 'odd*name', true],
    ['odd\\*name', 'oddXname', false],
    ['a/**/b/**/c', 'a/x/b/y/z/c', true],
    ['a/**/b/**/c', 'a/b/c', true],
    ['a/**/b/**/c', 'a/x/c', false],
  ])('%j against %j → %s', (glob, relative, expected) => {
    expect(matchPathGlob(glob, relative.split('/'))).toBe(expected);
  });

  it('takes time in the product of the lengths on the classic backtracking trap', () => {
    const glob = `${'*a'.repeat(30)}b`;
    expect(matchPathGlob(glob, ['a'.repeat(5000)])).toBe(false);
    const deep = `${'**/a/'.repeat(30)}b`;
    expect(matchPathGlob(deep, Array.from({ length: 500 }, () => 'a'))).toBe(false);
  });

  it('agrees with a regular-expression reference on random globs and paths', () => {
    const name = fc.stringMatching(/^[ab.*?]{1,4}$/).filter((text) => !text.includes('**') && text !== '.' && text !== '..');
    const segment = fc.oneof(name, fc.constant('**'));
    const glob = fc.array(segment, { minLength: 1, maxLength: 5 }).map((segments) => segments.join('/'));
    const pathName = fc.stringMatching(/^[ab.]{1,3}$/).filter((text) => text !== '.' && text !== '..');
    const pathNames = fc.array(pathName, { minLength: 0, maxLength: 5 });
    fc.assert(
      fc.property(glob, pathNames, (pattern, names) => {
        expect(matchPathGlob(pattern, names)).toBe(referenceMatch(pattern, names));
      }),
      { numRuns: 2000 },
    );
  });
});

/** The reference: plain recursion, one regular expression per name (exponential, fine for tiny inputs). */
function referenceMatch(glob: string, names: readonly string[]): boolean {
  const nameMatches = (segment: string, name: string) => {
    if (name.startsWith('.') && !segment.startsWith('.')) return false;
    const source = [...segment].map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.\\]/, '\\$&'))).join('');
    return new RegExp(`^${source}$`, 's').test(name);
  };
  const walk = (segments: readonly string[], rest: readonly string[]): boolean => {
    const [segment, ...more] = segments;
    if (segment === undefined) return rest.length === 0;
    if (segment === '**') {
      if (walk(more, rest)) return true;
      const [name, ...after] = rest;
      return name !== undefined && !name.startsWith('.') && walk(segments, after);
    }
    const [name, ...after] = rest;
    return name !== undefined && nameMatches(segment, name) && walk(more, after);
  };
  return walk(glob.split('/'), names);
}

describe('workspaceRelativeNames', () => {
  it.each([
    ['src/a.ts', ['src', 'a.ts']],
    ['.', []],
    ['/work/project', []],
    ['/work/project/src/../a', ['a']],
    ['../project/a', ['a']],
    ['..', undefined],
    ['/work/projectx/a', undefined],
    ['/etc/passwd', undefined],
    ['a\0b', undefined],
  ])('%j', (requested, expected) => {
    expect(workspaceRelativeNames('/work/project', requested)).toStrictEqual(expected);
  });
});
