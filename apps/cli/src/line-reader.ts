import { clearScreenDown, createInterface, cursorTo, moveCursor, type Interface, type Key } from 'node:readline';

/** What a question answers when Ctrl-C interrupted it rather than a line being entered. */
export const INTERRUPTED = Symbol('interrupted');

/**
 * How long a decision prompt is on screen before the first keystroke of its answer may come, in milliseconds: a
 * doubled `a⏎` (or one typed for the call before) must not allow a call that appeared under the person's fingers. The
 * web app's decision buttons ignore a click in their first 600 ms too.
 */
export const DECISION_GUARD_MS = 600;

/** Why a line entered was not taken as an answer. */
export type IgnoredLine =
  /** Its first keystroke came before the decision prompt had been on screen for the guard time. */
  | 'typed-ahead'
  /** A keystroke of it came before the decision prompt, drawn again below a note, had been on screen for the guard time. */
  | 'redrawn'
  /** It starts with pasted text: a paste never decides a call. */
  | 'pasted'
  /** Nothing was asked when it was entered (a run was going on). */
  | 'not-asked';

export interface LineReaderOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Edit lines in the terminal: echo, cursor keys, history, bracketed paste. Default false. */
  terminal?: boolean;
  /** How long a decision prompt must have been shown before its answer's first keystroke, in ms. Default `DECISION_GUARD_MS`. */
  guardMs?: number;
  /** The clock the guard is measured with, in milliseconds. Default `performance.now`. */
  now?: () => number;
  /** Told of each line entered that is not taken, before the question (if any) is asked again. */
  onIgnored?: (why: IgnoredLine) => void;
}

export interface QuestionOptions {
  /**
   * The answer decides a tool call: a line whose first keystroke came before the prompt had been shown for the
   * guard time, or that starts with pasted text, is ignored (`onIgnored`) and the question asked again. Default false.
   */
  decides?: boolean;
  /**
   * What the question is about (a tool call's card), as whole lines: drawn again above the question whenever a note
   * is written while it is open, or it is asked again after a line was ignored, so the whole of it stays in view with
   * the question however many notes come. Called each time, for the terminal's size then. Default none.
   */
  card?: () => string;
}

/** What a question gets: the line entered, null once input has ended (Ctrl-D), INTERRUPTED after `interrupt()`. */
export type Answer = string | null | typeof INTERRUPTED;

/** Asks the terminal to mark a paste (`ESC[200~ … ESC[201~`), so a pasted line end is told from Enter. */
const BRACKETED_PASTE_ON = '\x1b[?2004h';
const BRACKETED_PASTE_OFF = '\x1b[?2004l';
const PASTE_START_MARK = '\x1b[200~';
/** The prompt before each line of a paste after its first: the paste waits for Enter. */
const CONTINUATION = '… ';
const LINE_END = /\r\n|\r|\n/g;

/** The line being entered: when its first keystroke came, and the lines pasted before its last one. */
interface Entry {
  startedAt: number | undefined;
  pasted: string[];
  /** Its first characters were pasted, not typed. */
  pastedHead: boolean;
  /** A keystroke of it came while the decision prompt, just drawn again below a note, was within its guard time. */
  duringRedraw: boolean;
}

interface Waiter {
  prompt: string;
  decides: boolean;
  card: (() => string) | undefined;
  /** When the prompt was shown for a new entry: an entry whose first keystroke came before the guard time after is ignored. */
  shownAt: number;
  /** When the prompt was last drawn again below a note, keeping what was typed: a keystroke within the guard time after spoils the entry. */
  redrawnAt: number | undefined;
  resolve: (answer: Answer) => void;
}

const freshEntry = (): Entry => ({ startedAt: undefined, pasted: [], pastedHead: false, duringRedraw: false });

/**
 * Questions over one readline interface. An answer typed ahead must never decide a call the person has not seen
 * yet: a line entered while nothing is asked is dropped, and a decision's answer counts only when its first
 * keystroke came once the prompt had been on screen for a moment, none came just as it was drawn again below a note,
 * and it was typed, not pasted.
 *
 * A paste is one entry, however many lines it holds: its line ends do not enter it, Enter does, so a multi-line
 * message or reason goes whole. A paste is told apart by the terminal's bracketed paste mode, or, in a terminal
 * without it, by line ends that arrive in one read with more after them (nobody types a line end and the next key
 * within one read).
 */
