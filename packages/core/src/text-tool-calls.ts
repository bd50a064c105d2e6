import { isPlainObject, textNestedDeeperThan } from './json';
import { MAX_ARGUMENT_DEPTH, parseModelJson, parseToolArguments } from './json-repair';
import { codeSpans, MarkdownCode, type CodePlace, type OpenSpanWatch } from './markdown-code';

export const TOOL_CALL_OPEN = '<tool_call>';
export const TOOL_CALL_CLOSE = '</tool_call>';

export type TextToolCall =
  | { ok: true; name: string; arguments: Record<string, unknown> }
  | { ok: false; name: string; error: string; raw: string };

/** How deep a call written in the text may nest: its arguments' limit, inside `{"function": {"arguments": …}}`. */
const MAX_CALL_DEPTH = MAX_ARGUMENT_DEPTH + 2;

export const TEXT_TOOL_CALL_FORMAT = `${TOOL_CALL_OPEN}{"name": "<tool>", "arguments": {...}}${TOOL_CALL_CLOSE}`;

/** Parses the inside of one `<tool_call>` block, repairing what models commonly get wrong. */
export function parseTextToolCall(raw: string): TextToolCall {
  // Checked before parsing: the engine's parser ran out of stack on a call nested some thousands deep, and that
  // was the error the model was given back.
  if (textNestedDeeperThan(raw, MAX_CALL_DEPTH)) {
    return { ok: false, name: '', raw, error: `Could not parse the tool call: it is nested deeper than ${MAX_CALL_DEPTH} levels (its arguments may nest ${MAX_ARGUMENT_DEPTH}). Write it as ${TEXT_TOOL_CALL_FORMAT}.` };
  }
  const parsed = parseModelJson(raw);
  if (!parsed.ok) {
    return { ok: false, name: '', raw, error: `Could not parse the tool call: ${parsed.error}. Write it as ${TEXT_TOOL_CALL_FORMAT}.` };
  }
  let body = parsed.value;
  if (isPlainObject(body) && isPlainObject(body.function)) body = body.function;
  if (!isPlainObject(body) || typeof body.name !== 'string' || body.name.trim() === '') {
    return { ok: false, name: '', raw, error: `The tool call has no "name". Write it as ${TEXT_TOOL_CALL_FORMAT}.` };
  }
  const name = body.name.trim();
  const args = parseToolArguments(body.arguments ?? body.parameters);
  if (!args.ok) {
    return { ok: false, name, raw, error: `Could not read the arguments of "${name}": ${args.error}. Write it as ${TEXT_TOOL_CALL_FORMAT}.` };
  }
  return { ok: true, name, arguments: args.value };
}

/** A piece of the reply to show now: text the person reads, or the model's thinking. */
export type TextPart = { type: 'text' | 'reasoning'; text: string };

export interface ExtractorOptions {
  /**
   * How many of the calls found are read: parsed, and told what is wrong with them (default: all). The rest are only
   * counted (`moreCalls`) and cut from the text as calls are. A caller that runs no more than so many calls of a turn
   * need not read the others, and reading them is what costs: a reply of a million characters holds some 83,000
   * bodies (`<tool_call>{` repeated), each a failed parse and an error message, seconds of the server's thread.
   */
  readCalls?: number;
}

export interface FinishOptions {
  /**
   * Whether the calls found will run (default true). When not (the turn failed or was stopped, or no tool is left
   * to it), they are given out as text after all that was shown, as the model wrote them, and none is returned.
   */
  callsRun?: boolean;
}

/** The whole reply once it has ended. */
export interface ExtractedReply {
  /** What is still to be shown, after every part `push` gave out. */
  parts: TextPart[];
  /** The calls found, in the order written, at most `readCalls` of them. */
  calls: TextToolCall[];
  /** How many calls were found after those in `calls`, past `readCalls`: counted, not returned. */
  moreCalls: number;
  /** The reply's text as it is kept: what was shown, less what turned out to be thinking. */
  content: string;
  /** The thinking, from the text and from `pushReasoning`, in the order it came. */
  reasoning: string;
}

/** The names of the tags a model's thinking is written between, as `<think>…</think>`. */
type ThinkingName = 'think' | 'thinking';

