import { MAX_DECLARED_NAME_LENGTH, MAX_DECLARED_NAMES, type DeclaredArguments, type DeclaredName } from './events';
import { isPlainObject } from './json';

/** Levels of a tree of declared arguments: the top-level names, then those of object arguments, nested this deep. */
export const MAX_DECLARED_DEPTH = 4;

/**
 * Keywords of a JSON Schema that may declare names this reading does not follow (a reference, a union, a condition,
 * names by pattern): a level holding one is not known, never guessed.
 */
const UNREAD_KEYWORDS = ['$ref', '$dynamicRef', '$recursiveRef', 'patternProperties', 'if', 'then', 'else', 'dependentSchemas', 'dependencies', 'unevaluatedProperties'];
const UNION_KEYWORDS = ['anyOf', 'oneOf', 'allOf'];
/** What a branch of a union may hold and still declare no names (`anyOf: [{ required: ['a'] }, { required: ['b'] }]`). */
const NAMELESS_BRANCH_KEYS = new Set(['required', 'description', 'title', 'type', '$comment', 'minProperties', 'maxProperties']);

/**
 * The argument names a tool's JSON Schema declares, as a bounded tree: its own `properties`, and for each property
 * whose schema has `properties` of its own, those, down to `MAX_DECLARED_DEPTH` levels. A level the schema does not
 * say plainly (a `$ref`, a union whose branches declare names) or past a bound is `{ unknown }`: a client counts
 * its names as not declared, never as declared. A top level without `properties` declares no name; a nested object
 * without them is free-form and not looked into.
 */
export function declaredArguments(schema: unknown): DeclaredArguments {
  const budget = { names: MAX_DECLARED_NAMES };
  return readLevel(schema, 1, budget) ?? { names: [] };
}

function readLevel(schema: unknown, depth: number, budget: { names: number }): DeclaredArguments | undefined {
  if (!isPlainObject(schema)) return { unknown: 'unreadable' };
  if (UNREAD_KEYWORDS.some((keyword) => Object.hasOwn(schema, keyword))) return { unknown: 'unreadable' };
  if (UNION_KEYWORDS.some((keyword) => Object.hasOwn(schema, keyword) && !namelessUnion(schema[keyword]))) return { unknown: 'unreadable' };
  const properties = Object.hasOwn(schema, 'properties') ? schema.properties : undefined;
  if (properties === undefined) return depth === 1 || schema.additionalProperties === false ? { names: [] } : undefined;
  if (!isPlainObject(properties)) return { unknown: 'unreadable' };
  if (depth > MAX_DECLARED_DEPTH) return { unknown: 'too-deep' };
  const entries = Object.entries(properties);
  if (entries.length > budget.names) return { unknown: 'too-large' };
  if (entries.some(([name]) => name.length > MAX_DECLARED_NAME_LENGTH)) return { unknown: 'too-large' };
  budget.names -= entries.length;
  const names: DeclaredName[] = entries.map(([name, property]) => {
    const inner = isPlainObject(property) ? readLevel(property, depth + 1, budget) : undefined;
    return inner === undefined ? { name } : { name, inner };
  });
  return { names };
}

function namelessUnion(branches: unknown): boolean {
  return Array.isArray(branches) && branches.every((branch) => isPlainObject(branch) && Object.keys(branch).every((key) => NAMELESS_BRANCH_KEYS.has(key)));
}

/** Names a default is never filled in under: they reach a prototype, and a call that holds one is refused. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * `args` with the `default` of each property the tool's JSON Schema declares and the call leaves out, at the top level
 * and inside each object argument whose schema says its names plainly (as `declaredArguments` reads them, down to
 * `MAX_DECLARED_DEPTH` levels). The card then shows, and the tool gets, the values it would have acted on unseen (an
 * MCP server applies its own defaults: `dry_run` left out ran as `dry_run: false`). The same object when nothing was
 * left out. A default behind a `$ref`, in a union, in an array's items, or that the schema does not declare is not seen.
 */
export function withDeclaredDefaults(schema: unknown, args: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  return fillLevel(schema, args, 1);
}

function fillLevel(schema: unknown, value: Readonly<Record<string, unknown>>, depth: number): Readonly<Record<string, unknown>> {
  if (depth > MAX_DECLARED_DEPTH || !isPlainObject(schema)) return value;
  if (UNREAD_KEYWORDS.some((keyword) => Object.hasOwn(schema, keyword))) return value;
  if (UNION_KEYWORDS.some((keyword) => Object.hasOwn(schema, keyword) && !namelessUnion(schema[keyword]))) return value;
  const properties = Object.hasOwn(schema, 'properties') ? schema.properties : undefined;
  if (!isPlainObject(properties)) return value;
  let filled: Record<string, unknown> | undefined;
  for (const [name, property] of Object.entries(properties)) {
    if (!isPlainObject(property) || PROTOTYPE_KEYS.has(name)) continue;
    let next: unknown;
    if (!Object.hasOwn(value, name)) {
      if (!Object.hasOwn(property, 'default')) continue;
      next = structuredClone(property.default);
    } else {
      const given = value[name];
      if (!isPlainObject(given)) continue;
      next = fillLevel(property, given, depth + 1);
      if (next === given) continue;
    }
    filled ??= { ...value };
    Object.defineProperty(filled, name, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return filled ?? value;
}