export class LineReader {
  private readonly rl: Interface;
  private readonly terminal: boolean;
  private readonly guardMs: number;
  private readonly now: () => number;
  private readonly onIgnored: ((why: IgnoredLine) => void) | undefined;
  private waiter: Waiter | undefined;
  private entry = freshEntry();
  /** Between the terminal's paste start and end marks. */
  private bracketed = false;
  /** When the input read being handled arrived; undefined between reads. */
  private chunkAt: number | undefined;
  /** The input read being handled holds a paste's line ends. */
  private chunkPasted = false;
  /** The input read being handled ends inside a line (for input that is not a terminal, where readline shows no line). */
  private chunkOpen = false;
  private closed = false;

  private readonly output: NodeJS.WritableStream;

  constructor(options: LineReaderOptions) {
    this.output = options.output;
    this.terminal = options.terminal === true;
    this.guardMs = options.guardMs ?? DECISION_GUARD_MS;
    this.now = options.now ?? (() => performance.now());
    this.onIgnored = options.onIgnored;
    const { input, output } = options;
    // Before readline reads it, and after: the time of each keystroke, and whether a read is a paste.
    input.prependListener('data', (chunk: Buffer | string) => this.readStarts(String(chunk)));
    this.rl = createInterface({ input, output, terminal: this.terminal });
    input.on('data', () => this.readEnds());
    if (this.terminal) {
      input.on('keypress', (_text: string | undefined, key: Key | undefined) => this.keypress(key));
      output.write(BRACKETED_PASTE_ON);
      // Readline draws only the question again for the new size: a card laid out for more rows had its name and first
      // lines above the view, and a card for more columns was wrapped by the terminal to its left edge.
      output.on('resize', () => {
        if (this.waiter?.card !== undefined) this.say('');
      });
    }
    this.rl.on('line', (line) => this.entered(line));
    this.rl.on('SIGCONT', () => this.resumed());
    this.rl.on('close', () => {
      this.closed = true;
      if (this.terminal) output.write(BRACKETED_PASTE_OFF);
      this.answer(null);
    });
  }

  /** Ctrl-C pressed (readline's SIGINT). */
  onInterruptKey(listener: () => void): void {
    this.rl.on('SIGINT', listener);
  }

  /** The next line entered; null once input has ended (Ctrl-D); INTERRUPTED after `interrupt()`. */
  question(prompt: string, { decides = false, card }: QuestionOptions = {}): Promise<Answer> {
    if (this.closed) return Promise.resolve(null);
    this.answer(INTERRUPTED);
    return new Promise((resolve) => {
      const waiter: Waiter = { prompt, decides, card, shownAt: 0, redrawnAt: undefined, resolve };
      this.waiter = waiter;
      this.show(waiter);
    });
  }

  /** Ends the question being asked, if any, with INTERRUPTED; what was typed for it is cleared. */
  interrupt(): void {
    if (this.waiter !== undefined) this.discard();
    this.answer(INTERRUPTED);
  }

  /**
   * Takes back the question being asked, if any (it was answered elsewhere): it ends with INTERRUPTED, and what was
   * typed for it is cleared, so it cannot become the answer to the next question.
   */
  withdraw(): void {
    if (this.waiter === undefined) return;
    this.discard();
    this.answer(INTERRUPTED);
  }

  close(): void {
    if (!this.closed) this.rl.close();
  }

  /**
   * Writes `text` (whole lines) in place of the question being asked in a terminal; under it, the question's card
   * and the question are drawn again, with what was typed, the cursor at its end: a note never pushes the card out of
   * view. A decision's guard starts again: a keystroke within its time after spoils the answer it is part of. False
   * when no question is open there: nothing is written.
   */
  say(text: string): boolean {
    const waiter = this.waiter;
    if (waiter === undefined || !this.terminal || this.closed) return false;
    this.rl.write(null, { ctrl: true, name: 'e' });
    // The prompt and what was typed may take several rows; the cursor is on their last one.
    const { rows } = this.rl.getCursorPos();
    moveCursor(this.output, 0, -rows);
    cursorTo(this.output, 0);
    clearScreenDown(this.output);
    // Readline draws the question again from as many rows up as its cursor was: blank ones, under the card.
    this.output.write(`${text}${waiter.card?.() ?? ''}${'\n'.repeat(rows)}`);
    waiter.redrawnAt = this.now();
    this.rl.prompt(true);
    return true;
  }

  /**
   * Back in the foreground after Ctrl-Z: readline paused its input there, and resumes it only at its next prompt, so
   * until then no key was read, Ctrl-C included, and a run went on however often it was pressed. The input is read
   * again at once, the terminal asked again to mark a paste; a question open is drawn again with its card under what
   * the shell wrote meanwhile, its guard started again.
   */
  private resumed(): void {
    // A shell turns the paste marks off to run `fg`: without them, a pasted `a` and Enter read as typed.
    this.output.write(BRACKETED_PASTE_ON);
    const waiter = this.waiter;
    if (waiter === undefined) {
      this.rl.resume();
      return;
    }
    // Readline draws the question again from as many rows up as its cursor was: blank ones, under the card.
    this.output.write(`${waiter.card?.() ?? ''}${'\n'.repeat(this.rl.getCursorPos().rows)}`);
    waiter.redrawnAt = this.now();
    this.rl.prompt(true);
  }

