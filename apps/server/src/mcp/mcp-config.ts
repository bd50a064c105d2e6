import type { Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import { changeableByOthers } from '../changeable-by-others';
import { checkJsonText, describeJsonTextProblem } from '../check-json-text';
import { shellQuoted } from '../shell-quoted';

/** Longest config file read; a real one is a few KB. */
export const MAX_MCP_CONFIG_BYTES = 1024 * 1024;
export const MAX_MCP_SERVERS = 32;
/** Short enough that `<server>__<tool>` leaves room for the tool's name within the 64 characters a model accepts. */
export const MAX_MCP_SERVER_NAME_LENGTH = 32;

/** Starts with a letter or digit, so names like `__proto__` never reach an object key. */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What a request can carry: a value it cannot made every request fail, and the error quoted it (an Authorization's secret) in the log and the status. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export interface McpStdioServerConfig {
  transport: 'stdio';
  command: string;
  args: string[];
  /** Set in the child's environment, over a minimal safe one; nothing else of the server's environment is passed. */
  env: Record<string, string>;
  cwd?: string;
}

export interface McpHttpServerConfig {
  transport: 'http';
  url: string;
  /** Sent with every request (e.g. Authorization); never shown in status or logs. */
  headers: Record<string, string>;
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** The configured servers by name, in file order. */
export type McpServersConfig = Map<string, McpServerConfig>;

/** A config file that cannot be used; names the file, the field and the server. */
export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
  constructor(
    readonly source: string,
    /** Dotted path of the offending field, e.g. `mcpServers.files.args.0`; empty for the file as a whole. */
    readonly field: string,
    readonly detail: string,
    readonly server?: string,
    options?: { cause?: unknown },
  ) {
    const where = [server === undefined ? '' : `server "${server}"`, field === '' ? '' : `field "${field}"`].filter(Boolean).join(', ');
    super(`invalid MCP config ${source}${where === '' ? '' : `: ${where}`}: ${detail}`, options);
  }
}

/** A record whose keys are checked before zod sees them: zod silently drops a `__proto__` key. */
function boundedRecord(key: z.ZodString, value: z.ZodString, max: number, what: string) {
  return z.preprocess(
    (raw, ctx) => {
      if (raw !== null && typeof raw === 'object' && Object.hasOwn(raw, '__proto__')) {
        ctx.addIssue({ code: 'custom', message: `"__proto__" is not a valid ${what} name`, path: ['__proto__'], input: raw });
      }
      return raw;
    },
    z.record(key, value).refine((record) => Object.keys(record).length <= max, `at most ${max} ${what}s`),
  );
}

const transportType = z.enum(['stdio', 'http', 'streamable-http', 'streamableHttp', 'sse']).optional();
/** Other apps' files mark a server they keep but do not start so; anything but a boolean is refused, not read as true. */
const disabled = z.boolean().optional();

// Strict: a key Airlock does not read (a typo like "evn", another app's "autoApprove") is refused rather than ignored.
// A NUL no process can be given: starting the server failed, and the error quoted the value (an API key in its env).
const noNul = z.string().regex(/^[^\0]*$/, 'must not contain a NUL character');
const stdioSchema = z
  .object({
    type: transportType,
    disabled,
    command: noNul.min(1, 'must not be empty').max(4096),
    args: z.array(noNul.max(8192)).max(256).default([]),
    env: boundedRecord(z.string().regex(ENV_NAME, 'not a valid environment variable name').max(256), noNul.max(32_768), 256, 'environment variable').default({}),
    cwd: noNul.min(1).max(4096).optional(),
  })
  .strict();

const httpSchema = z
  .object({
    type: transportType,
    disabled,
    url: z
      .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
      .max(2048)
      // fetch refused such a URL at every connection, and its error quoted it, password and all, in the log and the
      // status shown in Settings. The message names the field only.
      .refine((url) => !hasCredentials(url), 'must not hold a user name or password (fetch refuses such a URL): give them in "headers", as an "Authorization" header'),
    headers: boundedRecord(z.string().regex(HEADER_NAME, 'not a valid HTTP header name').max(256), z.string().max(8192).regex(HEADER_VALUE, 'not a valid HTTP header value (a line break, a NUL or a character past U+00FF)'), 64, 'header').default({}),
  })
  .strict();

/** Whether `url` holds a user name or password (`https://user:pass@host/`); false for one that is no URL. */
export function hasCredentials(url: string | URL): boolean {
  try {
    const parsed = typeof url === 'string' ? new URL(url) : url;
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}

const fileSchema = z
  .object({
    mcpServers: z.record(z.string(), z.unknown()).refine((servers) => Object.keys(servers).length <= MAX_MCP_SERVERS, `at most ${MAX_MCP_SERVERS} servers`),
  })
  .strict();

/**
 * Parses the common MCP config format: `{"mcpServers": {name: {type?, command, args?, env?, cwd?, disabled?} |
 * {type?, url, headers?, disabled?}}}`, validated whole: a key given twice, a key not listed here or a value of the
 * wrong type is an error naming its path. Entries with `"disabled": true` are checked too, then left out. `source`
 * names the file in errors.
 */
export function parseMcpConfig(json: string, source: string): McpServersConfig {
  // Invisible in an editor: "expected a value at line 1, column 1" pointed at what looks like a `{`.
  if (json.startsWith('\uFEFF')) throw new McpConfigError(source, '', 'starts with a byte order mark (U+FEFF), which JSON does not allow: save the file as UTF-8 without one');
  // Where the text goes wrong, never what it holds: the file may be a link to something that is not JSON at all.
  const [textProblem] = checkJsonText(json);
  if (textProblem?.kind === 'syntax') throw new McpConfigError(source, '', `not valid JSON (${describeJsonTextProblem(textProblem)})`);
  if (textProblem !== undefined) {
    // JSON.parse would keep the last: a server given twice, the first disabled, would start.
    const path = textProblem.path.map(String);
    throw new McpConfigError(source, path.join('.'), describeJsonTextProblem(textProblem), path[0] === 'mcpServers' ? path[1] : undefined);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    throw new McpConfigError(source, '', 'not valid JSON', undefined, { cause: error });
  }
  const file = fileSchema.safeParse(raw);
  if (!file.success) throw fromZod(source, file.error, []);
  const rawServers = (raw as { mcpServers: Record<string, unknown> }).mcpServers;

  const servers: McpServersConfig = new Map();
  // Keys of the raw object, not zod's output: zod drops `__proto__` without a word.
  for (const name of Object.keys(rawServers)) {
    const path = ['mcpServers', name];
    if (name.length > MAX_MCP_SERVER_NAME_LENGTH || !SERVER_NAME.test(name)) {
      throw new McpConfigError(
        source,
        path.join('.'),
        `server names use only letters, digits, "_" and "-", start with a letter or digit, and have at most ${MAX_MCP_SERVER_NAME_LENGTH} characters`,
        name,
      );
    }
    const entry = rawServers[name];
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new McpConfigError(source, path.join('.'), 'expected an object with "command" or "url"', name);
    }
    const server = parseServer(source, name, entry as Record<string, unknown>);
    if (server !== undefined) servers.set(name, server);
  }
  return servers;
}

/** The server an entry describes, or undefined for one marked disabled (checked all the same). */
function parseServer(source: string, name: string, entry: Record<string, unknown>): McpServerConfig | undefined {
  const path = ['mcpServers', name];
  if (Object.hasOwn(entry, 'url')) {
    if (Object.hasOwn(entry, 'command')) throw new McpConfigError(source, path.join('.'), 'give either "command" or "url", not both', name);
    const parsed = httpSchema.safeParse(entry);
    if (!parsed.success) throw fromZod(source, parsed.error, path, name);
    if (parsed.data.type === 'stdio') throw contradictedType(source, name, parsed.data.type, 'url');
    if (parsed.data.disabled === true) return undefined;
    if (parsed.data.type === 'sse') throw legacySse(source, name);
    return { transport: 'http', url: parsed.data.url, headers: parsed.data.headers };
  }
  if (!Object.hasOwn(entry, 'command')) throw new McpConfigError(source, path.join('.'), 'expected "command" (a local server) or "url" (a remote one)', name);
  const parsed = stdioSchema.safeParse(entry);
  if (!parsed.success) throw fromZod(source, parsed.error, path, name);
  if (parsed.data.type !== undefined && parsed.data.type !== 'stdio' && parsed.data.type !== 'sse') throw contradictedType(source, name, parsed.data.type, 'command');
  if (parsed.data.disabled === true) return undefined;
  if (parsed.data.type === 'sse') throw legacySse(source, name);
  const { command, args, env, cwd } = parsed.data;
  return { transport: 'stdio', command, args, env, ...(cwd === undefined ? {} : { cwd }) };
}

/** A `type` the entry's `command` or `url` contradicts: read by the one, the server would not be the other the person wrote. */
function contradictedType(source: string, name: string, type: string, given: 'command' | 'url'): McpConfigError {
  const kind = type === 'stdio' ? 'a local server' : 'a remote server';
  return new McpConfigError(source, ['mcpServers', name, 'type'].join('.'), `"type" is "${type}", ${kind}, but the server gives a "${given}"`, name);
}

function legacySse(source: string, name: string): McpConfigError {
  return new McpConfigError(source, ['mcpServers', name, 'type'].join('.'), 'the legacy SSE transport is not supported; use Streamable HTTP', name);
}

function fromZod(source: string, error: z.ZodError, prefix: string[], server?: string): McpConfigError {
  const issue = error.issues[0];
  // zod names the object holding an unknown key; the key's own path says which one.
  const unknownKey = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const field = [...prefix, ...(issue?.path ?? []).map(String), ...(unknownKey === undefined ? [] : [unknownKey])].join('.');
  const others = error.issues.length - 1 + (issue?.code === 'unrecognized_keys' ? issue.keys.length - 1 : 0);
  const more = others > 0 ? ` (and ${others} more problem${others > 1 ? 's' : ''})` : '';
  const message = unknownKey === undefined ? (issue?.message ?? 'invalid') : 'unknown key (see the README for the keys a server takes)';
  return new McpConfigError(source, field, `${message}${more}`, server, { cause: error });
}

/**
 * The file names the commands Airlock starts as the person, unsandboxed: one that another user may change, or replace
 * (its folder theirs, or writable by others without the sticky bit /tmp has), is refused, as ssh refuses such a key
 * file. Root's own are taken (/etc/airlock). Not checked where the system has no user ids.
 */
function refuseChangeableByOthers(path: string, name: string, info: Stats): void {
  const found = changeableByOthers(path, info);
  if (found === undefined) return;
  switch (found.kind) {
    case 'owner':
      throw new McpConfigError(name, '', `is owned by another user (user ${found.uid}, Airlock runs as ${found.ownUid}), who may change it and so choose the commands Airlock starts as you`);
    case 'mode':
      throw new McpConfigError(name, '', `other users may change it (mode ${found.mode}), and so choose the commands Airlock starts as you: chmod go-w ${shellQuoted(name)}`);
    case 'folder-owner':
      throw new McpConfigError(name, '', `is in a folder of another user (${found.folder} is owned by user ${found.uid}), who may put a file of their own in its place`);
    case 'folder-mode':
      throw new McpConfigError(name, '', `other users may change its folder ${found.folder} (mode ${found.mode}), and so put a file of their own in its place: chmod go-w ${shellQuoted(found.folder)}`);
  }
}

/**
 * Reads and parses the MCP config file at `path` (its real path, from the config). `name` is what errors call it: the
 * path as the person gave it, not where a link leads. Default `path`.
 */
export async function loadMcpConfig(path: string, name: string = path): Promise<McpServersConfig> {
  let text: string;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new McpConfigError(name, '', 'not a regular file');
    if (info.size > MAX_MCP_CONFIG_BYTES) throw new McpConfigError(name, '', `larger than ${MAX_MCP_CONFIG_BYTES} bytes`);
    refuseChangeableByOthers(path, name, info);
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof McpConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const detail = code === 'ENOENT' ? 'the file does not exist' : `cannot be read (${code ?? String(error)})`;
    throw new McpConfigError(name, '', detail, undefined, { cause: error });
  }
  return parseMcpConfig(text, name);
}
