import { parseUntrustedJson } from '@airlock/core';
import { createHash } from 'node:crypto';
import { constants, lstatSync } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { workspaceFileRuleSchema, type Rule } from '@airlock/api';
import { checkJsonText, describeJsonTextProblem } from '../check-json-text';
import { isWithin } from '../tools/path-within';

/** Where a workspace keeps its rules, relative to the workspace. */
export const WORKSPACE_RULES_FILE = '.airlock/rules.json';
const MAX_FILE_BYTES = 256 * 1024;
const MAX_RULES = 1000;

/**
 * How deep a rules file may nest: the deepest rule is an `exact-arguments` one, its arguments 32 levels (their limit)
 * below the 4 of the file, the list, the entry and its match. JSON.parse with a reviver recurses, and a file nested
 * 100,000 deep overflowed its stack.
 */
export const MAX_RULES_FILE_DEPTH = 64;
/** A byte-order mark, which some editors put at the start of a UTF-8 file: not part of the JSON, and skipped. */
const BYTE_ORDER_MARK = '\uFEFF';
/** Characters that end a line or steer a terminal: a reason is one line of plain text. */
const NOT_ONE_LINE = /[\p{Cc}\u2028\u2029]/u;

/**
 * A reason is told to the model when its rule denies a call, next to the rule's sentence: from a file, where anyone
 * who can write the workspace may have put it, it must not read as more lines of that message.
 */
function checkReason(rule: { reason?: string | undefined }, context: z.RefinementCtx): void {
  const at = rule.reason?.search(NOT_ONE_LINE) ?? -1;
  if (at === -1) return;
  const code = rule.reason!.codePointAt(at)!.toString(16).toUpperCase().padStart(4, '0');
  context.addIssue({ code: 'custom', path: ['reason'], message: `must be one line of text, without line breaks or control characters (U+${code} at character ${at + 1})` });
}

const workspaceRulesFileSchema = z
  .object({
    version: z.literal(1),
    rules: z.array(workspaceFileRuleSchema.superRefine(checkReason)).max(MAX_RULES),
  })
  .strict();

/** A rules file that is unreadable or invalid: none of its allow rules apply (what denies still do: `RuleBook`). */
export class WorkspaceRulesError extends Error {
  override readonly name = 'WorkspaceRulesError';
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
  ) {
    super(`${file} is not a valid rules file: ${problems.join('; ')}`);
  }
}

/**
 * What a workspace's rules file holds. `sha256` is the hash of the exact bytes read, what the person's trust names:
 * absent where nothing could be read.
 */
export type WorkspaceRules =
  | { kind: 'absent' }
  | { kind: 'loaded'; rules: readonly Rule[]; sha256: string }
  | { kind: 'invalid'; error: WorkspaceRulesError; sha256?: string };

export interface ParseWorkspaceRulesOptions {
  /** The workspace's absolute path: the scope of every rule in the file. */
  workspace: string;
  /** When the file last changed: the rules' `createdAt`. */
  modifiedAt: Date;
}

/**
 * The rules a `.airlock/rules.json` text holds, each scoped to its workspace and marked as coming from the
 * file (so its allow rules count only in a trusted workspace). Throws WorkspaceRulesError listing every problem.
 */
export function parseWorkspaceRules(written: string, options: ParseWorkspaceRulesOptions): Rule[] {
  const file = path.join(options.workspace, WORKSPACE_RULES_FILE);
  const text = written.startsWith(BYTE_ORDER_MARK) ? written.slice(BYTE_ORDER_MARK.length) : written;
  // JSON.parse keeps the last of a key given twice: {"effect":"deny",…,"effect":"allow"} would read as an allow.
  const textProblems = checkJsonText(text);
  const syntax = textProblems.find((problem) => problem.kind === 'syntax');
  if (syntax !== undefined) throw new WorkspaceRulesError(file, [`not JSON (${describeJsonTextProblem(syntax)})`]);
  const tooDeep = deeperThan(text, MAX_RULES_FILE_DEPTH);
  if (tooDeep !== undefined) {
    throw new WorkspaceRulesError(file, [`(file): nested deeper than ${MAX_RULES_FILE_DEPTH} levels (at line ${tooDeep.line}, column ${tooDeep.column})`]);
  }
  const duplicates = textProblems.map((problem) => `${problem.kind === 'duplicate-key' ? formatPath(problem.path) : '(file)'}: ${describeJsonTextProblem(problem)}`);
  const dropped: string[] = [];
  let json: unknown;
  try {
    json = parseUntrustedJson(text, dropped);
  } catch {
    throw new WorkspaceRulesError(file, ['not JSON']);
  }
  // Dropped by the parser, such a key would be the one unknown key that does not make the file invalid.
  const prototypeKeys = [...new Set(dropped)].map((key) => `(file): the key "${key}" is not allowed (it could reach an object's prototype)`);
  const parsed = workspaceRulesFileSchema.safeParse(json);
  if (!parsed.success || duplicates.length > 0 || prototypeKeys.length > 0) {
    throw new WorkspaceRulesError(file, [
      ...duplicates,
      ...prototypeKeys,
      ...(parsed.error?.issues.map((issue) => `${issue.path.length === 0 ? '(file)' : formatPath(issue.path)}: ${issue.message}`) ?? []),
    ]);
  }
  const fileId = createHash('sha256').update(file).digest('hex').slice(0, 12);
  return parsed.data.rules.map((entry, index) => ({
    ...entry,
    id: `workspace-file:${fileId}:${index}`,
    scope: { kind: 'workspace', path: options.workspace },
    source: 'workspace-file',
    createdAt: options.modifiedAt.toISOString(),
  }));
}