/** The tags that may count where the text is read: flags to combine. */
const CALL_OPEN = 1;
const CALL_CLOSE = 2;
const THINKING_OPEN = 4;
const THINKING_CLOSE = 8;

/** A tag read in the text: its kind, the thinking tag's name, and how many characters it spans as written. */
type Tag = { kind: typeof CALL_OPEN | typeof CALL_CLOSE; length: number } | ThinkingTag;
type ThinkingTag = { kind: typeof THINKING_OPEN | typeof THINKING_CLOSE; name: ThinkingName; length: number };

/** The white space a thinking tag may hold before its `>` (`<think >`, `</think\n>`): a few characters, so a tag stays short. */
const MAX_THINKING_TAG_SPACE = 8;
/** The longest a tag can be: what the text may hold back at the end of a delta, at most. */
export const MAX_TAG_LENGTH = '</thinking>'.length + MAX_THINKING_TAG_SPACE;

/**
 * Splits a model's streamed reply into what a person reads, the model's thinking, and the tool calls it wrote as
 * `<tool_call>{"name": …, "arguments": …}</tool_call>` in its text.
 *
 * Model servers without a reasoning parser put the thinking into the text, between `<think>` and `</think>` (or
 * `<thinking>`, in any case, maybe with white space before the `>`): it is given out as reasoning and never read for
 * calls, as a call the model only thought about must not run. Such a block ends at its own closing tag, not at one
 * of a nested block nor at one in a backtick span on the same line (a model thinking about the tag names it). A
 * template that opens `<think>` in the prompt leaves only the `</think>` in the reply: no call written before that
 * lone closing tag runs, even when the tag stands in what looks like Markdown code (thinking is not Markdown).
 *
 * A tag inside Markdown code (by CommonMark's rules: a fenced or indented code block, in block quotes and list
 * items too, or a code span; see `MarkdownCode`) is an example, and so is one whose body does not start like a JSON
 * object (a tag named in prose), or that never closes and is not a call: they stay in the text, so nothing the
 * model wrote is lost. A closed body that starts like an object but is not a call stays in the text too, shown when
 * it closes, and is answered with an error. In a call's body only a tag outside a JSON string counts: an argument
 * may name any tag.
 *
 * The text comes in deltas cut anywhere. Held back are only what may be the start of a tag (a few characters), the
 * body of a call under way, and, from a tag after a backtick string still open on its line, the rest of the line
 * until it tells whether a code span closes around the tag. Each character is looked at a bounded number of times:
 * a reply costs time linear in its length however it is cut. All it gives out as text stays text: what the person
 * saw live is what is kept.
 *
 * Past `readCalls`, a closed body is counted as a call without being read, so it is cut from the text as a call is
 * whatever it holds; a body left open at the end is still read (one at most), as only a call is cut there.
 */
export class TextToolCallExtractor {
  /** The end of the previous delta that may be the start of a tag; never as long as a tag. */
  private carry = '';
  private mode: 'text' | 'thinking' | 'call' | 'held' = 'text';
  /** In a thinking block: its tag's name, and how many blocks of the same name are open inside it. */
  private thinking: ThinkingName = 'think';
  private nested = 0;
  /** In a thinking block: the backtick span open on this line (its length, 0 for none), and the run of backticks under way. */
  private thinkingSpan = 0;
  private thinkingTicks = 0;
  /** In a call: how far its body has shown that it starts like a JSON object. */
  private start: BodyStart = 'space';
  /** In a call's body: the quote of the JSON string it is in (0 for none), and whether a backslash escapes the next character. */
  private quote = 0;
  private escaped = false;
  /** The body of the call under way, up to the carry. */
  private body: string[] = [];
  private code = new MarkdownCode();
  /**
   * Held: the text from a tag that stands after a backtick string open on its line, until the line tells whether a
   * code span closes around the tag (`watch`). Then it is read again knowing which of it is code (`spans`).
   */
  private held: string[] = [];
  private watch: OpenSpanWatch | undefined;
  private spans: Uint8Array | 'all' | undefined;
  /**
   * Until a thinking tag, or reasoning sent apart, shows otherwise, the reply so far may be thinking whose opening
   * tag was in the prompt: then a lone `</think>` (outside a call's JSON strings) ends it.
   */
  private mayBeThinking = true;
  /**
   * Each call cut from the text, as written: to give out as thinking if the reply turns out to have been (while
   * `mayBeThinking`), or as text if the calls are not to run.
   */
  private cut: string[] = [];
  /** White space right after thinking at the start of the reply: the blank lines before the answer. */
  private skipSpace = false;
  private shownNonSpace = false;
  private calls: TextToolCall[] = [];
  private moreCalls = 0;
  private readonly readCalls: number;
  /**
   * The reply's text and thinking as shown, a piece per delta, made one string at the end: a string grown a delta at
   * a time is a rope that keeps a node per delta for as long as the turn goes on (tens of MB for a million
   * one-character deltas), and more once the turn is kept.
   */
  private content: string[] = [];
  private reasoning: string[] = [];
  private parts: TextPart[] = [];

