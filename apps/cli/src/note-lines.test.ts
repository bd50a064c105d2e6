import { describe, expect, it } from 'vitest';
import { noteLines } from './note-lines';

describe('noteLines', () => {
  it('wraps at spaces into lines of at most the width, each indented', () => {
    expect(noteLines('Input ended: stopping the run; the call does not run.', { columns: 24 })).toStrictEqual([
      '  Input ended: stopping',
      '  the run; the call does',
      '  not run.',
    ]);
    expect(noteLines('short', { columns: 80 }, '    ')).toStrictEqual(['    short']);
  });

  it('splits a word too long for a line, and counts a character outside ASCII as two columns', () => {
    expect(noteLines(`see ${'x'.repeat(30)}`, { columns: 20 })).toStrictEqual(['  see', `  ${'x'.repeat(18)}`, `  ${'x'.repeat(12)}`]);
    expect(noteLines(`${'…'.repeat(10)} end`, { columns: 20 })).toStrictEqual([`  ${'…'.repeat(9)}`, '  … end']);
  });
});
