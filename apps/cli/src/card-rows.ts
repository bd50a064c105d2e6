import { FOLDED_BLANKS, FOLDED_INDENT, foldedBlankMarker, TAB_MARKER, type VisibleText } from '@airlock/core';
import type { TerminalStyle } from './terminal-style';

/** The width a card is laid out for when the terminal does not say. */
export const DEFAULT_COLUMNS = 100;

/** The columns a character takes on a card: one for ASCII, two for anything else (wide, or to be safe). */
export function columnsOf(codePoint: number): number {
  return codePoint < 0x7f ? 1 : 2;
}

/** A row of a card as written: styled text that fits the width it was laid out for. */
export interface CardRow {
  text: string;
  /** Columns it takes. */
  width: number;
  /** It carries on the line of the row before it (the line was longer than the width). */
  continued: boolean;
}

/** Empty lines in a row from which they are written as one marker row. */
export const FOLDED_EMPTY_LINES = 3;

/**
 * Lays a shown value out in rows of at most `width` columns, wrapping long lines here rather than leaving it to the
 * terminal: every row then starts with the gutter its caller puts before it, so nothing a model wrote ever starts at
 * the left edge, where it could pass for a line of the card. A tab is shown as a marked `⇥`: raw, the terminal would
 * move to its next tab stop, wider than counted, and wrap the row itself. Long runs of spaces, of tabs and of empty
 * lines are folded into one marker each. A character outside ASCII counts as two columns (the widest a terminal
 * draws), so a row never wraps in the terminal. Linear in the value's length.
 */
export function cardRows(value: VisibleText, width: number, style: TerminalStyle): CardRow[] {
  const columns = Math.max(width, 16);
  const rows: CardRow[] = [];
  let row = '';
  let used = 0;
  let continued = false;
  let emptyLines = 0;

  const endRow = (nextContinued: boolean) => {
    rows.push({ text: row, width: used, continued });
    row = '';
    used = 0;
    continued = nextContinued;
  };
  const flushEmptyLines = () => {
    if (emptyLines >= FOLDED_EMPTY_LINES) {
      const marker = `(${emptyLines} empty lines)`;
      rows.push({ text: style.dim(marker), width: marker.length, continued: false });
    } else {
      for (let index = 0; index < emptyLines; index++) rows.push({ text: '', width: 0, continued: false });
    }
    emptyLines = 0;
  };
  const put = (text: string, size: number) => {
    if (emptyLines > 0) flushEmptyLines();
    if (used > 0 && used + size > columns) endRow(true);
    row += text;
    used += size;
  };
  const lineBreak = () => {
    if (used === 0 && !continued) {
      emptyLines++;
      return;
    }
    if (emptyLines > 0) flushEmptyLines();
    endRow(false);
  };

  /** Whether the next character starts a line: spaces there are indentation, folded only from FOLDED_INDENT. */
  let lineStart = true;
  for (const segment of value.segments) {
    if (segment.kind === 'escape') {
      put(style.escape(segment.text), segment.text.length);
      lineStart = false;
      continue;
    }
    const text = segment.text;
    let index = 0;
    while (index < text.length) {
      const char = text[index]!;
      if (char === '\n') {
        lineBreak();
        lineStart = true;
        index++;
        continue;
      }
      const indent = lineStart;
      lineStart = false;
      if (char === ' ' || char === '\t') {
        let end = index;
        while (end < text.length && text[end] === char) end++;
        const count = end - index;
        if (count >= (indent && char === ' ' ? FOLDED_INDENT : FOLDED_BLANKS)) {
          const marker = foldedBlankMarker(char, count);
          put(style.escape(marker), marker.length + 1);
        } else if (char === ' ') {
          for (let space = 0; space < count; space++) put(' ', 1);
        } else {
          for (let tab = 0; tab < count; tab++) put(style.escape(TAB_MARKER), 2);
        }
        index = end;
        continue;
      }
      const codePoint = text.codePointAt(index)!;
      const size = codePoint > 0xffff ? 2 : 1;
      put(text.slice(index, index + size), columnsOf(codePoint));
      index += size;
    }
  }
  // A value's last line is a row even when empty, unless it is one of a run of empty lines already counted.
  if (emptyLines > 0) {
    // The line after the last break is one of the empty ones: count it with them, as the person would.
    emptyLines++;
    flushEmptyLines();
  } else {
    rows.push({ text: row, width: used, continued });
  }
  return rows;
}
