import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { declaredArguments, declaredDefaults, MAX_DECLARED_DEPTH, withDeclaredDefaults } from './declared-arguments';
import { argumentIssues, defineTool, leftOutWithDefault, toolDefaults, withToolDefaults } from './tool';
import { declaredArgumentsSchema, MAX_DECLARED_NAME_LENGTH, MAX_DECLARED_NAMES, type DeclaredArguments } from './events';
import { undeclaredArgumentsNote, uncheckedArgumentsNote, visibleArguments } from './visible-text-arguments';
import { unshownDefaultsNote } from './unshown-defaults-note';

const purge = {
  type: 'object',
  properties: {
    target: { type: 'string' },
    options: { type: 'object', properties: { force: { type: 'boolean' }, limits: { type: 'object', properties: { max: { type: 'number' } } } } },
    tags: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
    env: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

/** An object schema nested `levels` deep under `a`. */
function nested(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'object', properties: { leaf: { type: 'string' } } };
  for (let level = 1; level < levels; level++) schema = { type: 'object', properties: { a: schema } };
  return schema;
}

describe('declaredArguments', () => {
  it('reads the top-level names and, for each object property with names of its own, those', () => {
    expect(declaredArguments(purge)).toStrictEqual({
      names: [
        { name: 'target' },
        { name: 'options', inner: { names: [{ name: 'force' }, { name: 'limits', inner: { names: [{ name: 'max' }] } }] } },
        { name: 'tags' },
        { name: 'env' },
      ],
    });
    expect(declaredArguments({ type: 'object' })).toStrictEqual({ names: [] });
    expect(declaredArguments({ type: 'object', properties: { o: { type: 'object', additionalProperties: false } } })).toStrictEqual({ names: [{ name: 'o', inner: { names: [] } }] });
  });

  it('follows a local reference to the names it points to, at the top level and for an object argument', () => {
    const named = declaredArguments(purge);
    expect(declaredArguments({ $ref: '#/$defs/Args', $defs: { Args: purge } })).toStrictEqual(named);
    expect(declaredArguments({ $ref: '#/definitions/Args', definitions: { Args: { $ref: '#/definitions/Purge' }, Purge: purge } })).toStrictEqual(named);
    const generated = { type: 'object', properties: { options: { $ref: '#/$defs/Options', description: 'how' }, self: { $ref: '#' } }, $defs: { Options: { type: 'object', properties: { force: { type: 'boolean' } } } } };
    expect(declaredArguments(generated)).toMatchObject({ names: [{ name: 'options', inner: { names: [{ name: 'force' }] } }, { name: 'self', inner: { names: [{ name: 'options' }, { name: 'self' }] } }] });
    // As some generators write a property with a description: an allOf of the one reference.
    const wrapped = { type: 'object', properties: { options: { title: 'Options', description: 'how', allOf: [{ $ref: '#/definitions/Options' }] } }, definitions: { Options: { type: 'object', properties: { force: {} } } } };
    expect(declaredArguments(wrapped)).toStrictEqual({ names: [{ name: 'options', inner: { names: [{ name: 'force' }] } }] });
    expect(declaredArguments({ properties: { o: { allOf: [{ $ref: '#/definitions/Options' }], $ref: '#/definitions/Other' } }, definitions: { Options: { properties: { force: {} } }, Other: {} } })).toStrictEqual({
      names: [{ name: 'o', inner: { unknown: 'unreadable' } }],
    });
    expect(declaredArguments({ properties: { o: { allOf: [{ $ref: '#/definitions/Options' }, { properties: { x: {} } }] } }, definitions: { Options: { properties: { force: {} } } } })).toStrictEqual({
      names: [{ name: 'o', inner: { unknown: 'unreadable' } }],
    });
  });

  it('says a level is not known rather than guess: a reference it does not follow, a union whose branches declare names, names by pattern', () => {
    expect(declaredArguments({ $ref: 'https://example.com/args.json' })).toStrictEqual({ unknown: 'unreadable' });
    expect(declaredArguments({ $ref: '#args', $defs: { Args: { $anchor: 'args', ...purge } } })).toStrictEqual({ unknown: 'unreadable' });
    expect(declaredArguments({ $ref: '#/$defs/Args', properties: { other: {} }, $defs: { Args: purge } })).toStrictEqual({ unknown: 'unreadable' });
    expect(declaredArguments({ $ref: '#/$defs/a', $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } } })).toStrictEqual({ unknown: 'unreadable' });
    // A nested $id starts a document of its own, which its references point into.
    expect(declaredArguments({ $ref: '#/$defs/Args', $defs: { Args: { $id: 'args.json', ...purge } } })).toStrictEqual({ unknown: 'unreadable' });
    expect(declaredArguments({ anyOf: [purge, { type: 'object', properties: { other: {} } }] })).toStrictEqual({ unknown: 'unreadable' });
    expect(declaredArguments({ type: 'object', properties: { a: {} }, patternProperties: { '^x-': {} } })).toStrictEqual({ unknown: 'unreadable' });
    expect(declaredArguments({ type: 'object', properties: { options: { $ref: '#/$defs/Options' } } })).toStrictEqual({ names: [{ name: 'options', inner: { unknown: 'unreadable' } }] });
    expect(declaredArguments('not a schema')).toStrictEqual({ unknown: 'unreadable' });
    // A union that only says which names are required declares none.
    expect(declaredArguments({ type: 'object', properties: { a: {}, b: {} }, anyOf: [{ required: ['a'] }, { required: ['b'] }] })).toStrictEqual({ names: [{ name: 'a' }, { name: 'b' }] });
  });

  it('keeps within its bounds whatever the schema declares, and says where it stopped', () => {
    const many = Object.fromEntries(Array.from({ length: MAX_DECLARED_NAMES + 1 }, (_, index) => [`p${index}`, {}]));
    expect(declaredArguments({ type: 'object', properties: many })).toStrictEqual({ unknown: 'too-large' });
    expect(declaredArguments({ type: 'object', properties: { ['x'.repeat(MAX_DECLARED_NAME_LENGTH + 1)]: {}, a: {} } })).toStrictEqual({ unknown: 'too-large' });
    // The budget is shared by every level: a wide nested object does not make the event large.
    const wide = Object.fromEntries(Array.from({ length: MAX_DECLARED_NAMES - 1 }, (_, index) => [`p${index}`, {}]));
    expect(declaredArguments({ type: 'object', properties: { a: { type: 'object', properties: wide }, b: {} } })).toStrictEqual({ names: [{ name: 'a', inner: { unknown: 'too-large' } }, { name: 'b' }] });
    let level: DeclaredArguments | undefined = declaredArguments(nested(MAX_DECLARED_DEPTH + 1));
    for (let depth = 1; depth < MAX_DECLARED_DEPTH; depth++) level = level !== undefined && 'names' in level ? level.names[0]!.inner : undefined;
    expect(level).toStrictEqual({ names: [{ name: 'a', inner: { unknown: 'too-deep' } }] });
    expect(JSON.stringify(declaredArguments({ type: 'object', properties: { ...many, a: nested(50) } })).length).toBeLessThan(100);
  });

  it('what it builds, and nothing larger, passes the event schema', () => {
    expect(declaredArgumentsSchema.safeParse(declaredArguments(purge)).success).toBe(true);
    expect(declaredArgumentsSchema.safeParse({ names: [{ name: 'x'.repeat(MAX_DECLARED_NAME_LENGTH + 1) }] }).success).toBe(false);
    expect(declaredArgumentsSchema.safeParse({ names: Array.from({ length: MAX_DECLARED_NAMES + 1 }, () => ({ name: 'a' })) }).success).toBe(false);
  });
});

