import { grantsNeedExactArguments } from '@airlock/core';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { argumentsSchema, checkableSchema, flattenToolResult, inputSchemaProblem, MAX_TOOL_NAME_LENGTH, mcpTool, mcpToolName, mcpToolOtherNames } from './mcp-tool';

describe('mcpToolName', () => {
  test('prefixes the server name and keeps a clean tool name as it is', () => {
    expect(mcpToolName('files', 'read_text_file')).toBe('files__read_text_file');
    expect(mcpToolName('everything', 'get-sum')).toBe('everything__get-sum');
  });

  test('replaces characters a model rejects and adds a hash, so names that clean up alike stay apart', () => {
    const dotted = mcpToolName('s', 'files.read');
    const spaced = mcpToolName('s', 'files read');
    expect(dotted).toMatch(/^s__files_read_[0-9a-f]{8}$/);
    expect(spaced).toMatch(/^s__files_read_[0-9a-f]{8}$/);
    expect(dotted).not.toBe(spaced);
    expect(mcpToolName('s', 'files.read')).toBe(dotted);
  });

  test('shortens long names to 64 characters, keeping them distinct and stable', () => {
    const a = mcpToolName('a-server-name-of-thirty-two-char', `${'x'.repeat(60)}_a`);
    const b = mcpToolName('a-server-name-of-thirty-two-char', `${'x'.repeat(60)}_b`);
    expect(a).toHaveLength(MAX_TOOL_NAME_LENGTH);
    expect(a).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(a.startsWith('a-server-name-of-thirty-two-char__xxx')).toBe(true);
  });

  test("adds a hash of the server and the tool to a name that would read as another configured server's", () => {
    const servers = ['a', 'a__b', 'ab'];
    const ofA = mcpToolName('a', 'b__c', servers);
    const ofAB = mcpToolName('a__b', 'c', servers);
    expect(ofA).toMatch(/^a__b__c_[0-9a-f]{8}$/);
    expect(ofAB).toMatch(/^a__b__c_[0-9a-f]{8}$/);
    expect(ofA).not.toBe(ofAB);
    // The same whichever servers are up: it depends on the configured names only.
    expect(mcpToolName('a', 'b__c', servers)).toBe(ofA);
    expect(mcpToolName('a', 'x', servers)).toBe('a__x');
    expect(mcpToolName('ab', 'c', servers)).toBe('ab__c');
  });

  test('gives the other names a tool has with other servers configured: plain and hashed, each the one the other configuration gives', () => {
    const both = ['a', 'a__b'];
    expect(mcpToolOtherNames('a', 'b__c', both)).toStrictEqual(['a__b__c']);
    expect(mcpToolOtherNames('a', 'b__c', ['a'])).toStrictEqual([mcpToolName('a', 'b__c', both)]);
    // Hashed for its characters alone, it has another hash with a server whose name begins its own.
    const dotted = mcpToolOtherNames('a', 'b__c.d', ['a']);
    expect(dotted).toStrictEqual([mcpToolName('a', 'b__c.d', both)]);
    expect(mcpToolOtherNames('a', 'b__c.d', both)).toStrictEqual([mcpToolName('a', 'b__c.d')]);
  });
});

