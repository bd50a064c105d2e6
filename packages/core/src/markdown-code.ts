/** Where a character stands in Markdown, as far as code goes. */
export type CodePlace =
  /** Text: a tag there is read. */
  | 'text'
  /** In a fenced or an indented code block (or the info string of a fence's opening line): a tag there is an example. */
  | 'code'
  /** After a backtick string opened on its line and not closed yet: in a code span only if one closes later on the line. */
  | 'open-span';

/** A block quote (`>`), or a list item whose lines go on at `width` columns more than the item's container. */
type Container = { kind: 'quote' } | { kind: 'item'; width: number };

/** An open fenced code block: its character and length, and how many of the containers it is in. */
interface Fence {
  char: number;
  length: number;
  depth: number;
}

/**
 * Where the reader is in the line: matching the open containers, after a `>`, looking for what starts the block,
 * in a list marker, in a run of tildes, in the indentation or the closing fence of a line in a fenced block, or in
 * the line's content.
 */
type Phase =
  | 'containers'
  | 'quote-space'
  | 'block'
  | 'bullet'
  | 'ordinal'
  | 'ordinal-end'
  | 'marker-space'
  | 'tildes'
  | 'fence-indent'
  | 'closing'
  | 'closing-tail'
  | 'content';

/**
 * Follows, one character of shown text at a time, whether the text stands in Markdown code, by CommonMark's rules
 * for the blocks that hold code: fenced code blocks (in block quotes and list items too, ended with their container,
 * closed only by a fence indented 0 to 3 columns), indented code blocks, and backtick code spans; and for what those
 * depend on: which lines go on with a block quote or list item (lazily too, for a paragraph), what may start a list
 * item in a paragraph, and the thematic breaks and headings that end one.
 *
 * It reads each character once and holds nothing back, so it cannot look ahead. What it approximates:
 * - A code span ends with its line (CommonMark lets it go on to its paragraph's end): a backtick string (its first
 *   backtick not escaped) is open until one as long closes it on the line. Whether one will is not known at the
 *   time: `where()` answers 'open-span', and the reader of the text decides with what follows (see `OpenSpanWatch`).
 * - HTML blocks, tables, link reference definitions and other blocks that hold no code are paragraph text.
 * - A tab after `>` gives one column to the marker; tabs elsewhere go to the next multiple of 4 columns.
 * - It follows the text shown: what the reader cut out of it (a call, thinking) is not read, but for the `<` of a
 *   tag, which counts as the line's content where it stood.
 */
export class MarkdownCode {
  /** The block quotes and list items the text is in, outermost first. */
  private containers: Container[] = [];
  /** Where the block quotes stand among them, outermost first: a blank line ends the first it does not go on with. */
  private quotes: number[] = [];
  /** The index of a list item whose first line was empty, with no line in it since (-1 for none): a blank line ends it. */
  private emptyItem = -1;
  private fence: Fence | undefined;
  /** The last line was paragraph text, so an indented line goes on with it rather than opening an indented code block. */
  private paragraph = false;

  private phase: Phase = 'containers';
  /** How many of the containers this line has gone on with, and how many of them are block quotes. */
  private matched = 0;
  private matchedQuotes = 0;
  /**
   * The containers from this index on did not go on with this line, which may yet go on lazily with the paragraph
   * in them (CommonMark: a paragraph's line needs no `>` nor indentation); they end if the line starts a block.
   */
  private lazyFrom: number | undefined;
  private column = 0;
  /** The column where the content of the innermost container matched on this line starts. */
  private base = 0;
  /** In a list marker: the column right after it. */
  private markerEnd = 0;
  private digits = 0;
  /** The list marker is a number (a bullet otherwise), and its value: only 1 starts a list in a paragraph. */
  private ordered = false;
  private ordinal = 0;
  /** A run of tildes opening a fence, or of the fence's character closing it: its length so far. */
  private run = 0;
  /** The line's content is code (a fenced or indented block's line, a fence's info string) or text. */
  private lineIsCode = false;
  /**
   * The line may be a thematic break (`***`, `- - -`) or a setext heading's underline (`===`, `---`): its character
   * (0 for none), how many of it, and how many containers there were before it (a `- - -` opened no list items).
   */
  private ruleChar = 0;
  private ruleCount = 0;
  private ruleDepth = 0;
  private ruleUnderline = false;
  /** The `#`s starting the line so far (an ATX heading's if 1 to 6 and then white space), and whether the line is one. */
  private hashes = 0;
  private heading = false;

