import { isPlainObject, nestedDeeperThan, parseUntrustedJson, prototypeKeyIn, textNestedDeeperThan } from './json';

/**
 * Rewrites the JSON-like text models write into JSON: single-quoted strings, trailing commas,
 * bare keys, Python literals (True/False/None) and missing closing brackets. Valid JSON is unchanged.
 */
export function repairJson(text: string): string {
  // Pieces, not one growing string: dropping a trailing comma must not flatten everything written so far.
  const out: string[] = [];
  const closers: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'") {
      const { value, end } = readString(text, i, ch);
      out.push(JSON.stringify(value));
      i = end;
      continue;
    }
    if (ch === '{' || ch === '[') {
      closers.push(ch === '{' ? '}' : ']');
      out.push(ch);
      i++;
      continue;
    }
    if (ch === '}' || ch === ']') {
      dropTrailingComma(out);
      if (closers.length > 0 && closers[closers.length - 1] === ch) closers.pop();
      out.push(ch);
      i++;
      continue;
    }
    if (/[A-Za-z_$]/.test(ch)) {
      let j = i;
      while (j < n && /[\w$-]/.test(text[j]!)) j++;
      const word = text.slice(i, j);
      const literal = PY_LITERALS.get(word);
      let k = j;
      while (k < n && /\s/.test(text[k]!)) k++;
      if (text[k] === ':' && literal === undefined) out.push(JSON.stringify(word));
      else out.push(literal ?? word);
      i = j;
      continue;
    }
    out.push(ch);
    i++;
  }
  dropTrailingComma(out);
  while (closers.length > 0) out.push(closers.pop()!);
  return out.join('');
}

/** Removes a comma, and the white space after it, from the end of the pieces written so far. */
function dropTrailingComma(out: string[]): void {
  let end = out.length;
  while (end > 0 && out[end - 1]!.trim() === '') end--;
  if (end > 0 && out[end - 1] === ',') out.splice(end - 1);
}

const PY_LITERALS = new Map([
  ['True', 'true'],
  ['False', 'false'],
  ['None', 'null'],
  ['true', 'true'],
  ['false', 'false'],
  ['null', 'null'],
]);

function readString(text: string, start: number, quote: string): { value: string; end: number } {
  // Runs between escapes are copied as slices: building the value a character at a time costs a string node per character.
  const pieces: string[] = [];
  let runStart = start + 1;
  let i = runStart;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === quote) {
      pieces.push(text.slice(runStart, i));
      return { value: pieces.join(''), end: i + 1 };
    }
    if (ch !== '\\' || i + 1 >= text.length) {
      i++;
      continue;
    }
    pieces.push(text.slice(runStart, i));
    const next = text[i + 1]!;
    const escaped = ESCAPES.get(next);
    if (escaped !== undefined) {
      pieces.push(escaped);
      i += 2;
    } else if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
      pieces.push(String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16)));
      i += 6;
    } else {
      pieces.push(next);
      i += 2;
    }
    runStart = i;
  }
  pieces.push(text.slice(runStart));
  return { value: pieces.join(''), end: text.length };
}

const ESCAPES = new Map([
  ['n', '\n'],
  ['t', '\t'],
  ['r', '\r'],
  ['b', '\b'],
  ['f', '\f'],
  ['"', '"'],
  ["'", "'"],
  ['\\', '\\'],
  ['/', '/'],
]);

/** `prototypeKey`: the text is JSON, refused for holding that key. */
export type JsonParseResult = { ok: true; value: unknown; repaired: boolean } | { ok: false; error: string; prototypeKey?: string };

/**
 * Parses model-written JSON, repairing it when strict parsing fails. A key that could reach an object's prototype
 * (`__proto__`, `constructor`, `prototype`) makes it refused, named: dropped, it would be neither shown nor sent, and
 * the call would run with something other than what the model wrote.
 */
export function parseModelJson(text: string): JsonParseResult {
  const trimmed = stripFences(text.trim());
  if (trimmed === '') return { ok: false, error: 'it is empty' };
  const dropped: string[] = [];
  let result: JsonParseResult;
  try {
    result = { ok: true, value: parseUntrustedJson(trimmed, dropped), repaired: false };
  } catch (strictError) {
    try {
      result = { ok: true, value: parseUntrustedJson(repairJson(trimmed), dropped), repaired: true };
    } catch {
      return { ok: false, error: strictError instanceof Error ? strictError.message : 'it is not valid JSON' };
    }
  }
  return dropped.length > 0 ? { ok: false, error: prototypeKeyError(dropped[0]!), prototypeKey: dropped[0]! } : result;
}

function prototypeKeyError(key: string): string {
  return `it holds a key named "${key}", which is not accepted`;
}

const FENCE = '```';

/** The inside of a ```json … ``` fence around the whole text, trimmed; the text itself when it has none. */
function stripFences(text: string): string {
  if (text.length < 2 * FENCE.length || !text.startsWith(FENCE) || !text.endsWith(FENCE)) return text;
  const inside = text.slice(FENCE.length, text.length - FENCE.length);
  return (inside.slice(0, 4).toLowerCase() === 'json' ? inside.slice(4) : inside).trim();
}

/** How deep a call's arguments may nest arrays and objects: far past any tool's, well within what reads them. */
export const MAX_ARGUMENT_DEPTH = 512;

function tooDeep(): string {
  return `the arguments are nested deeper than ${MAX_ARGUMENT_DEPTH} levels`;
}

export type ArgumentsParseResult = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** Tool arguments as an object, from an object, a JSON string, or a JSON string inside a JSON string. */
export function parseToolArguments(raw: unknown): ArgumentsParseResult {
  let value = raw;
  for (let depth = 0; depth < 2 && typeof value === 'string'; depth++) {
    if (value.trim() === '') return { ok: true, value: {} };
    if (textNestedDeeperThan(value, MAX_ARGUMENT_DEPTH)) return { ok: false, error: tooDeep() };
    const parsed = parseModelJson(value);
    if (!parsed.ok) return { ok: false, error: parsed.prototypeKey === undefined ? `the arguments are not valid JSON (${parsed.error})` : `the arguments are not accepted (${parsed.error})` };
    value = parsed.value;
  }
  if (value === undefined || value === null) return { ok: true, value: {} };
  if (!isPlainObject(value)) return { ok: false, error: 'the arguments must be a JSON object' };
  // What reads arguments after this (the key check below, the canonical form, a tool's schema, the card) walks them
  // by recursion: a call nested some thousands deep ended the whole run with "Maximum call stack size exceeded".
  if (nestedDeeperThan(value, MAX_ARGUMENT_DEPTH)) return { ok: false, error: tooDeep() };
  // Arguments a model server sent already parsed keep such a key as their own.
  const key = prototypeKeyIn(value);
  if (key !== undefined) return { ok: false, error: `the arguments are not accepted (${prototypeKeyError(key)})` };
  return { ok: true, value };
}