  constructor(options: ExtractorOptions = {}) {
    this.readCalls = options.readCalls ?? Number.POSITIVE_INFINITY;
  }

  /** Feeds a delta of the reply's text; returns what is safe to show now. */
  push(delta: string): TextPart[] {
    const text = this.carry + delta;
    this.carry = '';
    this.scan(text, false);
    return this.give();
  }

  /** Feeds a delta of reasoning the model's server sent apart from the text: the text then does not start in thinking. */
  pushReasoning(delta: string): TextPart[] {
    this.mayBeThinking = false;
    this.think(delta);
    return this.give();
  }

  /**
   * Ends the reply. An unclosed call is a call when its body reads as one (a model may stop right after it), and
   * text otherwise.
   */
  finish(options: FinishOptions = {}): ExtractedReply {
    const text = this.carry;
    this.carry = '';
    this.scan(text, true);
    if (this.mode === 'held') this.release(this.watch!.end());
    if (this.mode === 'call') this.endUnclosedCall();
    // An unclosed call's body, read again as text, may end held (it holds no call, so it is read again at most once).
    if (this.mode === 'held') this.release(this.watch!.end());
    if (options.callsRun === false) {
      // Text shown cannot be taken back from the screen: the calls go after it, in their order, as written.
      for (const written of this.cut) this.show(written);
      this.cut = [];
      this.calls = [];
      this.moreCalls = 0;
    }
    const parts = this.give();
    return { parts, calls: this.calls, moreCalls: this.moreCalls, content: this.content.join(''), reasoning: this.reasoning.join('') };
  }

  private scan(text: string, final: boolean): void {
    let at = 0;
    while (at < text.length) {
      if (this.mode === 'text') at = this.scanText(text, at, final);
      else if (this.mode === 'thinking') at = this.scanThinking(text, at, final);
      else if (this.mode === 'call') at = this.scanCall(text, at, final);
      else at = this.scanHeld(text, at);
    }
  }