  /** The lengths of the backtick strings opened on this line and not closed, in order, each length once. */
  private openers: number[] = [];
  /** Where each length stands in `openers`. */
  private openerAt = new Map<number, number>();
  /** The first opener is three backticks or more that started the line's content, and no backtick followed: the line opens a fence. */
  private fenceLine = false;
  /** The run of backticks under way, and whether it started the line's content. */
  private ticks = 0;
  private ticksStartLine = false;
  /** The backslashes right before, and whether an odd number of them came before the run of backticks (escaping its first). */
  private backslashes = 0;
  private ticksEscaped = false;

  /** Where a character that is none of Markdown's markers (such as the `<` of a tag) would stand, if it came now. */
  where(): CodePlace {
    switch (this.phase) {
      case 'containers':
      case 'quote-space':
        if (this.matched < this.containers.length) return this.blockPlace(this.fence !== undefined && this.fence.depth > this.matched ? false : this.paragraph);
        return this.fence === undefined ? this.blockPlace(this.paragraph) : 'code';
      case 'bullet':
      case 'ordinal':
      case 'ordinal-end':
        return 'text';
      case 'block':
        return this.blockPlace(this.paragraph);
      case 'marker-space':
        return this.itemMayStart() && this.column - this.markerEnd >= 5 ? 'code' : 'text';
      case 'tildes':
        return this.run >= 3 ? 'code' : 'text';
      case 'fence-indent':
      case 'closing':
      case 'closing-tail':
        return 'code';
      case 'content':
        if (this.lineIsCode) return 'code';
        this.settleTicks();
        return this.openers.length > 0 ? 'open-span' : 'text';
    }
  }

  /** While `where()` is 'open-span': what tells whether a code span closes around what comes next, on its line. */
  openSpans(): OpenSpanWatch {
    this.settleTicks();
    // Not copied: nothing is added while the watch reads what comes next.
    return new OpenSpanWatch(this.openerAt, this.fenceLine);
  }

