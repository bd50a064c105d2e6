import { canonicalJson, isPlainObject, MAX_TOOL_CALLS_PER_TURN, type ModelPart, type TokenUsage } from '@airlock/core';
import { z } from 'zod';
import { JsonObjectTracker } from './json-object-tracker';

/** Most tool calls one streamed turn may assemble (the loop's bound on a turn's calls); a model that sends more is misbehaving. */
export const MAX_STREAMED_TOOL_CALLS = MAX_TOOL_CALLS_PER_TURN;
/** Most argument text one streamed tool call may accumulate (characters); arguments sent as an object count as their JSON. */
export const MAX_TOOL_ARGUMENT_CHARS = 1_000_000;
/** Most argument text all the tool calls of one turn may hold together (characters), as for a turn's text. */
export const MAX_TURN_ARGUMENT_CHARS = 1_000_000;
/**
 * Longest tool name a model may send (characters): tool names are at most 64 characters, so this is room for a model
 * that gets one wrong, not for a name of megabytes (64 calls named with 6 MB each took the server to 3.2 GB).
 */
export const MAX_TOOL_NAME_CHARS = 256;
/** Longest tool-call id a model may send (characters); servers make ids of a few dozen. */
export const MAX_TOOL_CALL_ID_CHARS = 256;
/**
 * Most text, and most reasoning, one streamed turn may hold (characters): far past what a model writes in a turn (about
 * 250,000 tokens). A server that sent 100 MB of text had it all kept, took the server to 1 GB, and left a chat that
 * could no longer be opened.
 */
export const MAX_TURN_TEXT_CHARS = 1_000_000;
/**
 * Shown in the reasoning, once a turn, for the reasoning a server sends encrypted (a `redacted_thinking` part): the
 * person learns the model reasoned there, and reads none of it. A paragraph of its own wherever it comes.
 */
export const WITHHELD_REASONING = '\n\n(reasoning withheld by the model server)\n\n';

const functionSchema = z.object({
  name: z.string().nullish(),
  // An object is kept as the server sent it, not rebuilt: a record schema copies it key by key, and a key
  // `__proto__` copied so is dropped unseen, where the loop refuses the call that holds it (parseToolArguments).
  arguments: z.union([z.string(), z.custom<Record<string, unknown>>(isPlainObject, 'expected a string or an object')]).nullish(),
});

const textPartSchema = z.object({ type: z.string(), text: z.string().nullish() });

/** Reasoning, as text or as a list of text parts: a thinking part's `thinking`, and `reasoning_content` some servers send so. */
const reasoningSchema = z.union([z.string(), z.array(textPartSchema)]);

/**
 * A block of a model's thinking as a proxy passes it on (`thinking_blocks`, beside or instead of `reasoning_content`):
 * `{"type": "thinking", "thinking": "…", "signature": "…"}`, a block holding only its signature (its `thinking` empty
 * or left out) showing nothing, or `{"type": "redacted_thinking", "data": "…"}`. The signature and the data are not
 * read: reasoning is not sent back to the model (openai-messages.ts).
 */
const thinkingBlockSchema = z.object({ type: z.string(), thinking: z.string().nullish() });

/**
 * A part of content sent as a list of parts, as some servers send the answer's text: `{"type": "text", "text": "Hi"}`,
 * and reasoning models their thinking: `{"type": "thinking", "thinking": [{"type": "text", "text": "…"}]}`.
 */
const contentPartSchema = textPartSchema.extend({ refusal: z.string().nullish(), thinking: reasoningSchema.nullish() });

const toolCallDeltaSchema = z.object({
  index: z.number().int().min(0).max(MAX_STREAMED_TOOL_CALLS - 1).nullish(),
  id: z.string().nullish(),
  function: functionSchema.nullish(),
});

/**
 * A chunk's or a message's `tool_calls`: a list, or one call sent alone as an object, as some servers send a single
 * call (refused as a malformed chunk, the call not read). Any other shape is named as what it is: an object without a
 * function, keyed `"0"`, `"1"`, is not taken for a call, whose keys the schema would drop, and its calls with them.
 */
const toolCallsSchema = z.preprocess(
  (value) => (isPlainObject(value) && Object.hasOwn(value, 'function') ? [value] : value),
  z
    .array(toolCallDeltaSchema, {
      error: (issue) => (issue.code === 'invalid_type' ? `expected a list of tool calls, or one call with its function, received ${shapeOf(issue.input)}` : undefined),
    })
    .nullish(),
);

const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().nullish(),
        delta: z
          .object({
            content: z.union([z.string(), z.array(contentPartSchema)]).nullish(),
            // A hosted model's refusal comes in place of the answer's text: it was dropped unseen, and the turn showed nothing.
            refusal: z.string().nullish(),
            reasoning_content: reasoningSchema.nullish(),
            reasoning: reasoningSchema.nullish(),
            thinking_blocks: z.array(thinkingBlockSchema).nullish(),
            tool_calls: toolCallsSchema,
            function_call: functionSchema.nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z
    .object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() })
    .nullish(),
});

type FinishReason = Extract<ModelPart, { type: 'finish' }>['reason'];

interface PendingCall {
  id: string;
  name: string;
  arguments: string | Record<string, unknown>;
  /** The arguments' length as counted against the limits: their text, or an object's JSON. */
  size: number;
  /** The longest the arguments have been (as `size`): only arguments growing past it are the turn's progress. */
  longest: number;
  /** Whether the argument text so far is one whole JSON object: text after it cannot go on from it. */
  text: JsonObjectTracker;
  /**
   * Whether its id came with a later piece than the one that opened it, as a hosted server sends one id on every later
   * piece, the same for each call of the turn (see `indexWithoutOne`).
   */
  idFromLaterPiece: boolean;
}