  /**
   * Reads text to show, up to the next tag that counts (in code, only the lone `</think>` of thinking the prompt may
   * have opened), and returns where it stopped.
   */
  private scanText(text: string, from: number, final: boolean): number {
    let shownFrom = from;
    for (let i = from; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.skipSpace) {
        if (isSpace(c)) {
          shownFrom = i + 1;
          continue;
        }
        this.skipSpace = false;
      }
      if (c === LESS_THAN) {
        const place = this.placeAt(i);
        const lone = this.mayBeThinking ? THINKING_CLOSE : 0;
        const tag = tagAt(text, i, place === 'code' ? lone : CALL_OPEN | THINKING_OPEN | lone, final);
        if (tag === PARTIAL) {
          this.show(text.slice(shownFrom, i));
          this.carry = text.slice(i);
          return text.length;
        }
        if (tag !== undefined && place === 'open-span' && tag.kind !== THINKING_CLOSE) {
          this.show(text.slice(shownFrom, i));
          this.watch = this.code.openSpans();
          this.mode = 'held';
          return i;
        }
        if (tag !== undefined) {
          this.show(text.slice(shownFrom, i));
          // The tag stands where it was written: the line has content there, whatever is cut.
          if (tag.kind !== THINKING_CLOSE) this.code.add(c);
          this.openTag(tag, text.slice(i, i + tag.length));
          return i + tag.length;
        }
      }
      this.code.add(c);
    }
    this.show(text.slice(shownFrom));
    return text.length;
  }

  /** Where the text at `at` stands in Markdown: as the text read so far says, or, in held text read again, as its line said. */
  private placeAt(at: number): CodePlace {
    if (this.spans === undefined) return this.code.where();
    return this.spans === 'all' || this.spans[at] === 1 ? 'code' : 'text';
  }

  /** Holds the text until its line tells whether a code span closes around the tag it starts with. */
  private scanHeld(text: string, from: number): number {
    for (let i = from; i < text.length; i++) {
      const outcome = this.watch!.add(text.charCodeAt(i));
      if (outcome === undefined) continue;
      this.held.push(text.slice(from, i));
      this.release(outcome);
      return i;
    }
    this.held.push(text.slice(from));
    return text.length;
  }

  /**
   * Reads the held text again, now that its line told what is code in it: all of it (a span closed around the tag,
   * or the line opened a fence), or the spans it holds itself (none closed around the tag). Each character is held
   * and read again once: a held line holds no line end, and text read again is never held.
   */
  private release(outcome: 'code' | 'line'): void {
    const line = this.held.join('');
    this.held = [];
    this.watch = undefined;
    this.mode = 'text';
    this.spans = outcome === 'code' ? 'all' : codeSpans(line);
    // Read as the end of the text: the held line ends before a line end or after backticks, which no tag holds.
    this.scan(line, true);
    this.spans = undefined;
  }

  private openTag(tag: Tag, written: string): void {
    if (tag.kind === CALL_OPEN) {
      this.mode = 'call';
      this.start = 'space';
      this.quote = 0;
      this.escaped = false;
      return;
    }
    if (tag.kind === THINKING_OPEN) {
      this.mode = 'thinking';
      this.thinking = tag.name;
      this.nested = 0;
      this.thinkingSpan = 0;
      this.thinkingTicks = 0;
      this.mayBeThinking = false;
      return;
    }
    // A closing tag with no opening one: the reply started in thinking.
    this.thoughtSoFar('', written);
  }

  /**
   * Reads thinking up to its closing tag. A backtick span ends at its line's end, so a stray backtick keeps the
   * tag from closing the block only on its own line.
   */
  private scanThinking(text: string, from: number, final: boolean): number {
    for (let i = from; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === BACKTICK) {
        this.thinkingTicks++;
        continue;
      }
      this.settleThinkingTicks();
      if (c === NEWLINE) this.thinkingSpan = 0;
      if (c !== LESS_THAN || this.thinkingSpan > 0) continue;
      const tag = thinkingTagAt(text, i, final);
      if (tag === PARTIAL) {
        this.think(text.slice(from, i));
        this.carry = text.slice(i);
        return text.length;
      }
      if (tag?.name !== this.thinking) continue;
      if (tag.kind === THINKING_OPEN) {
        this.nested++;
        i += tag.length - 1;
        continue;
      }
      if (this.nested > 0) {
        this.nested--;
        i += tag.length - 1;
        continue;
      }
      this.think(text.slice(from, i));
      this.mode = 'text';
      this.skipSpace = !this.shownNonSpace;
      return i + tag.length;
    }
    this.think(text.slice(from));
    return text.length;
  }

  /** Reads the run of backticks in thinking that just ended: it opens a span, or closes the one open if as long. */
  private settleThinkingTicks(): void {
    const ticks = this.thinkingTicks;
    if (ticks === 0) return;
    this.thinkingTicks = 0;
    if (this.thinkingSpan === 0) this.thinkingSpan = ticks;
    else if (this.thinkingSpan === ticks) this.thinkingSpan = 0;
  }

  private scanCall(text: string, from: number, final: boolean): number {
    let i = from;
    while (this.start !== 'object') {
      if (i === text.length) {
        this.body.push(text.slice(from));
        return i;
      }
      const next = nextBodyStart(this.start, text.charCodeAt(i));
      if (next === undefined) {
        // Not a call: the tag was written as text (named in prose, `<tool_call>` then a word). What follows is read again as text.
        const held = this.body.join('') + text.slice(from, i);
        this.body = [];
        this.mode = 'text';
        this.showWritten(TOOL_CALL_OPEN + held);
        return i;
      }
      this.start = next;
      i++;
    }
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.quote !== 0) {
        // In a JSON string (double quotes, or the single quotes models write): no tag counts, an argument may name one.
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === this.quote) this.quote = 0;
        continue;
      }
      if (c === DOUBLE_QUOTE || c === SINGLE_QUOTE) {
        this.quote = c;
        continue;
      }
      if (c !== LESS_THAN) continue;
      const tag = tagAt(text, i, CALL_CLOSE | CALL_OPEN | (this.mayBeThinking ? THINKING_CLOSE : 0), final);
      if (tag === undefined) continue;
      this.body.push(text.slice(from, i));
      if (tag === PARTIAL) {
        this.carry = text.slice(i);
        return text.length;
      }
      if (tag.kind === CALL_CLOSE) {
        this.endCall(TOOL_CALL_CLOSE);
        return i + tag.length;
      }
      // A new call before this one closed: the model forgot to close it. The text reads the new tag again.
      if (tag.kind === CALL_OPEN) {
        this.endCall('');
        return i;
      }
      this.thoughtSoFar(TOOL_CALL_OPEN + this.body.join(''), text.slice(i, i + tag.length));
      return i + tag.length;
    }
    this.body.push(text.slice(from));
    return text.length;
  }

  private endCall(close: string): void {
    const raw = this.body.join('');
    this.body = [];
    this.mode = 'text';
    const written = TOOL_CALL_OPEN + raw + close;
    if (this.calls.length >= this.readCalls) {
      this.moreCalls++;
      this.cut.push(written);
      return;
    }
    const call = parseTextToolCall(raw);
    this.calls.push(call);
    // What is not a call stays in the text as written (the person sees what the model wrote); the model is still
    // answered with what is wrong with it.
    if (!call.ok) this.showWritten(written);
    else this.cut.push(written);
  }

  private endUnclosedCall(): void {
    const raw = this.body.join('');
    this.body = [];
    this.mode = 'text';
    if (this.start === 'object') {
      // A body that ends inside a string was cut off there: what repair would make of it is not what the model meant.
      const call = this.quote === 0 ? parseTextToolCall(raw) : undefined;
      if (call?.ok === true) {
        if (this.calls.length < this.readCalls) this.calls.push(call);
        else this.moreCalls++;
        this.cut.push(TOOL_CALL_OPEN + raw);
        return;
      }
      // Read again as text (it may hold thinking or code), unless it holds a `<tool_call>` (in a string): that
      // would be read again in turn, and a reply could be read again as many times as it has calls.
      if (!raw.includes(TOOL_CALL_OPEN)) {
        this.showWritten(TOOL_CALL_OPEN);
        this.scan(raw, true);
        return;
      }
    }
    this.showWritten(TOOL_CALL_OPEN + raw);
  }

  /**
   * A lone closing thinking tag: the reply so far was thinking the prompt opened. No call in it runs: the calls are
   * given out as reasoning. The text stays as it was given out, the tag included, so what the person saw live is
   * what is kept (text shown cannot be taken back from the screen), and the Markdown code it is in goes on.
   */
  private thoughtSoFar(unclosed: string, tag: string): void {
    this.think(this.cut.join('') + unclosed);
    this.calls = [];
    this.moreCalls = 0;
    this.cut = [];
    this.body = [];
    this.mayBeThinking = false;
    this.mode = 'text';
    this.showWritten(tag);
  }

  /** Shows text that was held as a possible tag or call: Markdown code follows it as it does any text shown. */
  private showWritten(text: string): void {
    for (let i = 0; i < text.length; i++) this.code.add(text.charCodeAt(i));
    this.show(text);
  }

  private show(text: string): void {
    if (text === '') return;
    this.content.push(text);
    if (!this.shownNonSpace) this.shownNonSpace = /\S/.test(text);
    this.addPart('text', text);
  }

  private think(text: string): void {
    if (text === '') return;
    this.reasoning.push(text);
    this.addPart('reasoning', text);
  }

  private addPart(type: TextPart['type'], text: string): void {
    const last = this.parts.at(-1);
    if (last?.type === type) last.text += text;
    else this.parts.push({ type, text });
  }

  private give(): TextPart[] {
    const parts = this.parts;
    this.parts = [];
    return parts;
  }
}

