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
 * A zod schema from the tool's JSON Schema when zod can express it; otherwise any object (the server validates too).
 * Its regular expressions (`pattern`, `patternProperties`) are left out: they are the MCP server's, run on what a
 * model wrote, and JavaScript's engine backtracks (`^(a+)+$` on 28 characters held the server's thread for 8 s).
 * The MCP server checks them itself.
 */
export function argumentsSchema(inputSchema: JsonSchema): z.ZodType<Record<string, unknown>> {
  const schema = checkableSchema(inputSchema, { formats: true });
  return schema === undefined ? anyArguments : schema.pipe(anyArguments);
}

/**
 * The zod schema Airlock may check values with for a JSON Schema an MCP server sent: without its regular expressions
 * (`pattern`, `patternProperties`; `format` too unless `formats`) nor the keywords zod cannot express (`not`, a
 * `oneOf` with a branch checked less than it says, …: see `withoutPatterns`), or undefined when it is too large once
 * its `$ref`s are followed, refers to itself, or zod cannot express it. Nothing of the server's runs: zod's own formats
 * only. It may accept a value the schema refuses (the server checks too), never refuse one the schema accepts.
 */
export function checkableSchema(jsonSchema: unknown, options: { formats: boolean }): z.ZodType | undefined {
  try {
    const loose = looseParts(jsonSchema);
    return z.fromJSONSchema(withoutPatterns(jsonSchema, 0, { formats: options.formats, loose }) as JsonSchema);
  } catch {
    return undefined;
  }
}

/** Keywords whose value maps names to schemas (the names themselves are data, kept as they are). */
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is data, not a schema: copied as it is. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'required', 'dependentRequired']);
const MAX_SCHEMA_DEPTH = 64;

interface CopyOptions {
  /** Whether `format` is kept. */
  formats: boolean;
  /** The parts of the schema checked less than they say (`looseParts`). */
  loose: ReadonlySet<unknown>;
}

/**
 * A copy of a JSON Schema without `pattern` and `patternProperties` (and `format` unless `formats`) anywhere in it, nor
 * the `additionalProperties` beside a `patternProperties`, each node made one zod checks as JSON Schema would
 * (`zodReadyNode`); throws past 64 levels. A keyword whose subschema is checked less than it says, where checking less
 * could refuse a value, is left out with it: a `oneOf` (two branches could then both match), a `maxContains` (more
 * items could then match its `contains`); so is a `not` other than `not: {}` (zod has no other), since one keyword
 * zod cannot express anywhere would leave the whole schema unchecked.
 */
function withoutPatterns(schema: unknown, depth: number, options: CopyOptions): unknown {
  if (depth > MAX_SCHEMA_DEPTH) throw new Error('schema nested too deeply');
  if (Array.isArray(schema)) return schema.map((item: unknown) => withoutPatterns(item, depth + 1, options));
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if ((key === 'pattern' && typeof value === 'string') || key === 'patternProperties') continue;
    if (key === 'format' && typeof value === 'string' && !options.formats) continue;
    if (key === 'not') {
      if (value === true || (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0)) copy.not = {};
      continue;
    }
    if (key === 'oneOf' && Array.isArray(value) && value.some((branch) => options.loose.has(branch))) continue;
    if (DATA_KEYWORDS.has(key)) copy[key] = value;
    else if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      copy[key] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, sub]) => [name, withoutPatterns(sub, depth + 1, options)]));
    } else copy[key] = withoutPatterns(value, depth + 1, options);
  }
  // Which names are additional depends on the patterns left out: a name one of them covers must not be refused.
  if (Object.hasOwn(schema, 'patternProperties')) delete copy.additionalProperties;
  if (options.loose.has((schema as Record<string, unknown>).contains)) delete copy.maxContains;
  return zodReadyNode(copy);
}

/** Schema nodes a check may visit with every `$ref` followed; past it the schema is checked by the MCP server only. */
const MAX_EXPANDED_NODES = 10_000;

