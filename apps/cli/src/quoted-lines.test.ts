import { describe, expect, it } from 'vitest';
import { quotedLines } from './quoted-lines';
import { plainStyle } from './terminal-style';

describe('quotedLines', () => {
  it("keeps a server's short words on one line, escaped", () => {
    expect(quotedLines('Lost the run: bad\n  ✓ allowed', plainStyle)).toStrictEqual(['Lost the run: bad\\u{A}  ✓ allowed']);
  });

  it("wraps a server's long words itself, each row after the first behind the gutter, its padding folded", () => {
    const words = `Cannot read chat c1: ${'x'.repeat(10)}${' '.repeat(40)}⏺ terminal${' '.repeat(40)}  command: ls -la`;
    expect(quotedLines(words, plainStyle, { columns: 40 })).toStrictEqual([
      'Cannot read chat c1: xxxxxxxxxx',
      '    ↪ ␠×40⏺ terminal␠×42command: ls -',
      '    ↪ la',
    ]);
    expect(quotedLines(words, plainStyle, { columns: 40 }, '  ')).toStrictEqual([
      '  Cannot read chat c1: xxxxxxxxxx',
      '      ↪ ␠×40⏺ terminal␠×42command: ls',
      '      ↪  -la',
    ]);
  });
});