describe('argumentsSchema', () => {
  test('leaves the server’s regular expressions out: a pattern that backtracks runs nowhere here, and a property named pattern stays', () => {
    const schema = argumentsSchema({
      type: 'object',
      properties: {
        text: { type: 'string', pattern: '^(a+)+$' },
        pattern: { type: 'string', minLength: 2 },
        nested: { type: 'object', patternProperties: { '^(x+)+$': { type: 'number' } }, properties: { deep: { type: 'string', pattern: '^(b+)+$' } } },
      },
      required: ['text', 'pattern'],
    });
    // Each of these would take minutes with the patterns in force.
    expect(schema.safeParse({ text: `${'a'.repeat(40)}!`, pattern: 'ok', nested: { deep: `${'b'.repeat(40)}!`, [`${'x'.repeat(40)}!`]: 'not a number' } }).success).toBe(true);
    expect(schema.safeParse({ text: 'x', pattern: 'o' }).success).toBe(false);
    expect(schema.safeParse({ pattern: 'ok' }).success).toBe(false);
  });

  test('validates with the converted JSON Schema', () => {
    const schema = argumentsSchema({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] });
    expect(schema.safeParse({ path: '/tmp/a' }).success).toBe(true);
    expect(schema.safeParse({ path: 3 }).success).toBe(false);
    expect(schema.safeParse({}).success).toBe(false);
  });

  test('refuses every call of a schema whose references multiply the paths a check could try, and checks a recursive one as deep as the value goes', () => {
    // Each definition refers twice to the next: 40 deep, a check of a value that fails at the bottom would try 2^40 paths.
    const $defs: Record<string, unknown> = { d40: { type: 'string' } };
    for (let level = 39; level >= 0; level--) $defs[`d${level}`] = { anyOf: [{ $ref: `#/$defs/d${level + 1}` }, { $ref: `#/$defs/d${level + 1}` }] };
    const chained = { type: 'object', properties: { x: { $ref: '#/$defs/d0' } }, $defs };
    expect(inputSchemaProblem(chained)).toBe('its input schema is too large once its references are followed');
    expect(argumentsSchema(chained).safeParse({ x: 'a' }).success).toBe(false);
    const recursive = argumentsSchema({ type: 'object', properties: { tree: { $ref: '#/$defs/node' } }, $defs: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } } } } });
    expect(recursive.safeParse({ tree: 'not a node' }).success).toBe(false);
    expect(recursive.safeParse({ tree: { children: [{ children: [{ children: 'not a list' }] }] } }).success).toBe(false);
    expect(recursive.safeParse({ tree: { children: [{ children: [{ children: [] }] }] } }).success).toBe(true);
  });

  test('still checks a schema whose references stay small', () => {
    const schema = argumentsSchema({ type: 'object', properties: { a: { $ref: '#/$defs/path' }, b: { $ref: '#/$defs/path' } }, required: ['a'], $defs: { path: { type: 'string' } } });
    expect(schema.safeParse({ a: '/tmp/x', b: '/tmp/y' }).success).toBe(true);
    expect(schema.safeParse({ a: 3 }).success).toBe(false);
  });

  test('applies a union branch without a type to the object, as JSON Schema does: exactly one for oneOf, one or more for anyOf', () => {
    const branches = [
      { properties: { kind: { const: 'a' } }, required: ['kind', 'x'] },
      { properties: { kind: { const: 'b' } }, required: ['kind', 'y'] },
    ];
    for (const union of ['oneOf', 'anyOf']) {
      const schema = argumentsSchema({ type: 'object', [union]: branches });
      expect(schema.safeParse({ kind: 'a', x: 1 })).toStrictEqual({ success: true, data: { kind: 'a', x: 1 } });
      expect(schema.safeParse({ kind: 'b', y: 1 }).success).toBe(true);
      expect([{ kind: 'c' }, { kind: 'a' }, { kind: 'a', y: 1 }, {}].map((args) => schema.safeParse(args).success)).toStrictEqual([false, false, false, false]);
    }
    // Both branches accept any string: oneOf refuses it, as JSON Schema does.
    const strings = argumentsSchema({ type: 'object', properties: { v: { oneOf: [{ type: 'string' }, { minProperties: 1 }] } } });
    expect([{ v: 's' }, { v: {} }, { v: { a: 1 } }, { v: 3 }].map((args) => strings.safeParse(args).success)).toStrictEqual([false, false, true, true]);
  });

  test('applies the keywords of a schema without a type to the values of their type only', () => {
    const schema = argumentsSchema({ type: 'object', properties: { v: { minLength: 2, minimum: 5, required: ['q'], items: { type: 'string' } } } });
    const results = [{ v: 'a' }, { v: 'ab' }, { v: 4 }, { v: 5 }, { v: {} }, { v: { q: null } }, { v: [1] }, { v: ['x'] }, { v: null }, { v: true }];
    expect(results.map((args) => schema.safeParse(args).success)).toStrictEqual([false, true, false, true, false, true, false, true, true, true]);
  });

  test('requires a required name with no entry in properties, or one that refuses nothing, even one an empty object inherits', () => {
    const schema = argumentsSchema({ type: 'object', properties: { note: { description: 'anything' } }, required: ['path', 'note', 'constructor'] });
    expect(schema.safeParse({ path: 1, note: null, constructor: 'c' }).success).toBe(true);
    expect([{ note: 1, constructor: 'c' }, { path: 1, constructor: 'c' }, { path: 1, note: 1 }].map((args) => schema.safeParse(args).success)).toStrictEqual([false, false, false]);
  });

  test('checks a required name missing from properties as additionalProperties says, and lets through a name a left-out pattern covers', () => {
    const closed = argumentsSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['x'], additionalProperties: false });
    expect([{ x: 1 }, {}, { a: 's' }].map((args) => closed.safeParse(args).success)).toStrictEqual([false, false, false]);
    const typed = argumentsSchema({ type: 'object', required: ['x'], additionalProperties: { type: 'number' } });
    expect([{ x: 1 }, { x: 's' }, {}].map((args) => typed.safeParse(args).success)).toStrictEqual([true, false, false]);
    const patterned = argumentsSchema({ type: 'object', properties: { a: { type: 'string' } }, patternProperties: { '^x_': { type: 'number' } }, additionalProperties: false });
    expect(patterned.safeParse({ a: 's', x_1: 1 })).toStrictEqual({ success: true, data: { a: 's', x_1: 1 } });
  });

  test('reads default as an annotation: a required property with one is still required, and nothing is filled in', () => {
    const schema = argumentsSchema({ type: 'object', properties: { env: { type: 'string', default: 'production' }, dry: { type: 'boolean', default: false } }, required: ['env'] });
    expect(schema.safeParse({}).success).toBe(false);
    expect(schema.safeParse({ env: 'staging' })).toStrictEqual({ success: true, data: { env: 'staging' } });
  });

  test('matches a const or enum object or array by value, and checks the keywords beside a const, an enum or a $ref', () => {
    const schema = argumentsSchema({
      type: 'object',
      properties: {
        point: { const: { x: 1, tags: ['a'] } },
        pair: { enum: [[1, 2], 'none'] },
        mode: { type: 'string', enum: ['fast', 1] },
        name: { enum: ['a', 'bb'], minLength: 2 },
        target: { $ref: '#/$defs/Target', required: ['id'] },
      },
      $defs: { Target: { type: 'object', properties: { id: { type: 'integer' } } } },
    });
    const ok = (args: Record<string, unknown>) => schema.safeParse(args).success;
    expect([{ point: { x: 1, tags: ['a'] } }, { pair: [1, 2] }, { pair: 'none' }, { mode: 'fast' }, { name: 'bb' }, { target: { id: 3 } }].map(ok)).toStrictEqual([true, true, true, true, true, true]);
    const refused = [{ point: { x: 1, tags: ['a'], y: 2 } }, { point: { x: 1, tags: [] } }, { pair: [1, 2, 3] }, { mode: 1 }, { name: 'a' }, { target: {} }, { target: { id: 'x' } }];
    expect(refused.map(ok)).toStrictEqual(refused.map(() => false));
  });

  test('reads format as an annotation: neither a uri-reference nor a uri is checked', () => {
    const schema = argumentsSchema({ type: 'object', properties: { link: { type: 'string', format: 'uri-reference' }, site: { type: 'string', format: 'uri' } } });
    expect(schema.safeParse({ link: '../a.md#top' }).success).toBe(true);
    expect(schema.safeParse({ site: 'not a uri' }).success).toBe(true);
    expect(schema.safeParse({ site: 3 }).success).toBe(false);
  });

  test('keeps nothing of a schema in zod’s global registry, whose ids it holds for good', () => {
    // zod's converter records a node's `id` in the registry it is given, by default the global one, in a Map: a server
    // listing its tools again and again with new ids would have grown it without end.
    const ids = (z.globalRegistry as unknown as { _idmap: Map<unknown, unknown> })._idmap;
    const schema = argumentsSchema({ type: 'object', properties: { a: { id: 'registry-probe', type: 'integer' } } });
    expect(schema.safeParse({ a: 'x' }).success).toBe(false);
    expect(ids.has('registry-probe')).toBe(false);
  });

  test('refuses every call, saying why, when the schema refers to another document', () => {
    const schema = argumentsSchema({ type: 'object', properties: { x: { $ref: 'https://schemas.example.test/x.json' } } });
    const checked = schema.safeParse({ x: 1, y: 'anything' });
    expect(checked.success).toBe(false);
    expect(checked.error?.issues[0]?.message).toBe('this tool cannot be called: its input schema refers to "https://schemas.example.test/x.json", which is not in it');
  });
});

