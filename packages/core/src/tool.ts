import { z } from 'zod';
import { declaredArguments, declaredDefaults, type DeclaredDefaults } from './declared-arguments';
import type { ArgumentIssue } from './errors';
import { MAX_SHOWN_TOOL_SOURCE_LENGTH, unshownDefaultsReasonSchema, type ResultCut, type ShownTool } from './events';

export type JsonSchema = Record<string, unknown>;

export interface ToolAnnotations {
  /** The tool only reads. A hint for the UI; never a permission. */
  readOnly?: boolean;
  /** The tool may change or delete things. */
  destructive?: boolean;
  /** The tool runs arbitrary code (terminal, python): grants then cover only the exact arguments. */
  executesCode?: boolean;
  /**
   * "Always allow" covers only these exact arguments, though the tool does not run code itself: a file write
   * (a granted command could run what it wrote), a fetch (a granted fetch could send anything anywhere).
   */
  exactGrants?: boolean;
  /** A repeat with the same arguments has no further effect. An MCP server's hint, shown as its claim; never a permission. */
  idempotent?: boolean;
  /** The tool reaches beyond this machine (the web, other services). An MCP server's hint, shown as its claim; never a permission. */
  openWorld?: boolean;
}

/** Whether an "Always allow" for this tool covers only the exact arguments it was given for. */
export function grantsNeedExactArguments(tool: AnyTool): boolean {
  return tool.annotations?.executesCode === true || tool.annotations?.exactGrants === true;
}

export interface ToolContext {
  /** Aborted on cancel and when the per-call timeout passes. */
  signal: AbortSignal;
  timeoutMs: number;
  sessionId: string;
  /**
   * The rules' look at what the tool holds open to act on, taken from the open descriptor itself, before the tool
   * reads any of it: undefined to go on, or why not. The rules judged the call by its path before it ran, and a process
   * in the workspace can put another file or a link at that path in between; what a descriptor holds cannot change
   * like that. Default none: no rules to ask.
   */
  judgeOpened?: (opened: OpenedPath) => Promise<OpenedRefusal | undefined>;
}

/** What a file tool has opened, as the kernel tells of its descriptor (see `ToolContext.judgeOpened`). */
export interface OpenedPath {
  /** Its absolute real path, no link on it. */
  real: string;
  /** For a regular file, how many names (hard links) it has; undefined for anything else. */
  links?: number;
}

/** Why the rules refuse what a tool has opened (see `ToolContext.judgeOpened`). */
export type OpenedRefusal =
  /** A deny rule covers it, whoever let the call through. `reason`: what the model is told of the rule. */
  | { kind: 'denied'; reason: string; fromWorkspaceFile: boolean }
  /**
   * It is not what let the call through: it changed since the rules judged the call. `allowedBy: 'rule'`, a rule's
   * allow, which does not cover it as it is; `'unasked'`, no rule decided the call (confirmation off, or a grant for any
   * call of the tool), and one would now have it asked. `reason`: why, as the rules say it, when they say it.
   */
  | { kind: 'changed'; allowedBy: 'rule' | 'unasked'; reason?: string };

export interface ToolOutput {
  content: string;
  /** The tool ran but failed; the content explains why and goes back to the model. */
  isError?: boolean;
  /** What the tool itself left out of `content` (a command's output kept as head and tail), counted as it cut. Default nothing. */
  cut?: ResultCut;
}

export interface Tool<Args = Record<string, unknown>> {
  name: string;
  description: string;
  /** Arguments are validated against this right before every execution. */
  parameters: z.ZodType<Args>;
  /** What the model sees; defaults to `z.toJSONSchema(parameters)`. Set it to pass a foreign schema through unchanged. */
  jsonSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  /** Where the tool comes from: "builtin" or "mcp:<server>". */
  source?: string;
  /** For a tool an MCP server provides: its name as the server lists it (`name` is made unique across servers). */
  remoteName?: string;
  /**
   * Names this tool went or may go by beside `name`, which a person's setting may hold for it (an MCP tool gets a
   * hash once its name would read as another server's tool, and loses it when that server goes). Default none.
   */
  otherNames?: readonly string[];
  execute(args: Args, context: ToolContext): Promise<string | ToolOutput>;
}

