import { describe, expect, it } from 'vitest';
import { declaredArguments, MAX_DECLARED_DEPTH, withDeclaredDefaults } from './declared-arguments';
import { declaredArgumentsSchema, MAX_DECLARED_NAME_LENGTH, MAX_DECLARED_NAMES, type DeclaredArguments } from './events';
import { undeclaredArgumentsNote, uncheckedArgumentsNote, visibleArguments } from './visible-text-arguments';

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

  it('says a level is not known rather than guess: a reference, a union whose branches declare names, names by pattern', () => {
    expect(declaredArguments({ $ref: '#/$defs/Args', $defs: { Args: purge } })).toStrictEqual({ unknown: 'unreadable' });
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

  it('fills nothing behind a reference or a union, nor under a name that reaches a prototype', () => {
    expect(withDeclaredDefaults(schema, { dry_run: true, linked: {} })).toStrictEqual({ dry_run: true, linked: {} });
    expect(withDeclaredDefaults({ anyOf: [{ properties: { a: { default: 1 } } }] }, {})).toStrictEqual({});
    expect(Object.hasOwn(withDeclaredDefaults(schema, {}), 'constructor')).toBe(false);
  });

  it('gives each call its own copy of a default', () => {
    const withList = { properties: { tags: { type: 'array', default: ['a'] } } };
    const first = withDeclaredDefaults(withList, {});
    expect(first.tags).toStrictEqual(['a']);
    expect(first.tags).not.toBe(withList.properties.tags.default);
  });
});
