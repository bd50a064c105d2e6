import { foldedBlankMarker, type VisibleText } from '@airlock/core';
import { columnsOf, DEFAULT_COLUMNS } from './card-rows';
import type { TerminalStyle } from './terminal-style';
import { VisibleStream } from './visible-stream';

/** Which of a model's prose a block is: its answer, or its reasoning (dim, labelled). */
export type ProseKind = 'text' | 'reasoning';

/**
 * The gutter before every row of a model's prose, a glyph no line of the client's own starts with (the card's value
 * gutter is `│`, four columns in): whatever the model writes, a row of it reads as the model's.
 */
export const PROSE_GUTTERS: Readonly<Record<ProseKind, string>> = { text: '┃', reasoning: '┆' };
const LABELS: Readonly<Record<ProseKind, string>> = { text: '', reasoning: 'thinking: ' };
/** Blank lines in a row (empty, or only spaces and tabs) from which they are shown as one marker row. */
export const FOLDED_BLANK_LINES = 3;
/** Columns of white space in a row from which it is shown as one marker (`␠×N`), at most half a row. */
export const FOLDED_PROSE_SPACES = 32;
/** Near a row's end, a word is held until it ends, to be moved to the next row whole; before that it is written at once. */
const HOLD_COLUMNS = 16;
const TAB_STOP = 8;

type Tone = 'prose' | 'escape' | 'raw';
interface Piece {
  tone: Tone;
  text: string;
}
/** A character of a word, or an escape (`\u{1B}`), which is never split. */
interface Unit {
  tone: 'prose' | 'escape';
  text: string;
  width: number;
}

/**
 * A model's prose as the terminal shows it, streamed: every row behind the prose gutter, wrapped here at spaces to the
 * terminal's width (a word longer than a row is split), so no row of it ever starts at the left edge, where
 * `⏺ terminal` / `✓ allowed` would pass for the client's own lines; runs of blank lines (`⋮ 60 blank lines`) and wide
 * runs of spaces (`␠×N`) are folded into one marker each, blank lines at the start of a block dropped. Each `push` gives
 * what to write now; `end` closes the block.
 */
export class ProseRows {
  private readonly visible = new VisibleStream();
  private pieces: Piece[] = [];
  private width = rowWidth(DEFAULT_COLUMNS);
  /** The current line has a row on screen, its gutter written. */
  private open = false;
  /** Columns used on that row after the gutter. */
  private used = 0;
  /** The block has shown a row (with its label). */
  private started = false;
  /** Blank lines seen since the last row, not shown yet. */
  private blanks = 0;
  /** White space after the last word, not shown yet: it goes before the next word, unless the row breaks there. */
  private space = '';
  /** The word being read, held (not shown yet). */
  private word: Unit[] = [];
  private wordWidth = 0;
  /** Part of the word being read is on the row already: the rest goes after it, split at the row's end. */
  private wordShown = false;
  /** A word is on the row (not only the label or an indent): a word that does not fit goes to the next row. */
  private rowHasText = false;

  constructor(
    private readonly style: TerminalStyle,
    private readonly kind: ProseKind,
  ) {}

  /**
   * What to write for `piece`, for a terminal `columns` wide. `moved`: something else was written since this block's
   * last write, so a row it had open is not where the cursor is; what comes next starts a row of its own.
   */
  push(piece: string, columns: number = DEFAULT_COLUMNS, { moved = false } = {}): string {
    this.width = rowWidth(columns);
    if (moved) this.moved();
    this.add(this.visible.push(piece));
    return this.take();
  }

  /** Ends the block: what was held is written, and the next `push` starts a new block (with its label). */
  end(columns: number = DEFAULT_COLUMNS, { moved = false } = {}): string {
    this.width = rowWidth(columns);
    if (moved) this.moved();
    this.add(this.visible.flush());
    this.endWord();
    if (this.blanks > 0 && this.started) this.showBlanks();
    const text = this.take();
    this.open = false;
    this.used = 0;
    this.rowHasText = false;
    this.started = false;
    this.blanks = 0;
    this.space = '';
    this.wordShown = false;
    return text;
  }

  private moved(): void {
    this.space = '';
    this.open = false;
    this.used = 0;
    this.rowHasText = false;
    this.wordShown = false;
  }

  private add(visible: VisibleText): void {
    for (const segment of visible.segments) {
      if (segment.kind === 'escape') {
        this.unit({ tone: 'escape', text: segment.text, width: segment.text.length });
        continue;
      }
      for (const char of segment.text) {
        // A CR left in prose is the first half of a CR LF line end: the LF ends the line.
        if (char === '\r') continue;
        if (char === '\n') this.lineBreak();
        else if (char === ' ' || char === '\t') this.white(char);
        else this.unit({ tone: 'prose', text: char, width: columnsOf(char.codePointAt(0)!) });
      }
    }
  }

  private lineBreak(): void {
    this.endWord();
    this.space = '';
    if (this.open) {
      this.raw('\n');
      this.open = false;
      this.used = 0;
      this.rowHasText = false;
    } else if (this.started) {
      this.blanks++;
    }
  }

