import { createHash } from 'node:crypto';
import type { AnyTool, JsonSchema, ToolAnnotations, ToolContext, ToolOutput } from '@airlock/core';
import type { CallToolResult, Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { checksLessItself, isAssertion, zodReadyNode } from './zod-ready-schema';

/** What OpenAI-compatible servers accept as a function name. */
export const MAX_TOOL_NAME_LENGTH = 64;
const TOOL_NAME_CHARS = /[^A-Za-z0-9_-]/g;
const HASH_CHARS = 8;

/**
 * `<server>__<tool>` in the charset a model accepts. A tool name that had to be changed or shortened gets a
 * hash of the original, so two tools never share a name and a name stays the same across reconnects. So does one
 * whose name would read as another configured server's (`servers`): `a` + `b__c` and `a__b` + `c` would both be
 * `a__b__c`, and which server's tool the name meant would depend on which server was up. Then the hash is of the
 * server and the tool.
 */
export function mcpToolName(server: string, tool: string, servers: readonly string[] = []): string {
  const prefix = `${server.replace(TOOL_NAME_CHARS, '_')}__`;
  const clean = tool.replace(TOOL_NAME_CHARS, '_');
  const shared = sharedPrefixServer(server, prefix + clean, servers) !== undefined;
  return shared ? sharedToolName(server, tool) : aloneToolName(server, tool);
}

/**
 * The names a tool of `server` has or had beside the one it is offered under with `servers` configured: the name it
 * has alone, and the one with the hash of its server (which it gets once another configured server's name begins
 * its own). A setting written under either while the servers were other ones still means this tool.
 */
export function mcpToolOtherNames(server: string, tool: string, servers: readonly string[] = []): string[] {
  const name = mcpToolName(server, tool, servers);
  return [...new Set([aloneToolName(server, tool), sharedToolName(server, tool)])].filter((other) => other !== name);
}

function aloneToolName(server: string, tool: string): string {
  const prefix = `${server.replace(TOOL_NAME_CHARS, '_')}__`;
  const clean = tool.replace(TOOL_NAME_CHARS, '_');
  if (clean === tool && prefix.length + clean.length <= MAX_TOOL_NAME_LENGTH) return prefix + clean;
  return hashedToolName(prefix, clean, tool);
}

function sharedToolName(server: string, tool: string): string {
  return hashedToolName(`${server.replace(TOOL_NAME_CHARS, '_')}__`, tool.replace(TOOL_NAME_CHARS, '_'), `${server}\u0000${tool}`);
}

function hashedToolName(prefix: string, clean: string, hashed: string): string {
  const hash = createHash('sha256').update(hashed).digest('hex').slice(0, HASH_CHARS);
  const room = Math.max(0, MAX_TOOL_NAME_LENGTH - prefix.length - HASH_CHARS - 1);
  return `${prefix}${clean.slice(0, room)}_${hash}`.slice(0, MAX_TOOL_NAME_LENGTH);
}

/** Another of `servers` whose prefix `<other>__` begins `name`, the plain name of a tool of `server`; or undefined. */
export function sharedPrefixServer(server: string, name: string, servers: readonly string[]): string | undefined {
  return servers.find((other) => other !== server && name.startsWith(`${other.replace(TOOL_NAME_CHARS, '_')}__`));
}

const anyArguments = z.record(z.string(), z.unknown());

/**
 * A zod schema from the tool's JSON Schema (`checkableSchema`). Its regular expressions (`pattern`,
 * `patternProperties`) are left out: they are the MCP server's, run on what a model wrote, and JavaScript's engine
 * backtracks (`^(a+)+$` on 28 characters held the server's thread for 8 s). The MCP server checks them itself. A schema
 * Airlock cannot check (`inputSchemaProblem`) refuses every call: such a tool is not offered, and this says so again
 * should one be made.
 */
export function argumentsSchema(inputSchema: JsonSchema): z.ZodType<Record<string, unknown>> {
  const checkable = convertedSchema(inputSchema);
  if ('problem' in checkable) return anyArguments.refine(() => false, { message: `this tool cannot be called: ${checkable.problem}` });
  return checkable.schema.pipe(anyArguments);
}

/**
 * Why a tool with this input schema is not offered, or undefined: Airlock cannot check a call against it as it says
 * (`checkableSchema`). A `$ref` to nothing in the schema (a `$defs` name that is not there, a pointer to nothing,
 * another document, an anchor no part has): no validator can check such a schema, and Airlock fetches no document a
 * server names. A part that refers to itself at the same value, which loops in any validator; a recursive part a check
 * could walk in more than one way at one value (each way more at each level); a `$dynamicRef` or `$recursiveRef`; a
 * schema too large or too deep once its references are followed; one zod cannot convert. Offered, the tool would run
 * on arguments no one checked. Left out, with its reason in the server's log, as a tool whose schema is too large is.
 */
export function inputSchemaProblem(inputSchema: unknown): string | undefined {
  const checkable = convertedSchema(inputSchema);
  return 'problem' in checkable ? checkable.problem : undefined;
}

/**
 * The zod schema Airlock may check values with for a JSON Schema an MCP server sent: its `$ref`s followed
 * (`inlineReferences`), without its regular expressions (`pattern`, `patternProperties`) and `format` (an annotation,
 * as JSON Schema 2020-12 reads it, not checked: zod's formats refused values a validator of any draft accepts, an email
 * `user@localhost`, a `date-time` with a leap second or a lower-case `t`, a `uri` with an IPv6 host), nor the keywords
 * zod cannot express (`not`, a `oneOf` with a branch checked less than it says, …: see `withoutPatterns`); or undefined
 * when Airlock cannot check it (`inputSchemaProblem`). Nothing of the server's runs. It may accept a value the schema
 * refuses (the server checks too), never refuse one the schema accepts, but for a value nested deeper than
 * MAX_RECURSIVE_VALUE_DEPTH under a recursive schema, which zod would walk past the end of the thread's stack.
 */
export function checkableSchema(jsonSchema: unknown): z.ZodType | undefined {
  const checkable = convertedSchema(jsonSchema);
  return 'schema' in checkable ? checkable.schema : undefined;
}

/** What `convertedSchema` made of each schema object: a tool's schema is read at its listing and again as it is offered. */
const converted = new WeakMap<object, Converted>();

/**
 * The same for each schema still in use, by a digest of its JSON: a server's listing is parsed into new objects each
 * time, and found in review, the same 50 KB schema listed again was converted again each time (~150 ms), as was each
 * tool's of a listing whose tools shared one. Held weakly: a conversion took ~50 times its schema's text in memory
 * (3 MB for 58 KB), and one that no tool offered or being offered holds is let go of.
 */
const convertedByText = new Map<string, WeakRef<Converted>>();
const forgetText = new FinalizationRegistry<string>((key) => {
  if (convertedByText.get(key)?.deref() === undefined) convertedByText.delete(key);
});

type Converted = { schema: z.ZodType } | { problem: string };

function convertedSchema(jsonSchema: unknown): Converted {
  if (typeof jsonSchema !== 'object' || jsonSchema === null) return conversion(jsonSchema);
  const known = converted.get(jsonSchema);
  if (known !== undefined) return known;
  const text = jsonText(jsonSchema);
  const key = text === undefined ? undefined : createHash('sha256').update(text).digest('base64');
  let result = key === undefined ? undefined : convertedByText.get(key)?.deref();
  if (result === undefined) {
    result = conversion(jsonSchema);
    if (key !== undefined) {
      convertedByText.set(key, new WeakRef(result));
      forgetText.register(result, key);
    }
  }
  converted.set(jsonSchema, result);
  return result;
}

/** `value` as JSON, or undefined where it has none (an object that holds itself, given by code rather than parsed). */
function jsonText(value: object): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

function conversion(jsonSchema: unknown): Converted {
  let recursive: boolean;
  let copy: unknown;
  try {
    const inlined = inlineReferences(jsonSchema);
    recursive = inlined.recursive;
    const options: CopyOptions = { loose: looseParts(inlined.schema), referred: inlined.referred, keys: new Map(), defs: [] };
    const copied = withoutPatterns(inlined.schema, 0, options);
    copy = isRecord(copied) ? withKeys(withoutKeys(copied, ['$schema', '$defs']), [['$defs', withKeys({}, options.defs)]]) : copied;
  } catch (error) {
    if (error instanceof UnresolvedReference) return { problem: `its input schema refers to ${JSON.stringify(error.ref.slice(0, 200))}, which is not in it` };
    return { problem: `its input schema ${error instanceof UncheckableSchema ? error.message : 'cannot be checked'}` };
  }
  try {
    // A registry of its own: the global one keeps each node's `id` in a Map for good.
    const schema = z.fromJSONSchema(copy as JsonSchema, { registry: z.registry() });
    if (!recursive) return { schema };
    const shallow = z.custom((value) => !nestedDeeperThan(value, MAX_RECURSIVE_VALUE_DEPTH), { message: `nested deeper than ${MAX_RECURSIVE_VALUE_DEPTH} levels` });
    return { schema: shallow.pipe(schema) };
  } catch {
    return { problem: 'its input schema cannot be checked' };
  }
}

/**
 * Levels of arrays and objects a value may have under a recursive schema: zod walks a value as deep as it goes, and
 * a tree of nodes about 850 deep ran it past the end of the stack.
 */
export const MAX_RECURSIVE_VALUE_DEPTH = 256;

/** Whether `value` has arrays or objects more than `levels` deep (walked with a stack, not by recursion). */
function nestedDeeperThan(value: unknown, levels: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [next, depth] = stack.pop()!;
    if (typeof next !== 'object' || next === null) continue;
    if (depth === levels) return true;
    for (const item of Object.values(next)) stack.push([item, depth + 1]);
  }
  return false;
}