describe('visibleArguments against declared names', () => {
  const declared = declaredArguments(purge);

  it('reports a name inside an object argument that its schema does not declare, by its path', () => {
    const shown = visibleArguments('purge', { target: 'backups', options: { force: true, dry_run: true, limits: { max: 1, min: 0 } } }, { declared });
    expect(shown.others.map((argument) => [argument.undeclared, argument.inner])).toStrictEqual([
      [false, []],
      [
        false,
        [
          { path: 'options.dry_run', unchecked: false },
          { path: 'options.limits.min', unchecked: false },
        ],
      ],
    ]);
    expect(shown.undeclaredCount).toBe(2);
    expect(shown.uncheckedCount).toBe(0);
    expect(undeclaredArgumentsNote(shown.undeclaredCount, shown.inner.map((name) => name.path))).toContain('Inside an argument: options.dry_run, options.limits.min.');
  });

  it('does not look into a free-form object, an array or a value that is not an object', () => {
    const shown = visibleArguments('purge', { env: { ANY: 'x' }, tags: [{ other: 1 }], options: 'text' }, { declared });
    expect(shown.undeclaredCount + shown.uncheckedCount).toBe(0);
  });

  it('counts a name at a level not known as could not be checked, never as declared', () => {
    const top = visibleArguments('purge', { target: 'x' }, { declared: { unknown: 'too-large' } });
    expect(top.others[0]).toMatchObject({ undeclared: false, unchecked: true });
    expect(top.uncheckedCount).toBe(1);
    const inner = visibleArguments('purge', { options: { force: true } }, { declared: { names: [{ name: 'options', inner: { unknown: 'unreadable' } }] } });
    expect(inner.inner).toStrictEqual([{ path: 'options.force', unchecked: true }]);
    expect(inner.uncheckedCount).toBe(1);
    expect(uncheckedArgumentsNote(1, ['options.force'])).toContain('could not be checked');
  });

  it('shows a path’s names escaped, cut and quoted as needed, and the tree wins over a schema', () => {
    const shown = visibleArguments('purge', { options: { 'dry run': 1, 'a.b': 2, ['x'.repeat(100)]: 3, constructor: 4 } }, { declared, schema: { type: 'object', properties: { options: {} } } });
    expect(shown.inner.map((name) => name.path)).toStrictEqual(['options.dry\\u{20}run', 'options."a.b"', `options.${'x'.repeat(40)}…`, 'options.constructor']);
  });
});