/** A chunk the reader cannot use; the message says what was wrong, without echoing the chunk. */
/** The finish reasons that say an answer is not whole (see OpenAIChunkReader.cutOff). */
const CUT_OFF_REASONS = ['length', 'content_filter', 'abort', 'error'] as const;
type CutOffReason = (typeof CUT_OFF_REASONS)[number];

export class MalformedChunkError extends Error {
  override readonly name = 'MalformedChunkError';
}

/** A well-formed answer past one of the limits on a turn (its text, its calls, their arguments); the message says which. */
export class AnswerLimitError extends Error {
  override readonly name = 'AnswerLimitError';
}

/**
 * Turns OpenAI `chat.completion.chunk` objects into model parts.
 * Text and reasoning pass through as they arrive; tool calls are assembled by `index`
 * (id and name come first, argument text in pieces) and emitted by `finish`.
 */
export class OpenAIChunkReader {
  /**
   * The calls by their place: a server's index (0 to 63) for the calls it sends there; from 64 on, calls moved off an
   * index another call holds and calls sent without an index. Placed among the indexes, such a call met the pieces and
   * the waiting id of the index it stood at: a call sent at index 1 after a call moved off index 0 to place 1 was put
   * up under the moved call's id, then with its arguments; one sent without an index took the id waiting at index 1.
   */
  private readonly calls = new Map<number, PendingCall>();
  private lastIndex: number | undefined;
  /** For a server that sends a new call at an index a call already holds: the call its later pieces at that index go to. */
  private readonly moved = new Map<number, number>();
  /** The index each place from 64 on was given to a call moved off; a place not in it holds a call sent without an index. */
  private readonly movedFrom = new Map<number, number>();
  /** The next place from 64 on no call and no id has had. */
  private nextPlace = MAX_STREAMED_TOOL_CALLS;
  /**
   * A call's id sent alone (no name, no arguments) at a place no call holds yet: kept for the piece that brings the
   * call's name or arguments there. Made a call at once, such a piece that nothing filled was put up as a call of no
   * name, and one filled by a piece with another id was two calls, the first of no name.
   */
  private readonly waitingIds = new Map<number, string>();
  /**
   * The id sent alone that the id waiting at a place replaced there (the latest; one before it is forgotten, so ids
   * sent alone still hold one place each). Forgotten at once, its call opened later by a piece with its id was placed
   * after every other, and the waiting id that replaced it, opened by its own id, left that index's pieces with no id
   * going to the first: two ids alone at index 0, then a's name, a's arguments, b's name, b's arguments, were put up as
   * b's call of no arguments and a's with both calls' arguments joined.
   */
  private readonly replacedIds = new Map<number, string>();
  /** The place of each call's id, each waiting id and each replaced one, the first for an id two calls were sent with. */
  private readonly placeOfId = new Map<string, number>();
  /**
   * The places where an id sent without an index waits on, set aside by a call that opened the id replacing it there
   * (`openWaiting`): only a piece carrying it takes it, and its call goes to a place of its own then, listed where it
   * came. Taken as the place an id alone waits, a call sent with no id took it, and that id's own call later replaced
   * the arguments of that one or was joined to them: `ls` put up as `{"command":"ls"}{"command":"rm -rf build"}`.
   */
  private readonly setAside = new Set<number>();
  /**
   * An id sent alone (no name, no arguments, or blank text) at the place of a named call with another id whose
   * arguments are not yet whole (without an index, whole or not, and an id waiting without one sent alone again): the
   * next call's id if a name follows there, or nothing, as a hosted server's later pieces each carry another id. Taken
   * as the call's, a server numbering every call 0 that sends each id before its name had the turn end as the call's
   * name changing when the next call's name came (a call of no arguments, sent none, then another). One a place,
   * replaced by the next: a call sent with no id takes the latest. Blank text with it, once the call's text has begun,
   * is still the call's (`keepsBlank`).
   */
  private readonly nextIds = new Map<number, string>();
  /** The places of calls sent without an index that opened under an id of `nextIds`, one sent alone before them. */
  private readonly underNextId = new Set<number>();
  private finishReason: string | undefined;
  private usage: TokenUsage | undefined;
  private textChars = 0;
  private reasoningChars = 0;
  /** Whether WITHHELD_REASONING has been shown in this turn. */
  private withheldShown = false;
  private argumentChars = 0;
  private pieces = 0;
  /**
   * For a server that sends neither index nor id: the last call's name, sent again over no arguments after that call's
   * whole arguments. It starts a call only once arguments follow, then under that name (see `indexWithoutOne`).
   */
  private possibleStart: string | undefined;
  /**
   * The last whole arguments pieces were compared with (`repeatsArguments`) and their canonical form (undefined: not an
   * object), worked out once: worked out for each piece, a megabyte of arguments resent 70 bytes at a time held the
   * server's thread for a minute.
   */
  private heldArguments: { held: string | Record<string, unknown>; canonical: string | undefined } | undefined;

  /**
   * How many pieces of the answer have arrived: text, reasoning, or a fragment of a tool call that adds to it (its
   * id, its name, or arguments longer than the call's have ever been). A chunk with none of them (an empty delta, the
   * usage, an id or name a call already has, whole arguments sent again, text that starts the arguments over) is no
   * progress, nor is an event-stream comment.
   */
  get progress(): number {
    return this.pieces;
  }

