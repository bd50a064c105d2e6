import { MAX_DECLARED_NAME_LENGTH, MAX_DECLARED_NAMES, unshownDefaultsReasonSchema, type DeclaredArguments, type DeclaredName, type UnshownDefaultsReason } from './events';
import { canonicalJson, isPlainObject } from './json';

/** Levels of a tree of declared arguments: the top-level names, then those of object arguments, nested this deep. */
export const MAX_DECLARED_DEPTH = 4;

/**
 * Keywords of a JSON Schema that may declare names this reading does not follow (a dynamic reference, a union, a
 * condition, names by pattern): a level holding one is not known, never guessed.
 */
const UNREAD_KEYWORDS = ['$dynamicRef', '$recursiveRef', 'patternProperties', 'if', 'then', 'else', 'dependentSchemas', 'dependencies', 'unevaluatedProperties'];
const UNION_KEYWORDS = ['anyOf', 'oneOf', 'allOf'];
/** What a branch of a union may hold and still declare no names (`anyOf: [{ required: ['a'] }, { required: ['b'] }]`). */
const NAMELESS_BRANCH_KEYS = new Set(['required', 'description', 'title', 'type', '$comment', 'minProperties', 'maxProperties']);
/**
 * What may stand beside a `$ref` that is followed: words about the value and definitions, nothing that declares or
 * refuses names (`{ "$ref": "#/$defs/Options", "description": "…" }`, as generated schemas write a property).
 */
const REF_SIBLING_KEYS = new Set(['$ref', 'description', 'title', 'default', 'examples', '$comment', '$defs', 'definitions', '$schema', 'deprecated', 'readOnly', 'writeOnly', 'type', 'nullable']);
/** References followed one after another to reach a level: a chain longer than this is not known. */
const MAX_REF_HOPS = 8;

/**
 * The argument names a tool's JSON Schema declares, as a bounded tree: its own `properties`, and for each property
 * whose schema has `properties` of its own, those, down to `MAX_DECLARED_DEPTH` levels. A local reference (`#`,
 * `#/$defs/…`), alone or as the one branch of an `allOf`, is followed to what it points to, when nothing beside it
 * declares names. A level the schema does not
 * say plainly (a reference to another document or by anchor, a union whose branches declare names, a condition) or
 * past a bound is `{ unknown }`: a client counts its names as not declared, never as declared. A top level without
 * `properties` declares no name; a nested object without them is free-form and not looked into.
 */
export function declaredArguments(schema: unknown): DeclaredArguments {
  const budget = { names: MAX_DECLARED_NAMES };
  return readLevel(schema, 1, { budget, root: schema }) ?? { names: [] };
}

interface LevelReading {
  readonly budget: { names: number };
  /** The document local references point into. */
  readonly root: unknown;
}

function readLevel(given: unknown, depth: number, reading: LevelReading): DeclaredArguments | undefined {
  let schema = given;
  for (let hops = 0; isPlainObject(schema) && (Object.hasOwn(schema, '$ref') || soleBranch(schema) !== undefined); hops++) {
    const only = soleBranch(schema);
    if (hops === MAX_REF_HOPS || !Object.keys(schema).every((key) => REF_SIBLING_KEYS.has(key) || (key === 'allOf' && only !== undefined))) return { unknown: 'unreadable' };
    // One or the other: a node with both applies two schemas, whose names this reading does not merge.
    if (Object.hasOwn(schema, '$ref') && only !== undefined) return { unknown: 'unreadable' };
    schema = only ?? localTarget(reading.root, schema.$ref);
  }
  if (!isPlainObject(schema)) return { unknown: 'unreadable' };
  // A nested $id starts a document of its own: its local references point into it, not into the tool's.
  if (schema !== reading.root && Object.hasOwn(schema, '$id')) return { unknown: 'unreadable' };
  if (UNREAD_KEYWORDS.some((keyword) => Object.hasOwn(schema, keyword))) return { unknown: 'unreadable' };
  if (UNION_KEYWORDS.some((keyword) => Object.hasOwn(schema, keyword) && !namelessUnion(schema[keyword]))) return { unknown: 'unreadable' };
  const properties = Object.hasOwn(schema, 'properties') ? schema.properties : undefined;
  if (properties === undefined) return depth === 1 || schema.additionalProperties === false ? { names: [] } : undefined;
  if (!isPlainObject(properties)) return { unknown: 'unreadable' };
  if (depth > MAX_DECLARED_DEPTH) return { unknown: 'too-deep' };
  const entries = Object.entries(properties);
  if (entries.length > reading.budget.names) return { unknown: 'too-large' };
  if (entries.some(([name]) => name.length > MAX_DECLARED_NAME_LENGTH)) return { unknown: 'too-large' };
  reading.budget.names -= entries.length;
  const names: DeclaredName[] = entries.map(([name, property]) => {
    const inner = isPlainObject(property) ? readLevel(property, depth + 1, reading) : undefined;
    return inner === undefined ? { name } : { name, inner };
  });
  return { names };
}

