import { describe, expect, test } from 'vitest';
import { argumentsSchema, inputSchemaProblem } from './mcp-tool';

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

describe('format', () => {
  // As servers write them: pydantic's EmailStr, AnyUrl, datetime, UUID, IPv4Address; a TypeScript server's hostname.
  const schema = {
    properties: {
      email: { type: 'string', format: 'email', title: 'Email' },
      site: { type: 'string', format: 'uri', minLength: 1, maxLength: 2083 },
      at: { type: 'string', format: 'date-time' },
      id: { type: 'string', format: 'uuid' },
      ip: { format: 'ipv4', type: 'string' },
      host: { type: 'string', format: 'hostname' },
    },
  };

  test('is an annotation, as JSON Schema 2020-12 reads it: a value of the type passes and is kept exactly as given', () => {
    const given = [
      { email: 'user@localhost' },
      { email: '"first last"@example.com' },
      { site: 'http://[::1]:8080/x' },
      { site: 'urn:isbn:0451450523' },
      { at: '2016-12-31T23:59:60Z' },
      { at: '2026-12-04t10:00:00z' },
      { at: '2026-12-04T10:00:00.5+05:30' },
      { id: 'not-a-uuid' },
      { ip: '01.2.3.4' },
      { host: 'under_score.example' },
    ];
    const check = argumentsSchema({ type: 'object', ...schema });
    expect(given.map((value) => check.safeParse(value))).toStrictEqual(given.map((data) => ({ success: true, data })));
  });

  test('leaves the keywords beside it checked', () => {
    expect(passes(schema, [{ site: '' }, { email: 5 }, { at: null }])).toStrictEqual([false, false, false]);
  });
});

describe('a required name an object inherits or that reaches a prototype', () => {
  test.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('%s: an object without it is refused', (name) => {
    // As JSON.parse reads the listing: `__proto__` an own key of `properties`.
    const declared = JSON.parse(`{"properties":{"${name}":{"type":"string"}},"required":["${name}"]}`) as Record<string, unknown>;
    const undeclared = JSON.parse(`{"required":["${name}"]}`) as Record<string, unknown>;
    const nested = JSON.parse(`{"properties":{"options":{"type":"object","required":["${name}"]}}}`) as Record<string, unknown>;
    expect(passes(declared, [{}, { other: 'x' }])).toStrictEqual([false, false]);
    expect(passes(undeclared, [{}])).toStrictEqual([false]);
    expect(passes(nested, [{ options: {} }, {}])).toStrictEqual([false, true]);
  });

  test('constructor, toString and hasOwnProperty given pass, and are checked', () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      const declared = JSON.parse(`{"properties":{"${name}":{"type":"string"}},"required":["${name}"]}`) as Record<string, unknown>;
      expect(passes(declared, [JSON.parse(`{"${name}":"x"}`), JSON.parse(`{"${name}":1}`)])).toStrictEqual([true, false]);
    }
  });
});

describe('$ref', () => {
  test('follows a JSON pointer to any part of the schema, as zod-to-json-schema writes a schema met twice', () => {
    const schema = {
      properties: {
        source: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        target: { $ref: '#/properties/source' },
        sizes: { type: 'array', items: { type: 'integer' } },
        size: { $ref: '#/properties/sizes/items' },
      },
    };
    expect(passes(schema, [{ target: { path: 'a' } }, { target: { path: 1 } }, { target: {} }, { size: 2 }, { size: 'x' }])).toStrictEqual([true, false, false, true, false]);
  });

  test('follows #/definitions without a $schema, an anchor, and a ref by the schema’s own $id', () => {
    const definitions = { properties: { a: { $ref: '#/definitions/N' } }, definitions: { N: { type: 'integer' } } };
    expect(passes(definitions, [{ a: 1 }, { a: 'x' }])).toStrictEqual([true, false]);
    const anchored = { properties: { a: { $ref: '#count' } }, $defs: { Count: { $anchor: 'count', type: 'integer', minimum: 0 } } };
    expect(passes(anchored, [{ a: 1 }, { a: -1 }])).toStrictEqual([true, false]);
    const absolute = { $id: 'https://schemas.example.test/tool.json', properties: { a: { $ref: 'https://schemas.example.test/tool.json#/$defs/N' }, b: { $ref: 'tool.json#/$defs/N' } }, $defs: { N: { type: 'integer' } } };
    expect(passes(absolute, [{ a: 1, b: 2 }, { a: 'x' }, { b: 'x' }])).toStrictEqual([true, false, false]);
  });

  test('in a draft-07 schema, ignores the keywords beside a $ref, as draft-07 does', () => {
    const schema = { $schema: 'http://json-schema.org/draft-07/schema#', properties: { a: { $ref: '#/definitions/S', maxLength: 1 } }, definitions: { S: { type: 'string' } } };
    expect(passes(schema, [{ a: 'long' }, { a: 1 }])).toStrictEqual([true, false]);
  });

  test('resolves a $ref inside a subschema with its own $id against that $id', () => {
    const nested = {
      $defs: { x: { type: 'integer' } },
      properties: { a: { $id: 'https://schemas.example.test/a', type: 'object', properties: { v: { $ref: '#/$defs/x' } }, $defs: { x: { type: 'string' } } } },
    };
    expect(passes(nested, [{ a: { v: 's' } }, { a: { v: 2 } }])).toStrictEqual([true, false]);
    const relative = {
      $id: 'https://schemas.example.test/root.json',
      properties: { a: { $ref: 'item.json' }, b: { $ref: 'item.json#/$defs/Tag' } },
      $defs: { item: { $id: 'item.json', type: 'integer', $defs: { Tag: { type: 'string' } } } },
    };
    expect(passes(relative, [{ a: 1, b: 's' }, { a: 'x' }, { b: 1 }])).toStrictEqual([true, false, false]);
  });

  test.each([
    ['a $defs name that is not there', '#/$defs/Missing'],
    ['a JSON pointer to nothing', '#/properties/nothing'],
    ['another document', 'https://schemas.example.test/other.json'],
    ['an anchor that is not there', '#nowhere'],
  ])('to %s: the schema is said to be unusable, and every call refused', (_name, ref) => {
    const schema = { type: 'object', properties: { n: { type: 'integer' }, a: { $ref: ref } }, $defs: {} };
    expect(inputSchemaProblem(schema)).toBe(`its input schema refers to ${JSON.stringify(ref)}, which is not in it`);
    expect(argumentsSchema(schema).safeParse({ n: 1 }).success).toBe(false);
  });

  test('a schema Airlock can check has no problem', () => {
    expect(inputSchemaProblem({ type: 'object', properties: { a: { $ref: '#/$defs/N' } }, $defs: { N: { type: 'integer' } } })).toBeUndefined();
  });
});
