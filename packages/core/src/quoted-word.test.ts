import { describe, expect, it } from 'vitest';
import { codeSpan } from './quoted-word';

describe('codeSpan', () => {
  it('is escaped as the card escapes it, a backtick and a line break among them, and never cut', () => {
    expect(codeSpan('ls')).toBe('`ls`');
    expect(codeSpan('a`b\nc')).toBe('`a\\u{60}b\\u{A}c`');
    expect(codeSpan('r\u202Em')).toBe('`r\\u{202E}m`');
    expect(codeSpan('a'.repeat(41))).toBe(`\`${'a'.repeat(41)}\``);
  });
});