  /** Whether the server has said why the turn ended; a stream that stops before that was cut off. */
  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  push(chunk: unknown): ModelPart[] {
    // A streamed choice holding a whole `message` in place of a `delta`, from a server streaming its answer as one such
    // chunk: its text and calls were dropped unseen. After pieces of the answer it repeats them, as clients of the
    // format read it (not at all), and is not read again.
    const parsed = chunkSchema.safeParse(this.pieces === 0 && this.finishReason === undefined ? withMessagesAsDeltas(chunk) : chunk);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? ` at ${issue.path.map(String).join('.')}` : '';
      throw new MalformedChunkError(`unexpected chunk shape${where}: ${issue?.message ?? 'invalid'}`);
    }
    const parts: ModelPart[] = [];
    for (const [place, choice] of (parsed.data.choices ?? []).entries()) {
      // One answer is asked for (no `n`): a second, read as the same one, would join its text and its calls' pieces
      // to the first's, a call neither answer made.
      const index = choice.index ?? place;
      if (index !== 0) throw new MalformedChunkError(`the answer holds a second choice (index ${index}); one answer was asked for`);
      const delta = choice.delta;
      // Some servers send the same text under two or three names; one of them is enough. One sent empty is none: the
      // other's text was dropped unseen under it. A proxy sending thinking_blocks sends their thinking under
      // reasoning_content too, in the same chunk: the blocks are read first, as only they carry redacted thinking.
      const withheld = () => this.withheldMarker();
      const given =
        readThinkingBlocks(delta?.thinking_blocks, withheld) ||
        readReasoning(delta?.reasoning_content, "the answer's reasoning", withheld) ||
        readReasoning(delta?.reasoning, "the answer's reasoning", withheld);
      const content = readContent(delta?.content, withheld);
      const reasoning = `${given}${content.reasoning}`;
      // The older field for one call, as a server answering the older way sends it, neither index nor id: it was
      // dropped unseen, and the turn ended with nothing. Beside tool_calls it is the same call again.
      const calls = delta?.tool_calls?.length || !delta?.function_call ? (delta?.tool_calls ?? []) : [{ function: delta.function_call }];
      const text = `${content.text}${delta?.refusal ?? ''}`;
      this.refuseAfterFinish(Boolean(reasoning || text), calls.length > 0);
      if (reasoning) {
        this.reasoningChars += reasoning.length;
        if (this.reasoningChars > MAX_TURN_TEXT_CHARS) throw new AnswerLimitError(`the reasoning of one turn passed ${MAX_TURN_TEXT_CHARS} characters`);
        this.pieces++;
        parts.push({ type: 'reasoning-delta', text: reasoning });
      }
      if (text) {
        this.textChars += text.length;
        if (this.textChars > MAX_TURN_TEXT_CHARS) throw new AnswerLimitError(`the text of one turn passed ${MAX_TURN_TEXT_CHARS} characters`);
        this.pieces++;
        parts.push({ type: 'text-delta', text });
      }
      for (const call of calls) this.addToolCallDelta(call);
      // A cut-off answer stays so: a server ending each answer with "stop" as well would have its cut-off call pass as whole.
      if (choice.finish_reason && this.cutOff === undefined) this.finishReason = choice.finish_reason;
    }
    const usage = parsed.data.usage;
    if (usage) this.usage = { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 };
    return parts;
  }

  /**
   * A whole chat completion, from a server that answered at once instead of streaming: read as the one chunk that
   * holds all of it, so it meets the same checks and limits as a stream. A body in a chunk's shape, its `delta` where
   * the `message` would be, is that chunk, its calls' pieces placed by their index: its calls were dropped unseen, the
   * turn ending with nothing though the server said calls were made. One holding both is read by its message, as
   * before: a server sends both with the same content.
   */
  pushCompletion(completion: unknown): ModelPart[] {
    if (!isPlainObject(completion) || !Array.isArray(completion.choices)) throw new MalformedChunkError('the answer is JSON but not a chat completion');
    const choices = completion.choices.map((choice: unknown) => (isPlainObject(choice) && (Object.hasOwn(choice, 'message') || !Object.hasOwn(choice, 'delta')) ? messageAsDelta(choice) : choice));
    return this.push({ choices, usage: completion.usage });
  }

  /**
   * Why the server cut the answer off, if it did: at its length limit (`finish_reason: "length"`), by its content
   * filter (`"content_filter"`), or as the request was stopped or failed there (`"abort"`, `"error"`, which some
   * servers send). A call in such an answer may have lost the end of its arguments.
   */
  get cutOff(): CutOffReason | undefined {
    const reason = this.finishReason;
    return reason !== undefined && (CUT_OFF_REASONS as readonly string[]).includes(reason) ? (reason as CutOffReason) : undefined;
  }

  /** The assembled tool calls and the finish part. */
  finish(): ModelPart[] {
    const parts: ModelPart[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ type: 'tool-call', id: call.id, name: call.name, arguments: call.arguments }));
    const reason = finishReason(this.finishReason, this.calls.size > 0);
    parts.push(this.usage ? { type: 'finish', reason, usage: this.usage } : { type: 'finish', reason });
    return parts;
  }

  /** What a `redacted_thinking` part shows: WITHHELD_REASONING the first time in the turn, then nothing. */
  private withheldMarker(): string {
    if (this.withheldShown) return '';
    this.withheldShown = true;
    return WITHHELD_REASONING;
  }

  /**
   * Refuses a piece of the answer sent after the server said the answer was finished: none of the servers sends one,
   * and a call arriving after "stop" was put up as if the model had made it. Only more calls after a finish for calls
   * are taken, as a proxy translating another API sends them (a finish after each call).
   */
  private refuseAfterFinish(text: boolean, calls: boolean): void {
    const reason = this.finishReason;
    if (reason === undefined || (!text && !calls)) return;
    if (!text && (reason === 'tool_calls' || reason === 'function_call')) return;
    throw new MalformedChunkError('more of the answer came after the server had said it was finished');
  }

  private addToolCallDelta(delta: z.infer<typeof toolCallDeltaSchema>): void {
    // Checked on every piece, the ones not kept too: a server repeats them, and each was parsed into memory.
    if (delta.id && delta.id.length > MAX_TOOL_CALL_ID_CHARS) throw new AnswerLimitError(`a tool call's id is longer than ${MAX_TOOL_CALL_ID_CHARS} characters`);
    const name = delta.function?.name;
    if (name && name.length > MAX_TOOL_NAME_CHARS) throw new AnswerLimitError(`a tool call's name is longer than ${MAX_TOOL_NAME_CHARS} characters`);
    const piece = delta.function?.arguments;
    const withoutIndex = delta.index === null || delta.index === undefined;
    // Arguments with neither a name nor an id, after the last call's name came again over none, start a call of that name.
    const named = name || (withoutIndex && !delta.id && carriesArguments(piece ?? undefined) ? this.possibleStart : undefined);
    const index =
      delta.index === null || delta.index === undefined
        ? this.indexWithoutOne(delta.id ?? undefined, named ?? undefined, piece ?? undefined)
        : this.indexOf(delta.index, delta.id ?? undefined, name ?? undefined, piece ?? undefined);
    if (index === undefined) return;
    let call = this.calls.get(index);
    const opened = call === undefined;
    if (!call) {
      const opens = Boolean(named) || carriesArguments(piece ?? undefined);
      if (!opens && !delta.id) return;
      // An id waiting counts as a call: each one alone was kept, and every later piece looked through them all.
      if (!this.waitingIds.has(index) && this.calls.size + this.waitingIds.size >= MAX_STREAMED_TOOL_CALLS) {
        throw new AnswerLimitError(`more than ${MAX_STREAMED_TOOL_CALLS} tool calls in one turn`);
      }
      if (!opens && delta.id) {
        this.waitAt(index, delta.id);
        return;
      }
      call = { id: this.openWaiting(index, delta.id ?? undefined) ?? '', name: '', arguments: '', size: 0, longest: 0, text: new JsonObjectTracker(), idFromLaterPiece: false };
      this.calls.set(index, call);
    }
    this.lastIndex = index;
    // Some servers repeat the id and name in every piece: the first id counts, and the same name again is nothing new.
    // A piece that only repeats what the call has is no progress, or a server resending one call's id would hold a
    // stalled turn past the idle limit for as long as it kept sending.
    let added = false;
    if (delta.id && call.id === '') {
      call.id = delta.id;
      call.idFromLaterPiece = !opened;
      this.identify(delta.id, index);
      added = true;
    }
    // llama.cpp sends a name again, whole, as it reads more of it ("list_", then "list_directory"): a name that goes on
    // from the call's is its name now. Any other name is another call's, not this one's.
    if (named && named !== call.name) {
      if (!named.startsWith(call.name)) throw new MalformedChunkError("a tool call's name changed to another mid-call");
      call.name = named;
      added = true;
    }
    // Arguments sent whole replace what came before, and text after them starts over; empty or blank text after them
    // is none (a server repeating the call with `""` had turned `{"command":"ls"}` into `{}`). Only arguments longer than
    // the call's have ever been are new: a server alternating whole arguments and one character made progress at each
    // character, and held its place to the turn limit with a call that never changed.
    if (typeof piece === 'string' && typeof call.arguments !== 'string' && piece.trim() === '') {
      // Nothing to add.
    } else if (typeof piece === 'string') {
      const sofar = typeof call.arguments === 'string' ? call.arguments : '';
      this.countArguments(call, sofar.length + piece.length);
      if (sofar === '') call.text = new JsonObjectTracker();
      call.arguments = sofar + piece;
      call.text.push(piece);
    } else if (piece) {
      this.countArguments(call, jsonLength(piece));
      call.arguments = piece;
    }
    if (call.size > call.longest) {
      call.longest = call.size;
      added = true;
    }
    if (added) this.pieces++;
  }

  /** Checks the new size of a call's arguments against the limits of a call and of the turn, then counts it. */
  private countArguments(call: PendingCall, size: number): void {
    if (size > MAX_TOOL_ARGUMENT_CHARS) throw new AnswerLimitError(`the arguments of tool call "${call.name}" exceed ${MAX_TOOL_ARGUMENT_CHARS} characters`);
    const total = this.argumentChars - call.size + size;
    if (total > MAX_TURN_ARGUMENT_CHARS) throw new AnswerLimitError(`the tool-call arguments of one turn exceed ${MAX_TURN_ARGUMENT_CHARS} characters`);
    this.argumentChars = total;
    call.size = size;
  }

  /**
   * The call a piece sent at `index` belongs to. A new id at an index a call with another id holds starts a new call,
   * placed after all the others, and the pieces that follow at that index go to it: some servers number every call of
   * a turn 0, and their calls were read as one, its arguments those of all of them joined (refused as not JSON) or, sent
   * as an object, the last one's under the first one's name. A call's first piece carries its name: a piece with no name
   * and another id goes on with the call at its index while that call's argument text is not yet a whole object, as a
   * hosted server sends a call (one id beside the name, another on every later piece), whose call was split in two:
   * its name over no arguments and its arguments under no name. Such a piece with no arguments either (none, or blank
   * text) after the call's whole ones opens the next call, its id kept for the pieces that fill it (`waitingIds`): it
   * made a call of no name, and, dropped, the pieces after it at that index went on with the whole call, joined to it.
   * Before they are whole, its id is set aside (`nextIds`) for a name that follows to open the next call under it.
   */
  private indexOf(index: number, id: string | undefined, name: string | undefined, piece: string | Record<string, unknown> | undefined): number | undefined {
    this.possibleStart = undefined;
    const current = this.moved.get(index) ?? index;
    const named = name !== undefined && name !== '';
    const next = this.takeNextId(current, id, named, piece);
    if (next !== undefined) {
      const place = this.placeNextCall(next, index);
      this.moved.set(index, place);
      return place;
    }
    const held = this.calls.get(current);
    // An id waiting at the index, or where a server's calls at it were moved, is the call it began there: a piece with
    // another id is another call. Taken as the waiting call's, c3's terminal was put up under c2's id, and c2's
    // arguments sent after it replaced terminal's (or, as text, were joined to them).
    const holder = held?.id ?? this.waitingIds.get(current);
    if (id === undefined || id === '' || holder === id) return current;
    // A piece with the id of another call, or of an id waiting, is that call's: taken as the call at its index while
    // that call's text was open, c1's "rm -rf ~"} was put up as c2's terminal {"command":"rm -rf ~"}. One sent at
    // another index that holds a call or an id cannot be told from that one's; with a name it is a call of its own, as
    // is one sent at an index that holds nothing yet, as some servers give each of a turn's calls the same id (sent
    // alone before the call's name, that one failed the turn).
    const known = this.placeOfId.get(id);
    if (known !== undefined && this.originOf(known) === index) {
      // A call opened at the place its id waited is the one the pieces after it at this index, with no id, go on with.
      if (!this.calls.has(known) && (named || carriesArguments(piece))) {
        if (known === index) this.moved.delete(index);
        else this.moved.set(index, known);
      }
      return known;
    }
    if (known !== undefined && holder !== undefined && (name === undefined || name === '')) throw new MalformedChunkError(`a piece of a tool call came at index ${index} with the id of a call not sent there`);
    if (holder === undefined || holder === '') return current;
    // Another id alone where one waits takes its place (see addToolCallDelta): moved each time, 15,000 of them left as
    // many ids waiting.
    if (held === undefined && (name === undefined || name === '') && !carriesArguments(piece)) return current;
    if (held !== undefined && !named && typeof held.arguments === 'string' && !held.text.closed) {
      if (carriesArguments(piece) || held.name === '') return current;
      this.nextIds.set(current, id);
      return keepsBlank(held, piece) ? current : undefined;
    }
    const place = this.newPlace();
    this.moved.set(index, place);
    this.movedFrom.set(place, index);
    return place;
  }

  /**
   * The id sent alone after the call at `place` (`nextIds`), when this piece opens its call: it carries a name, and no
   * id or that one. The next piece carrying a name or arguments there settles it either way.
   */
  private takeNextId(place: number, id: string | undefined, named: boolean, piece: string | Record<string, unknown> | undefined): string | undefined {
    const next = this.nextIds.get(place);
    if (next === undefined || (!named && !carriesArguments(piece))) return undefined;
    this.nextIds.delete(place);
    return named && (id === undefined || id === '' || id === next) ? next : undefined;
  }

  /**
   * A place of its own for the call opened by the id `next` sent alone, its id waiting there for the piece that opens
   * it; `index` is the index it was sent at, if any. Counted against the calls a turn may hold, as a waiting id is.
   */
  private placeNextCall(next: string, index: number | undefined): number {
    this.release(next);
    if (this.calls.size + this.waitingIds.size >= MAX_STREAMED_TOOL_CALLS) throw new AnswerLimitError(`more than ${MAX_STREAMED_TOOL_CALLS} tool calls in one turn`);
    const place = this.newPlace();
    if (index !== undefined) this.movedFrom.set(place, index);
    this.waitingIds.set(place, next);
    this.identify(next, place);
    return place;
  }

  /**
   * For servers that omit `index`: a piece with a call's id goes to that call, and a new id starts a new call. With no
   * id, a name starts a new call once the last call has arguments (a call's name comes before its arguments), unless it
   * is the last call's name again while its arguments are not yet a whole object (a server may repeat a call's name in
   * each of its pieces); so does any name once the last call's arguments came whole as an object, a name that does not
   * go on from the last call's, and argument text that opens an object, or arguments sent as one, after the last
   * call's whole ones (no text goes on from a whole object, and an object sent then replaced the call's own). Anything else continues the last call. Calls each sent as their name alone, then their
   * arguments in pieces, were read as one: the arguments joined (`{"path":"a"}{"path":"b"}`, refused as not JSON), or
   * the second call's arguments under no name, or under the first call's name grown into the second's. A piece with
   * another id and no name goes on with the last call while its arguments are not yet a whole object, as `indexOf` reads it.
   * With neither id nor arguments after the last call's whole ones, a piece carrying that call's name again, or none,
   * makes no call (undefined): a server repeating the name in each piece sent it once more after the arguments, and a
   * call of that name over no arguments was put up, one the model never made. The name is kept as a possible start: the
   * arguments that follow start a call of it (`possibleStart`), so a second call of the tool sent as its name alone,
   * then its arguments, is still read. A piece with another id and neither name nor arguments makes no call either:
   * its id is kept for the call that follows with no id (`nextIds`).
   */
  private indexWithoutOne(id: string | undefined, name: string | undefined, piece: string | Record<string, unknown> | undefined): number | undefined {
    const held = this.possibleStart;
    this.possibleStart = undefined;
    const named = name !== undefined && name !== '';
    const next = this.lastIndex === undefined ? undefined : this.takeNextId(this.lastIndex, id, named, piece);
    if (next !== undefined) {
      const place = this.placeNextCall(next, undefined);
      this.underNextId.add(place);
      return place;
    }
    // Pieces of calls sent in turns (a, b, a, b) go each to the call of its id, or where its id waits.
    const identified = id !== undefined && id !== '';
    const known = identified ? this.placeOfId.get(id) : undefined;
    if (id !== undefined && known !== undefined && (this.setAside.has(known) || known === this.waitingWithoutIndex())) {
      const opens = named || carriesArguments(piece);
      if (opens && this.setAside.has(known)) return this.placeNextCall(id, undefined);
      // Sent alone again after a call, it is the id of the call that follows with no id, as a new id alone is
      // (`nextIds`): an id sent alone before it took that call.
      if (!opens && this.lastIndex !== undefined) {
        this.nextIds.set(this.lastIndex, id);
        this.possibleStart = held;
        return undefined;
      }
    }
    // An id a call opened with none got from a later piece may be every call's: a hosted server sends one id on each
    // call's later pieces. Once that call's arguments are whole and another has opened, a piece with it is the last
    // call's: taken as the first's, write_file was put up as `{"path":"b"}{"command":"ls"}` and terminal with none.
    const reached = known === undefined ? undefined : this.calls.get(known);
    const passed = reached !== undefined && reached.idFromLaterPiece && known !== this.lastIndex && (typeof reached.arguments !== 'string' || reached.text.closed);
    if (known !== undefined && !passed) return known;
    const last = this.lastIndex === undefined ? undefined : this.calls.get(this.lastIndex);
    if (last !== undefined && this.lastIndex !== undefined) {
      const anonymous = !identified;
      const text = typeof last.arguments === 'string' ? last.arguments : undefined;
      if (anonymous && (text === undefined || last.text.closed) && !carriesArguments(piece) && (!named || name === last.name)) {
        this.possibleStart = named ? name : held;
        return undefined;
      }
      // Another id alone after a named call may be the next call's (see `nextIds`), its arguments whole or not: dropped
      // after whole ones, it left the call that followed with no id to take an id set aside for another (`setAside`).
      if (identified && !named && !carriesArguments(piece) && last.name !== '' && last.id !== '') {
        this.nextIds.set(this.lastIndex, id);
        this.possibleStart = held;
        return text !== undefined && !last.text.closed && keepsBlank(last, piece) ? this.lastIndex : undefined;
      }
      // The last call's whole arguments sent again with no name (as an object, or as text holding the same object) are
      // no call: a server may resend a call's arguments whole once they are complete, and read as a new call it made one
      // of no name. With a name, it may be a second call of the same arguments.
      if (anonymous && !named && (text === undefined || last.text.closed) && this.repeatsArguments(last.arguments, piece)) return undefined;
      const begun = text === undefined || last.text.begun;
      const anotherName =
        anonymous &&
        name !== undefined &&
        name !== '' &&
        last.name !== '' &&
        (text === undefined || (name === last.name ? last.text.closed : begun || !name.startsWith(last.name)));
      // Joined, two whole objects are never JSON, so no call that would read is split.
      // An object sent after whole arguments is another call's too: taken as the last call's, it replaced them under its name.
      // Text that opens an object after arguments sent as an object is another call's too: taken as the last call's, it
      // replaced them.
      const anotherObject = (text === undefined || last.text.closed) && (typeof piece === 'string' ? piece.trimStart().startsWith('{') : piece !== undefined);
      // A call's first piece carries its name: one with another id and none goes on with the last call, as at an index.
      const unnamedMore = (name === undefined || name === '') && text !== undefined && !last.text.closed;
      // A name going on from that of a call opened under an id sent alone before it (`nextIds`), before its arguments,
      // is that call's whatever id it carries, as a hosted server grows a name in a piece with another id: `termina`
      // was put up as a call of its own beside its call `terminal`.
      const grownName =
        named && this.underNextId.has(this.lastIndex) && last.name !== '' && name !== last.name && name.startsWith(last.name) && text !== undefined && !last.text.begun;
      if ((anonymous || last.id === '' || last.id === id || unnamedMore || grownName) && !anotherName && !anotherObject) {
        // Its call is not named: with calls sent at indexes interleaved and unfinished, the text goes on from either.
        if (carriesArguments(piece) && this.unfinishedBesides(this.lastIndex)) {
          throw new MalformedChunkError(
            "arguments of a tool call came with neither an index nor their call's id while calls sent at indexes were unfinished, so whose they are cannot be told",
          );
        }
        return this.lastIndex;
      }
      if (!named && !carriesArguments(piece)) {
        this.possibleStart = held;
        return undefined;
      }
    }
    // Past the indexes and the places of moved calls: one not yet filled would give this call its waiting id. So would a
    // place where another id waits: b's terminal was put up under a's id, and a's pieces then joined to it. A call with
    // no id, or another id alone, goes where an id sent without an index waits.
    const waiting = this.waitingWithoutIndex();
    if (waiting !== undefined && (!identified || ((name === undefined || name === '') && !carriesArguments(piece)))) return waiting;
    return this.newPlace();
  }

  /**
   * Whether `piece` holds the same arguments as a call's whole ones (`held`: text that is a whole object, or an
   * object), the held ones read once (`heldArguments`), the piece each time: the work is the piece's.
   */
  private repeatsArguments(held: string | Record<string, unknown>, piece: string | Record<string, unknown> | undefined): boolean {
    if (piece === undefined) return false;
    if (this.heldArguments?.held !== held) this.heldArguments = { held, canonical: canonicalArguments(held) };
    const { canonical } = this.heldArguments;
    return canonical !== undefined && canonicalArguments(piece) === canonical;
  }

  /**
   * Keeps `id`, sent alone, waiting at `place`. Another id alone where one waits takes its place (a waiting id each,
   * 15,000 of them held the server 8 s), the one it replaced kept beside it (`replacedIds`) and one before that forgotten.
   */
  private waitAt(place: number, id: string): void {
    const waiting = this.waitingIds.get(place);
    if (waiting === id) return;
    const replaced = this.replacedIds.get(place);
    if (replaced !== undefined && replaced !== id && this.placeOfId.get(replaced) === place) this.placeOfId.delete(replaced);
    if (waiting === undefined) this.replacedIds.delete(place);
    else this.replacedIds.set(place, waiting);
    this.waitingIds.set(place, id);
    this.identify(id, place);
  }

  /**
   * The id of the call a piece bearing `id` (or none) opens at `place`: the replaced id there when it bears that one,
   * else the id waiting there, if any. The other one waits on at a place of its own, after the others, while the turn
   * has room for it, and is forgotten when not: its call was not yet begun, and a piece with its id then starts one.
   */
  private openWaiting(place: number, id: string | undefined): string | undefined {
    const [waiting, replaced] = [this.waitingIds.get(place), this.replacedIds.get(place)];
    this.waitingIds.delete(place);
    this.replacedIds.delete(place);
    const [own, other] = id !== undefined && id === replaced ? [replaced, waiting] : [waiting, replaced];
    if (other === undefined || this.placeOfId.get(other) !== place) return own;
    if (this.calls.size + this.waitingIds.size + 2 > MAX_STREAMED_TOOL_CALLS) {
      this.placeOfId.delete(other);
      return own;
    }
    const next = this.newPlace();
    const origin = this.originOf(place);
    if (origin !== undefined) this.movedFrom.set(next, origin);
    else this.setAside.add(next);
    this.waitingIds.set(next, other);
    this.placeOfId.set(other, next);
    return own;
  }

  /**
   * Takes `id` from the place it waits at without an index (where ids alone wait, or set aside), for its call to open
   * at a place of its own: placed where the id first waited, the call was listed before the calls sent ahead of it. An
   * id it replaced there waits on.
   */
  private release(id: string): void {
    const place = this.placeOfId.get(id);
    if (place === undefined || place < MAX_STREAMED_TOOL_CALLS || this.movedFrom.has(place) || this.calls.has(place)) return;
    const [waiting, replaced] = [this.waitingIds.get(place), this.replacedIds.get(place)];
    this.placeOfId.delete(id);
    this.replacedIds.delete(place);
    const left = waiting === id ? replaced : waiting;
    if (left !== undefined && this.placeOfId.get(left) === place) {
      this.waitingIds.set(place, left);
    } else {
      this.waitingIds.delete(place);
      this.setAside.delete(place);
    }
  }

  /** The index the call or id at `place` was sent at: the place itself below 64, the index it was moved off after. */
  private originOf(place: number): number | undefined {
    return place < MAX_STREAMED_TOOL_CALLS ? place : this.movedFrom.get(place);
  }

  /** A place from 64 on that nothing has had: found by looking past the others, each piece went through all of them. */
  private newPlace(): number {
    return this.nextPlace++;
  }

  /** Where an id sent without an index waits, if one does (at most one: another id alone takes its place), not set aside. */
  private waitingWithoutIndex(): number | undefined {
    for (const place of this.waitingIds.keys()) if (place >= MAX_STREAMED_TOOL_CALLS && !this.movedFrom.has(place) && !this.setAside.has(place)) return place;
    return undefined;
  }

  /** Keeps `id` as the id of the call or waiting id at `place`, unless a call sent before holds it. */
  private identify(id: string, place: number): void {
    if (!this.placeOfId.has(id)) this.placeOfId.set(id, place);
  }

  /**
   * Whether a call other than the one at `besides` has argument text begun and not yet whole: a call sent at an index,
   * or any call when the one at `besides` was sent at one. Counted only at indexes, read_file's `{"path":` sent without
   * one, then terminal's `{"command":` at index 0, let `"rm -rf ~"}` go on with terminal.
   */
  private unfinishedBesides(besides: number): boolean {
    const atIndex = (place: number) => place < MAX_STREAMED_TOOL_CALLS || this.movedFrom.has(place);
    const anywhere = atIndex(besides);
    for (const [place, call] of this.calls) {
      if (place !== besides && (anywhere || atIndex(place)) && typeof call.arguments === 'string' && call.text.begun && !call.text.closed) return true;
    }
    return false;
  }
}