/**
 * The one branch of an `allOf` that holds only a reference (`{ "allOf": [{ "$ref": "#/definitions/Options" }] }`, as
 * some generators write a property with a description), when it is that; undefined otherwise.
 */
function soleBranch(schema: Readonly<Record<string, unknown>>): unknown {
  const branches = Object.hasOwn(schema, 'allOf') ? schema.allOf : undefined;
  if (!Array.isArray(branches) || branches.length !== 1) return undefined;
  const [branch] = branches as unknown[];
  return isPlainObject(branch) && Object.hasOwn(branch, '$ref') ? branch : undefined;
}

function namelessUnion(branches: unknown): boolean {
  return Array.isArray(branches) && branches.every((branch) => isPlainObject(branch) && Object.keys(branch).every((key) => NAMELESS_BRANCH_KEYS.has(key)));
}

/** Names a default is never filled in under: they reach a prototype, and a call that holds one is refused. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Schema nodes, names and values one call's filling looks at, all levels and array items together: past it nothing
 * more is filled. It keeps the work linear in the schema's size times the call's, and bounded whatever either holds.
 */
export const MAX_DEFAULTS_STEPS = 10_000;

/**
 * `args` with the `default` of each property the tool's JSON Schema declares and the call leaves out, where the
 * schema says it unambiguously: at the top level, inside each object argument given and each object in an array
 * argument given (`items`), down to `MAX_DECLARED_DEPTH` levels (an array counts as one), through local references
 * (`#`, `#/$defs/…`, `#/definitions/…`) and `allOf`, and in the one branch of a `oneOf` / `anyOf` the arguments can
 * fit when no other can. The card then shows, and the tool gets, the values it would have acted on unseen (an MCP
 * server applies its own defaults: `dry_run` left out ran as `dry_run: false`). The same object when nothing was
 * left out.
 *
 * Not filled, never guessed: a union where several branches could fit (or none), two defaults that differ for one
 * name, a reference outside the document or by anchor, what a condition (`if`, `dependentSchemas`) adds, a default
 * under a name that reaches a prototype, and one the server applies without declaring it. A reference cycle is
 * followed once; past `MAX_DEFAULTS_STEPS` nothing more is filled. `unshown` says which of those may have left out a
 * default the schema declares (see `UnshownDefaultsReason`), each reason once; empty when none did.
 */
export function declaredDefaults(schema: unknown, args: Readonly<Record<string, unknown>>): DeclaredDefaults {
  const filling: Filling = { root: schema, scoped: scopedNodes(schema), steps: MAX_DEFAULTS_STEPS, targets: new Map(), texts: new Map(), unshown: new Set() };
  const filled = fillObject([schema], args, 1, filling);
  if (filling.steps <= 0) filling.unshown.add('limit');
  return { arguments: filled, unshown: unshownDefaultsReasonSchema.options.filter((reason) => filling.unshown.has(reason)) };
}

/** What `declaredDefaults` answers. */
export interface DeclaredDefaults {
  /** The arguments with the defaults filled in; the same object when nothing was. */
  readonly arguments: Readonly<Record<string, unknown>>;
  /** Why a default the schema declares for what the call leaves out may not be among them, in the schema's order; empty when none. */
  readonly unshown: UnshownDefaultsReason[];
}

/** `declaredDefaults`' arguments. */
export function withDeclaredDefaults(schema: unknown, args: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  return declaredDefaults(schema, args).arguments;
}

