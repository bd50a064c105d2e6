import { PROSE_AFTER_CHARS, toVisibleProse, type VisibleText } from '@airlock/core';

/**
 * Escapes a model's streamed prose piece by piece, as toVisibleProse escapes it whole: a piece that ends inside a
 * surrogate pair, on a backslash (or a backslash and u) or on a carriage return keeps that tail for the next piece,
 * so a split never becomes an escape (nor a CR LF line end an escaped CR); and each piece is read after the end of
 * what was shown before it, so a mark split from its letter (a Thai or Hindi vowel sign in the next piece) sits on
 * it, and is not escaped as a mark with nothing to sit on. What it gives holds no raw control character but the CR of
 * a CR LF (no escape sequences from the model, no CR to draw over what it wrote).
 */
export class VisibleStream {
  private held = '';
  /** The end of what was shown so far (`PROSE_AFTER_CHARS` of it). */
  private shown = '';

  push(piece: string): VisibleText {
    const text = this.held + piece;
    const last = text.charCodeAt(text.length - 1);
    // A backslash, or a backslash and u, may begin `\u{`, which the whole text shows escaped as `\u{5C}u{`.
    const keep = text.endsWith('\\u') ? 2 : text.endsWith('\\') || text.endsWith('\r') || (last >= 0xd800 && last <= 0xdbff) ? 1 : 0;
    this.held = text.slice(text.length - keep);
    return this.show(text.slice(0, text.length - keep));
  }

  flush(): VisibleText {
    const rest = this.held;
    this.held = '';
    return this.show(rest);
  }

  private show(text: string): VisibleText {
    const visible = toVisibleProse(text, { after: this.shown });
    this.shown = (this.shown + text).slice(-PROSE_AFTER_CHARS);
    return visible;
  }
}