  add(c: number): void {
    if (c === NEWLINE) {
      this.endLine();
      return;
    }
    if (this.ruleChar !== 0) {
      if (c === this.ruleChar) this.ruleCount++;
      else if (!isBlank(c)) this.ruleChar = 0;
    }
    if (this.hashes > 0) {
      if (c === HASH) {
        this.hashes++;
      } else {
        this.heading = isBlank(c) && this.hashes <= 6;
        this.hashes = 0;
      }
    }
    for (;;) {
      switch (this.phase) {
        case 'containers': {
          if (this.matched === this.containers.length) {
            this.phase = this.fence === undefined ? 'block' : 'fence-indent';
            continue;
          }
          const container = this.containers[this.matched]!;
          if (isBlank(c)) {
            this.advance(c);
            this.matchItems();
            return;
          }
          if (container.kind === 'quote' && c === GREATER_THAN && this.column - this.base <= 3) {
            this.column++;
            this.base = this.column;
            this.matched++;
            this.matchedQuotes++;
            this.phase = 'quote-space';
            return;
          }
          if (this.fence === undefined && this.paragraph) {
            this.lazyFrom = this.matched;
            this.phase = 'block';
          } else {
            this.closeFrom(this.matched);
          }
          continue;
        }
        case 'quote-space':
          this.phase = 'containers';
          if (isBlank(c)) {
            // The one space after `>` belongs to the marker (of a tab, one column of it).
            this.base = this.column + 1;
            this.advance(c);
            this.matchItems();
            return;
          }
          continue;
        case 'block': {
          if (isBlank(c)) {
            this.advance(c);
            return;
          }
          if (this.column - this.base >= 4) {
            this.startContent(!this.paragraph);
            continue;
          }
          if (this.ruleChar === 0 && (c === DASH || c === STAR || c === UNDERSCORE || (c === EQUALS && this.inParagraph()))) {
            this.ruleChar = c;
            this.ruleCount = 1;
            // Should the line be a rule, it starts a block: the containers it did not go on with end.
            this.ruleDepth = this.lazyFrom ?? this.containers.length;
            // An underline is the paragraph's own: under a line of it that went on with the same containers.
            this.ruleUnderline = this.inParagraph() && (c === DASH || c === EQUALS);
          }
          if (c === GREATER_THAN) {
            this.column++;
            this.endLazy();
            this.open({ kind: 'quote' });
            this.base = this.column;
            this.phase = 'quote-space';
            return;
          }
          if (c === DASH || c === PLUS || c === STAR) {
            this.column++;
            this.markerEnd = this.column;
            this.ordered = false;
            this.phase = 'bullet';
            return;
          }
          if (isDigit(c)) {
            this.column++;
            this.digits = 1;
            this.ordered = true;
            this.ordinal = c - DIGIT_ZERO;
            this.phase = 'ordinal';
            return;
          }
          if (c === TILDE) {
            this.column++;
            this.run = 1;
            this.phase = 'tildes';
            return;
          }
          if (c === HASH) this.hashes = 1;
          this.ticksStartLine = c === BACKTICK;
          this.startContent(false);
          continue;
        }
        case 'bullet':
        case 'ordinal-end':
          if (isBlank(c)) {
            this.phase = 'marker-space';
            continue;
          }
          this.startContent(false);
          continue;
        case 'ordinal':
          if (isDigit(c) && this.digits < 9) {
            this.digits++;
            this.ordinal = this.ordinal * 10 + c - DIGIT_ZERO;
            this.column++;
            return;
          }
          if (c === DOT || c === CLOSE_PAREN) {
            this.column++;
            this.markerEnd = this.column;
            this.phase = 'ordinal-end';
            return;
          }
          this.startContent(false);
          continue;
        case 'marker-space': {
          if (isBlank(c)) {
            this.advance(c);
            return;
          }
          if (!this.itemMayStart()) {
            this.startContent(false);
            continue;
          }
          // Five spaces or more after the marker: the item's content starts after one, and the rest indents code.
          const start = this.column - this.markerEnd >= 5 ? this.markerEnd + 1 : this.column;
          this.endLazy();
          this.open({ kind: 'item', width: start - this.base });
          this.base = start;
          this.phase = 'block';
          continue;
        }
        case 'tildes':
          if (c === TILDE) {
            this.run++;
            return;
          }
          if (this.run >= 3) {
            this.endLazy();
            this.openFence(TILDE, this.run);
            this.startContent(true);
          } else {
            this.startContent(false);
          }
          continue;
        case 'fence-indent':
          if (isBlank(c)) {
            this.advance(c);
            return;
          }
          if (c === this.fence!.char && this.column - this.base <= 3) {
            this.run = 1;
            this.phase = 'closing';
            return;
          }
          this.startContent(true);
          continue;
        case 'closing':
          if (c === this.fence!.char) {
            this.run++;
            return;
          }
          if (isBlank(c) && this.run >= this.fence!.length) {
            this.phase = 'closing-tail';
            return;
          }
          this.startContent(true);
          continue;
        case 'closing-tail':
          if (isBlank(c)) return;
          this.startContent(true);
          continue;
        case 'content':
          if (this.lineIsCode) return;
          if (c === BACKTICK) {
            if (this.ticks === 0) this.ticksEscaped = this.backslashes % 2 === 1;
            this.ticks++;
            this.backslashes = 0;
            return;
          }
          this.settleTicks();
          this.backslashes = c === BACKSLASH ? this.backslashes + 1 : 0;
          return;
      }
    }
  }

  private endLine(): void {
    this.settleTicks();
    const rule = this.ruleChar !== 0 && (this.ruleCount >= 3 || this.ruleUnderline);
    const heading = this.heading || (this.hashes > 0 && this.hashes <= 6);
    const emptyItem = this.emptyItem;
    this.emptyItem = -1;
    switch (this.phase) {
      case 'containers':
      case 'quote-space':
      case 'block':
        this.blankLine(emptyItem);
        break;
      case 'bullet':
      case 'ordinal-end':
      case 'marker-space':
        // An empty list item (none starts in a paragraph: the line is its text): its lines go on one column after the marker.
        if (this.inParagraph()) break;
        this.endLazy();
        this.open({ kind: 'item', width: this.markerEnd + 1 - this.base });
        this.emptyItem = this.containers.length - 1;
        break;
      case 'ordinal':
        this.paragraph = true;
        break;
      case 'tildes':
        if (this.run >= 3) {
          this.endLazy();
          this.openFence(TILDE, this.run);
        } else {
          this.paragraph = true;
        }
        break;
      case 'fence-indent':
        break;
      case 'closing':
        if (this.run >= this.fence!.length) this.fence = undefined;
        break;
      case 'closing-tail':
        this.fence = undefined;
        break;
      case 'content':
        if (this.lineIsCode) {
          this.paragraph = false;
        } else if (this.fenceLine) {
          this.endLazy();
          this.openFence(BACKTICK, this.openers[0]!);
        } else {
          this.paragraph = true;
        }
        break;
    }
    if (rule || heading) {
      // A block of one line that holds no code: it ends the paragraph, and a `- - -` opened no list items.
      this.endLazy();
      if (rule) this.closeFrom(this.ruleDepth);
      this.paragraph = false;
    }
    this.ruleChar = 0;
    this.hashes = 0;
    this.heading = false;
    this.phase = 'containers';
    this.matched = 0;
    this.matchedQuotes = 0;
    this.lazyFrom = undefined;
    this.column = 0;
    this.base = 0;
    this.openers = [];
    this.openerAt.clear();
    this.fenceLine = false;
    this.ticksStartLine = false;
    this.backslashes = 0;
  }