/** A schema Airlock cannot check, and why (the end of a sentence that begins "its input schema"). */
class UncheckableSchema extends Error {}

/** Keywords whose value maps names to schemas (the names themselves are data, kept as they are). */
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);
/** Keywords whose value is data, not a schema: copied as it is. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'required', 'dependentRequired']);
const MAX_SCHEMA_DEPTH = 64;
/** Levels a schema may have once its `$ref`s are followed. */
const MAX_INLINED_DEPTH = MAX_SCHEMA_DEPTH * 4;

interface CopyOptions {
  /** The parts of the schema checked less than they say (`looseParts`). */
  loose: ReadonlySet<unknown>;
  /** The parts a `$ref` named (`inlineReferences`): each copied once, into `defs`, and referred to where it is used. */
  referred: ReadonlySet<unknown>;
  /** The name in `defs` of each part of `referred` copied so far. */
  keys: Map<unknown, string>;
  /** The copies of the parts of `referred`, by name: the `$defs` of the schema zod converts. */
  defs: [string, unknown][];
}

/**
 * A copy of a JSON Schema (its `$ref`s already followed; each part one named, a `$ref` to its copy in `options.defs`) without `pattern`, `patternProperties` and `format` anywhere
 * in it, nor the `additionalProperties` beside a `patternProperties`, each node made one zod checks as JSON Schema
 * would (`zodReadyNode`); throws past MAX_INLINED_DEPTH levels. A keyword whose subschema is checked less than it
 * says, where checking less could refuse a value, is left out with it: a `oneOf` (two branches could then both
 * match), a `maxContains` (more items could then match its `contains`); so is a `not` other than `not: {}` (zod has
 * no other), since one keyword zod cannot express anywhere would leave the whole schema unchecked.
 */
