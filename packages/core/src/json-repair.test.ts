import { fc, test as property } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { parseUntrustedJson, prototypeKeyIn } from './json';
import { MAX_ARGUMENT_DEPTH, parseModelJson, parseToolArguments, repairJson } from './json-repair';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** How a model might write the same value: every choice below is one the repair has to undo. */
interface Style {
  space: string[];
  singleQuotes: boolean[];
  bareKeys: boolean[];
  pythonLiterals: boolean[];
  trailingCommas: boolean[];
}

const PYTHON = new Map([['true', 'True'], ['false', 'False'], ['null', 'None']]);
const BARE_KEY = /^[A-Za-z_$][\w$-]*$/;

/** Writes `value` as JSON-like text, taking each choice from the style in turn (cycling). */
function write(value: Json, style: Style): string {
  let n = 0;
  const pick = <T>(choices: T[]): T => choices[n++ % choices.length]!;
  const space = () => pick(style.space);
  const string = (text: string) => {
    if (!pick(style.singleQuotes)) return JSON.stringify(text);
    const inner = JSON.stringify(text).slice(1, -1).replaceAll('\\"', '"').replaceAll("'", "\\'");
    return `'${inner}'`;
  };
  const key = (name: string) => (pick(style.bareKeys) && BARE_KEY.test(name) && !PYTHON.has(name) && !['True', 'False', 'None'].includes(name) ? name : string(name));
  const items = (open: string, parts: string[], close: string) => {
    const comma = parts.length > 0 && pick(style.trailingCommas) ? `,${space()}` : '';
    return `${open}${space()}${parts.join(`,${space()}`)}${comma}${space()}${close}`;
  };
  const go = (v: Json): string => {
    if (v === null || typeof v === 'boolean') return pick(style.pythonLiterals) ? PYTHON.get(String(v))! : String(v);
    if (typeof v === 'number') return JSON.stringify(v);
    if (typeof v === 'string') return string(v);
    if (Array.isArray(v)) return items('[', v.map(go), ']');
    return items('{', Object.entries(v).map(([k, item]) => `${key(k)}${space()}:${space()}${go(item)}`), '}');
  };
  return go(value);
}

const style: fc.Arbitrary<Style> = fc.record({
  space: fc.array(fc.stringMatching(/^[ \n\t\r]{0,3}$/), { minLength: 1, maxLength: 8 }),
  singleQuotes: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
  bareKeys: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
  pythonLiterals: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
  trailingCommas: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
});

const key = fc.oneof(fc.constantFrom('a', 'path', 'is-ok', '$x', '_1', 'True', 'null', "it's", 'say "hi"', 'back\\slash'), fc.string());
/** Without a key that reaches a prototype, which makes the text refused (below). */
const withoutPrototypeKeys = (value: Json) => prototypeKeyIn(JSON.parse(JSON.stringify(value))) === undefined;
const object = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>, { maxKeys: 6 }).filter(withoutPrototypeKeys);

/** The value a strict parse of the plain serialisation gives (numbers as JSON has them, prototype keys dropped). */
const expected = (value: Json) => parseUntrustedJson(JSON.stringify(value));

/** Drops the closing brackets at the very end, as a model cut off mid-answer does. */
function cutClosers(text: string): string {
  let end = text.length;
  while (end > 0 && /[\]}\s]/.test(text[end - 1]!)) end--;
  return text.slice(0, end);
}

