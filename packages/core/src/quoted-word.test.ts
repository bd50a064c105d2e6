import { describe, expect, it } from 'vitest';
import { codeSpan, quotedWord } from './quoted-word';

describe('quotedWord', () => {
  it('is escaped as the card escapes it and cut at 40 characters', () => {
    expect(quotedWord('ls')).toBe('`ls`');
    expect(quotedWord('a`b\nc')).toBe('`a\\u{60}b\\u{A}c`');
    expect(quotedWord('r\u202Em')).toBe('`r\\u{202E}m`');
    expect(quotedWord('a'.repeat(41))).toBe(`\`${'a'.repeat(40)}…\``);
  });
});

describe('codeSpan', () => {
  it('escapes as quotedWord does and never cuts', () => {
    expect(codeSpan('a`b\nc')).toBe('`a\\u{60}b\\u{A}c`');
    expect(codeSpan('a'.repeat(41))).toBe(`\`${'a'.repeat(41)}\``);
  });
});
