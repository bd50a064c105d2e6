import { z } from 'zod';
import { shownReasonSchema } from './reason';

/** Why a rule had a call put up: the rule, and the reason the card gives ("Why you are asked"). */
export const askedBecauseSchema = z.object({ ruleId: z.string(), reason: shownReasonSchema });
export type AskedBecause = z.infer<typeof askedBecauseSchema>;

export const toolArgumentsSchema = z.record(z.string(), z.unknown());
export type ToolArguments = z.infer<typeof toolArgumentsSchema>;

export const decisionSchema = z.enum(['allow', 'deny', 'timeout', 'cancel']);
export type Decision = z.infer<typeof decisionSchema>;

/**
 * Who decided: the person, an "Always allow" grant, a lasting rule, nobody because confirmation was off for the chat,
 * or Airlock itself ("system": the wait's time limit ran out, or an allow could not be recorded and nothing ran).
 */
export const decisionSourceSchema = z.enum(['user', 'grant', 'rule', 'confirmation-off', 'system']);
export type DecisionSource = z.infer<typeof decisionSourceSchema>;

export const toolOutcomeSchema = z.enum([
  'executed',
  'error',
  'denied',
  'timed-out',
  'cancelled',
  'disabled',
  'duplicate',
  /** It was running when the server stopped: it may have done part of its work, and is never run again by itself. */
  'interrupted',
]);
export type ToolOutcome = z.infer<typeof toolOutcomeSchema>;

export const runEndReasonSchema = z.enum(['done', 'cancelled', 'error', 'tool-budget']);
export type RunEndReason = z.infer<typeof runEndReasonSchema>;

export const runStartEventSchema = z.object({
  type: z.literal('run-start'),
  runId: z.string(),
  sessionId: z.string(),
});

export const statusEventSchema = z.object({
  type: z.literal('status'),
  text: z.string(),
  /** The call this status is about, when it is about one. */
  toolCallId: z.string().optional(),
  /**
   * The call waits for a place among the calls running at once: allowed by the person, or let through without asking
   * (then nothing else of it is stored yet: it is judged again once it has its place). A later status about the same
   * call without it says it has its place and starts: a run resumed after a restart knows which calls never started.
   */
  waitingForPlace: z.literal(true).optional(),
  /**
   * The run goes on from its stored state (after a restart, or on another instance): what statuses before it said
   * about calls waiting for a place no longer holds.
   */
  resumed: z.literal(true).optional(),
});

export const textDeltaEventSchema = z.object({
  type: z.literal('text-delta'),
  text: z.string(),
});

export const reasoningDeltaEventSchema = z.object({
  type: z.literal('reasoning-delta'),
  text: z.string(),
});

/** Names a tool-start's declared arguments hold at most, all levels together: past them a level is not known. */
export const MAX_DECLARED_NAMES = 128;
/** The longest name a tool-start's declared arguments hold: a level with a longer one is not known. */
export const MAX_DECLARED_NAME_LENGTH = 64;

/** A name a tool's schema declares, and when its value is an object with declared names of its own, those. */
export interface DeclaredName {
  name: string;
  inner?: DeclaredArguments;
}

/**
 * The names a level of a tool's schema declares, or that they are not known: a schema this reading does not follow
 * (`unreadable`), or more names, longer names or deeper levels than an event holds (`too-large`, `too-deep`). A name
 * at a level not known counts as not declared.
 */
export type DeclaredArguments = { names: DeclaredName[] } | { unknown: string };

export const declaredArgumentsSchema: z.ZodType<DeclaredArguments> = z.union([
  z.object({
    names: z
      .array(
        z.object({
          name: z.string().max(MAX_DECLARED_NAME_LENGTH),
          get inner() {
            return declaredArgumentsSchema.optional();
          },
        }),
      )
      .max(MAX_DECLARED_NAMES),
  }),
  z.object({ unknown: z.string().max(32) }),
]);

/**
 * Why a card may not show every default its tool acts on, for a call whose arguments were filled with the defaults
 * the tool's schema declares (see `declaredDefaults`): `limit`, the filling stopped at its bound (its steps, or its
 * levels with a schema under them that declares a default); `ambiguous`, which default applies is not known (several
 * branches of a union fit the call, or two schemas give one name different defaults); `unreadable`, a part of the
 * schema that may declare one is not followed (a reference to another document or by anchor, a condition, items by
 * position, a name that reaches a prototype, a name only a pattern or `additionalProperties` covers); `refused`, a
 * default the tool's own check refuses was left out.
 */
export const unshownDefaultsReasonSchema = z.enum(['limit', 'ambiguous', 'unreadable', 'refused']);
export type UnshownDefaultsReason = z.infer<typeof unshownDefaultsReasonSchema>;

/** The longest tool source a tool-start carries: "mcp:" and a server name (the MCP config keeps those to 32 characters). */
export const MAX_SHOWN_TOOL_SOURCE_LENGTH = 64;

/**
 * The tool as its call was put up, as the card shows it: where it comes from ("builtin", "mcp:<server>") and the
 * hints about it (an MCP server's hints are its own claims). An MCP server can rewrite a tool at any moment, and a
 * decision covers the tool as it was when the call was put up (see `toolVersion`): the card shows these, not the tool
 * as listed now. Booleans and one short string: the event stays small whatever the tool says of itself.
 */