interface Filling {
  /** The document local references point into. */
  readonly root: unknown;
  /** The parts of it under a nested `$id` (`scopedNodes`), whose references are not followed. */
  readonly scoped: ReadonlySet<unknown>;
  /** Steps left (MAX_DEFAULTS_STEPS). */
  steps: number;
  /** Each local reference met, and what it points to (undefined: nothing that can be followed). */
  readonly targets: Map<string, unknown>;
  /** The JSON of each default object met (jsonOf). */
  readonly texts: Map<unknown, string>;
  /** Why a default the schema declares may not have been filled in, so far. */
  readonly unshown: Set<UnshownDefaultsReason>;
}

type SchemaNode = Readonly<Record<string, unknown>>;

/** What the schemas that apply to one value say for it: the nodes read, and the unions met, their branches not yet chosen. */
interface Reading {
  readonly nodes: SchemaNode[];
  /** A `false` schema was met among them: no value fits. */
  never?: boolean;
  readonly unions: (readonly unknown[])[];
  readonly seen: Set<unknown>;
  /**
   * What applies to the value and is not followed: a reference that is not local, a dynamic one, a condition's
   * schemas. It matters when it may declare a default (`mayDeclareDefault`).
   */
  readonly unfollowed: unknown[];
}

function newReading(): Reading {
  return { nodes: [], unions: [], seen: new Set(), unfollowed: [] };
}

function fillValue(schemas: readonly unknown[], value: unknown, depth: number, filling: Filling): unknown {
  if (filling.steps <= 0) return value;
  if (depth > MAX_DECLARED_DEPTH) {
    if ((isPlainObject(value) || Array.isArray(value)) && mayDeclareDefault(schemas, filling)) filling.unshown.add('limit');
    return value;
  }
  if (isPlainObject(value)) return fillObject(schemas, value, depth, filling);
  if (Array.isArray(value)) return fillItems(schemas, value, depth, filling);
  return value;
}

function fillObject(schemas: readonly unknown[], value: Readonly<Record<string, unknown>>, depth: number, filling: Filling): Readonly<Record<string, unknown>> {
  const reading = newReading();
  for (const schema of schemas) read(schema, reading, filling);
  // A union's branch is chosen against the arguments as they would be sent, with the defaults read so far filled
  // in; a branch chosen may hold unions of its own, read in turn.
  let probe = withDefaults(value, reading.nodes, filling);
  for (let at = 0; at < reading.unions.length; at++) {
    const fitting = reading.unions[at]!.filter((branch) => mayFit(branch, probe, filling));
    if (fitting.length > 1 && fitting.some((branch) => hidesDefault(branch, probe, filling))) filling.unshown.add('ambiguous');
    if (fitting.length !== 1) continue;
    const before = reading.nodes.length;
    read(fitting[0], reading, filling);
    probe = withDefaults(probe, reading.nodes.slice(before), filling);
  }
  const filled = withDefaults(value, reading.nodes, filling, structuredClone);
  if (unreadFor(reading, value, filling)) filling.unshown.add('unreadable');
  let inside: Record<string, unknown> | undefined;
  for (const [name, inner] of propertySchemas(reading.nodes, filling)) {
    // A default filled in just now is filled in turn: `options` left out, its default `{}` holds none of the defaults
    // its own properties declare, which a server that applies defaults applies to it as to a value given.
    if (!Object.hasOwn(filled, name)) continue;
    const given = filled[name];
    const after = fillValue(inner, given, depth + 1, filling);
    if (after === given) continue;
    inside ??= { ...filled };
    define(inside, name, after);
  }
  return inside ?? filled;
}

/**
 * Whether what `reading` holds for `value`, an object, and does not follow may declare a default for it: what it
 * left unfollowed, a property under a name that reaches a prototype and left out, or the schema of a name given an
 * object or array that no `properties` declares (a pattern's, `additionalProperties`').
 */
function unreadFor(reading: Reading, value: Readonly<Record<string, unknown>>, filling: Filling): boolean {
  if (mayDeclareDefault(reading.unfollowed, filling)) return true;
  const declared = new Set<string>();
  const others: unknown[] = [];
  for (const node of reading.nodes) {
    const properties = Object.hasOwn(node, 'properties') && isPlainObject(node.properties) ? node.properties : {};
    for (const name of Object.keys(properties)) {
      declared.add(name);
      if (PROTOTYPE_KEYS.has(name) && !Object.hasOwn(value, name) && mayDeclareDefault([properties[name]], filling)) return true;
    }
    if (Object.hasOwn(node, 'additionalProperties')) others.push(node.additionalProperties);
    if (Object.hasOwn(node, 'patternProperties') && isPlainObject(node.patternProperties)) others.push({ patternProperties: node.patternProperties });
  }
  if (others.length === 0) return false;
  return Object.entries(value).some(([name, given]) => !declared.has(name) && given !== null && typeof given === 'object' && mayDeclareDefault(others, filling));
}

