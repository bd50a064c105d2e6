import { describe, expect, it } from 'vitest';
import { argumentsFromFields, argumentsFromJson, checkArguments, fieldValues, formFields, isSameCall, type JsonSchema } from './argument-form';

const schema: JsonSchema = {
  type: 'object',
  properties: {
    command: { type: 'string', description: 'The shell command to run.' },
    cwd: { type: 'string' },
    timeout: { type: 'integer', minimum: 1 },
    ratio: { type: 'number' },
    verbose: { type: 'boolean' },
    mode: { enum: ['fast', 'safe'] },
    env: { type: 'object', additionalProperties: { type: 'string' } },
  },
  required: ['command'],
  additionalProperties: false,
};

describe('formFields', () => {
  it('makes one field per property, in the schema order, of the kind its type asks for', () => {
    const fields = formFields(schema, { command: 'ls', extra: [1] });
    expect(fields?.map((field) => [field.name, field.kind, field.required])).toStrictEqual([
      ['command', 'multiline', true],
      ['cwd', 'text', false],
      ['timeout', 'integer', false],
      ['ratio', 'number', false],
      ['verbose', 'boolean', false],
      ['mode', 'choice', false],
      ['env', 'json', false],
      ['extra', 'json', false],
    ]);
    expect(fields?.[0]?.description).toBe('The shell command to run.');
    expect(fields?.[5]?.options).toStrictEqual(['fast', 'safe']);
  });

  it('gives a long or multi-line string a text area, and none for a schema that is not an object with properties', () => {
    expect(formFields(schema, { command: 'ls', cwd: 'a\nb' })?.[1]?.kind).toBe('multiline');
    expect(formFields({ type: 'array' }, {})).toBeNull();
    expect(formFields(undefined, {})).toBeNull();
    expect(formFields({ type: 'object' }, {})).toBeNull();
  });
});

describe('fieldValues and argumentsFromFields', () => {
  it('read back the very arguments they were filled from, leaving absent optional ones absent', () => {
    const args = { command: 'ls -la', timeout: 30, verbose: true, mode: 'safe', env: { A: '1' } };
    const fields = formFields(schema, args)!;
    const read = argumentsFromFields(fields, fieldValues(fields, args), args);
    expect(read.errors).toStrictEqual(new Map());
    expect(read.args).toStrictEqual(args);
    expect(isSameCall(read.args, args)).toBe(true);
  });

  it('takes what the person typed, and says which input cannot be read', () => {
    const args = { command: 'ls', timeout: 30 };
    const fields = formFields(schema, args)!;
    const values = fieldValues(fields, args);
    values.set('command', 'ls build');
    values.set('ratio', '0.5');
    values.set('verbose', true);
    values.set('mode', '0');
    expect(argumentsFromFields(fields, values, args)).toStrictEqual({
      args: { command: 'ls build', timeout: 30, ratio: 0.5, verbose: true, mode: 'fast' },
      errors: new Map(),
    });
    values.set('timeout', '2.5');
    values.set('env', '{ nope');
    const read = argumentsFromFields(fields, values, args);
    expect(read.errors.get('timeout')).toBe('Enter a whole number.');
    expect(read.errors.get('env')).toMatch(/^Not valid JSON: /);
    values.set('timeout', '');
    expect(argumentsFromFields(fields, values, args).errors.get('timeout')).toBe('Enter a number.');
  });

  it('keeps a field named like a prototype key as a plain argument', () => {
    const fields = formFields({ type: 'object', properties: { ['__proto__']: { type: 'string' } } }, {})!;
    const read = argumentsFromFields(fields, new Map([['__proto__', 'x']]), {});
    expect(Object.hasOwn(read.args, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(read.args)).toBe(Object.prototype);
  });
});

describe('argumentsFromJson', () => {
  it('accepts one JSON object only', () => {
    expect(argumentsFromJson('{"command":"ls"}')).toStrictEqual({ ok: true, args: { command: 'ls' } });
    expect(argumentsFromJson('[1]')).toStrictEqual({ ok: false, error: 'The arguments must be one JSON object: { … }.' });
    expect(argumentsFromJson('{')).toMatchObject({ ok: false, error: expect.stringMatching(/^Not valid JSON: /) });
  });

  it('refuses a number past what JSON can send, at any depth: 1e999 reads as Infinity and is sent as null', () => {
    const refused = { ok: false, error: 'Not valid JSON: a number is too large for JSON (it would be sent as null).' };
    expect(argumentsFromJson('{"limit":1e999}')).toStrictEqual(refused);
    expect(argumentsFromJson('{"a":{"b":[1,-1e400]}}')).toStrictEqual(refused);
    expect(argumentsFromJson('{"limit":1e308,"tiny":1e-400}')).toStrictEqual({ ok: true, args: { limit: 1e308, tiny: 0 } });
  });
});

describe('argumentsFromFields', () => {
  it('refuses a number past what JSON can send in a field of JSON', () => {
    const fields = formFields({ type: 'object', properties: { limit: { description: 'untyped' } } }, {})!;
    const { errors } = argumentsFromFields(fields, new Map([['limit', '1e999']]), {});
    expect(errors.get('limit')).toBe('Not valid JSON: a number is too large for JSON (it would be sent as null).');
  });
});

describe('checkArguments', () => {
  it('names each field that breaks the schema and why', () => {
    expect(checkArguments(schema, { command: 'ls' })).toStrictEqual([]);
    expect(checkArguments(schema, { timeout: 0, mode: 'slow', verbose: 'yes', env: { A: 1 }, other: true })).toStrictEqual([
      { field: 'command', path: '', message: 'Required.' },
      { field: 'timeout', path: '', message: 'Must be at least 1.' },
      { field: 'mode', path: '', message: 'Must be one of: "fast", "safe".' },
      { field: 'verbose', path: '', message: 'Must be true or false.' },
      { field: 'env', path: 'A', message: 'Must be text.' },
      { field: 'other', path: '', message: 'Not an argument of this tool.' },
    ]);
    expect(checkArguments(schema, { command: 5 })).toStrictEqual([{ field: 'command', path: '', message: 'Must be text.' }]);
    expect(checkArguments(undefined, { anything: 1 })).toStrictEqual([]);
  });
});