function withoutPatterns(schema: unknown, depth: number, options: CopyOptions): unknown {
  if (depth > MAX_INLINED_DEPTH) throw new UncheckableSchema('is nested too deeply');
  if (Array.isArray(schema)) return schema.map((item: unknown) => withoutPatterns(item, depth + 1, options));
  if (typeof schema !== 'object' || schema === null) return schema;
  if (options.referred.has(schema)) {
    // zod converts what `#/$defs/<name>` names once, however many places use it.
    let key = options.keys.get(schema);
    if (key === undefined) {
      key = String(options.keys.size);
      options.keys.set(schema, key);
      options.defs.push([key, copyNode(schema as Record<string, unknown>, depth, options)]);
    }
    return { $ref: `#/$defs/${key}` };
  }
  return copyNode(schema as Record<string, unknown>, depth, options);
}

/** One node of `withoutPatterns`. */
function copyNode(schema: Record<string, unknown>, depth: number, options: CopyOptions): unknown {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if ((key === 'pattern' && typeof value === 'string') || key === 'patternProperties') continue;
    if (key === 'format' && typeof value === 'string') continue;
    if (key === 'not') {
      if (value === true || (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0)) copy.not = {};
      continue;
    }
    if (key === 'oneOf' && Array.isArray(value) && value.some((branch) => options.loose.has(branch))) continue;
    if (DATA_KEYWORDS.has(key)) copy[key] = value;
    else if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      copy[key] = withKeys({}, Object.entries(value as Record<string, unknown>).map(([name, sub]) => [name, withoutPatterns(sub, depth + 1, options)]));
    } else copy[key] = withoutPatterns(value, depth + 1, options);
  }
  // Which names are additional depends on the patterns left out: a name one of them covers must not be refused.
  if (Object.hasOwn(schema, 'patternProperties')) delete copy.additionalProperties;
  if (options.loose.has(schema.contains)) delete copy.maxContains;
  return zodReadyNode(copy);
}

/** Passes `looseParts` makes over a recursive schema before it gives up (a part found loose on one pass stays so). */
const MAX_MEASURE_PASSES = 16;