/** The canonical JSON of `value` (an object, or text holding one), for comparing arguments; undefined when it is no object. */
function canonicalArguments(value: string | Record<string, unknown>): string | undefined {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  return isPlainObject(parsed) ? canonicalJson(parsed) : undefined;
}

/**
 * The text and the thinking of an answer's content, sent as text or as a list of parts: the text parts' text joined, a
 * refusal part's as the answer's text as a refusal is, a thinking part's text as reasoning. Read as text only, a list
 * was refused as a malformed chunk and its text never shown. A part that is not text (an image, audio) cannot be shown
 * as the answer and is refused, named, not dropped unseen. Reasoning sent encrypted (`redacted_thinking`) is no such
 * part: it ended the turn; it is what `withheld` gives in the reasoning.
 */
function readContent(content: string | readonly z.infer<typeof contentPartSchema>[] | null | undefined, withheld: () => string): { text: string; reasoning: string } {
  if (typeof content === 'string') return { text: content, reasoning: '' };
  let text = '';
  let reasoning = '';
  for (const part of content ?? []) {
    if (part.type === 'redacted_thinking') reasoning += withheld();
    else if (part.type === 'thinking' && part.thinking !== null && part.thinking !== undefined) reasoning += readReasoning(part.thinking, "the answer's content", withheld);
    else text += partText(part, part.type === 'text' ? part.text : part.type === 'refusal' ? part.refusal : undefined, "the answer's content");
  }
  return { text, reasoning };
}

