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
 */
export class TextToolCallExtractor {
  private buffer = '';
  private inside = false;
  private readonly calls: TextToolCall[] = [];

  /** Feeds a delta; returns the part of the text that is safe to show now. */
  push(delta: string): string {
    this.buffer += delta;
    let visible = '';
    for (;;) {
      if (!this.inside) {
        const open = this.buffer.indexOf(TOOL_CALL_OPEN);
        if (open === -1) {
          const keep = partialTagLength(this.buffer, TOOL_CALL_OPEN);
          visible += this.buffer.slice(0, this.buffer.length - keep);
          this.buffer = this.buffer.slice(this.buffer.length - keep);
          return visible;
        }
        visible += this.buffer.slice(0, open);
        this.buffer = this.buffer.slice(open + TOOL_CALL_OPEN.length);
        this.inside = true;
      } else {
        const close = this.buffer.indexOf(TOOL_CALL_CLOSE);
        const reopen = this.buffer.indexOf(TOOL_CALL_OPEN);
        if (close === -1 && reopen === -1) return visible;
        // A new opening tag before any closing one: the model forgot to close the previous call.
        const end = close === -1 || (reopen !== -1 && reopen < close) ? reopen : close;
        const tagLength = end === close ? TOOL_CALL_CLOSE.length : 0;
        this.calls.push(parseTextToolCall(this.buffer.slice(0, end)));
        this.buffer = this.buffer.slice(end + tagLength);
        this.inside = false;
      }
    }
  }

  /** Ends the stream: returns the text still held back and every call found. An unclosed call is parsed as it stands. */
  finish(): { text: string; calls: TextToolCall[] } {
    let text = '';
    if (this.inside) {
      if (this.buffer.trim() !== '') this.calls.push(parseTextToolCall(this.buffer));
    } else {
      text = this.buffer;
    }
    this.buffer = '';
    this.inside = false;
    return { text, calls: this.calls };
  }
}

function partialTagLength(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}