/** The text ends inside what may be one of the tags. */
const PARTIAL = Symbol('partial tag');

/**
 * The tag among `wanted` (flags) that starts at `at`; PARTIAL when the text ends before it can tell (never when
 * `final`). A call's tags are read as written; a thinking tag's name in any case and with white space before its
 * `>`, as model templates write them (`<THINK>`, `<think >`, `</Thinking\n>`).
 */
function tagAt(text: string, at: number, wanted: number, final: boolean): Tag | typeof PARTIAL | undefined {
  let partial = false;
  for (const [kind, tag] of CALL_TAGS) {
    if ((wanted & kind) === 0) continue;
    if (text.length - at >= tag.length) {
      if (text.startsWith(tag, at)) return { kind, length: tag.length };
    } else if (!final && !partial && tag.startsWith(text.slice(at))) {
      partial = true;
    }
  }
  if ((wanted & (THINKING_OPEN | THINKING_CLOSE)) !== 0) {
    const tag = thinkingTagAt(text, at, final);
    if (tag === PARTIAL) partial = true;
    else if (tag !== undefined && (wanted & tag.kind) !== 0) return tag;
  }
  return partial ? PARTIAL : undefined;
}

const CALL_TAGS = [
  [CALL_OPEN, TOOL_CALL_OPEN],
  [CALL_CLOSE, TOOL_CALL_CLOSE],
] as const;

