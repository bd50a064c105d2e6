const NAMED_ENTITIES = new Map<string, string>([
  ['amp', '&'], ['lt', '<'], ['gt', '>'], ['quot', '"'], ['apos', "'"], ['nbsp', '\u00a0'], ['copy', '©'], ['reg', '®'],
  ['trade', '™'], ['hellip', '…'], ['mdash', '—'], ['ndash', '–'], ['lsquo', '‘'], ['rsquo', '’'], ['sbquo', '‚'],
  ['ldquo', '“'], ['rdquo', '”'], ['bdquo', '„'], ['laquo', '«'], ['raquo', '»'], ['lsaquo', '‹'], ['rsaquo', '›'],
  ['bull', '•'], ['middot', '·'], ['deg', '°'], ['plusmn', '±'], ['times', '×'], ['divide', '÷'], ['micro', 'µ'],
  ['para', '¶'], ['sect', '§'], ['euro', '€'], ['pound', '£'], ['yen', '¥'], ['cent', '¢'], ['frac12', '½'],
  ['frac14', '¼'], ['frac34', '¾'], ['sup2', '²'], ['sup3', '³'], ['larr', '←'], ['rarr', '→'], ['uarr', '↑'],
  ['darr', '↓'], ['harr', '↔'], ['le', '≤'], ['ge', '≥'], ['ne', '≠'], ['asymp', '≈'], ['infin', '∞'], ['minus', '−'],
  ['prime', '′'], ['Prime', '″'], ['shy', '\u00ad'], ['zwj', '\u200d'], ['zwnj', '\u200c'], ['ensp', '\u2002'],
  ['emsp', '\u2003'], ['thinsp', '\u2009'], ['iexcl', '¡'], ['iquest', '¿'], ['check', '✓'], ['hearts', '♥'],
]);
/** Entities that old pages write without the semicolon. */
const LEGACY_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'nbsp', 'copy', 'reg']);
/** A name is a letter then up to 31 letters or digits; a number up to 8 decimal or 7 hexadecimal digits. */
const MAX_NAME_LENGTH = 32;
const MAX_DECIMAL_DIGITS = 8;
const MAX_HEX_DIGITS = 7;

const HASH = 0x23;
const SEMICOLON = 0x3b;

/** A character reference read: what it stands for, and where the text after it starts. */
export interface Entity {
  value: string;
  end: number;
}

/**
 * The character reference at `at` (an '&'), or undefined when there is none to decode there. Named ones are decoded
 * from a common set (a few old ones also without their ';'); every numeric one is, an invalid code point as U+FFFD.
 * Reads at most 34 characters.
 */
export function entityAt(text: string, at: number): Entity | undefined {
  const start = at + 1;
  const first = text.charCodeAt(start);
  if (first === HASH) {
    const hex = (text.charCodeAt(start + 1) | 0x20) === 0x78;
    const digitsStart = hex ? start + 2 : start + 1;
    const end = Math.min(text.length, digitsStart + (hex ? MAX_HEX_DIGITS : MAX_DECIMAL_DIGITS));
    let code = 0;
    let index = digitsStart;
    for (; index < end; index++) {
      const digit = digitValue(text.charCodeAt(index), hex);
      if (digit < 0) break;
      code = code * (hex ? 16 : 10) + digit;
    }
    if (index === digitsStart) return undefined;
    if (text.charCodeAt(index) === SEMICOLON) index++;
    const valid = code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
    return { value: valid ? String.fromCodePoint(code) : '\uFFFD', end: index };
  }
  if (!isAsciiLetter(first)) return undefined;
  const end = Math.min(text.length, start + MAX_NAME_LENGTH);
  let index = start + 1;
  while (index < end && (isAsciiLetter(text.charCodeAt(index)) || isAsciiDigit(text.charCodeAt(index)))) index++;
  if (index - start < 2) return undefined;
  const name = text.slice(start, index);
  const semicolon = text.charCodeAt(index) === SEMICOLON;
  const value = NAMED_ENTITIES.get(name);
  if (value === undefined || (!semicolon && !LEGACY_ENTITIES.has(name))) return undefined;
  return { value, end: semicolon ? index + 1 : index };
}

/** Decodes HTML character references: named ones from a common set, and every numeric one. */
export function decodeEntities(text: string): string {
  const parts: string[] = [];
  let copied = 0;
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) {
    const entity = entityAt(text, at);
    if (entity === undefined) continue;
    parts.push(text.slice(copied, at), entity.value);
    copied = entity.end;
    at = entity.end - 1;
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(copied));
  return parts.join('');
}

function digitValue(code: number, hex: boolean): number {
  if (isAsciiDigit(code)) return code - 0x30;
  if (!hex) return -1;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function isAsciiLetter(code: number): boolean {
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x7a;
}

function isAsciiDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}
