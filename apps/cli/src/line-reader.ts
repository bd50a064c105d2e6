import type { Interface } from 'node:readline';

/** What a question answers when Ctrl-C interrupted it rather than a line being entered. */
export const INTERRUPTED = Symbol('interrupted');

/**
 * Questions over one readline interface. A line typed while nothing is asked is dropped: an answer typed ahead
 * must never decide a call the person has not seen yet.
 */
export class LineReader {
  private waiter: ((answer: string | null | typeof INTERRUPTED) => void) | undefined;
  private closed = false;

  constructor(private readonly rl: Interface) {
    rl.on('line', (line) => this.answer(line));
    rl.on('close', () => {
      this.closed = true;
      this.answer(null);
    });
  }

  /** The next line entered; null once input has ended (Ctrl-D); INTERRUPTED after `interrupt()`. */
  question(prompt: string): Promise<string | null | typeof INTERRUPTED> {
    if (this.closed) return Promise.resolve(null);
    this.answer(INTERRUPTED);
    return new Promise((resolve) => {
      this.waiter = resolve;
      this.rl.setPrompt(prompt);
      this.rl.prompt();
    });
  }

  /** Ends the question being asked, if any, with INTERRUPTED. */
  interrupt(): void {
    this.answer(INTERRUPTED);
  }

  /**
   * Takes back the question being asked, if any (it was answered elsewhere): it ends with INTERRUPTED, and what was
   * typed for it is cleared, so it cannot become the answer to the next question.
   */
  withdraw(): void {
    if (this.waiter === undefined) return;
    if (this.rl.terminal) {
      this.rl.write(null, { ctrl: true, name: 'e' });
      this.rl.write(null, { ctrl: true, name: 'u' });
    }
    this.answer(INTERRUPTED);
  }

  close(): void {
    if (!this.closed) this.rl.close();
  }

  private answer(value: string | null | typeof INTERRUPTED): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(value);
  }
}