describe('checkableSchema', () => {
  // Found in review: each listing of a server's tools parses their schemas into new objects, and each was converted
  // again, the same or not: ~150 ms for one of 50 KB.
  test('converts a schema parsed again from the same JSON once, and one whose JSON differs anew', () => {
    const text = JSON.stringify({ type: 'object', properties: { path: { type: 'string', minLength: 1 } }, required: ['path'] });
    const [first, again, other] = [text, text, text.replace('"minLength":1', '"minLength":2')].map((json) => JSON.parse(json) as unknown);
    const checked = checkableSchema(first);
    expect(checkableSchema(again)).toBe(checked);
    expect(checkableSchema(other)).not.toBe(checked);
    expect(checked?.safeParse({ path: 'a' }).success).toBe(true);
    expect(checkableSchema(other)?.safeParse({ path: 'a' }).success).toBe(false);
  });

  test('converts a schema object that holds itself, which has no JSON, once', () => {
    const schema: Record<string, unknown> = { type: 'object' };
    schema.properties = { self: schema };
    expect(checkableSchema(schema)).toBe(checkableSchema(schema));
  });
});

describe('mcpTool', () => {
  test('passes description and schema through and maps annotations as hints', () => {
    const inputSchema = { type: 'object' as const, properties: { q: { type: 'string' } }, $schema: 'http://json-schema.org/draft-07/schema#' };
    const tool = mcpTool({
      server: 'web',
      definition: { name: 'search', description: 'Searches.', inputSchema, annotations: { readOnlyHint: true, openWorldHint: true } },
      call: () => Promise.resolve({ content: '' }),
    });
    expect({ name: tool.name, description: tool.description, jsonSchema: tool.jsonSchema, annotations: tool.annotations, source: tool.source }).toStrictEqual({
      name: 'web__search',
      description: 'Searches.',
      jsonSchema: inputSchema,
      annotations: { exactGrants: true, readOnly: true, openWorld: true },
      source: 'mcp:web',
    });
  });

  test('grants cover only exact arguments whatever the hints say, and a hint never widens that', () => {
    const tool = mcpTool({ server: 's', definition: { name: 't', inputSchema: { type: 'object' } }, call: () => Promise.resolve({ content: '' }) });
    expect(tool.annotations).toStrictEqual({ exactGrants: true });
    expect(grantsNeedExactArguments(tool)).toBe(true);
    const readOnly = mcpTool({ server: 's', definition: { name: 'r', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }, call: () => Promise.resolve({ content: '' }) });
    expect(grantsNeedExactArguments(readOnly)).toBe(true);
    expect(tool.description).toBe('');
  });
});

describe('flattenToolResult', () => {
  test('summarises audio and resource links, and falls back to structured content', () => {
    expect(
      flattenToolResult({
        content: [
          { type: 'audio', data: Buffer.from('1234567').toString('base64'), mimeType: 'audio/wav' },
          { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
        ],
      }),
    ).toStrictEqual({ content: '[audio: audio/wav, 7 bytes]\n[resource link: file:///a.txt (a.txt)]' });
    expect(flattenToolResult({ content: [], structuredContent: { sum: 3 } })).toStrictEqual({ content: '{"sum":3}' });
    expect(flattenToolResult({ content: [{ type: 'text', text: 'nope' }], isError: true })).toStrictEqual({ content: 'nope', isError: true });
  });
});