  private white(char: string): void {
    this.endWord();
    this.space += char;
  }

  private unit(unit: Unit): void {
    if (this.wordShown) {
      if (this.used + unit.width > this.width) this.breakRow();
      this.put(unit);
      return;
    }
    this.word.push(unit);
    this.wordWidth += unit.width;
    const start = this.open ? this.used : this.started ? 0 : LABELS[this.kind].length;
    const gap = this.gap(start);
    // Far from the row's end a word is written as it comes; near it, once it is known not to fit, it moves down whole.
    if (this.word.length === 1 ? start + gap.width + this.wordWidth + HOLD_COLUMNS <= this.width : start + gap.width + this.wordWidth > this.width) {
      this.showWord();
      this.wordShown = true;
    }
  }

  /** The word read is over: what is held of it is written, after the white space before it. */
  private endWord(): void {
    if (this.word.length > 0) this.showWord();
    this.wordShown = false;
  }

  /** Writes the white space held and the word held after it, on this row if both fit, else the word on the next. */
  private showWord(): void {
    if (!this.open) this.openRow();
    const gap = this.gap(this.used);
    if (this.rowHasText && this.used + gap.width + this.wordWidth > this.width) {
      this.breakRow();
    } else {
      this.pieces.push(...gap.pieces);
      this.used += gap.width;
    }
    this.space = '';
    for (const unit of this.word) {
      if (this.used > 0 && this.used + unit.width > this.width) this.breakRow();
      this.put(unit);
    }
    this.word = [];
    this.wordWidth = 0;
  }

  /** The white space held, as written at column `from` of a row: tabs to their stops, a wide run as one marker. */
  private gap(from: number): { pieces: Piece[]; width: number } {
    let column = from;
    for (const char of this.space) column = char === '\t' ? (Math.floor(column / TAB_STOP) + 1) * TAB_STOP : column + 1;
    const width = column - from;
    if (width < Math.min(FOLDED_PROSE_SPACES, Math.floor(this.width / 2))) return { pieces: width === 0 ? [] : [{ tone: 'prose', text: ' '.repeat(width) }], width };
    const spaces = [...this.space].filter((char) => char === ' ').length;
    const tabs = this.space.length - spaces;
    // Shown as on a card (the same markers, from core).
    const marker = `${spaces > 0 ? foldedBlankMarker(' ', spaces) : ''}${tabs > 0 ? foldedBlankMarker('\t', tabs) : ''}`;
    let markerWidth = 0;
    for (const char of marker) markerWidth += columnsOf(char.codePointAt(0)!);
    return { pieces: [{ tone: 'raw', text: ' ' }, { tone: 'escape', text: marker }, { tone: 'raw', text: ' ' }], width: markerWidth + 2 };
  }

  /** Starts a row of the current line behind the gutter; the block's first row has its label, blank lines before it their rows. */
  private openRow(): void {
    if (this.blanks > 0) this.showBlanks();
    this.raw(`${this.style.dim(PROSE_GUTTERS[this.kind])} `);
    this.open = true;
    this.used = 0;
    this.rowHasText = false;
    if (!this.started) {
      this.started = true;
      const label = LABELS[this.kind];
      if (label !== '') {
        this.raw(this.style.dim(label));
        this.used = label.length;
      }
    }
  }

  /** The line goes on on the next row, behind the gutter. */
  private breakRow(): void {
    this.raw(`\n${this.style.dim(PROSE_GUTTERS[this.kind])} `);
    this.used = 0;
    this.rowHasText = false;
  }

  private showBlanks(): void {
    const gutter = this.style.dim(PROSE_GUTTERS[this.kind]);
    if (this.blanks >= FOLDED_BLANK_LINES) this.raw(`${gutter} ${this.style.dim(`⋮ ${this.blanks} blank lines`)}\n`);
    else this.raw(`${gutter}\n`.repeat(this.blanks));
    this.blanks = 0;
  }

  private put(unit: Unit): void {
    this.pieces.push(unit);
    this.used += unit.width;
    this.rowHasText = true;
  }

  private raw(text: string): void {
    this.pieces.push({ tone: 'raw', text });
  }

  /** What was made since the last take, each run of one tone styled once. */
  private take(): string {
    let text = '';
    let run = '';
    let tone: Tone = 'raw';
    const endRun = () => {
      text += tone === 'raw' ? run : tone === 'escape' ? this.style.escape(run) : this.kind === 'reasoning' ? this.style.dim(run) : run;
      run = '';
    };
    for (const piece of this.pieces) {
      if (piece.tone !== tone) {
        endRun();
        tone = piece.tone;
      }
      run += piece.text;
    }
    endRun();
    this.pieces = [];
    return text;
  }
}

/** Columns of prose on a row: the terminal's, less the gutter and one to spare (a row never fills the terminal's). */
function rowWidth(columns: number): number {
  return Math.max(columns - 3, 16);
}