  /** The list marker read starts a list item with content: in a paragraph, only a bullet or 1 does. */
  private itemMayStart(): boolean {
    return !this.inParagraph() || !this.ordered || this.ordinal === 1;
  }

  /** The line stands in the paragraph's own containers (not lazily), where what starts a list item may not. */
  private inParagraph(): boolean {
    return this.paragraph && this.lazyFrom === undefined;
  }

  /** Where a character that starts no block would stand, at this line's indentation. */
  private blockPlace(paragraph: boolean): CodePlace {
    return this.column - this.base >= 4 && !paragraph ? 'code' : 'text';
  }

  private startContent(code: boolean): void {
    this.phase = 'content';
    this.lineIsCode = code;
  }

  /** The list items next to go on with the line as it is indented so far (what a tab spans past their content indents it). */
  private matchItems(): void {
    for (let next = this.containers[this.matched]; next?.kind === 'item' && this.column - this.base >= next.width; next = this.containers[this.matched]) {
      this.base += next.width;
      this.matched++;
    }
  }

  /** The line starts a block: the containers it did not go on with end. */
  private endLazy(): void {
    if (this.lazyFrom === undefined) return;
    this.closeFrom(this.lazyFrom);
    this.lazyFrom = undefined;
  }

  /**
   * A line with nothing but white space in the containers it went on with: it ends the paragraph, the block quotes
   * (a blank line goes on with none) and a list item whose first line was empty (CommonMark: an item starts with at
   * most one blank line); the other list items go on.
   */
  private blankLine(emptyItem: number): void {
    this.endLazy();
    // The block quotes before the first the line did not go on with all did.
    const quote = this.quotes[this.matchedQuotes] ?? -1;
    const ends = quote === -1 ? emptyItem : emptyItem === -1 ? quote : Math.min(quote, emptyItem);
    if (ends !== -1) this.closeFrom(ends);
    this.paragraph = false;
  }

  /** Ends the containers from `index` on, and the fence in them. */
  private closeFrom(index: number): void {
    if (index >= this.containers.length) return;
    if (this.fence !== undefined && this.fence.depth > index) {
      this.fence = undefined;
      this.paragraph = false;
    }
    this.containers.length = index;
    while ((this.quotes.at(-1) ?? -1) >= index) this.quotes.pop();
    if (this.emptyItem >= index) this.emptyItem = -1;
  }

  private open(container: Container): void {
    if (container.kind === 'quote') this.quotes.push(this.containers.length);
    this.containers.push(container);
    this.matched = this.containers.length;
    this.paragraph = false;
  }

  private openFence(char: number, length: number): void {
    this.fence = { char, length, depth: this.containers.length };
    this.paragraph = false;
  }

  private advance(c: number): void {
    this.column = c === TAB ? this.column + 4 - (this.column % 4) : this.column + 1;
  }

  /** Reads the run of backticks that just ended: it closes the open string as long (and those opened after it), or opens one. */
  private settleTicks(): void {
    const length = this.ticks;
    if (length === 0) return;
    this.ticks = 0;
    const startsLine = this.ticksStartLine;
    this.ticksStartLine = false;
    // A backtick after the opening fence is in its info string: the line is no fence.
    this.fenceLine = false;
    const at = this.openerAt.get(length);
    if (at !== undefined) {
      for (const closed of this.openers.splice(at)) this.openerAt.delete(closed);
      return;
    }
    // A backslash escapes the first backtick of a string that opens (none closes a span: code holds backslashes as they are).
    const opens = this.ticksEscaped ? length - 1 : length;
    // As long as one open, it could close only where that one closes first.
    if (opens === 0 || this.openerAt.has(opens)) return;
    this.openerAt.set(opens, this.openers.length);
    this.openers.push(opens);
    this.fenceLine = startsLine && opens >= 3;
  }
}