/**
 * Whether `branch` of a union, were it the one that applies to `value`, would have a default filled in or applied
 * unread: one for a name `value` leaves out, or one inside an object or array it gives, or in what it does not follow.
 */
function hidesDefault(branch: unknown, value: Readonly<Record<string, unknown>>, filling: Filling): boolean {
  const reading = newReading();
  read(branch, reading, filling);
  if (withDefaults(value, reading.nodes, filling) !== value) return true;
  if (reading.unions.some((branches) => mayDeclareDefault(branches, filling)) || mayDeclareDefault(reading.unfollowed, filling)) return true;
  for (const [name, schemas] of propertySchemas(reading.nodes, filling)) {
    const given = Object.hasOwn(value, name) ? value[name] : undefined;
    if (given !== null && typeof given === 'object' && mayDeclareDefault(schemas, filling)) return true;
  }
  return false;
}

/** `value` with the defaults `nodes` declare for the names it leaves out (each `copy`'d); the same object when none. */
function withDefaults(value: Readonly<Record<string, unknown>>, nodes: readonly SchemaNode[], filling: Filling, copy: (fill: unknown) => unknown = (fill) => fill): Readonly<Record<string, unknown>> {
  let filled: Record<string, unknown> | undefined;
  for (const [name, fill] of defaultsOf(nodes, filling, value)) {
    if (Object.hasOwn(value, name)) continue;
    filled ??= { ...value };
    define(filled, name, copy(fill));
  }
  return filled ?? value;
}

function define(object: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
}

function fillItems(schemas: readonly unknown[], value: readonly unknown[], depth: number, filling: Filling): readonly unknown[] {
  const reading = newReading();
  for (const schema of schemas) read(schema, reading, filling);
  if (value.length > 0 && mayDeclareDefault(reading.unfollowed, filling)) filling.unshown.add('unreadable');
  // Items by position (a tuple) are not read: which schema an item has would depend on where it stands.
  const tuples = reading.nodes.filter((node) => Object.hasOwn(node, 'prefixItems') || Array.isArray(node.items));
  if (tuples.length > 0) {
    if (value.length > 0 && mayDeclareDefault(tuples, filling)) filling.unshown.add('unreadable');
    return value;
  }
  const items = reading.nodes.filter((node) => Object.hasOwn(node, 'items')).map((node) => node.items);
  if (items.length === 0) return value;
  let filled: unknown[] | undefined;
  value.forEach((item, index) => {
    const after = fillValue(items, item, depth + 1, filling);
    if (after === item) return;
    filled ??= [...value];
    filled[index] = after;
  });
  return filled ?? value;
}

/** Keywords whose schemas apply to the value only under a condition this reading does not weigh. */
const CONDITION_KEYWORDS = ['if', 'then', 'else', 'dependentSchemas', 'dependencies'];

/**
 * Reads `schema` into `reading`: the node itself, what a local `$ref` of it points to, its `allOf` branches; its
 * unions aside, and what it does not follow (see `Reading`) set aside too.
 */
function read(schema: unknown, reading: Reading, filling: Filling): void {
  const pending = [schema];
  while (pending.length > 0 && filling.steps > 0) {
    const node = pending.pop();
    if (node === false) reading.never = true;
    if (!isPlainObject(node) || reading.seen.has(node)) continue;
    filling.steps--;
    reading.seen.add(node);
    reading.nodes.push(node);
    if (Object.hasOwn(node, '$ref')) {
      const to = filling.scoped.has(node) ? undefined : target(node.$ref, filling);
      if (to === undefined) reading.unfollowed.push({ $ref: node.$ref });
      else pending.push(to);
    }
    for (const keyword of ['$dynamicRef', '$recursiveRef']) if (Object.hasOwn(node, keyword)) reading.unfollowed.push({ [keyword]: node[keyword] });
    for (const keyword of CONDITION_KEYWORDS) if (Object.hasOwn(node, keyword)) reading.unfollowed.push(node[keyword]);
    const branches: unknown = Object.hasOwn(node, 'allOf') ? node.allOf : undefined;
    if (Array.isArray(branches)) for (let at = branches.length - 1; at >= 0; at--) pending.push(branches[at]);
    for (const keyword of ['oneOf', 'anyOf'] as const) {
      const branches = Object.hasOwn(node, keyword) ? node[keyword] : undefined;
      if (Array.isArray(branches)) reading.unions.push(branches);
    }
  }
}

