/** Every JSON type; `number` covers `integer`. */
const ALL_TYPES = ['object', 'array', 'string', 'number', 'boolean', 'null'];

/** Keywords that say something only of a value of one type: a schema with one and no `type` applies it to that type only. */
const TYPED_KEYWORDS = new Set([
  'properties', 'required', 'additionalProperties', 'propertyNames', 'minProperties', 'maxProperties',
  'items', 'prefixItems', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems', 'contains', 'minContains', 'maxContains',
  'minLength', 'maxLength', 'format',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
]);

/** Keywords that constrain a value, besides the typed ones. */
const OTHER_ASSERTIONS = new Set([
  'type', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', 'not', 'if', 'then', 'else',
  'dependentSchemas', 'dependentRequired', 'unevaluatedItems', 'unevaluatedProperties', 'nullable',
]);

/** Whether `key` is a keyword that constrains a value. */
export function isAssertion(key: string): boolean {
  return TYPED_KEYWORDS.has(key) || OTHER_ASSERTIONS.has(key);
}

/**
 * One node of a JSON Schema (its subschemas already done) rewritten so that zod's `z.fromJSONSchema` checks what JSON
 * Schema would, neither more nor less. Left as they were, zod:
 * - checks nothing of a schema without `type`: a `oneOf` branch `{ properties: { kind: { const: 'a' } }, required: [...] }`
 *   matched every value, so a `oneOf` of two refused every call and an `anyOf` accepted any. Such a schema gets every
 *   type, each checked with the keywords that apply to it;
 * - ignores a `required` name with no entry in `properties`, or with one that refuses nothing: it gets one that
 *   accepts what `additionalProperties` accepts, or any JSON value, but not none;
 * - reads `default` as making the property optional, and fills it in: dropped, as JSON Schema only annotates with it
 *   (the core fills declared defaults in itself, where the card shows them);
 * - ignores every keyword beside `$ref`, and beside `const` or `enum` (`{ type: 'string', enum: ['a', 1] }` took 1):
 *   those are checked as an `allOf` with it, or by keeping only the values of the type;
 * - compares a `const` or `enum` object or array by identity, so no value matched: it becomes a schema of that exact value;
 * - skips a `__proto__` property, so that an object without a required one passed: an object is refused there;
 * - throws on `if`/`then`/`else`, `dependentRequired`, `dependentSchemas` and `unevaluated…`, so that one of them
 *   anywhere left the whole schema unchecked: see `withSupportedKeywords`. (`not` and a `oneOf` whose branches are
 *   checked less than they say are left out before, where the node is copied, as they need the schema as it was.)
 */
export function zodReadyNode(node: Record<string, unknown>): Record<string, unknown> {
  const { default: _annotation, ...schema } = withSupportedKeywords(node);
  if (typeof schema.$ref === 'string') return alongside(schema, { $ref: schema.$ref });
  if (schema.const !== undefined || Array.isArray(schema.enum)) {
    const value = schema.const !== undefined ? { const: schema.const } : { enum: schema.enum };
    if (Object.keys(schema).some((key) => isAssertion(key) && key !== 'type' && !Object.hasOwn(value, key))) return alongside(schema, value);
    return { ...withoutAssertions(schema), ...exactValues(schema.const !== undefined ? [schema.const] : (schema.enum as unknown[]), schema.type) };
  }
  if (schema.type === undefined && Object.keys(schema).some((key) => TYPED_KEYWORDS.has(key))) schema.type = ALL_TYPES;
  let types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('object') && Array.isArray(schema.required) && schema.required.includes('__proto__')) {
    // zod neither checks nor keeps a `__proto__` property (it would set the prototype of what it builds), and the loop
    // refuses a call that names one: no object Airlock passes on has it, so an object here is refused.
    types = types.filter((type) => type !== 'object');
    schema.type = types;
  }
  const declared = isRecord(schema.properties) ? schema.properties : schema.properties === undefined ? {} : undefined;
  if (types.includes('object') && Array.isArray(schema.required) && declared !== undefined) {
    // A name `properties` leaves out is checked as `additionalProperties` says: `false` is a required name no value has.
    const additional = schema.additionalProperties === undefined || schema.additionalProperties === true ? {} : schema.additionalProperties;
    const given = (name: string): unknown => (Object.hasOwn(declared, name) ? declared[name] : additional);
    const unchecked = schema.required.filter((name): name is string => typeof name === 'string' && (!Object.hasOwn(declared, name) || !checksAValue(declared[name])));
    const checked = (name: string): unknown => {
      const property = given(name);
      return checksAValue(property) ? property : { ...(isRecord(property) ? property : {}), type: ALL_TYPES };
    };
    if (unchecked.length > 0) schema.properties = withKeys(declared, unchecked.map((name) => [name, checked(name)]));
  }
  return schema;
}

/**
 * `node` without the keywords zod's converter throws on, each said another way where one can say it:
 * - `dependentRequired` (`a` needs `b`) and `dependentSchemas` (`a` needs `S`) as `anyOf: [{ properties: { a: false } }, …]`,
 *   exactly, but for a name every object inherits (`constructor`), which zod reads as present in `{}`: left out;
 * - `if`/`then`/`else` as `anyOf: [allOf: [if, then], else]` and `if`/`else` as `anyOf: [if, else]`, which accept every
 *   value the condition accepts, and also one that the `if` and the `else` take but the `then` does not (telling them
 *   apart needs `not`); an `if` with only a `then` is left out;
 * - `unevaluatedItems` and `unevaluatedProperties` are left out.
 * What it adds goes in `allOf`, beside what the node says.
 */