/**
 * Reads the rest of a line, after a tag that stands after open backtick strings, until it can tell whether a code
 * span closes around the tag: a string as long as one of them closes it (the tag was in code), or the line ends
 * first (it was not; unless the line opened a fence, the tag then in its info string).
 */
export class OpenSpanWatch {
  private ticks = 0;
  private readonly lengths: { has(length: number): boolean };
  private fenceLine: boolean;

  /** `lengths`: those of the open strings; `fenceLine`: the line started with one of three backticks or more. */
  constructor(lengths: { has(length: number): boolean }, fenceLine: boolean) {
    this.lengths = lengths;
    this.fenceLine = fenceLine;
  }

  /**
   * Reads the next character: 'code' when a span closed around the tag right before it, 'line' when it ends the
   * line with no span closed (what was read is then read again with the spans in it, `codeSpans`), or undefined
   * when it cannot tell yet.
   */
  add(c: number): 'code' | 'line' | undefined {
    if (c === BACKTICK) {
      this.ticks++;
      return undefined;
    }
    if (this.settle()) return 'code';
    if (c === NEWLINE) return this.fenceLine ? 'code' : 'line';
    return undefined;
  }

  /** The text ended. */
  end(): 'code' | 'line' {
    return this.settle() || this.fenceLine ? 'code' : 'line';
  }

  private settle(): boolean {
    const length = this.ticks;
    if (length === 0) return false;
    this.ticks = 0;
    this.fenceLine = false;
    return this.lengths.has(length);
  }
}

/**
 * The code spans of a line read whole, as CommonMark reads them from the left: a backtick string opens a span closed
 * by the next string as long, or is text if there is none (then so is its first backtick if a backslash escapes it).
 * 1 for each character in a span, its backticks included.
 */
export function codeSpans(line: string): Uint8Array {
  const inSpan = new Uint8Array(line.length);
  const starts: number[] = [];
  const lengths: number[] = [];
  const escaped: boolean[] = [];
  /** The strings of each length, in order, and how far the reading has gone through each list. */
  const ofLength = new Map<number, number[]>();
  let backslashes = 0;
  for (let i = 0; i < line.length; ) {
    const c = line.charCodeAt(i);
    if (c !== BACKTICK) {
      backslashes = c === BACKSLASH ? backslashes + 1 : 0;
      i++;
      continue;
    }
    const start = i;
    while (i < line.length && line.charCodeAt(i) === BACKTICK) i++;
    const run = starts.length;
    starts.push(start);
    lengths.push(i - start);
    escaped.push(backslashes % 2 === 1);
    backslashes = 0;
    const same = ofLength.get(i - start);
    if (same === undefined) ofLength.set(i - start, [run]);
    else same.push(run);
  }
  const read = new Map<number, number>();
  /** The first string of `length` after string `run` (each list is read forward once, as `run` only grows). */
  const nextOfLength = (length: number, run: number): number => {
    const same = ofLength.get(length);
    if (same === undefined) return -1;
    let at = read.get(length) ?? 0;
    while (at < same.length && same[at]! <= run) at++;
    read.set(length, at);
    return same[at] ?? -1;
  };
  for (let run = 0; run < starts.length; run++) {
    const skip = escaped[run] ? 1 : 0;
    const opens = lengths[run]! - skip;
    const close = opens === 0 ? -1 : nextOfLength(opens, run);
    if (close === -1) continue;
    inSpan.fill(1, starts[run]! + skip, starts[close]! + lengths[close]!);
    run = close;
  }
  return inSpan;
}

const NEWLINE = 0x0a;
const TAB = 0x09;
const BACKTICK = 0x60;
const TILDE = 0x7e;
const BACKSLASH = 0x5c;
const GREATER_THAN = 0x3e;
const DASH = 0x2d;
const PLUS = 0x2b;
const STAR = 0x2a;
const DOT = 0x2e;
const HASH = 0x23;
const DIGIT_ZERO = 0x30;
const UNDERSCORE = 0x5f;
const EQUALS = 0x3d;
const CLOSE_PAREN = 0x29;

/** Space, tab, or the carriage return of a CR LF line end. */
function isBlank(c: number): boolean {
  return c === 0x20 || c === TAB || c === 0x0d;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