/** Keywords whose subschemas apply to a value inside the one their schema applies to (a property, an item, a name). */
const INNER_VALUE_KEYWORDS = new Set(['items', 'prefixItems', 'additionalItems', 'contains', 'additionalProperties', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties']);

/** Schema nodes a check may visit with every `$ref` followed; past it the tool is left out (`inputSchemaProblem`). */
const MAX_EXPANDED_NODES = 10_000;

/** A `$ref` that names nothing in the schema. */
class UnresolvedReference extends Error {
  constructor(readonly ref: string) {
    super(`unresolved reference ${ref}`);
  }
}

/** What a schema with no `$id` of its own is taken to be at: a relative reference resolves against it to nothing. */
const UNNAMED_DOCUMENT = 'https://airlock.invalid/input-schema.json';
/** `$schema` of the drafts where `dependencies` is no keyword, split into `dependentRequired` and `dependentSchemas`. */
const SPLIT_DEPENDENCIES_DIALECT = /^https?:\/\/json-schema\.org\/draft\/20(?:19-09|20-12)\/schema#?$/;
/** `$schema` of the drafts where the keywords beside a `$ref` are ignored. */
const REF_ALONE_DIALECT = /^https?:\/\/json-schema\.org\/draft-0[3-7]\/schema#?$/;

/**
 * The schema with each `$ref` replaced by what it names, and the parts so named (`referred`, each inlined once and
 * shared: `withoutPatterns` puts each in `$defs` once, under a name of its own, for zod to convert once). zod's
 * converter follows only `#`, `#/$defs/…` (or `#/definitions/…` under a draft-07 `$schema`), each from the root, and throws on anything else,
 * which left the whole schema unchecked (a pointer into `properties`, as zod-to-json-schema writes a schema met twice,
 * or `#/definitions/…` with no `$schema`). Here a reference is resolved as JSON Schema resolves it: against the `$id`
 * of the subschema it stands in (a nested `$id` starts a document of its own, whose `#/$defs/x` is its own), to a
 * document the schema holds (its root or a part with that `$id`), then a JSON pointer or a `$anchor` in it. A node
 * with assertions beside its `$ref` becomes an `allOf` of both (under draft-07 and before they are ignored, as those
 * drafts say). `$defs` and `definitions` are dropped: what is used of them is inlined. draft-07's `dependencies` (a
 * list of names a name needs, or a schema) becomes the `dependentRequired` and `dependentSchemas` of an `allOf` member,
 * which zod checks (see `zodReadyNode`): it was ignored, and a call with `card` and no `billing` passed; under a
 * `$schema` of 2019-09 or 2020-12, where it is no keyword, it is dropped. A `$dynamicRef` or `$recursiveRef` is
 * followed as a `$ref` where the part it names cannot depend on the way a check came to it (`dynamicReference`): zod
 * ignored both, and a tree with a node of the wrong type passed.
 *
 * Throws UnresolvedReference for a `$ref` to nothing in the schema, and an Error when the schema refers to itself
 * (a recursive schema: checked by the MCP server only) or, its references followed, is larger than
 * MAX_EXPANDED_NODES: a short schema whose definitions each refer twice to the next (`anyOf` of two `$ref`s, 22 deep,
 * 1.3 KB) made one check try 2^22 paths and held the server's thread for 18 s. Each part is inlined once and shared
 * where it is used again, its size kept, so the work is linear in the schema's length; a `dependentRequired` counts as
 * the schemas it becomes.
 */
function inlineReferences(root: unknown): { schema: unknown; referred: Set<unknown>; recursive: boolean } {
  const rootBase = isRecord(root) && typeof root.$id === 'string' ? resolved(root.$id, UNNAMED_DOCUMENT) ?? UNNAMED_DOCUMENT : UNNAMED_DOCUMENT;
  const documents = new Map<string, unknown>([[withoutFragment(rootBase), root]]);
  const anchors = new Map<string, unknown>();
  /** The documents (their URIs) that declare each `$dynamicAnchor` name, and those with `$recursiveAnchor: true`. */
  const dynamicAnchors = new Map<string, Set<string>>();
  const recursiveAnchors = new Set<string>();
  const bases = new Map<unknown, string>();
  const index = (node: unknown, base: string, depth: number): void => {
    if (depth > MAX_INLINED_DEPTH) throw new UncheckableSchema('is nested too deeply');
    if (Array.isArray(node)) {
      for (const item of node) index(item, base, depth + 1);
      return;
    }
    if (!isRecord(node) || bases.has(node)) return;
    let own = base;
    if (typeof node.$id === 'string') {
      const id = resolved(node.$id, base);
      if (id !== undefined) {
        const fragment = new URL(id).hash;
        // Before 2019-09 `$id: "#name"` names an anchor; otherwise the part is a document of its own.
        if (node.$id.startsWith('#') && fragment.length > 1) anchors.set(id, node);
        else {
          own = withoutFragment(id);
          if (!documents.has(own)) documents.set(own, node);
        }
      }
    }
    bases.set(node, own);
    if (typeof node.$anchor === 'string') anchors.set(`${own}#${node.$anchor}`, node);
    if (typeof node.$dynamicAnchor === 'string') {
      anchors.set(`${own}#${node.$dynamicAnchor}`, node);
      dynamicAnchors.set(node.$dynamicAnchor, (dynamicAnchors.get(node.$dynamicAnchor) ?? new Set()).add(own));
    }
    if (node.$recursiveAnchor === true) recursiveAnchors.add(own);
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      if (SCHEMA_MAPS.has(key) && isRecord(value)) for (const sub of Object.values(value)) index(sub, own, depth + 1);
      else index(value, own, depth + 1);
    }
  };
  index(root, rootBase, 0);
  const refAlone = isRecord(root) && typeof root.$schema === 'string' && REF_ALONE_DIALECT.test(root.$schema);
  const dependencies = !(isRecord(root) && typeof root.$schema === 'string' && SPLIT_DEPENDENCIES_DIALECT.test(root.$schema));

  const target = (ref: string, base: string): unknown => {
    const uri = resolved(ref, base);
    if (uri === undefined) throw new UnresolvedReference(ref);
    const document = documents.get(withoutFragment(uri));
    const fragment = decodedFragment(new URL(uri).hash);
    if (document === undefined || fragment === undefined) throw new UnresolvedReference(ref);
    if (fragment === '') return document;
    if (!fragment.startsWith('/')) {
      const anchored = anchors.get(`${withoutFragment(uri)}#${fragment}`);
      if (anchored === undefined) throw new UnresolvedReference(ref);
      return anchored;
    }
    let node: unknown = document;
    for (const part of fragment.slice(1).split('/')) {
      const name = part.replaceAll('~1', '/').replaceAll('~0', '~');
      if (Array.isArray(node) && /^(?:0|[1-9][0-9]*)$/.test(name) && Number(name) < node.length) node = (node as unknown[])[Number(name)];
      else if (isRecord(node) && Object.hasOwn(node, name)) node = node[name];
      else throw new UnresolvedReference(ref);
    }
    if (typeof node !== 'boolean' && !isRecord(node)) throw new UnresolvedReference(ref);
    return node;
  };

  /**
   * A node's `$dynamicRef`, to be followed as a `$ref`: where at most one document of the schema declares the anchor it
   * names, the part it names is the same whichever way a check came to it. Throws UncheckableSchema where two do (the
   * part would depend on that way), and for a `$recursiveRef` where two documents have `$recursiveAnchor: true`.
   */
  const dynamicReference = (node: Record<string, unknown>): unknown => {
    if (typeof node.$recursiveRef === 'string' && recursiveAnchors.size > 1) throw new UncheckableSchema('has a $recursiveRef Airlock cannot follow');
    if (typeof node.$dynamicRef !== 'string') return undefined;
    const uri = resolved(node.$dynamicRef, bases.get(node) ?? rootBase);
    const name = uri === undefined ? undefined : decodedFragment(new URL(uri).hash);
    if (name !== undefined && (dynamicAnchors.get(name)?.size ?? 0) > 1) throw new UncheckableSchema('has a $dynamicRef Airlock cannot follow');
    return node.$dynamicRef;
  };

  const done = new Map<unknown, { node: unknown; size: number }>();
  const referred = new Set<unknown>();
  /** The parts being inlined, each with the level of the value it applies to (one more in each property, item, …). */
  const following = new Map<unknown, number>();
  /** For each part a `$ref` inside it names, the object that stands for its copy (filled once the copy is made). */
  const cycles = new Map<unknown, Record<string, unknown>>();
  const inline = (node: unknown, depth: number, level: number): { node: unknown; size: number } => {
    if (depth > MAX_INLINED_DEPTH) throw new UncheckableSchema('is nested too deeply');
    if (Array.isArray(node)) {
      let size = 0;
      const items = node.map((item: unknown) => {
        const part = inline(item, depth + 1, level);
        size = add(size, part.size);
        return part.node;
      });
      return { node: items, size };
    }
    if (!isRecord(node)) return { node, size: 0 };
    const known = done.get(node);
    if (known !== undefined) return known;
    const from = following.get(node);
    if (from !== undefined) {
      // A part that names itself at the same value (`allOf: [{ $ref: "#" }]`, two `$ref`s to each other) loops for
      // ever in any validator: there is no check to make of it.
      if (from === level) throw new UncheckableSchema('refers to itself at the same value');
      // A `$ref` to a part it is inside of (a tree whose nodes hold nodes): an object filled with that part's copy
      // once it is made, converted once as a `$defs` entry zod refers to, and checked lazily, as deep as the value.
      let cycle = cycles.get(node);
      if (cycle === undefined) {
        cycle = {};
        cycles.set(node, cycle);
        referred.add(cycle);
      }
      return { node: cycle, size: 1 };
    }
    following.set(node, level);
    let size = 1;
    const copy: [string, unknown][] = [];
    const split: unknown[] = [];
    for (const [key, value] of Object.entries(node)) {
      if (key === '$defs' || key === 'definitions' || key === '$ref' || key === '$dynamicRef' || key === '$recursiveRef') continue;
      if (key === 'dependencies' && isRecord(value)) {
        // draft-07's one keyword for both: a list of names is a `dependentRequired`, a schema a `dependentSchemas`.
        if (!dependencies) continue;
        const required: [string, unknown][] = [];
        const schemas: [string, unknown][] = [];
        for (const [name, dependent] of Object.entries(value)) {
          if (Array.isArray(dependent)) {
            required.push([name, dependent]);
            size = add(size, 3 + dependent.length);
          } else {
            const part = inline(dependent, depth + 1, level);
            size = add(size, part.size);
            schemas.push([name, part.node]);
          }
        }
        split.push(withKeys({}, [['dependentRequired', withKeys({}, required)], ['dependentSchemas', withKeys({}, schemas)]]));
        continue;
      }
      if (key === 'dependentRequired' && isRecord(value)) {
        for (const names of Object.values(value)) size = add(size, 3 + (Array.isArray(names) ? names.length : 0));
      }
      if (DATA_KEYWORDS.has(key)) {
        copy.push([key, value]);
      } else if (SCHEMA_MAPS.has(key) && isRecord(value)) {
        const map = Object.entries(value).map(([name, sub]): [string, unknown] => {
          const part = inline(sub, depth + 1, key === 'properties' ? level + 1 : level);
          size = add(size, part.size);
          return [name, part.node];
        });
        copy.push([key, withKeys({}, map)]);
      } else {
        const part = inline(value, depth + 1, INNER_VALUE_KEYWORDS.has(key) ? level + 1 : level);
        size = add(size, part.size);
        copy.push([key, part.node]);
      }
    }
    if (split.length > 0) {
      const all = copy.find(([key]) => key === 'allOf');
      if (all === undefined) copy.push(['allOf', split]);
      else if (Array.isArray(all[1])) all[1] = [...(all[1] as unknown[]), ...split];
    }
    let result: unknown = withKeys({}, copy);
    const references = [node.$ref, dynamicReference(node), node.$recursiveRef].filter((ref) => typeof ref === 'string');
    if (references.length > 0) {
      const targets = references.map((ref) => {
        const to = inline(target(ref, bases.get(node) ?? rootBase), depth + 1, level);
        size = add(size, to.size);
        if (isRecord(to.node)) referred.add(to.node);
        return to.node;
      });
      const beside = copy.some(([key]) => isAssertion(key));
      result = targets.length === 1 && (refAlone || !beside) ? targets[0] : { allOf: beside ? [...targets, result] : targets };
    }
    following.delete(node);
    const cycle = cycles.get(node);
    if (cycle !== undefined) {
      const entries = isRecord(result) ? Object.entries(result) : result === false ? [['not', {}] as const] : [];
      for (const [key, value] of entries) Object.defineProperty(cycle, key, { value, enumerable: true, writable: true, configurable: true });
      result = cycle;
    }
    const part = { node: result, size };
    done.set(node, part);
    return part;
  };
  const schema = inline(root, 0, 0).node;
  const parts = new Set<unknown>(cycles.values());
  for (const cycle of parts) singleWays(cycle, parts);
  return { schema, referred, recursive: cycles.size > 0 };
}

/**
 * Checks that a check of a value against `part` (one of `parts`, those of a recursive schema a `$ref` inside them
 * names, already inlined) reaches a recursive part in at most one way for each value inside it (`allOf: [{ $ref: "#" }, { $ref:
 * "#/$defs/T" }]` at one property is two). With two, zod's check of a value that fails deep down kept the failures of
 * both ways at each level: 2^depth of them (18 levels made 262,144 and ran past the end of the stack). A union's
 * branches count as one way: zod keeps each branch's failures apart, shared. Throws UncheckableSchema otherwise.
 */
function singleWays(part: unknown, parts: ReadonlySet<unknown>): void {
  const known = new Map<unknown, Map<string, number>>();
  const ways = (node: unknown, depth: number): Map<string, number> => {
    if (depth > MAX_INLINED_DEPTH) throw new UncheckableSchema('is nested too deeply');
    if (Array.isArray(node)) return summed(node.map((item) => ways(item, depth + 1)));
    if (!isRecord(node)) return new Map();
    // Another recursive part is counted as one way and checked on its own: walked into, its own cycle never ends.
    if (depth > 0 && parts.has(node)) return new Map([['', 1]]);
    const seen = known.get(node);
    if (seen !== undefined) return seen;
    const all: Map<string, number>[] = [];
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      if (key === 'properties' && isRecord(value)) {
        for (const [name, sub] of Object.entries(value)) all.push(prefixed(`property ${JSON.stringify(name)}/`, ways(sub, depth + 1)));
      } else if (SCHEMA_MAPS.has(key) && isRecord(value)) all.push(summed(Object.values(value).map((sub) => ways(sub, depth + 1))));
      else if ((key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) all.push(greatest(value.map((branch) => ways(branch, depth + 1))));
      else if (INNER_VALUE_KEYWORDS.has(key)) all.push(prefixed(`${INNER_VALUE_SLOTS.get(key) ?? key}/`, ways(value, depth + 1)));
      else all.push(ways(value, depth + 1));
    }
    const counted = summed(all);
    known.set(node, counted);
    return counted;
  };
  ways(part, 0);
}

/** The value inside a value each of INNER_VALUE_KEYWORDS applies to, where two apply to the same one. */
const INNER_VALUE_SLOTS = new Map([
  ['prefixItems', 'item'], ['items', 'item'], ['additionalItems', 'item'], ['contains', 'item'], ['unevaluatedItems', 'item'],
  ['additionalProperties', 'property'], ['unevaluatedProperties', 'property'],
]);

function summed(maps: readonly Map<string, number>[]): Map<string, number> {
  const sum = new Map<string, number>();
  for (const map of maps) {
    for (const [path, count] of map) {
      const total = (sum.get(path) ?? 0) + count;
      if (total > 1) throw new UncheckableSchema('refers to itself in more than one way at one value');
      sum.set(path, total);
    }
  }
  return sum;
}

function greatest(maps: readonly Map<string, number>[]): Map<string, number> {
  const most = new Map<string, number>();
  for (const map of maps) for (const [path, count] of map) most.set(path, Math.max(most.get(path) ?? 0, count));
  return most;
}

function prefixed(prefix: string, map: Map<string, number>): Map<string, number> {
  return new Map([...map].map(([path, count]) => [prefix + path, count]));
}

/** `ref` resolved against `base`, or undefined when it is no URI reference. */
function resolved(ref: string, base: string): string | undefined {
  try {
    return new URL(ref, base).href;
  } catch {
    return undefined;
  }
}

function withoutFragment(uri: string): string {
  const at = uri.indexOf('#');
  return at === -1 ? uri : uri.slice(0, at);
}

/** A URL's fragment as the schema wrote it (`#/$defs/a%20b` is `/$defs/a b`); undefined when it does not decode. */
function decodedFragment(hash: string): string | undefined {
  try {
    return decodeURIComponent(hash.slice(1));
  } catch {
    return undefined;
  }
}

/**
 * The parts of the schema (its objects; its `$ref`s already followed) Airlock checks less than they say: one that does
 * itself (`checksLessItself`) or holds one; and one zod checks as an intersection with a side that has
 * `additionalProperties: false` (an `allOf` member, directly, through a followed `$ref` or in a nested `allOf`), as zod
 * lets through a name one side refuses when another takes it.
 */
function looseParts(root: unknown): Set<unknown> {
  const loose = new Set<unknown>();
  // A recursive schema is a graph: a part met again while it is measured counts as measured so far, and the whole is
  // measured again until nothing changes (each pass can only find more parts loose or strict).
  let known = new Map<unknown, Measure>();
  let cyclic = false;
  let changed: boolean;
  const measure = (node: unknown, depth: number, measuring: Set<unknown>, before: ReadonlyMap<unknown, Measure>): Measure => {
    if (depth > MAX_INLINED_DEPTH) throw new UncheckableSchema('is nested too deeply');
    if (Array.isArray(node)) {
      let less = false;
      let strict = false;
      for (const item of node) {
        const part = measure(item, depth + 1, measuring, before);
        less ||= part.loose;
        strict ||= part.strict;
      }
      return { loose: less, strict };
    }
    if (!isRecord(node)) return { loose: false, strict: false };
    const seen = known.get(node);
    if (seen !== undefined) return seen;
    if (measuring.has(node)) {
      cyclic = true;
      return before.get(node) ?? { loose: false, strict: false };
    }
    measuring.add(node);
    let less = checksLessItself(node);
    let strict = node.additionalProperties === false;
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      const parts = SCHEMA_MAPS.has(key) && isRecord(value) ? Object.values(value).map((sub) => measure(sub, depth + 1, measuring, before)) : [measure(value, depth + 1, measuring, before)];
      for (const part of parts) less ||= part.loose;
      if (key === 'allOf' && parts.some((part) => part.strict)) {
        strict = true;
        less = true;
      }
    }
    measuring.delete(node);
    if (less) loose.add(node);
    const measured = { loose: less, strict };
    const earlier = before.get(node);
    if (earlier !== undefined && (earlier.loose !== less || earlier.strict !== strict)) changed = true;
    known.set(node, measured);
    return measured;
  };
  measure(root, 0, new Set(), new Map());
  for (let pass = 1; cyclic; pass++) {
    if (pass === MAX_MEASURE_PASSES) throw new UncheckableSchema('is too intricate to measure');
    const before = known;
    known = new Map();
    changed = false;
    measure(root, 0, new Set(), before);
    if (!changed) break;
  }
  return loose;
}