export const shownToolSchema = z.object({
  source: z.string().max(MAX_SHOWN_TOOL_SOURCE_LENGTH),
  /**
   * The argument names the tool's schema declared when the call was put up (see `declaredArguments`): what the card
   * marks names against. Absent from events stored before it was recorded: a client then reads the tool as listed now.
   */
  declared: declaredArgumentsSchema.optional(),
  /**
   * The call this tool-start puts up may run on defaults of the tool's schema that its arguments do not show, and
   * why, each reason once: what the card says beside the arguments. Absent when every default the schema declares
   * for what the call leaves out was filled in, and from events stored before it was recorded.
   */
  unshownDefaults: z.array(unshownDefaultsReasonSchema).min(1).max(unshownDefaultsReasonSchema.options.length).optional(),
  annotations: z.object({
    readOnly: z.boolean(),
    destructive: z.boolean(),
    executesCode: z.boolean(),
    /** "Always allow" covers only the exact arguments (a code-running tool, a file write, a fetch). */
    exactGrants: z.boolean(),
    idempotent: z.boolean(),
    openWorld: z.boolean(),
  }),
});
export type ShownTool = z.infer<typeof shownToolSchema>;

export const toolStartEventSchema = z.object({
  type: z.literal('tool-start'),
  toolCallId: z.string(),
  toolName: z.string(),
  arguments: toolArgumentsSchema,
  /** Unguessable id to echo back in a decision; "" when the call is not gated. */
  approvalId: z.string(),
  awaitingConfirmation: z.boolean(),
  /** Epoch ms after which an undecided call times out; null when it never does or is not gated. */
  expiresAt: z.number().nullable().optional(),
  /**
   * The tool as the call was put up. Absent when no offered tool has the call's name, and from events stored before
   * it was recorded: a client then knows the tool only as listed now.
   */
  tool: shownToolSchema.optional(),
  /**
   * Why a lasting rule put the call up rather than deciding it, with confirmation on or off (see PolicyVerdict's
   * `ask`): the rule's id and the reason, for the card, in parts a client draws as they are (a string in events stored
   * before reasons were typed). Absent when no rule asked.
   */
  askedBecause: askedBecauseSchema.optional(),
  /**
   * True when only a grant for these exact arguments (or the person) may release the call, whatever the tool's grants
   * cover: a deny rule could not tell it from a call it denies. Kept so a call restored from the store keeps it.
   */
  exactGrantsOnly: z.literal(true).optional(),
});

export const toolDecisionEventSchema = z.object({
  type: z.literal('tool-decision'),
  toolCallId: z.string(),
  approvalId: z.string(),
  decision: decisionSchema,
  source: decisionSourceSchema,
  reason: z.string().optional(),
  /** The grant that allowed the call, when source is "grant". */
  grantId: z.string().optional(),
  /**
   * The rule that decided, when source is "rule": its id and how it reads (`[{ text: 'Allow commands starting with ' },
   * { code: 'npm test' }, { text: ' in this workspace' }]`; a string in events stored before reasons were typed).
   */
  ruleId: z.string().optional(),
  rule: shownReasonSchema.optional(),
  /** With a person's allow: the arguments they edited the call to, which are what runs (`arguments` of tool-start stays the model's proposal). */
  editedArguments: toolArgumentsSchema.optional(),
});

/**
 * What the server left out of a tool's result before the model saw it, counted where it cut it. A client's note that
 * a result was shortened comes from this alone, never from the result's text: a tool's output (a page, a file) can
 * contain any marker.
 */
export const resultCutSchema = z.object({
  /** Bytes of a command's output left out between its head and its tail. */
  bytes: z.number().int().positive().optional(),
  /** Characters the loop cut from the middle of a result longer than its limit. */
  characters: z.number().int().positive().optional(),
});
export type ResultCut = z.infer<typeof resultCutSchema>;

export const toolEndEventSchema = z.object({
  type: z.literal('tool-end'),
  toolCallId: z.string(),
  toolName: z.string(),
  outcome: toolOutcomeSchema,
  result: z.string(),
  /** Absent when nothing was left out of `result`. */
  cut: resultCutSchema.optional(),
  /**
   * When the tool began to run (ms since the epoch), on this instance's clock; absent when it never did (refused,
   * cancelled before it started, not run). A call that waited for a place among the running calls started late.
   */
  startedAt: z.number().int().nonnegative().optional(),
});

export const runEndEventSchema = z.object({
  type: z.literal('run-end'),
  runId: z.string(),
  reason: runEndReasonSchema,
  error: z.string().optional(),
});

/** Every event a run emits, in order. The single source of truth for server, router and clients. */
export const loopEventSchema = z.discriminatedUnion('type', [
  runStartEventSchema,
  statusEventSchema,
  textDeltaEventSchema,
  reasoningDeltaEventSchema,
  toolStartEventSchema,
  toolDecisionEventSchema,
  toolEndEventSchema,
  runEndEventSchema,
]);

export type LoopEvent = z.infer<typeof loopEventSchema>;
export type LoopEventType = LoopEvent['type'];
export type LoopEventOf<T extends LoopEventType> = Extract<LoopEvent, { type: T }>;
export type ToolStartEvent = LoopEventOf<'tool-start'>;
export type ToolDecisionEvent = LoopEventOf<'tool-decision'>;
export type ToolEndEvent = LoopEventOf<'tool-end'>;
export type RunEndEvent = LoopEventOf<'run-end'>;