describe('parseModelJson, property-based', () => {
  property.prop([object, style])('reads any object however a model writes it', (value, how) => {
    expect(parseModelJson(write(value, how))).toStrictEqual({ ok: true, value: expected(value), repaired: expect.any(Boolean) });
  });

  property.prop([object, style, fc.constantFrom('```', '```json', '```JSON'), fc.stringMatching(/^\s{0,4}$/)])(
    'reads it inside a code fence',
    (value, how, fence, space) => {
      expect(parseModelJson(`${fence}${space}${write(value, how)}${space}\`\`\``)).toStrictEqual({ ok: true, value: expected(value), repaired: expect.any(Boolean) });
    },
  );

  property.prop([fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>, { minKeys: 1, maxKeys: 6 }).filter(withoutPrototypeKeys), style])(
    'closes brackets a model left open at the end',
    (value, how) => {
      expect(parseModelJson(cutClosers(write(value, how)))).toStrictEqual({ ok: true, value: expected(value), repaired: expect.any(Boolean) });
    },
  );

  property.prop([fc.jsonValue() as fc.Arbitrary<Json>])('leaves valid JSON as it is', (value) => {
    const text = JSON.stringify(value);
    expect(JSON.parse(repairJson(text))).toStrictEqual(JSON.parse(text));
  });

  property.prop([fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', "'", '\\', ',', ':', ' ', '`', 'True', 'x', '1', 'u', '\n') })])(
    'answers for any text without throwing',
    (text) => {
      const parsed = parseModelJson(text);
      expect(typeof parsed.ok).toBe('boolean');
    },
  );
});

describe('parseModelJson on hostile input', () => {
  it('reads a fence followed by 5,000 spaces and a letter in one pass', () => {
    // The fence used to be matched by a backtracking pattern that took tens of seconds on this input.
    const parsed = parseModelJson('```' + ' '.repeat(5_000) + 'x');
    expect(parsed.ok).toBe(false);
  });

  it('reads a fenced object after 2 MiB of spaces', () => {
    expect(parseModelJson('```json' + ' '.repeat(2 * 1024 * 1024) + '{"a": [1, 2,],}\n```')).toStrictEqual({ ok: true, value: { a: [1, 2] }, repaired: true });
  });
});

describe('keys that reach a prototype', () => {
  it('make model-written JSON refused, naming the key, at any depth, strict or repaired', () => {
    for (const [text, key] of [
      ['{"command":"echo safe","__proto__":{"command":"echo other"}}', '__proto__'],
      ['{"a":[{"constructor":1}]}', 'constructor'],
      ["{a: {prototype: 1},}", 'prototype'],
    ] as const) {
      expect(parseModelJson(text)).toStrictEqual({ ok: false, error: `it holds a key named "${key}", which is not accepted`, prototypeKey: key });
    }
  });

  it('make tool arguments refused, from text or from an object a model server parsed already', () => {
    const refusal = { ok: false, error: 'the arguments are not accepted (it holds a key named "__proto__", which is not accepted)' };
    expect(parseToolArguments('{"command":"echo safe","__proto__":{"command":"echo other"}}')).toStrictEqual(refusal);
    expect(parseToolArguments(JSON.parse('{"command":"echo safe","x":[{"__proto__":1}]}'))).toStrictEqual(refusal);
    expect(parseToolArguments('{"command":"echo safe"}')).toStrictEqual({ ok: true, value: { command: 'echo safe' } });
  });
});

describe('tool arguments nested deep', () => {
  const nested = (levels: number) => {
    let value: unknown = 1;
    for (let level = 1; level < levels; level++) value = level % 2 === 0 ? [value] : { next: value };
    return { root: value };
  };

  it('are refused past the bound, from text or from an object, without running out of stack', () => {
    const refusal = { ok: false, error: `the arguments are nested deeper than ${MAX_ARGUMENT_DEPTH} levels` };
    expect(parseToolArguments(nested(MAX_ARGUMENT_DEPTH + 1))).toStrictEqual(refusal);
    expect(parseToolArguments(`{"root":${'['.repeat(100_000)}1${']'.repeat(100_000)}}`)).toStrictEqual(refusal);
    expect(parseToolArguments(`{"root":${'[{"a":'.repeat(50_000)}`)).toStrictEqual(refusal);
    expect(parseToolArguments(`{"text":"${'['.repeat(5_000)}"}`)).toStrictEqual({ ok: true, value: { text: '['.repeat(5_000) } });
    expect(parseToolArguments(nested(MAX_ARGUMENT_DEPTH)).ok).toBe(true);
  });
});