/**
 * Reasoning sent as text, or as a list of text parts, their text joined; a part of another type is refused, named, as a
 * part of `where`. Sent as a list under `reasoning_content` or `reasoning`, it ended the turn as a malformed chunk.
 * A `redacted_thinking` part is what `withheld` gives, as in content: there too it ended the turn as not text.
 */
function readReasoning(reasoning: z.infer<typeof reasoningSchema> | null | undefined, where: string, withheld: () => string): string {
  if (typeof reasoning === 'string') return reasoning;
  return (reasoning ?? []).map((part) => (part.type === 'redacted_thinking' ? withheld() : partText(part, part.type === 'text' ? part.text : undefined, where))).join('');
}

/**
 * The thinking of a list of thinking blocks, joined: a `thinking` block's text (none for one holding only its
 * signature), the `withheld` marker for a `redacted_thinking` one, and an error naming a block of another type.
 */
function readThinkingBlocks(blocks: readonly z.infer<typeof thinkingBlockSchema>[] | null | undefined, withheld: () => string): string {
  return (blocks ?? [])
    .map((block) => (block.type === 'thinking' ? (block.thinking ?? '') : block.type === 'redacted_thinking' ? withheld() : partText(block, undefined, "the answer's thinking blocks")))
    .join('');
}

/** A content part's text, or an error naming the part when it has none (a part of another type, or one missing its text). */
function partText(part: { type: string }, text: string | null | undefined, where: string): string {
  if (typeof text === 'string') return text;
  const kind = part.type;
  const named = JSON.stringify(kind.length <= 40 ? kind : `${kind.slice(0, 40)}…`);
  throw new MalformedChunkError(['text', 'refusal', 'thinking'].includes(kind) ? `${where} holds a ${named} part without its ${kind}` : `${where} holds a part of type ${named}, which is not text`);
}

