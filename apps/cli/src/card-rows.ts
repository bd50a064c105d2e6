import { blankPieces, textSegments, type VisibleText } from '@airlock/core';
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
 * lines are folded into one marker each, and blanks at the end of a line (or around a one-line value) are marked, as
 * on the web card (core's `blankPieces`). A character outside ASCII counts as two columns (the widest a terminal
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

  const places = new Map(textSegments(value).map((found) => [found.at, found.place]));
  value.segments.forEach((segment, at) => {
    if (segment.kind === 'escape') {
      put(style.escape(segment.text), segment.text.length);
      return;
    }
    for (const piece of blankPieces(segment.text, places.get(at))) {
      if (piece.kind === 'blank') {
        // A marker outside ASCII takes two columns (see columnsOf); a folded one is written whole, never split.
        if (piece.folded) put(style.escape(piece.text), piece.text.length + 1);
        else for (const marker of piece.text) put(style.escape(marker), 2);
        continue;
      }
      const text = piece.text;
      let index = 0;
      while (index < text.length) {
        const codePoint = text.codePointAt(index)!;
        const size = codePoint > 0xffff ? 2 : 1;
        if (codePoint === 0x0a) lineBreak();
        else put(text.slice(index, index + size), columnsOf(codePoint));
        index += size;
      }
    }
  });
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