/** A thinking tag at `at`, opening or closing: `<`, maybe `/`, `think` or `thinking` in any case, some white space, `>`. */
function thinkingTagAt(text: string, at: number, final: boolean): ThinkingTag | typeof PARTIAL | undefined {
  const more = final ? undefined : PARTIAL;
  let i = at + 1;
  if (i === text.length) return more;
  const closing = text.charCodeAt(i) === SLASH;
  if (closing) i++;
  let name: ThinkingName = 'think';
  for (let letter = 0; letter < 'thinking'.length; letter++, i++) {
    if (i === text.length) return more;
    // Lower case: of the characters that `| 0x20` makes a letter of `thinking`, only that letter's capital.
    if ((text.charCodeAt(i) | 0x20) === 'thinking'.charCodeAt(letter)) continue;
    if (letter !== 'think'.length) return undefined;
    break;
  }
  if (i - at === (closing ? '</thinking' : '<thinking').length) name = 'thinking';
  for (let space = 0; ; space++, i++) {
    if (i === text.length) return more;
    const c = text.charCodeAt(i);
    if (c === GREATER_THAN) return { kind: closing ? THINKING_CLOSE : THINKING_OPEN, name, length: i + 1 - at };
    if (!isSpace(c) || space === MAX_THINKING_TAG_SPACE) return undefined;
  }
}

/**
 * How far a call's body has shown that it starts like a JSON object: white space, then `{`, maybe inside a fence
 * (```` ```json ````). The body of any other start is not a call.
 */
type BodyStart = 'space' | 'tick' | 'ticks' | 'fence' | 'fence-space' | 'object';

function nextBodyStart(state: BodyStart, c: number): BodyStart | undefined {
  switch (state) {
    case 'space':
      return isSpace(c) ? 'space' : c === OPEN_BRACE ? 'object' : c === BACKTICK ? 'tick' : undefined;
    case 'tick':
      return c === BACKTICK ? 'ticks' : undefined;
    case 'ticks':
      return c === BACKTICK ? 'fence' : undefined;
    case 'fence':
      return isLetter(c) ? 'fence' : isSpace(c) ? 'fence-space' : c === OPEN_BRACE ? 'object' : undefined;
    case 'fence-space':
      return isSpace(c) ? 'fence-space' : c === OPEN_BRACE ? 'object' : undefined;
    case 'object':
      return 'object';
  }
}

const LESS_THAN = 0x3c;
const GREATER_THAN = 0x3e;
const SLASH = 0x2f;
const OPEN_BRACE = 0x7b;
const BACKTICK = 0x60;
const NEWLINE = 0x0a;
const BACKSLASH = 0x5c;
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;

/** Space, tab, carriage return, line feed (the white space a newline or an indent is made of). */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === NEWLINE;
}

function isLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}