/** A tool with its argument type erased, as collections of tools hold it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any>;

// Tools are immutable once defined (an MCP tool that changes is a new object), so both are computed once per tool.
const schemaCache = new WeakMap<AnyTool, JsonSchema>();
const versionCache = new WeakMap<AnyTool, string>();
const shownCache = new WeakMap<AnyTool, ShownTool>();

export function toolJsonSchema(tool: AnyTool): JsonSchema {
  if (tool.jsonSchema) return tool.jsonSchema;
  let schema = schemaCache.get(tool);
  if (!schema) {
    schema = z.toJSONSchema(tool.parameters, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    delete schema.$schema;
    schemaCache.set(tool, schema);
  }
  return schema;
}

/**
 * A fingerprint of what a person approved when granting a tool: its source, description, schema and hints, and for an
 * MCP tool its name on its server. A grant stops covering the tool when this changes (an MCP server can rewrite a
 * tool at any time).
 */
export function toolVersion(tool: AnyTool): string {
  let version = versionCache.get(tool);
  if (version === undefined) {
    // The hints count too: the card shows them (read-only, destructive…), so an allow was given for them. So does the
    // server's own name: two of its tools can be offered under one name (`a.b` and `a_b_<hash>`), the first listed
    // keeping it, and a tool-list change can hand the name to the other, alike in all the rest.
    const remote = tool.remoteName === undefined ? [] : [tool.remoteName];
    version = JSON.stringify([tool.source ?? 'builtin', tool.description, toolJsonSchema(tool), tool.annotations ?? {}, ...remote]);
    versionCache.set(tool, version);
  }
  return version;
}

/**
 * What a tool-start says of its tool: its source (cut to a bounded length), the argument names its schema declares
 * (a bounded tree), and its hints, as they are now.
 */
export function shownTool(tool: AnyTool): ShownTool {
  let shown = shownCache.get(tool);
  if (shown === undefined) {
    const annotations = tool.annotations;
    shown = {
      source: (tool.source ?? 'builtin').slice(0, MAX_SHOWN_TOOL_SOURCE_LENGTH),
      declared: declaredArguments(toolJsonSchema(tool)),
      annotations: {
        readOnly: annotations?.readOnly === true,
        destructive: annotations?.destructive === true,
        executesCode: annotations?.executesCode === true,
        exactGrants: grantsNeedExactArguments(tool),
        idempotent: annotations?.idempotent === true,
        openWorld: annotations?.openWorld === true,
      },
    };
    shownCache.set(tool, shown);
  }
  return shown;
}

/**
 * `args` with the defaults the tool's schema declares for what they leave out (`declaredDefaults`), but for those
 * the tool's own check refuses: a default that fails its own schema (`{ type: 'integer', default: 'x' }`) would make
 * every call that leaves it out invalid, so it is not filled and the tool gets the call as given, the card showing
 * that. What the loop puts up and what an exact-arguments rule is compared with. `unshown`: why the tool may still
 * act on a default they do not show (`refused` for one left out so), for the card to say.
 */
export function toolDefaults(tool: AnyTool, args: Readonly<Record<string, unknown>>): DeclaredDefaults {
  const declared = declaredDefaults(toolJsonSchema(tool), args);
  const filled = declared.arguments;
  if (filled === args) return declared;
  const checked = tool.parameters.safeParse(filled);
  if (checked.success) return declared;
  const refused = checked.error.issues.map((issue) => issue.path.map(String));
  const kept = withoutFilledAt(args, filled, refused, []);
  const unshown = unshownDefaultsReasonSchema.options.filter((reason) => reason === 'refused' || declared.unshown.includes(reason));
  return { arguments: tool.parameters.safeParse(kept).success ? (kept as Readonly<Record<string, unknown>>) : args, unshown };
}

/** `toolDefaults`' arguments. */
export function withToolDefaults(tool: AnyTool, args: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  return toolDefaults(tool, args).arguments;
}

/**
 * `filled` without what it filled into `given` at or around the paths of `refused` (one is a start of the other);
 * `given` itself where nothing filled is left.
 */
function withoutFilledAt(given: unknown, filled: unknown, refused: readonly (readonly string[])[], at: readonly string[]): unknown {
  if (given === filled) return given;
  if (Array.isArray(given) && Array.isArray(filled)) {
    const items = filled.map((item: unknown, index) => withoutFilledAt(given[index], item, refused, [...at, String(index)]));
    return items.every((item, index) => item === given[index]) ? given : items;
  }
  if (!isPlainObject(given) || !isPlainObject(filled)) return filled;
  const kept: Record<string, unknown> = {};
  let changed = false;
  for (const [key, value] of Object.entries(filled)) {
    const path = [...at, key];
    const overlaps = (issue: readonly string[]) => issue.slice(0, path.length).every((part, index) => part === path[index]);
    const inner = Object.hasOwn(given, key) ? withoutFilledAt(given[key], value, refused, path) : refused.some(overlaps) ? undefined : value;
    if (inner === undefined) continue;
    changed ||= !Object.hasOwn(given, key) || inner !== given[key];
    Object.defineProperty(kept, key, { value: inner, enumerable: true, writable: true, configurable: true });
  }
  return changed ? kept : given;
}

