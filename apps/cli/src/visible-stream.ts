import type { TerminalStyle } from './terminal-style';
import { showProse } from './render-tool-call';

/**
 * Escapes a model's streamed prose piece by piece, as toVisibleProse escapes it whole: a piece that ends inside a
 * surrogate pair or on a backslash keeps that tail for the next piece, so a split never becomes an escape. The
 * terminal never receives a raw control character (no escape sequences from the model).
 */
export class VisibleStream {
  private held = '';

  constructor(private readonly style: TerminalStyle) {}

  push(piece: string): string {
    const text = this.held + piece;
    const last = text.charCodeAt(text.length - 1);
    const keep = text.endsWith('\\') ? 1 : last >= 0xd800 && last <= 0xdbff ? 1 : 0;
    this.held = text.slice(text.length - keep);
    return showProse(text.slice(0, text.length - keep), this.style);
  }

  flush(): string {
    const rest = this.held;
    this.held = '';
    return showProse(rest, this.style);
  }
}
