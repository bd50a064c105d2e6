import { describe, expect, test } from 'vitest';
import { argumentsSchema } from './mcp-tool';

/** Whether each of `values` passes the check Airlock makes with `schema`. */
function passes(schema: Record<string, unknown>, values: readonly unknown[]): boolean[] {
  const check = argumentsSchema({ type: 'object', ...schema });
  return values.map((value) => check.safeParse(value).success);
}

describe('a keyword zod cannot express', () => {
  const unsupported = {
    not: { not: { const: 'x' } },
    'if/then/else': { if: { type: 'string' }, then: { minLength: 1 }, else: { type: 'number' } },
    dependentRequired: { dependentRequired: { a: ['b'] } },
    dependentSchemas: { dependentSchemas: { a: { required: ['b'] } } },
    unevaluatedProperties: { type: 'object', properties: { a: {} }, unevaluatedProperties: false },
    unevaluatedItems: { type: 'array', prefixItems: [{}], unevaluatedItems: false },
  };

  test.each(Object.entries(unsupported))('(%s) at one property leaves the others checked', (_name, keyword) => {
    const schema = { properties: { n: { type: 'integer' }, m: keyword }, required: ['n'], additionalProperties: false };
    expect(passes(schema, [{ n: 'oops', extra: 1 }, { n: 'oops' }, { n: 1, extra: 1 }, {}, { n: 1 }])).toStrictEqual([false, false, false, false, true]);
  });

  test('dependentRequired and dependentSchemas are checked as they say, a name every object inherits too', () => {
    const required = { dependentRequired: { a: ['b', 'c'], constructor: ['d'] } };
    expect(passes(required, [{}, { b: 1 }, { a: 1, b: 1, c: 1 }, { a: 1, b: 1 }, { a: 1 }])).toStrictEqual([true, true, true, false, false]);
    const schemas = { properties: { a: { type: 'string' } }, dependentSchemas: { a: { properties: { b: { type: 'integer' } }, required: ['b'] }, toString: { required: ['x'] } } };
    expect(passes(schemas, [{}, { b: 'x' }, { a: 'x', b: 2 }, { a: 'x' }, { a: 'x', b: 'y' }])).toStrictEqual([true, true, true, false, false]);
  });

  test('if/then/else refuses a value that fits neither the then of a value its if takes nor its else', () => {
    const schema = {
      if: { properties: { kind: { const: 'file' } }, required: ['kind'] },
      then: { required: ['path'] },
      else: { required: ['url'] },
    };
    expect(passes(schema, [{ kind: 'file', path: 'a' }, { kind: 'link', url: 'u' }, { url: 'u' }, { kind: 'file' }, { kind: 'link', path: 'a' }, {}])).toStrictEqual([true, true, true, false, false, false]);
    const elseOnly = { if: { required: ['path'] }, else: { required: ['url'] } };
    expect(passes(elseOnly, [{ path: 'a' }, { url: 'u' }, {}])).toStrictEqual([true, true, false]);
  });

  test('not: {} and not: true refuse every value, not: false none', () => {
    expect(passes({ properties: { a: { not: {} }, b: { not: true }, c: { not: false } } }, [{ a: 1 }, { b: 1 }, { c: 1 }, {}])).toStrictEqual([false, false, true, true]);
  });
});

describe('a part checked less than it says', () => {
  test('leaves out the oneOf it is a branch of, which would refuse a value only that branch took', () => {
    // Without its `not`, the first branch takes "x" too; without their patterns, both take "apple".
    const branches = {
      notted: { oneOf: [{ type: 'string', not: { const: 'x' } }, { const: 'x' }] },
      patterned: { oneOf: [{ type: 'string', pattern: '^a' }, { type: 'string', pattern: '^b' }] },
      referred: { oneOf: [{ $ref: '#/$defs/NotX' }, { const: 'x' }] },
      conditional: { oneOf: [{ type: 'object', if: { required: ['a'] }, then: { required: ['b'] }, else: { required: ['c'] } }, { type: 'object', required: ['a'], maxProperties: 1 }] },
    };
    const schema = { properties: { ...branches, n: { type: 'integer' } }, $defs: { NotX: { type: 'string', not: { const: 'x' } } } };
    expect(passes(schema, [{ notted: 'x' }, { patterned: 'apple' }, { referred: 'x' }, { conditional: { a: 1 } }])).toStrictEqual([true, true, true, true]);
    expect(passes(schema, [{ notted: 'x', n: 'oops' }])).toStrictEqual([false]);
  });

  test('leaves out the oneOf whose branch zod reads additionalProperties: false in more loosely', () => {
    // zod lets a name through an intersection when one side knows it: the first branch would take `b`.
    const schema = { properties: { v: { oneOf: [{ type: 'object', properties: { a: {} }, additionalProperties: false, anyOf: [{ properties: { b: {} } }] }, { type: 'object', required: ['b'] }] } } };
    expect(passes(schema, [{ v: { a: 1, b: 1 } }])).toStrictEqual([true]);
  });

  test('leaves out the oneOf whose branch is an allOf with a member zod reads additionalProperties: false in more loosely', () => {
    const branches = [{ allOf: [{ $ref: '#/$defs/OnlyA' }, { properties: { b: {} } }] }, { type: 'object', required: ['b'] }];
    const schema = { properties: { v: { oneOf: branches }, w: { oneOf: [{ $ref: '#/$defs/OnlyA', properties: { b: {} } }, branches[1]] } }, $defs: { OnlyA: { type: 'object', properties: { a: {} }, additionalProperties: false } } };
    expect(passes(schema, [{ v: { a: 1, b: 1 } }, { w: { a: 1, b: 1 } }])).toStrictEqual([true, true]);
  });

  test('keeps a oneOf whose branches are checked as they say', () => {
    const schema = {
      properties: {
        v: { oneOf: [{ type: 'string', minLength: 2 }, { type: 'string', maxLength: 3 }] },
        w: { oneOf: [{ $ref: '#/$defs/OnlyA', description: 'a only' }, { type: 'object', required: ['b'] }] },
      },
      $defs: { OnlyA: { type: 'object', properties: { a: {} }, additionalProperties: false } },
    };
    expect(passes(schema, [{ v: 'a' }, { v: 'abcd' }, { v: 'ab' }, { w: { a: 1 } }, { w: { b: 1 } }, { w: { a: 1, c: 1 } }])).toStrictEqual([true, true, false, true, true, false]);
  });

  test('leaves out a maxContains whose contains is checked less, keeping minContains', () => {
    const schema = { properties: { v: { type: 'array', contains: { type: 'string', pattern: '^a' }, minContains: 1, maxContains: 1 } } };
    expect(passes(schema, [{ v: ['apple', 'banana'] }, { v: [1, 2] }])).toStrictEqual([true, false]);
  });
});
