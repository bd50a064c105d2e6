import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeEntities, entityAt } from './html-entities';

/** The one-pattern decoder the scanner replaced, kept as the reference it must agree with. */
function referenceDecode(text: string): string {
  const named = new Map([['amp', '&'], ['lt', '<'], ['nbsp', '\u00a0'], ['hellip', '…'], ['copy', '©']]);
  const legacy = new Set(['amp', 'lt', 'nbsp', 'copy']);
  return text.replace(/&(#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,7}|[a-zA-Z][a-zA-Z0-9]{1,31})(;?)/g, (whole, body: string, semicolon: string) => {
    if (body.startsWith('#')) {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
      const valid = code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
      return valid ? String.fromCodePoint(code) : '\uFFFD';
    }
    const decoded = named.get(body);
    if (decoded === undefined || (semicolon === '' && !legacy.has(body))) return whole;
    return decoded;
  });
}

describe('decodeEntities', () => {
  test('decodes numeric references and rejects invalid code points', () => {
    expect(decodeEntities('&#65;&#x42;&#0;&#xD800;&#x110000;')).toBe('AB\uFFFD\uFFFD\uFFFD');
  });

  test('reads references as the pattern did: names and numbers up to their length, old names without ";"', () => {
    const piece = fc.constantFrom(
      '&', '#', 'x', 'X', ';', '0', '9', 'f', 'G', 'a', ' ', '&amp', '&lt', '&nbsp', '&hellip', '&copy', '&#', '&#x', '&#X',
      '123456789', 'abcdef0123', 'amp', 'z'.repeat(31), '\uD83D\uDE00',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const text = pieces.join('');
        expect(decodeEntities(text)).toBe(referenceDecode(text));
      }),
    );
  });

  test('reads at most one reference at a time, where the text after it starts', () => {
    expect(entityAt('&amp;&lt;', 0)).toStrictEqual({ value: '&', end: 5 });
    expect(entityAt('&#x41x', 0)).toStrictEqual({ value: 'A', end: 5 });
    expect(entityAt('&#123456789', 0)).toStrictEqual({ value: '\uFFFD', end: 10 });
    expect(entityAt('&ampx', 0)).toBeUndefined();
    expect(entityAt('&a;', 0)).toBeUndefined();
  });
});
