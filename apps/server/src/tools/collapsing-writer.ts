const SPACE = 0x20;
const TAB = 0x09;
const NEWLINE = 0x0a;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Text written a character at a time, its white space collapsed as it is written: a run of spaces and tabs becomes
 * one (a tab when it held one), white space next to a line break is dropped, at most two line breaks in a row are
 * kept, and none at either end. The characters go to one growing buffer, never a string per piece: a page reduced to
 * a million pieces of white space costs a million steps, not a million strings for the collector to trace.
 */
export class CollapsingWriter {
  private buffer = new Uint16Array(4096);
  /** Characters written so far, not counting white space held until the next character. */
  length = 0;
  /** SPACE, TAB or 0: white space held, written only when a character follows. */
  private pendingSpace = 0;
  private pendingLineBreaks = 0;

  /** A character written as it is, even white space (preformatted text). */
  char(code: number): void {
    if (this.length > 0) {
      if (this.pendingLineBreaks > 0) {
        this.put(NEWLINE);
        if (this.pendingLineBreaks > 1) this.put(NEWLINE);
      } else if (this.pendingSpace !== 0) {
        this.put(this.pendingSpace);
      }
    }
    this.pendingLineBreaks = 0;
    this.pendingSpace = 0;
    this.put(code);
  }

  space(): void {
    if (this.pendingLineBreaks === 0 && this.pendingSpace === 0) this.pendingSpace = SPACE;
  }

  tab(): void {
    if (this.pendingLineBreaks === 0) this.pendingSpace = TAB;
  }

  lineBreaks(count: number): void {
    this.pendingLineBreaks += count;
    this.pendingSpace = 0;
  }

  /** Text whose white space, of any kind, reads as spaces. */
  text(value: string): void {
    for (let index = 0; index < value.length; index++) {
      const code = value.charCodeAt(index);
      if (isWhiteSpace(code)) this.space();
      else this.char(code);
    }
  }

  /**
   * Whether the text written since `start` (a past `length`), every run of white space as one space and trimmed, is
   * `value`. Reads at most what was written since.
   */
  writtenSinceIs(start: number, value: string): boolean {
    let matched = 0;
    let space = false;
    for (let index = start; index < this.length; index++) {
      const code = this.buffer[index]!;
      if (isWhiteSpace(code)) {
        space = matched > 0;
        continue;
      }
      if (space && value.charCodeAt(matched++) !== SPACE) return false;
      space = false;
      if (value.charCodeAt(matched++) !== code) return false;
    }
    return matched === value.length;
  }

  toString(): string {
    return decode(this.buffer, this.length);
  }

  private put(code: number): void {
    if (this.length === this.buffer.length) {
      const larger = new Uint16Array(this.buffer.length * 2);
      larger.set(this.buffer);
      this.buffer = larger;
    }
    this.buffer[this.length++] = code;
  }
}

/** JavaScript's white space (`\s`): what `String.prototype.trim` removes. */
export function isWhiteSpace(code: number): boolean {
  if (code <= 0x20) return code === SPACE || (code >= TAB && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 ||
    code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
  );
}

/** UTF-16 code units to a string, unpaired surrogates kept. */
function decode(codes: Uint16Array, length: number): string {
  const bytes = Buffer.from(codes.buffer, codes.byteOffset, length * 2);
  return (LITTLE_ENDIAN ? bytes : Buffer.from(bytes).swap16()).toString('utf16le');
}