/** Keywords whose value is a map of schemas by name: its values are walked, its names never read as keywords. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'dependentSchemas', 'dependencies']);
/** Keywords whose value holds no schema (or schemas reached only through a reference): not walked. */
const NO_SCHEMA_KEYWORDS = new Set(['const', 'enum', 'examples', 'required', '$defs', 'definitions', 'description', 'title', '$comment']);

/**
 * Whether any of `schemas` declares a default anywhere within it, through local references, or may (a reference
 * that is not local, a dynamic one): what leaving it unread may hide. True, too, once the steps are spent. Each node,
 * keyword and value it looks at costs a step: called for each value of a long array, it stays within the filling's
 * bound whatever a node holds.
 */
function mayDeclareDefault(schemas: readonly unknown[], filling: Filling): boolean {
  const pending: unknown[] = [];
  /** Some of what was to be looked at was not, the steps spent. */
  let cut = false;
  const add = (values: Iterable<unknown>) => {
    for (const value of values) {
      if (filling.steps <= 0) {
        cut = true;
        return;
      }
      filling.steps--;
      pending.push(value);
    }
  };
  add(schemas);
  const seen = new Set<unknown>();
  while (pending.length > 0) {
    if (filling.steps <= 0) return true;
    const node = pending.pop();
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    filling.steps--;
    seen.add(node);
    if (Array.isArray(node)) {
      add(node as unknown[]);
      continue;
    }
    const schema = node as Record<string, unknown>;
    if (Object.hasOwn(schema, 'default') || Object.hasOwn(schema, '$dynamicRef') || Object.hasOwn(schema, '$recursiveRef')) return true;
    if (Object.hasOwn(schema, '$ref')) {
      // One under a nested `$id` is not followed: it may declare anything.
      if (filling.scoped.has(schema)) return true;
      const to = target(schema.$ref, filling);
      // A local reference to nothing cannot be applied by anyone; one elsewhere may declare anything.
      if (to === undefined && !(typeof schema.$ref === 'string' && schema.$ref.startsWith('#/'))) return true;
      pending.push(to);
    }
    for (const keyword in schema) {
      if (filling.steps <= 0) return true;
      filling.steps--;
      if (!Object.hasOwn(schema, keyword) || keyword === '$ref' || NO_SCHEMA_KEYWORDS.has(keyword)) continue;
      const inner = schema[keyword];
      if (SCHEMA_MAP_KEYWORDS.has(keyword) && isPlainObject(inner)) add(mapValues(inner));
      else pending.push(inner);
    }
  }
  return cut;
}

/** The values of `map`, one at a time: a map of many names is not copied whole to be walked. */
function* mapValues(map: Readonly<Record<string, unknown>>): Generator<unknown> {
  for (const name in map) if (Object.hasOwn(map, name)) yield map[name];
}

/** Schema keywords whose value is data: not walked for nested `$id`s. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions']);
/** The nodes under a nested `$id` of each schema met, found once per schema. */
const scopedBySchema = new WeakMap<object, ReadonlySet<unknown>>();
const NOTHING_SCOPED: ReadonlySet<unknown> = new Set();

/**
 * The objects of `schema` that lie in a subschema with its own `$id` (that subschema included), not the root: a
 * reference there (`#/$defs/Mode`) points into that subschema, not into the tool's schema, and this reading follows
 * none of them, rather than fill in the root's `Mode` default where the server applies the subschema's. Walked once
 * per schema, without recursion.
 */