describe('withDeclaredDefaults', () => {
  const schema = {
    type: 'object',
    properties: {
      dry_run: { type: 'boolean', default: false },
      target: { type: 'object', properties: { force: { type: 'boolean', default: true } } },
      linked: { $ref: '#/$defs/linked' },
      constructor: { type: 'string', default: 'x' },
      plain: { type: 'string' },
    },
    $defs: { linked: { type: 'object', properties: { deep: { default: 1 } } } },
  };

  it('fills the defaults of the names left out, at the top level and inside an object argument given', () => {
    expect(withDeclaredDefaults(schema, { target: {} })).toStrictEqual({ target: { force: true }, dry_run: false });
    expect(withDeclaredDefaults(schema, { dry_run: true, target: { force: false } })).toStrictEqual({ dry_run: true, target: { force: false } });
  });

  it('answers the same object when nothing was left out, and leaves the given values as they are', () => {
    const args = { dry_run: true, plain: 'a' };
    expect(withDeclaredDefaults(schema, args)).toBe(args);
    expect(withDeclaredDefaults({ type: 'object' }, args)).toBe(args);
  });

  it('fills nothing under a name that reaches a prototype', () => {
    expect(Object.hasOwn(withDeclaredDefaults(schema, {}), 'constructor')).toBe(false);
    expect(Object.hasOwn(withDeclaredDefaults({ $ref: '#/$defs/a', $defs: { a: { properties: { constructor: { default: 1 } } } } }, {}), 'constructor')).toBe(false);
  });

  it('fills through local references, in $defs, definitions and the document itself', () => {
    expect(withDeclaredDefaults(schema, { dry_run: true, linked: {} })).toStrictEqual({ dry_run: true, linked: { deep: 1 } });
    const generated = {
      $ref: '#/definitions/Args',
      definitions: {
        Args: { type: 'object', properties: { mode: { $ref: '#/definitions/Mode' }, level: { allOf: [{ $ref: '#/definitions/Level' }], default: 2 } } },
        Mode: { type: 'string', enum: ['fast', 'safe'], default: 'fast' },
        Level: { type: 'integer', default: 1 },
      },
    };
    // A property's own default wins over the one of what it refers to (as generated schemas write it).
    expect(withDeclaredDefaults(generated, {})).toStrictEqual({ mode: 'fast', level: 2 });
    const escaped = { properties: { a: { $ref: '#/$defs/a~1b%20c~0' } }, $defs: { 'a/b c~': { properties: { x: { default: true } } } } };
    expect(withDeclaredDefaults(escaped, { a: {} })).toStrictEqual({ a: { x: true } });
    const tree = { properties: { name: { default: 'leaf' }, child: { $ref: '#' } } };
    expect(withDeclaredDefaults(tree, { child: { child: {} } })).toStrictEqual({ name: 'leaf', child: { name: 'leaf', child: { name: 'leaf' } } });
  });

  it('follows no reference outside the document, and each cycle of references once', () => {
    expect(withDeclaredDefaults({ properties: { a: { default: 1 } }, allOf: [{ $ref: 'https://example.com/args.json' }, { $ref: 'other.json#/x' }, { $ref: '#anchor' }, { $ref: '#/$defs/missing' }] }, {})).toStrictEqual({ a: 1 });
    const cycle = { $ref: '#/$defs/a', $defs: { a: { $ref: '#/$defs/b', properties: { x: { default: 1 } } }, b: { allOf: [{ $ref: '#/$defs/a' }, { $ref: '#' }], properties: { y: { default: 2 } } } } };
    expect(withDeclaredDefaults(cycle, {})).toStrictEqual({ x: 1, y: 2 });
    const selfProperty = { properties: { p: { $ref: '#/properties/p', default: 3 } } };
    expect(withDeclaredDefaults(selfProperty, {})).toStrictEqual({ p: 3 });
  });

  it('fills the defaults of every allOf branch, and none for a name two branches give different defaults', () => {
    const both = { allOf: [{ properties: { a: { default: 1 }, same: { default: 'x' }, split: { default: true } } }, { properties: { b: { default: 2 }, same: { default: 'x' }, split: { default: false } } }] };
    expect(withDeclaredDefaults(both, {})).toStrictEqual({ a: 1, b: 2, same: 'x' });
  });

  it('fills the defaults of the objects in an array argument given, and of no item by position', () => {
    const files = { properties: { files: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, mode: { default: '0644' } } } } } };
    expect(withDeclaredDefaults(files, { files: [{ path: 'a' }, { path: 'b', mode: '0600' }, 'not an object'] })).toStrictEqual({ files: [{ path: 'a', mode: '0644' }, { path: 'b', mode: '0600' }, 'not an object'] });
    const referred = { properties: { files: { $ref: '#/$defs/files' } }, $defs: { files: { type: 'array', items: { $ref: '#/$defs/file' } }, file: { properties: { mode: { default: '0644' } } } } };
    expect(withDeclaredDefaults(referred, { files: [{}] })).toStrictEqual({ files: [{ mode: '0644' }] });
    const tuple = { properties: { pair: { type: 'array', prefixItems: [{ properties: { a: { default: 1 } } }], items: { properties: { b: { default: 2 } } } } } };
    const args = { pair: [{}, {}] };
    expect(withDeclaredDefaults(tuple, args)).toBe(args);
  });

  it('fills from the one branch of a union the arguments can fit, and from none when several can', () => {
    const deploy = {
      type: 'object',
      properties: { target: { enum: ['staging', 'production'] } },
      oneOf: [
        { properties: { target: { const: 'staging' }, dry_run: { default: false } }, required: ['target'] },
        { properties: { target: { const: 'production' }, dry_run: { default: true }, approvals: { default: 2 } }, required: ['target'] },
      ],
    };
    expect(withDeclaredDefaults(deploy, { target: 'staging' })).toStrictEqual({ target: 'staging', dry_run: false });
    expect(withDeclaredDefaults(deploy, { target: 'production' })).toStrictEqual({ target: 'production', dry_run: true, approvals: 2 });
    // Either branch may be the one: neither's defaults are filled.
    const args = { note: 'x' };
    expect(withDeclaredDefaults({ anyOf: deploy.oneOf.map(({ properties }) => ({ properties })) }, args)).toBe(args);
    expect(withDeclaredDefaults(deploy, {})).toStrictEqual({});
    expect(withDeclaredDefaults({ anyOf: [{ properties: { a: { default: 1 } } }] }, {})).toStrictEqual({ a: 1 });
  });

  it('rules a union branch out by its type, a required or disallowed name, and a given value’s const, enum or type', () => {
    const pick = (branches: unknown[], args: Record<string, unknown>) => withDeclaredDefaults({ oneOf: branches.map((branch, index) => ({ allOf: [branch], properties: { [`from${index}`]: { default: true } } })) }, args);
    expect(pick([{ type: 'string' }, { type: ['object', 'null'] }], {})).toStrictEqual({ from1: true });
    expect(pick([{ required: ['a'] }, {}], {})).toStrictEqual({ from1: true });
    expect(pick([{ additionalProperties: false, properties: { b: {} } }, {}], { a: 1 })).toStrictEqual({ a: 1, from1: true });
    expect(pick([{ properties: { a: { enum: [1, 2] } } }, { properties: { a: { type: 'integer' } } }], { a: 3 })).toStrictEqual({ a: 3, from1: true });
    expect(pick([{ properties: { a: { type: 'integer' } } }, { properties: { a: { type: 'string' } } }], { a: 1.5 })).toStrictEqual({ a: 1.5 });
    expect(pick([false, { $ref: '#/$defs/none' }], {})).toStrictEqual({ from1: true });
  });

  it('chooses a branch with the defaults filled so far, as the call will be sent', () => {
    const kinds = { properties: { kind: { default: 'file' } }, oneOf: [{ properties: { kind: { const: 'file' }, mode: { default: '0644' } } }, { properties: { kind: { const: 'link' }, target: { default: '.' } } }] };
    expect(withDeclaredDefaults(kinds, {})).toStrictEqual({ kind: 'file', mode: '0644' });
    expect(withDeclaredDefaults(kinds, { kind: 'link' })).toStrictEqual({ kind: 'link', target: '.' });
  });

  it('stays bounded: levels, and the steps one call may take over a large schema and a long array', () => {
    const nestedDefaults = (depth: number): Record<string, unknown> => (depth === 0 ? { properties: { leaf: { default: 1 } } } : { properties: { leaf: { default: 1 }, next: nestedDefaults(depth - 1) } });
    const deep = withDeclaredDefaults(nestedDefaults(10), { next: { next: { next: { next: { next: {} } } } } });
    expect(MAX_DECLARED_DEPTH).toBe(4);
    expect(deep).toStrictEqual({ leaf: 1, next: { leaf: 1, next: { leaf: 1, next: { leaf: 1, next: { next: {} } } } } });
    const wide = { properties: Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`p${index}`, { default: index }])) };
    const items = withDeclaredDefaults({ properties: { list: { items: wide } } }, { list: Array.from({ length: 1000 }, () => ({})) });
    const list = items.list as Record<string, unknown>[];
    expect(Object.keys(list[0]!)).toHaveLength(100);
    expect(Object.keys(list.at(-1)!)).toHaveLength(0);
    const cycle = { $defs: { a: { anyOf: [{ $ref: '#/$defs/a' }, { $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' };
    expect(withDeclaredDefaults(cycle, {})).toStrictEqual({});
  });

  it('gives each call its own copy of a default', () => {
    const withList = { properties: { tags: { type: 'array', default: ['a'] } } };
    const first = withDeclaredDefaults(withList, {});
    expect(first.tags).toStrictEqual(['a']);
    expect(first.tags).not.toBe(withList.properties.tags.default);
  });
});

describe('declaredDefaults: what it says it could not fill', () => {
  const unshown = (schema: unknown, args: Record<string, unknown>) => declaredDefaults(schema, args).unshown;

  it('says nothing when every default for what the call leaves out was filled, or there was none', () => {
    expect(unshown({ properties: { a: { default: 1 }, b: { $ref: '#/$defs/b' } }, $defs: { b: { default: 2 } } }, {})).toStrictEqual([]);
    expect(unshown({ properties: { a: { type: 'string' } } }, {})).toStrictEqual([]);
    // Two branches fit, but neither declares a default for the call: nothing is left out.
    expect(unshown({ anyOf: [{ properties: { a: { type: 'string' } } }, { properties: { b: {} } }] }, { c: 1 })).toStrictEqual([]);
    // A default of a name the call gives is not one it left out.
    expect(unshown({ allOf: [{ properties: { a: { default: 1 } } }, { properties: { a: { default: 2 } } }] }, { a: 3 })).toStrictEqual([]);
    expect(unshown({ properties: { a: { $ref: 'https://example.com/a.json' } } }, { a: 'given' })).toStrictEqual([]);
  });

  it('says the filling stopped at its bound: its steps spent, or its levels with a default under them', () => {
    const wide = { properties: Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`p${index}`, { default: index }])) };
    const long = declaredDefaults({ properties: { list: { items: wide } } }, { list: Array.from({ length: 1000 }, () => ({})) });
    expect(Object.keys((long.arguments.list as Record<string, unknown>[]).at(-1)!)).toHaveLength(0);
    expect(long.unshown).toStrictEqual(['limit']);
    const nestedDefaults = (depth: number): Record<string, unknown> => (depth === 0 ? { properties: { leaf: { default: 1 } } } : { properties: { leaf: { default: 1 }, next: nestedDefaults(depth - 1) } });
    expect(unshown(nestedDefaults(10), { next: { next: { next: { next: {} } } } })).toStrictEqual(['limit']);
    expect(unshown(nestedDefaults(10), { next: { next: { next: {} } } })).toStrictEqual([]);
    // A condition naming more properties than a call may take steps: looked at up to the bound, never copied whole.
    const many = Object.fromEntries(Array.from({ length: 200_000 }, (_, index) => [`p${index}`, index === 199_999 ? { default: 1 } : {}]));
    expect(unshown({ properties: { list: { items: { if: { properties: many } } } } }, { list: [{}, {}] })).toStrictEqual(['limit', 'unreadable']);
    const plainDeep = { properties: { a: { properties: { b: { properties: { c: { properties: { d: { properties: { e: { type: 'string' } } } } } } } } } } };
    expect(unshown(plainDeep, { a: { b: { c: { d: {} } } } })).toStrictEqual([]);
  });

  it('says which default applies is not known: several union branches fit and one declares a default, or two defaults differ', () => {
    const branches = { anyOf: [{ properties: { mode: { const: 'fast' }, retries: { default: 0 } } }, { properties: { mode: { type: 'string' }, retries: { default: 3 } } }] };
    expect(declaredDefaults(branches, { mode: 'fast' })).toStrictEqual({ arguments: { mode: 'fast' }, unshown: ['ambiguous'] });
    expect(declaredDefaults(branches, { mode: 'slow' })).toStrictEqual({ arguments: { mode: 'slow', retries: 3 }, unshown: [] });
    // A default inside an object the call gives counts too.
    const inner = { anyOf: [{ properties: { o: { properties: { x: { default: 1 } } } } }, { properties: { p: {} } }] };
    expect(unshown(inner, { o: {} })).toStrictEqual(['ambiguous']);
    expect(unshown({ allOf: [{ properties: { a: { default: 1 } } }, { properties: { a: { default: 2 } } }] }, {})).toStrictEqual(['ambiguous']);
    expect(unshown({ properties: { a: { allOf: [{ $ref: '#/$defs/one' }, { $ref: '#/$defs/two' }] } }, $defs: { one: { default: 1 }, two: { default: 2 } } }, {})).toStrictEqual(['ambiguous']);
  });

  it('says a part of the schema that may declare a default was not read', () => {
    const elsewhere = { properties: { a: { $ref: 'https://example.com/a.json' }, b: { default: 1 } } };
    expect(declaredDefaults(elsewhere, {})).toStrictEqual({ arguments: { b: 1 }, unshown: ['unreadable'] });
    expect(unshown({ allOf: [{ $ref: 'other.json#/x' }] }, {})).toStrictEqual(['unreadable']);
    expect(unshown({ $ref: '#anchor' }, {})).toStrictEqual(['unreadable']);
    expect(unshown({ $dynamicRef: '#meta' }, {})).toStrictEqual(['unreadable']);
    // A condition adds a default only where it declares one; a local reference to nothing is applied by no one.
    const conditional = { properties: { kind: {} }, if: { properties: { kind: { const: 'a' } } }, then: { properties: { force: { default: true } } } };
    expect(unshown(conditional, { kind: 'a' })).toStrictEqual(['unreadable']);
    expect(unshown({ ...conditional, then: { required: ['force'] } }, { kind: 'a' })).toStrictEqual([]);
    expect(unshown({ properties: { a: { default: 1 } }, allOf: [{ $ref: '#/$defs/missing' }] }, {})).toStrictEqual([]);
    expect(unshown({ properties: { constructor: { default: 'x' } } }, {})).toStrictEqual(['unreadable']);
    const tuple = { properties: { pair: { type: 'array', prefixItems: [{ properties: { a: { default: 1 } } }] } } };
    expect(unshown(tuple, { pair: [{}] })).toStrictEqual(['unreadable']);
    // What an array's schema refers to elsewhere may declare defaults for its items: none when it has none.
    expect(unshown({ properties: { list: { $ref: 'list.json' } } }, { list: [{}] })).toStrictEqual(['unreadable']);
    expect(unshown({ properties: { list: { $ref: 'list.json' } } }, { list: [] })).toStrictEqual([]);
    expect(unshown({ additionalProperties: { properties: { x: { default: 1 } } } }, { extra: {} })).toStrictEqual(['unreadable']);
    expect(unshown({ additionalProperties: { properties: { x: { default: 1 } } } }, { extra: 'text' })).toStrictEqual([]);
    expect(unshown({ patternProperties: { '^x-': { properties: { x: { default: 1 } } }, default: {} } }, { 'x-extra': {} })).toStrictEqual(['unreadable']);
    // A pattern that reads `default` is a name, not a default.
    expect(unshown({ patternProperties: { default: { type: 'object' } } }, { defaults: {} })).toStrictEqual([]);
    const patterns = Object.fromEntries(Array.from({ length: 200_000 }, (_, index) => [`^p${index}$`, {}]));
    expect(unshown({ patternProperties: patterns }, { p1: {} })).toStrictEqual(['limit', 'unreadable']);
    // A property named `default` declares no default.
    expect(unshown({ properties: { a: { $ref: '#/$defs/a' } }, $defs: { a: { if: { properties: { default: { type: 'string' } } } } } }, {})).toStrictEqual([]);
  });

  it('follows no reference inside a subschema with its own $id, whose #/$defs are its own, and says so', () => {
    // JSON Schema reads `#/$defs/Mode` in `options` against `options`' own $id: its default is `dry-run`, not the root's.
    const nested = {
      properties: { options: { $id: 'https://schemas.example.test/options', type: 'object', properties: { mode: { $ref: '#/$defs/Mode' } }, $defs: { Mode: { type: 'string', default: 'dry-run' } } } },
      $defs: { Mode: { type: 'string', default: 'production' } },
    };
    expect(declaredDefaults(nested, { options: {} })).toStrictEqual({ arguments: { options: {} }, unshown: ['unreadable'] });
    const below = { properties: { a: { $id: 'https://schemas.example.test/a', properties: { b: { properties: { c: { $ref: '#/$defs/C' } } } }, $defs: { C: { default: 1 } } } }, $defs: { C: { default: 2 } } };
    expect(declaredDefaults(below, { a: { b: {} } })).toStrictEqual({ arguments: { a: { b: {} } }, unshown: ['unreadable'] });
    // Nor does a property named $id, or the root's own $id: their references are the root's.
    expect(withDeclaredDefaults({ properties: { $id: { type: 'string' }, m: { $ref: '#/$defs/M' } }, $defs: { M: { default: 1 } } }, {})).toStrictEqual({ m: 1 });
    expect(withDeclaredDefaults({ $id: 'https://schemas.example.test/root', properties: { m: { $ref: '#/$defs/M' } }, $defs: { M: { default: 1 } } }, {})).toStrictEqual({ m: 1 });
  });

  it('says each reason once, in one order', () => {
    const all = { properties: { a: { $ref: 'x.json' } }, allOf: [{ properties: { b: { default: 1 } } }, { properties: { b: { default: 2 } } }] };
    expect(unshown(all, {})).toStrictEqual(['ambiguous', 'unreadable']);
  });
});