/** Reads and validates the workspace's rules file; never throws for a missing, unreadable or invalid file. */
export async function loadWorkspaceRules(workspace: string): Promise<WorkspaceRules> {
  const file = path.join(workspace, WORKSPACE_RULES_FILE);
  let real: string;
  let bytes: Buffer;
  let modifiedAt: Date;
  // Most workspaces have none, and this runs for every call judged: a look at the path itself first, which makes no
  // error object (a rejected realpath made one, and took about a tenth of the server's time while 2,000 chats started
  // at once). Nothing there at all is what realpath's ENOENT says too; anything else (a link, a folder, a failed look)
  // is read below as before.
  try {
    if (lstatSync(file, { throwIfNoEntry: false }) === undefined) return { kind: 'absent' };
  } catch {
    // ENOTDIR, EACCES…: said by the read below.
  }
  try {
    real = await realpath(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    return invalid(file, `cannot be read (${(error as Error).message})`);
  }
  try {
    if (!isWithin(await realpath(workspace), real)) return invalid(file, 'it leads outside the workspace');
    // Opened without blocking and checked through the handle: a FIFO put at the path (by a tool) can neither hang
    // the read nor be swapped in after the check, and a file that grows is read no further than the limit.
    const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    try {
      const info = await handle.stat();
      if (!info.isFile()) return invalid(file, 'it is not a file');
      if (info.size > MAX_FILE_BYTES) return invalid(file, `it is larger than ${MAX_FILE_BYTES} bytes`);
      modifiedAt = info.mtime;
      const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
      let length = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
        if (bytesRead === 0 || (length += bytesRead) === buffer.length) break;
      }
      bytes = buffer.subarray(0, length);
    } finally {
      await handle.close();
    }
  } catch (error) {
    return invalid(file, `cannot be read (${(error as Error).message})`);
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  // It may have grown between the check and the read.
  if (bytes.length > MAX_FILE_BYTES) return { ...invalid(file, `it is larger than ${MAX_FILE_BYTES} bytes`), sha256 };
  try {
    return { kind: 'loaded', rules: parseWorkspaceRules(bytes.toString('utf8'), { workspace, modifiedAt }), sha256 };
  } catch (error) {
    if (error instanceof WorkspaceRulesError) return { kind: 'invalid', error, sha256 };
    return { ...invalid(file, `cannot be read (${(error as Error).message})`), sha256 };
  }
}

/**
 * Where a valid JSON text first opens an array or object deeper than `limit`, if it does. One pass, skipping strings;
 * line and column count from 1.
 */
function deeperThan(text: string, limit: number): { line: number; column: number } | undefined {
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  let inString = false;
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    if (inString) {
      if (char === '\\') at++;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '[' || char === '{') {
      depth++;
      if (depth > limit) return { line, column: at - lineStart + 1 };
    } else if (char === ']' || char === '}') {
      depth--;
    } else if (char === '\n') {
      line++;
      lineStart = at + 1;
    }
  }
  return undefined;
}

function invalid(file: string, problem: string): { kind: 'invalid'; error: WorkspaceRulesError } {
  return { kind: 'invalid', error: new WorkspaceRulesError(file, [problem]) };
}

function formatPath(segments: readonly PropertyKey[]): string {
  return segments.reduce<string>(
    (text, segment) => (typeof segment === 'number' ? `${text}[${segment}]` : `${text}${text === '' ? '' : '.'}${String(segment)}`),
    '',
  );
}