/** What a value that should have been a list is, for an error: `string`, `an object without a function`… */
function shapeOf(value: unknown): string {
  return isPlainObject(value) ? 'an object without a function' : typeof value;
}

/**
 * Whether blank text sent with another id than `call`'s, the id set aside (`nextIds`), is still the call's: once its
 * argument text has begun, blank text may be inside one of its strings, as a tokenizer sends a run of spaces alone,
 * and dropped it turned `ls  -la` into `ls-la` and took the indentation out of a file written. Before that it is
 * space JSON ignores, and the id over it may open the next call (a call of no arguments sent none).
 */
function keepsBlank(call: PendingCall, piece: string | Record<string, unknown> | undefined): boolean {
  return call.text.begun && typeof piece === 'string';
}

/** Whether a piece's arguments hold anything: an object, or text more than blank space (JSON's). */
function carriesArguments(piece: string | Record<string, unknown> | undefined): boolean {
  return typeof piece === 'string' ? !/^[ \t\n\r]*$/.test(piece) : piece !== undefined;
}

/** A choice holding a whole `message` as the chunk's choice that holds all of it: the calls of a message are in order. */
function messageAsDelta(choice: Record<string, unknown>): Record<string, unknown> {
  const message = choice.message;
  if (!isPlainObject(message)) return { delta: message, finish_reason: choice.finish_reason };
  // Pieces of a stream name their call by index.
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.map((call: unknown, index) => (isPlainObject(call) ? { ...call, index } : call)) : message.tool_calls;
  return { delta: { ...message, tool_calls: calls }, finish_reason: choice.finish_reason };
}

/** A streamed chunk whose choices holding a `message` and no `delta` are read as holding it as their delta. */
function withMessagesAsDeltas(chunk: unknown): unknown {
  if (!isPlainObject(chunk) || !Array.isArray(chunk.choices)) return chunk;
  const choices = chunk.choices.map((choice: unknown) => (isPlainObject(choice) && Object.hasOwn(choice, 'message') && !Object.hasOwn(choice, 'delta') ? messageAsDelta(choice) : choice));
  return { ...chunk, choices };
}

/** The length of an object's JSON; one nested too deep to write out is refused (it came out of a line of at most 8 MiB). */
function jsonLength(value: Record<string, unknown>): number {
  try {
    return JSON.stringify(value).length;
  } catch {
    throw new MalformedChunkError('the arguments of a tool call are nested too deeply');
  }
}

function finishReason(raw: string | undefined, hasToolCalls: boolean): FinishReason {
  switch (raw) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls';
    case 'stop':
      return hasToolCalls ? 'tool-calls' : 'stop';
    case undefined:
    default:
      return hasToolCalls ? 'tool-calls' : 'other';
  }
}