function scopedNodes(schema: unknown): ReadonlySet<unknown> {
  if (schema === null || typeof schema !== 'object') return NOTHING_SCOPED;
  const known = scopedBySchema.get(schema);
  if (known !== undefined) return known;
  const scoped = new Set<unknown>();
  const seen = new Set<unknown>([schema]);
  // Each node with whether it lies under a nested `$id`, and whether it is a map of schemas by name (whose name `$id`
  // is a property's, not an `$id`).
  const pending: [unknown, boolean, boolean][] = [[schema, false, false]];
  while (pending.length > 0) {
    const [node, inside, map] = pending.pop()!;
    const nested = inside || (node !== schema && !map && isPlainObject(node) && Object.hasOwn(node, '$id'));
    if (nested) scoped.add(node);
    const children: [unknown, boolean][] = Array.isArray(node)
      ? (node as unknown[]).map((item) => [item, false])
      : isPlainObject(node)
        ? Object.keys(node).filter((key) => map || !DATA_KEYWORDS.has(key)).map((key) => [node[key], !map && SCHEMA_MAPS.has(key)])
        : [];
    for (const [child, childMap] of children) {
      if (child === null || typeof child !== 'object' || seen.has(child)) continue;
      seen.add(child);
      pending.push([child, nested, childMap]);
    }
  }
  const found = scoped.size === 0 ? NOTHING_SCOPED : scoped;
  scopedBySchema.set(schema, found);
  return found;
}

/**
 * What a local reference points to in the document: `#` itself, or a JSON Pointer after it (`#/$defs/Args`). Anything
 * else (another document, an anchor) is not followed: undefined.
 */
function target(ref: unknown, filling: Filling): unknown {
  if (typeof ref !== 'string') return undefined;
  if (filling.targets.has(ref)) return filling.targets.get(ref);
  const at = localTarget(filling.root, ref);
  filling.steps--;
  filling.targets.set(ref, at);
  return at;
}