/**
 * How `args`, a person's edit of a call, fail the tool's schema; empty when they pass. Each issue names its field. An
 * argument left out that the schema gives a default is one too: the tool would act on a value the edit did not show
 * (a model's call has those filled in before it is put up, `withToolDefaults`).
 */
export function argumentIssues(tool: AnyTool, args: unknown): ArgumentIssue[] {
  const checked = tool.parameters.safeParse(args);
  if (!checked.success) return checked.error.issues.map((issue) => ({ path: issue.path.length > 0 ? issue.path.map(String).join('.') : '(arguments)', message: issue.message }));
  const unknown = unknownArguments(args, checked.data).map((path) => ({ path, message: UNKNOWN_ARGUMENT }));
  if (unknown.length > 0 || !isPlainObject(args)) return unknown;
  return filledIn(args, withToolDefaults(tool, args)).map(({ path, value }) => ({ path, message: leftOutWithDefault(value) }));
}

/** Longest a default is quoted in the issue that names it. */
const MAX_QUOTED_DEFAULT = 200;

/** Why an edit that leaves out an argument with a default is refused. */
export function leftOutWithDefault(value: unknown): string {
  const quoted = JSON.stringify(value) ?? 'null';
  return `left out, so the tool would use its default ${quoted.length > MAX_QUOTED_DEFAULT ? `${quoted.slice(0, MAX_QUOTED_DEFAULT)}…` : quoted}; give the value it should run with`;
}

/** The names `filled` holds and `given` does not, at any depth (an array's items by their index), as dotted paths with their values. */
function filledIn(given: unknown, filled: unknown, at = ''): { path: string; value: unknown }[] {
  if (given === filled) return [];
  if (Array.isArray(given) && Array.isArray(filled)) return filled.flatMap((item: unknown, index) => filledIn(given[index], item, `${at}${at ? '.' : ''}${index}`));
  if (!isPlainObject(given) || !isPlainObject(filled)) return [];
  return Object.keys(filled).flatMap((key) => {
    const path = `${at}${at ? '.' : ''}${key}`;
    return Object.hasOwn(given, key) ? filledIn(given[key], filled[key], path) : [{ path, value: filled[key] }];
  });
}

export const UNKNOWN_ARGUMENT = 'not an argument of this tool';

/**
 * The keys of `given` that parsing left out of `parsed` (an object schema drops keys it does not know), as dotted
 * paths. Such a call is refused rather than run without them: the card would show an argument that does nothing,
 * and the model would believe it applied.
 */
export function unknownArguments(given: unknown, parsed: unknown, at = ''): string[] {
  if (Array.isArray(given) && Array.isArray(parsed)) return given.flatMap((item, index) => unknownArguments(item, parsed[index], `${at}${at ? '.' : ''}${index}`));
  if (!isPlainObject(given) || !isPlainObject(parsed)) return [];
  return Object.keys(given).flatMap((key) => {
    const path = `${at}${at ? '.' : ''}${key}`;
    return Object.hasOwn(parsed, key) ? unknownArguments(given[key], parsed[key], path) : [path];
  });
}

/**
 * The names in `args` that start or end with white space and that the tool's schema does not declare. Such a call is
 * refused before anyone is asked: `dry_run ` reads as `dry_run` on any card, and a tool whose schema lets unknown
 * names through would run on its own `dry_run` default.
 */
export function blankEdgedArguments(tool: AnyTool, args: Readonly<Record<string, unknown>>): string[] {
  const properties = toolJsonSchema(tool).properties;
  const declared = isPlainObject(properties) ? properties : {};
  return Object.keys(args).filter((name) => name.trim() !== name && !Object.hasOwn(declared, name));
}

/** Why the loop refuses an argument `blankEdgedArguments` names. */
export const BLANK_EDGED_ARGUMENT = 'not an argument of this tool: its name starts or ends with white space';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}

/** Identity helper that keeps the argument type of a tool definition. */
export function defineTool<Args>(tool: Tool<Args>): Tool<Args> {
  return tool;
}