describe('argumentIssues and the defaults a tool declares', () => {
  it('refuses an edit that leaves out a default inside an array’s items, naming it by its index', () => {
    const files = defineTool({
      name: 'write_files',
      description: 'writes files',
      parameters: z.object({ files: z.array(z.object({ path: z.string(), mode: z.string().optional() })) }),
      jsonSchema: { properties: { files: { items: { properties: { path: { type: 'string' }, mode: { default: '0644' } } } } } },
      execute: async () => 'written',
    });
    expect(argumentIssues(files, { files: [{ path: 'a', mode: '0600' }, { path: 'b' }] })).toStrictEqual([{ path: 'files.1.mode', message: leftOutWithDefault('0644') }]);
  });
});

describe('withToolDefaults', () => {
  const tool = (jsonSchema: Record<string, unknown>, parameters: z.ZodType<Record<string, unknown>>) => defineTool({ name: 't', description: 't', parameters, jsonSchema, execute: async () => 'ok' });

  it('leaves out each default the tool’s own check refuses, inside objects and array items too, and keeps the others', () => {
    const options = z.object({ level: z.number().int().optional(), force: z.boolean().optional() });
    const checked = tool(
      { properties: { options: { properties: { level: { type: 'integer', default: 'high' }, force: { default: true } } }, list: { items: { properties: { level: { default: 1.5 }, force: { default: false } } } } } },
      z.object({ options: options.optional(), list: z.array(options).optional() }),
    );
    expect(withToolDefaults(checked, { options: {}, list: [{}, { level: 2 }] })).toStrictEqual({ options: { force: true }, list: [{ force: false }, { level: 2, force: false }] });
  });

  it('says a default it left out because the tool’s own check refuses it', () => {
    const refusing = tool({ properties: { level: { type: 'integer', default: 'high' }, force: { default: true } } }, z.object({ level: z.number().int().optional(), force: z.boolean().optional() }));
    expect(toolDefaults(refusing, {})).toStrictEqual({ arguments: { force: true }, unshown: ['refused'] });
    expect(toolDefaults(refusing, { level: 2 })).toStrictEqual({ arguments: { level: 2, force: true }, unshown: [] });
  });

  it('gives the arguments as the model sent them when the defaults together fail, or they failed already', () => {
    const exclusive = tool({ properties: { a: { default: 1 }, b: { default: 2 } } }, z.object({ a: z.number().optional(), b: z.number().optional() }).refine((args) => args.a === undefined || args.b === undefined));
    const args = {};
    expect(withToolDefaults(exclusive, args)).toBe(args);
    const invalid = { a: 'not a number' };
    expect(withToolDefaults(exclusive, invalid)).toBe(invalid);
  });
});

describe('unshownDefaultsNote', () => {
  it('says the tool may run with defaults not shown, and each reason given, in the order given', () => {
    expect(unshownDefaultsNote(['limit'])).toBe('The tool may run with defaults this card does not show: its schema is larger or deeper than is read here. To be sure what runs, edit the call to give every value.');
    const note = unshownDefaultsNote(['ambiguous', 'unreadable', 'refused']);
    expect(note.indexOf('several of its alternatives fit this call')).toBeLessThan(note.indexOf('a reference elsewhere, a condition'));
    expect(note).toContain('its own check refuses');
  });
});