/** What `ref` points to in `root` when it is local (`#`, `#/…`); undefined otherwise, or when it points to nothing. */
function localTarget(root: unknown, ref: unknown): unknown {
  if (typeof ref !== 'string') return undefined;
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let at = root;
  for (const part of ref.slice(2).split('/')) {
    const token = pointerToken(part);
    if (token === undefined) return undefined;
    if (Array.isArray(at) && /^(?:0|[1-9][0-9]*)$/.test(token)) at = at[Number(token)];
    else if (isPlainObject(at) && Object.hasOwn(at, token)) at = at[token];
    else return undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

function pointerToken(part: string): string | undefined {
  try {
    return decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~');
  } catch {
    return undefined;
  }
}

/** For each name the nodes declare in `properties`, the schemas they give it, in the order read. */
function propertySchemas(nodes: readonly SchemaNode[], filling: Filling): Map<string, unknown[]> {
  const byName = new Map<string, unknown[]>();
  for (const node of nodes) {
    const properties = Object.hasOwn(node, 'properties') ? node.properties : undefined;
    if (!isPlainObject(properties)) continue;
    for (const [name, schema] of Object.entries(properties)) {
      filling.steps--;
      if (PROTOTYPE_KEYS.has(name)) continue;
      const known = byName.get(name);
      if (known === undefined) byName.set(name, [schema]);
      else known.push(schema);
    }
  }
  return byName;
}

/**
 * Each name the nodes declare with one default, and that default; a name given two defaults that differ is left out.
 * For a name `value` leaves out, one whose default is not known is noted in `filling.unshown`: `ambiguous` (two that
 * differ) or `unreadable` (what its schema refers to is not followed).
 */
function defaultsOf(nodes: readonly SchemaNode[], filling: Filling, value: Readonly<Record<string, unknown>>): Map<string, unknown> {
  const defaults = new Map<string, unknown>();
  for (const [name, schemas] of propertySchemas(nodes, filling)) {
    const found = new Map<string, unknown>();
    const unknown = new Set<symbol>();
    for (const schema of schemas) {
      const declared = declaredDefault(schema, filling);
      if (typeof declared === 'symbol') unknown.add(declared);
      const text = typeof declared === 'symbol' ? undefined : jsonOf(declared, filling);
      if (text !== undefined) found.set(text, declared);
    }
    if (found.size === 1) defaults.set(name, [...found.values()][0]);
    if (Object.hasOwn(value, name)) continue;
    if (found.size > 1 || unknown.has(SEVERAL_DEFAULTS)) filling.unshown.add('ambiguous');
    if (unknown.has(UNREAD_DEFAULT)) filling.unshown.add('unreadable');
  }
  return defaults;
}

/** Characters of a default's JSON that cost one step each time it is filled in or compared. */
const DEFAULT_CHARS_PER_STEP = 100;

/**
 * A default's JSON, keys sorted (what two defaults are compared by), each time costing a step per
 * DEFAULT_CHARS_PER_STEP characters: a large default filled into each item of a long array is bounded like the rest.
 * Undefined for one that cannot be written (nested past what JSON.stringify takes): not filled.
 */
function jsonOf(fill: unknown, filling: Filling): string | undefined {
  let text = filling.texts.get(fill);
  if (text === undefined) {
    try {
      text = canonicalJson(fill);
    } catch {
      return undefined;
    }
    if (fill !== null && typeof fill === 'object') filling.texts.set(fill, text);
  }
  filling.steps -= Math.floor(text.length / DEFAULT_CHARS_PER_STEP);
  return text;
}

const NO_DEFAULT = Symbol('no default');
/** What a property's schema refers to declares defaults that differ. */
const SEVERAL_DEFAULTS = Symbol('several defaults');
/** What a property's schema refers to is not followed, and may declare a default. */
const UNREAD_DEFAULT = Symbol('unread default');

/**
 * The default a property's schema declares: its own, or else the one default of what it refers to and its `allOf`
 * (a generated schema writes `{ "$ref": "#/$defs/Mode" }` with the default in `Mode`); none when those differ
 * (SEVERAL_DEFAULTS), or when what it refers to is not followed and may declare one (UNREAD_DEFAULT).
 */
function declaredDefault(schema: unknown, filling: Filling): unknown {
  if (!isPlainObject(schema)) return NO_DEFAULT;
  if (Object.hasOwn(schema, 'default')) return schema.default;
  const reading = newReading();
  read(schema, reading, filling);
  const found = new Map<string, unknown>();
  for (const node of reading.nodes) {
    const text = Object.hasOwn(node, 'default') ? jsonOf(node.default, filling) : undefined;
    if (text !== undefined) found.set(text, node.default);
  }
  if (found.size === 1) return [...found.values()][0];
  if (found.size > 1) return SEVERAL_DEFAULTS;
  return reading.unfollowed.some((unfollowed) => mayDeclareDefault([unfollowed], filling)) ? UNREAD_DEFAULT : NO_DEFAULT;
}

/**
 * Whether `value`, an object, may fit a union's branch: false only where the branch says plainly it does not (its
 * `type`, a `required` name missing, a given name's `const`, `enum` or `type`, a name it does not allow).
 */
function mayFit(branch: unknown, value: Readonly<Record<string, unknown>>, filling: Filling): boolean {
  const reading = newReading();
  read(branch, reading, filling);
  return reading.never !== true && reading.nodes.every((node) => {
    if (Object.hasOwn(node, 'type') && !typeAllows(node.type, value)) return false;
    if (Object.hasOwn(node, 'required') && Array.isArray(node.required) && node.required.some((name) => typeof name === 'string' && !Object.hasOwn(value, name))) return false;
    const properties = Object.hasOwn(node, 'properties') && isPlainObject(node.properties) ? node.properties : {};
    const names = Object.keys(value);
    filling.steps -= names.length;
    if (node.additionalProperties === false && !Object.hasOwn(node, 'patternProperties') && names.some((name) => !Object.hasOwn(properties, name))) return false;
    return names.every((name) => !Object.hasOwn(properties, name) || mayHold(properties[name], value[name], filling));
  });
}

/**
 * Whether `value` may fit a property's schema, by its own `type`, and for a value that is not an object or array
 * (what tells branches apart), its `const` and `enum`.
 */
function mayHold(schema: unknown, value: unknown, filling: Filling): boolean {
  if (schema === false) return false;
  if (!isPlainObject(schema)) return true;
  if (Object.hasOwn(schema, 'type') && !typeAllows(schema.type, value)) return false;
  if (value !== null && typeof value === 'object') return true;
  if (Object.hasOwn(schema, 'const') && schema.const !== value) return false;
  if (!Object.hasOwn(schema, 'enum') || !Array.isArray(schema.enum)) return true;
  filling.steps -= schema.enum.length;
  return schema.enum.includes(value);
}

function typeAllows(type: unknown, value: unknown): boolean {
  const types = Array.isArray(type) ? type : [type];
  if (!types.every((name) => typeof name === 'string')) return true;
  return types.some((name) => name === jsonType(value) || (name === 'number' && typeof value === 'number') || (name === 'integer' && Number.isInteger(value)));
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' ? 'number' : typeof value;
}
