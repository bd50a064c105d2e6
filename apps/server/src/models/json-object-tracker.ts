/**
 * Follows a tool call's argument text as it arrives, a piece at a time, to tell whether it is one whole JSON object so
 * far: an opening brace, then text up to the brace that closes it, then blank space at most. Linear in the text (each
 * piece is read once), where parsing all of it again at each piece is quadratic. Strings in either quote are skipped
 * as model-written JSON is read (single-quoted strings are repaired), so a brace inside one closes nothing.
 */
export class JsonObjectTracker {
  private state: 'before' | 'inside' | 'closed' | 'other' = 'before';
  private depth = 0;
  private quote: string | undefined;
  private escaped = false;

  /** Whether the text so far is one whole object, closed, with nothing but blank space after it. */
  get closed(): boolean {
    return this.state === 'closed';
  }

  /** Whether the text so far holds more than blank space. */
  get begun(): boolean {
    return this.state !== 'before';
  }

  /** Reads the next piece of the text. */
  push(text: string): void {
    for (const char of text) {
      if (this.state === 'other') return;
      if (this.state !== 'inside') {
        const blank = char === ' ' || char === '\n' || char === '\r' || char === '\t';
        if (!blank) this.state = this.state === 'before' && char === '{' ? 'inside' : 'other';
        if (this.state === 'inside') this.depth = 1;
        continue;
      }
      if (this.quote !== undefined) {
        if (this.escaped) this.escaped = false;
        else if (char === '\\') this.escaped = true;
        else if (char === this.quote) this.quote = undefined;
      } else if (char === '"' || char === "'") {
        this.quote = char;
      } else if (char === '{' || char === '[') {
        this.depth++;
      } else if (char === '}' || char === ']') {
        this.depth--;
        if (this.depth === 0) this.state = 'closed';
      }
    }
  }
}