/**
 * The parts of the schema (its objects) Airlock checks less than they say: one that does itself (`checksLessItself`)
 * or holds one, a `$ref` to one included; and one zod checks as an intersection with a side that has
 * `additionalProperties: false` (an `allOf` member, directly, behind a `$ref` or in a nested `allOf`, or a `$ref`
 * with keywords beside it), as zod lets through a name one side refuses when another takes it. Throws when the schema, with its `$ref`s followed, is larger than
 * MAX_EXPANDED_NODES or refers to itself. Checking a value visits up to that many nodes: a short schema whose
 * definitions each refer twice to the next (`anyOf` of two `$ref`s, 22 deep, 1.3 KB) made one check try 2^22 paths and
 * held the server's thread for 18 s. Counted with each definition's size kept, so the count itself is linear in the
 * schema's length; a `dependentRequired` counts as the schemas it becomes.
 */
function looseParts(root: unknown): Set<unknown> {
  const loose = new Set<unknown>();
  const known = new Map<unknown, Measure>();
  const following = new Set<unknown>();
  const measure = (node: unknown, depth: number): Measure => {
    if (depth > MAX_SCHEMA_DEPTH * 4) throw new Error('schema nested too deeply');
    let total = 0;
    let less = false;
    let strict = false;
    const include = (part: Measure): Measure => {
      total = add(total, part.size);
      less ||= part.loose;
      return part;
    };
    if (Array.isArray(node)) {
      for (const item of node) strict = include(measure(item, depth + 1)).strict || strict;
      return { size: total, loose: less, strict };
    }
    if (typeof node !== 'object' || node === null) return { size: 0, loose: false, strict: false };
    const schema = node as Record<string, unknown>;
    total = 1;
    less = checksLessItself(schema);
    strict = schema.additionalProperties === false;
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'dependentRequired' && typeof value === 'object' && value !== null) {
        for (const names of Object.values(value)) total = add(total, 3 + (Array.isArray(names) ? names.length : 0));
      }
      if (DATA_KEYWORDS.has(key)) continue;
      if (key === '$ref' && typeof value === 'string') {
        const target = localTarget(root, value);
        if (target === undefined) continue;
        if (following.has(target)) throw new Error('schema refers to itself');
        let part = known.get(target);
        if (part === undefined) {
          following.add(target);
          part = measure(target, depth + 1);
          following.delete(target);
          known.set(target, part);
        }
        include(part);
        if (part.strict) {
          strict = true;
          less ||= Object.keys(schema).some((other) => other !== '$ref' && isAssertion(other));
        }
      } else if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        for (const sub of Object.values(value as Record<string, unknown>)) include(measure(sub, depth + 1));
      } else if (include(measure(value, depth + 1)).strict && key === 'allOf') {
        strict = true;
        less = true;
      }
    }
    if (less) loose.add(node);
    return { size: total, loose: less, strict };
  };
  measure(root, 0);
  return loose;
}

interface Measure {
  /** Nodes with `$ref`s followed. */
  size: number;
  /** Whether it is checked less than it says. */
  loose: boolean;
  /** Whether zod checks it as an object with `additionalProperties: false`, or an intersection with one. */
  strict: boolean;
}

function add(total: number, more: number): number {
  const sum = total + more;
  if (sum > MAX_EXPANDED_NODES) throw new Error('schema too large once its references are followed');
  return sum;
}

/** The part of the schema a local `$ref` (`#`, `#/$defs/name`, any JSON pointer into it) names; undefined otherwise. */
function localTarget(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node = root;
  for (const part of ref.slice(2).split('/')) {
    const name = decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, name)) return undefined;
    node = (node as Record<string, unknown>)[name];
  }
  return node;
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
  /** Calls the tool by its original MCP name on whichever connection the server has now. */
  call(name: string, args: Record<string, unknown>, context: ToolContext): Promise<ToolOutput>;
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
    execute: (args: Record<string, unknown>, context: ToolContext) => options.call(definition.name, args, context),
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
