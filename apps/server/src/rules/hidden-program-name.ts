/** Stands for a brace expression (`{r,x}m`): any text, but not a lone `*` (`/bin/{rm,x}` names `rm`). */
const BRACES = '\uE000';

/**
 * The first of `names` (programs' base names) that `text`, a word or a word of a line inside one, may become as a
 * pattern the shell expands where it runs (`/bin/r[m]`, `/usr/bin/r?`, `{r,x}m`), by the last part of its path; or
 * undefined. A last part that is only `*` (`src/*`, `*`) is not counted: it names whatever the folder holds. Quoted
 * or escaped pattern characters count too, as a line handed on may be read by a shell again. Time in the length of
 * `text` times that of the names.
 */
export function patternNaming(text: string, names: ReadonlySet<string>, separators: RegExp): string | undefined {
  if (names.size === 0 || !/[*?[{]/.test(text)) return undefined;
  for (const token of withoutBraces(text.replace(/["'\\]/g, '')).split(separators)) {
    if (!/[*?[\uE000]/.test(token)) continue;
    const last = lastPathPart(token);
    if (/^\*+$/.test(last)) continue;
    for (const name of names) if (patternMatches(last, name)) return name;
  }
  return undefined;
}

/** Each brace expression, nested or left open, as one `BRACES`. */
function withoutBraces(text: string): string {
  let out = '';
  let depth = 0;
  for (const character of text) {
    if (character === '{') {
      if (depth === 0) out += BRACES;
      depth += 1;
    } else if (character === '}' && depth > 0) depth -= 1;
    else if (depth === 0) out += character;
  }
  return out;
}

/** The part after the last `/` outside a bracket expression. */
function lastPathPart(token: string): string {
  let start = 0;
  let inBracket = false;
  for (let at = 0; at < token.length; at += 1) {
    const character = token[at];
    if (character === '[') inBracket = true;
    else if (character === ']') inBracket = false;
    else if (character === '/' && !inBracket) start = at + 1;
  }
  return token.slice(start);
}

type Piece = { kind: 'any' } | { kind: 'one'; matches: (character: string) => boolean };

/** `pattern` as pieces: `*` and braces any text, `?` and a bracket expression one character, others themselves. */
function pieces(pattern: string): Piece[] {
  const out: Piece[] = [];
  let at = 0;
  while (at < pattern.length) {
    const character = pattern[at]!;
    at += 1;
    if (character === '*' || character === BRACES) out.push({ kind: 'any' });
    else if (character === '?') out.push({ kind: 'one', matches: () => true });
    else if (character === '[') {
      const close = pattern.indexOf(']', at + 1);
      if (close === -1) {
        // An open bracket is a plain character to the shell; taken as any one, to be safe.
        out.push({ kind: 'one', matches: () => true });
        continue;
      }
      out.push({ kind: 'one', matches: bracket(pattern.slice(at, close)) });
      at = close + 1;
    } else out.push({ kind: 'one', matches: (other) => other === character });
  }
  return out;
}

/** What a bracket expression's inside matches: a negated one or one with a class (`[:alpha:]`) any character. */
function bracket(inside: string): (character: string) => boolean {
  if (inside.startsWith('!') || inside.startsWith('^') || inside.includes('[:') || inside.includes('[=') || inside.includes('[.')) return () => true;
  return (character) => {
    for (let at = 0; at < inside.length; at += 1) {
      const low = inside[at]!;
      if (inside[at + 1] === '-' && at + 2 < inside.length) {
        if (character >= low && character <= inside[at + 2]!) return true;
        at += 2;
      } else if (low === character) return true;
    }
    return false;
  };
}

/** Whether `pattern` matches all of `name`: a pass over the name per piece, no backtracking. */
function patternMatches(pattern: string, name: string): boolean {
  // reached[i]: the pieces so far can match the first i characters of the name.
  let reached = Array.from({ length: name.length + 1 }, (_, index) => index === 0);
  for (const piece of pieces(pattern)) {
    const next = Array.from({ length: name.length + 1 }, () => false);
    for (let index = 0; index <= name.length; index += 1) {
      if (piece.kind === 'any') next[index] = reached[index]! || (index > 0 && next[index - 1]!);
      else next[index] = index > 0 && reached[index - 1]! && piece.matches(name[index - 1]!);
    }
    reached = next;
  }
  return reached[name.length]!;
}

/** A backslash escape that printf, `echo -e` or `$'…'` turns into a character: `\x72`, `\u0072`, `\162`, `\0162`. */
const ESCAPE = /\\(?:x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|([0-7]{1,4}))/g;

/**
 * The first escape in `text` that printf, `echo -e` or the shell's `$'…'` turn into a character that can stand in a
 * program's name (`\x72` is `r`), or undefined: a line handed on holding one may run a program no word shows
 * (`printf 'command = \x72m -rf v' | ninja -f /dev/stdin`). Escapes of blanks and control characters (`\033`, `\x1b`,
 * `\0`) are not counted.
 */
export function letterEscape(text: string): string | undefined {
  if (!text.includes('\\')) return undefined;
  for (const found of text.matchAll(ESCAPE)) {
    const [whole, hex, short, long, octal] = found;
    const codes = octal === undefined
      ? [Number.parseInt(hex ?? short ?? long ?? '', 16)]
      // printf reads up to three octal digits; `echo -e` reads `\0` and up to three more.
      : [Number.parseInt(octal.slice(0, 3), 8), ...(octal.startsWith('0') ? [Number.parseInt(octal.slice(1), 8)] : [])];
    if (codes.some((code) => code > 0x20 && code < 0x7f)) return whole;
  }
  return undefined;
}