interface Measure {
  /** Whether it is checked less than it says. */
  loose: boolean;
  /** Whether zod checks it as an object with `additionalProperties: false`, or an intersection with one. */
  strict: boolean;
}

function add(total: number, more: number): number {
  const sum = total + more;
  if (sum > MAX_EXPANDED_NODES) throw new UncheckableSchema('is too large once its references are followed');
  return sum;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `record` without `keys`. */
function withoutKeys(record: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return withKeys({}, Object.entries(record).filter(([key]) => !keys.includes(key)));
}

/** `target` with `entries` added as own properties, a name such as `__proto__` included. */
function withKeys(target: Record<string, unknown>, entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const copy = { ...target };
  for (const [name, value] of entries) Object.defineProperty(copy, name, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

function annotationsOf(tool: McpToolDefinition): ToolAnnotations {
  // A server's hints never widen a permission: "Always allow" on an MCP tool covers only the exact arguments
  // (the tool may run commands, send messages, spend money — whatever its hints claim).
  const annotations: ToolAnnotations = { exactGrants: true };
  const hints = tool.annotations;
  if (typeof hints?.readOnlyHint === 'boolean') annotations.readOnly = hints.readOnlyHint;
  if (typeof hints?.destructiveHint === 'boolean') annotations.destructive = hints.destructiveHint;
  if (typeof hints?.idempotentHint === 'boolean') annotations.idempotent = hints.idempotentHint;
  if (typeof hints?.openWorldHint === 'boolean') annotations.openWorld = hints.openWorldHint;
  return annotations;
}

export interface McpToolOptions {
  /** The configured server name. */
  server: string;
  /** The tool as the server listed it. */
  definition: McpToolDefinition;
  /** Every configured server's name (see `mcpToolName`). Default none. */
  servers?: readonly string[];
  /** Calls the tool by its original MCP name on whichever connection the server has now; its result is checked against `outputSchema`. */
  call(name: string, args: Record<string, unknown>, context: ToolContext, outputSchema: McpToolDefinition['outputSchema']): Promise<ToolOutput>;
}

/**
 * An MCP tool as an Airlock tool. The description and input schema pass through unchanged, so the core's
 * tool fingerprint changes (and a grant lapses) whenever the server changes them. Annotations are hints only.
 */
export function mcpTool(options: McpToolOptions): AnyTool {
  const { server, definition } = options;
  const inputSchema = definition.inputSchema as JsonSchema;
  const annotations = annotationsOf(definition);
  return {
    name: mcpToolName(server, definition.name, options.servers),
    description: definition.description ?? definition.title ?? definition.annotations?.title ?? '',
    parameters: argumentsSchema(inputSchema),
    jsonSchema: inputSchema,
    annotations,
    source: `mcp:${server}`,
    remoteName: definition.name,
    otherNames: mcpToolOtherNames(server, definition.name, options.servers),
    execute: (args: Record<string, unknown>, context: ToolContext) => options.call(definition.name, args, context, definition.outputSchema),
  };
}

type ContentBlock = CallToolResult['content'][number];

function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${Buffer.byteLength(block.data, 'base64')} bytes]`;
    case 'resource': {
      const { resource } = block;
      if ('text' in resource) return `[resource: ${resource.uri}]\n${resource.text}`;
      return `[resource: ${resource.uri}, ${resource.mimeType ?? 'binary'}, ${Buffer.byteLength(resource.blob, 'base64')} bytes]`;
    }
    case 'resource_link':
      return `[resource link: ${block.uri}${block.name === '' ? '' : ` (${block.name})`}]`;
  }
}

/** The text a model gets for a tool result: text parts joined, binary parts summarised. */
export function flattenToolResult(result: CallToolResult): ToolOutput {
  let content = result.content.map(describeBlock).join('\n');
  if (content === '' && result.structuredContent !== undefined) content = JSON.stringify(result.structuredContent);
  return result.isError === true ? { content, isError: true } : { content };
}