  /** Shows the question for a new entry; `again`: after a line was ignored, under its note, the card first. */
  private show(waiter: Waiter, { again = false } = {}): void {
    if (again && waiter.card !== undefined) this.output.write(waiter.card());
    waiter.shownAt = this.now();
    waiter.redrawnAt = undefined;
    this.rl.setPrompt(waiter.prompt);
    this.rl.prompt();
  }

  private discard(): void {
    this.entry = freshEntry();
    if (this.terminal) {
      this.rl.write(null, { ctrl: true, name: 'e' });
      this.rl.write(null, { ctrl: true, name: 'u' });
    }
  }

  private readStarts(text: string): void {
    this.chunkAt = this.now();
    this.entry.startedAt ??= this.chunkAt;
    const redrawnAt = this.waiter?.decides === true ? this.waiter.redrawnAt : undefined;
    if (redrawnAt !== undefined && this.chunkAt < redrawnAt + this.guardMs) this.entry.duringRedraw = true;
    const ends = text.match(LINE_END)?.length ?? 0;
    const endsOnLineEnd = /[\r\n]$/.test(text);
    this.chunkOpen = !endsOnLineEnd;
    // A terminal that does not mark a paste still hands it over in one read: Enter ends a read, a paste's line ends
    // do not. A read with the marks says itself what was pasted (keys typed before or after one may share its read).
    this.chunkPasted = this.terminal && !text.includes(PASTE_START_MARK) && (ends > 1 || (ends === 1 && !endsOnLineEnd));
    if (this.chunkPasted) this.pasteStarts();
  }

  private readEnds(): void {
    const chunkAt = this.chunkAt;
    if (this.chunkPasted && !this.bracketed) this.showContinuation();
    this.chunkAt = undefined;
    this.chunkPasted = false;
    const typing = (this.terminal ? this.rl.line !== '' : this.chunkOpen) || this.entry.pasted.length > 0 || this.bracketed;
    // Erased (or entered) in full: the next keystroke starts a new line, and its time is the one that counts.
    if (!typing) this.entry = freshEntry();
    else this.entry.startedAt ??= chunkAt;
  }

  private keypress(key: Key | undefined): void {
    if (key?.name === 'paste-start') {
      this.bracketed = true;
      this.pasteStarts();
    } else if (key?.name === 'paste-end') {
      this.bracketed = false;
      this.showContinuation();
    } else if (key?.ctrl === true && key.name === 'l') {
      // Readline cleared the screen and drew the question alone at its top: without its card, `a` allowed a call not in view.
      this.say('');
    }
  }

  private pasteStarts(): void {
    if (this.entry.pasted.length === 0 && this.rl.line.slice(0, this.rl.cursor).trim() === '') this.entry.pastedHead = true;
  }

  /** After a paste of several lines: the continuation prompt says the entry is still open, waiting for Enter. */
  private showContinuation(): void {
    if (this.entry.pasted.length === 0 || this.closed) return;
    this.rl.setPrompt(CONTINUATION);
    this.rl.prompt(true);
  }

  private entered(line: string): void {
    if (this.bracketed || this.chunkPasted) {
      this.entry.pasted.push(line);
      this.rl.setPrompt(CONTINUATION);
      return;
    }
    const { startedAt = this.chunkAt ?? this.now(), pasted, pastedHead, duringRedraw } = this.entry;
    this.entry = freshEntry();
    const text = [...pasted, ...(line === '' && pasted.length > 0 ? [] : [line])].join('\n');
    const waiter = this.waiter;
    if (waiter === undefined) {
      if (text.trim() !== '') this.onIgnored?.('not-asked');
      return;
    }
    if (waiter.decides) {
      const why: IgnoredLine | undefined = pastedHead ? 'pasted' : startedAt < waiter.shownAt + this.guardMs ? 'typed-ahead' : duringRedraw ? 'redrawn' : undefined;
      if (why !== undefined) {
        this.onIgnored?.(why);
        if (this.waiter === waiter) this.show(waiter, { again: true });
        return;
      }
    }
    this.answer(text);
  }

  private answer(value: Answer): void {
    const waiter = this.waiter;
    if (waiter === undefined) return;
    this.waiter = undefined;
    // Readline draws its prompt again by itself (back from Ctrl-Z, Ctrl-L): never a question no longer asked.
    this.rl.setPrompt('');
    waiter.resolve(value);
  }
}
