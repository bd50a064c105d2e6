import { MAX_MESSAGE_LENGTH, MAX_REASON_LENGTH, MAX_TIMER_MS, toolArgumentsSchema, type ToolArguments } from '@airlock/core';
import { z } from 'zod';
import { ruleDraftSchema } from './rules/rule';

/** Session, run and approval ids are opaque to clients but bounded and printable. */
export const idSchema = z.string().min(1).max(128).regex(/^[A-Za-z0-9_:.-]+$/, 'only letters, digits and _ : . - are allowed');

export const runOptionsSchema = z.strictObject({
  confirmToolCalls: z.boolean().optional(),
  enabledTools: z.array(z.string().min(1).max(128)).max(500).optional(),
  maxToolCalls: z.number().int().min(1).max(200).optional(),
  toolCallTimeoutMs: z.number().int().min(1000).max(60 * 60 * 1000).optional(),
  decisionTimeoutMs: z.union([z.number().int().min(1000).max(MAX_TIMER_MS), z.literal('never')]).optional(),
});

export const streamInputSchema = z.object({
  sessionId: idSchema,
  runId: idSchema.optional(),
  /** The new user message; not needed when re-attaching to a run. */
  message: z.string().max(MAX_MESSAGE_LENGTH).optional(),
  options: runOptionsSchema.optional(),
  lastEventId: z.string().max(200).optional(),
});

/** The most an edit of a call's arguments may weigh, as JSON. */
export const MAX_EDITED_ARGUMENTS_BYTES = 64 * 1024;

/** The deepest an edit's arguments may nest (objects and arrays). */
export const MAX_EDITED_ARGUMENTS_DEPTH = 64;

/** How deep `value` nests, counted without recursion and no further than just past `limit`. */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Names that reach a prototype where an edit is copied: an edit naming one is refused, never cut unseen. */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** The first key of `value`, no deeper than `limit`, that reaches a prototype; found without recursion. */
export function prototypeKeyIn(value: unknown, limit: number): string | undefined {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null || depth > limit) continue;
    for (const [key, child] of Object.entries(item)) {
      if (PROTOTYPE_KEYS.has(key)) return key;
      stack.push([child, depth + 1]);
    }
  }
  return undefined;
}

const editedArgumentsSchema = toolArgumentsSchema
    // Checked first, without recursion: what follows (the size, the tool's schema) walks the value recursively.
    .refine((args) => nestingDepth(args, MAX_EDITED_ARGUMENTS_DEPTH) <= MAX_EDITED_ARGUMENTS_DEPTH, {
      message: `at most ${MAX_EDITED_ARGUMENTS_DEPTH} levels of nesting`,
      abort: true,
    })
    .refine((args) => new TextEncoder().encode(JSON.stringify(args)).length <= MAX_EDITED_ARGUMENTS_BYTES, {
      message: `at most ${MAX_EDITED_ARGUMENTS_BYTES / 1024} KiB of JSON`,
    });

export const confirmInputSchema = z.object({
  sessionId: idSchema,
  approvalId: z.string().max(200),
  decision: z.enum(['allow', 'deny']),
  reason: z.string().max(MAX_REASON_LENGTH).optional(),
  always: z.boolean().optional(),
  /** With always: this chat (a grant, the default), this workspace or everywhere (a lasting rule). */
  scope: z.enum(['chat', 'workspace', 'global']).optional(),
  /**
   * With always at a workspace or global scope: the rule the card showed (`rules.propose`'s draft). Drafted otherwise
   * by the time the decision lands, nothing is decided (CONFLICT) and the call waits on, to be shown its rule again.
   */
  rule: ruleDraftSchema.optional(),
  /** With allow: the arguments the person edited the call to; checked against the tool's schema before anything runs. */
  arguments: z
    // Before the record's parse, which drops a top-level `__proto__` unseen, as copying the edit drops the others.
    .preprocess<unknown, typeof editedArgumentsSchema, ToolArguments>((value, context) => {
      const key = prototypeKeyIn(value, MAX_EDITED_ARGUMENTS_DEPTH);
      if (key !== undefined) context.addIssue({ code: 'custom', message: `no argument may be named \`${key}\`, a name that reaches a prototype`, input: value });
      return value;
    }, editedArgumentsSchema)
    .optional(),
  /** A short name for the client deciding ("web", "cli", "my-bot"), kept in the ledger. */
  clientLabel: z.string().max(100).optional(),
  /**
   * When the client stops waiting for the answer, on its own clock (`performance.now()` ms, as its connection param
   * `clock`): a decision that would be applied later is refused (TIMEOUT) and the call goes on waiting, so a decision
   * its client reported as failed never lands afterwards. Needs the connection param `clock`. Default none.
   */
  notAfter: z.number().finite().optional(),
});

export const sessionUpdateSchema = z.object({
  sessionId: idSchema,
  confirmToolCalls: z.boolean().optional(),
  title: z.string().trim().min(1).max(200).optional(),
});

export const auditQuerySchema = z.object({
  sessionId: idSchema.optional(),
  toolName: z.string().min(1).max(128).optional(),
  decision: z.enum(['allow', 'deny', 'timeout', 'cancel', 'none']).optional(),
  from: z.number().int().min(0).optional(),
  to: z.number().int().min(0).optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  cursor: z.string().max(500).optional(),
});

export const sessionInputSchema = z.object({ sessionId: idSchema });

/** `rules.trustWorkspace`: trust names the rules file's content as shown (its SHA-256), or trust is withdrawn. */
export const workspaceTrustSchema = z.discriminatedUnion('trusted', [
  z.object({ trusted: z.literal(true), sha256: z.string().regex(/^[0-9a-f]{64}$/, 'the SHA-256 of the rules file, in lower-case hex') }),
  z.object({ trusted: z.literal(false) }),
]);
