import { isPlainObject } from './json';
import { parseModelJson, parseToolArguments } from './json-repair';

export const TOOL_CALL_OPEN = '<tool_call>';
export const TOOL_CALL_CLOSE = '</tool_call>';

export type TextToolCall =
  | { ok: true; name: string; arguments: Record<string, unknown> }
  | { ok: false; name: string; error: string; raw: string };

export const TEXT_TOOL_CALL_FORMAT = `${TOOL_CALL_OPEN}{"name": "<tool>", "arguments": {...}}${TOOL_CALL_CLOSE}`;

/** Parses the inside of one `<tool_call>` block, repairing what models commonly get wrong. */
export function parseTextToolCall(raw: string): TextToolCall {
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

/**
 * Splits streamed model text into what a person should see and the `<tool_call>` blocks inside it.
 * Text that might be the start of a tag is held back until the next delta shows what it is.
 *
 * Each delta is scanned once: only the few characters that may begin a tag are carried over to the next one,
 * and the body of a call under way is kept as pieces, so a long stream of small deltas costs time linear in its length.
 */
export class TextToolCallExtractor {
  /** The end of the previous delta that may be the start of a tag; never longer than a tag. */
  private carry = '';
  private inside = false;
  /** The body of the call under way, up to the carry. */
  private body: string[] = [];
  private readonly calls: TextToolCall[] = [];

  /** Feeds a delta; returns the part of the text that is safe to show now. */
  push(delta: string): string {
    const text = this.carry + delta;
    const tags = new TagFinder(text);
    let visible = '';
    let from = 0;
    for (;;) {
      if (!this.inside) {
        const open = tags.nextOpen(from);
        if (open === -1) {
          const keep = partialTagLength(text, from, [TOOL_CALL_OPEN]);
          this.carry = text.slice(text.length - keep);
          return visible + text.slice(from, text.length - keep);
        }
        visible += text.slice(from, open);
        from = open + TOOL_CALL_OPEN.length;
        this.inside = true;
      } else {
        const close = tags.nextClose(from);
        const reopen = tags.nextOpen(from);
        if (close === -1 && reopen === -1) {
          const keep = partialTagLength(text, from, [TOOL_CALL_CLOSE, TOOL_CALL_OPEN]);
          this.body.push(text.slice(from, text.length - keep));
          this.carry = text.slice(text.length - keep);
          return visible;
        }
        // A new opening tag before any closing one: the model forgot to close the previous call.
        const end = close === -1 || (reopen !== -1 && reopen < close) ? reopen : close;
        const tagLength = end === close ? TOOL_CALL_CLOSE.length : 0;
        this.body.push(text.slice(from, end));
        this.calls.push(parseTextToolCall(this.body.join('')));
        this.body = [];
        from = end + tagLength;
        this.inside = false;
      }
    }
  }

  /** Ends the stream: returns the text still held back and every call found. An unclosed call is parsed as it stands. */
  finish(): { text: string; calls: TextToolCall[] } {
    let text = '';
    if (this.inside) {
      const body = this.body.join('') + this.carry;
      if (body.trim() !== '') this.calls.push(parseTextToolCall(body));
    } else {
      text = this.carry;
    }
    this.carry = '';
    this.body = [];
    this.inside = false;
    return { text, calls: this.calls };
  }
}

/**
 * Finds tags in one text, remembering where each was found: a search never goes over text already searched,
 * so looking for both tags after each call stays linear in the text.
 */
class TagFinder {
  private open: number | undefined;
  private close: number | undefined;

  constructor(private readonly text: string) {}

  /** The first `<tool_call>` at or after `from`, or -1. */
  nextOpen(from: number): number {
    this.open = this.next(TOOL_CALL_OPEN, from, this.open);
    return this.open;
  }

  /** The first `</tool_call>` at or after `from`, or -1. */
  nextClose(from: number): number {
    this.close = this.next(TOOL_CALL_CLOSE, from, this.close);
    return this.close;
  }

  private next(tag: string, from: number, known: number | undefined): number {
    if (known !== undefined && (known === -1 || known >= from)) return known;
    return this.text.indexOf(tag, from);
  }
}

/** How many characters at the end of `text` (after `from`) could be the beginning of one of the tags. */
function partialTagLength(text: string, from: number, tags: readonly string[]): number {
  let longest = 0;
  for (const tag of tags) {
    for (let length = Math.min(tag.length - 1, text.length - from); length > longest; length--) {
      if (text.endsWith(tag.slice(0, length))) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}