function withSupportedKeywords(node: Record<string, unknown>): Record<string, unknown> {
  const { if: condition, then, else: otherwise, dependentRequired, dependentSchemas, unevaluatedItems: _items, unevaluatedProperties: _properties, ...schema } = node;
  const parts: unknown[] = [];
  if (condition !== undefined && otherwise !== undefined) parts.push({ anyOf: [then === undefined ? condition : { allOf: [condition, then] }, otherwise] });
  if (isRecord(dependentRequired)) {
    for (const [name, names] of Object.entries(dependentRequired)) {
      if (!(name in {}) && isNameList(names)) parts.push({ anyOf: [absent(name), zodReadyNode({ required: names })] });
    }
  }
  if (isRecord(dependentSchemas)) {
    for (const [name, dependent] of Object.entries(dependentSchemas)) if (!(name in {})) parts.push({ anyOf: [absent(name), dependent] });
  }
  if (parts.length === 0) return schema;
  if (schema.allOf !== undefined && !Array.isArray(schema.allOf)) return schema;
  return { ...schema, allOf: [...((schema.allOf as unknown[] | undefined) ?? []), ...parts] };
}

/** A schema that an object with `name` fails and every other value passes. */
function absent(name: string): Record<string, unknown> {
  return zodReadyNode({ properties: withKeys({}, [[name, false]]) });
}

function isNameList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((name) => typeof name === 'string');
}

/**
 * Whether the check Airlock makes of `node` (a schema as the server sent it) may accept a value `node` itself refuses,
 * not counting its subschemas: a keyword is left out (`pattern`, `patternProperties`, `not` but `true`, `false` and `{}`,
 * `unevaluated…`, a dependency on a name every object inherits) or said more loosely (`if` with a `then` or `else`); or
 * zod reads its `additionalProperties: false` more loosely: beside a part it checks as an intersection (`allOf`,
 * `anyOf`, `oneOf`, `$ref`, `const`, `enum`, a dependency, a condition), a name another part declares is let through.
 */
export function checksLessItself(node: Record<string, unknown>): boolean {
  if (typeof node.pattern === 'string' || node.patternProperties !== undefined) return true;
  if (node.not !== undefined && node.not !== true && node.not !== false && !(isRecord(node.not) && Object.keys(node.not).length === 0)) return true;
  if (node.if !== undefined && (node.then !== undefined || node.else !== undefined)) return true;
  if ((node.unevaluatedItems !== undefined && node.unevaluatedItems !== true) || (node.unevaluatedProperties !== undefined && node.unevaluatedProperties !== true)) return true;
  if (node.dependentRequired !== undefined && !(isRecord(node.dependentRequired) && Object.entries(node.dependentRequired).every(([name, names]) => !(name in {}) && isNameList(names)))) return true;
  if (node.dependentSchemas !== undefined && !(isRecord(node.dependentSchemas) && Object.keys(node.dependentSchemas).every((name) => !(name in {})))) return true;
  const composed = ['allOf', 'anyOf', 'oneOf', '$ref', 'const', 'enum', 'dependentRequired', 'dependentSchemas', 'else'].some((key) => node[key] !== undefined);
  return node.additionalProperties === false && composed;
}

/**
 * Whether `schema` refuses something, so that zod reads a required property it gives as one that must be there: with
 * none, zod took a required name as present when absent, and `constructor` as present in `{}` (it read the inherited one).
 */
function checksAValue(schema: unknown): boolean {
  return schema === false || (isRecord(schema) && Object.keys(schema).some((key) => isAssertion(key) || key === '$ref'));
}

/** `schema` as an `allOf` of `alone` (the keyword zod checks by itself) and its other assertions. */
function alongside(schema: Record<string, unknown>, alone: Record<string, unknown>): Record<string, unknown> {
  const rest = withKeys({}, Object.entries(schema).filter(([key]) => isAssertion(key) && !Object.hasOwn(alone, key)));
  const first = alone.$ref === undefined ? zodReadyNode(alone) : alone;
  if (Object.keys(rest).length === 0) return { ...withoutAssertions(schema), ...first };
  return { ...withoutAssertions(schema), allOf: [first, zodReadyNode(rest)] };
}

function withoutAssertions(schema: Record<string, unknown>): Record<string, unknown> {
  return withKeys({}, Object.entries(schema).filter(([key]) => !isAssertion(key) && key !== '$ref'));
}

/** A schema that matches exactly `values` of `type` (a JSON type, a list of them, or undefined for any). */
function exactValues(values: readonly unknown[], type: unknown): Record<string, unknown> {
  const types = type === undefined ? undefined : Array.isArray(type) ? type : [type];
  const kept = types === undefined ? values : values.filter((value) => types.some((name) => hasType(value, name)));
  if (kept.every((value) => typeof value !== 'object' || value === null)) return kept.length === 1 ? { const: kept[0] } : { enum: kept };
  return { anyOf: kept.map(exactValue) };
}

function exactValue(value: unknown): Record<string, unknown> {
  if (Array.isArray(value)) return { type: 'array', prefixItems: value.map(exactValue), items: false, minItems: value.length };
  if (!isRecord(value)) return { const: value };
  const entries = Object.entries(value);
  return { type: 'object', properties: withKeys({}, entries.map(([name, item]) => [name, exactValue(item)])), required: entries.map(([name]) => name), additionalProperties: false };
}

function hasType(value: unknown, type: unknown): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isRecord(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
    case 'string':
    case 'boolean':
      return typeof value === type;
    default:
      return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `target` with `entries` added as own properties, a name such as `__proto__` included. */
function withKeys(target: Record<string, unknown>, entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const copy = { ...target };
  for (const [name, value] of entries) Object.defineProperty(copy, name, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}
