import { once } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED, LineReader, type Answer, type IgnoredLine, type QuestionOptions } from './line-reader';

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

/** A reader on a terminal made of two streams, with a clock the test moves. */
function fakeTerminal({ guardMs = 600 } = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  let written = '';
  output.on('data', (chunk: Buffer) => (written += chunk.toString()));
  let time = 0;
  const ignored: IgnoredLine[] = [];
  const reader = new LineReader({ input, output, terminal: true, guardMs, now: () => time, onIgnored: (why) => ignored.push(why) });
  return {
    reader,
    ignored,
    /** Everything written to the terminal, control sequences included. */
    written: () => written,
    /** What the terminal shows, roughly: the text without control sequences. */
    text: () => stripVTControlCharacters(written),
    /** Moves the clock on. */
    advance: (ms: number) => (time += ms),
    /** Input as one read of the terminal, handled once this resolves: its listener comes after the reader's. */
    async read(data: string) {
      const handled = once(input, 'data');
      input.write(data);
      await handled;
    },
    /** A question, and what it has been answered with so far (undefined while it waits). */
    ask(prompt: string, options: QuestionOptions = {}) {
      const state: { answer: Answer | undefined } = { answer: undefined };
      const answered = reader.question(prompt, options).then((answer) => (state.answer = answer));
      return { state, answered };
    },
  };
}

describe('LineReader', () => {
  it('ignores an answer to a decision whose first keystroke came before the prompt had been shown for the guard time', async () => {
    const terminal = fakeTerminal();
    const question = terminal.ask('allow? ', { decides: true });
    terminal.advance(100);
    await terminal.read('a');
    terminal.advance(900);
    await terminal.read('\r');
    // Entered late, but begun 100 ms after the prompt: not an answer. The question is asked again, and its guard starts again.
    expect(terminal.ignored).toStrictEqual(['typed-ahead']);
    expect(question.state.answer).toBeUndefined();
    terminal.advance(599);
    await terminal.read('a\r');
    expect(terminal.ignored).toStrictEqual(['typed-ahead', 'typed-ahead']);
    terminal.advance(600);
    await terminal.read('a\r');
    await question.answered;
    expect(question.state.answer).toBe('a');
    expect(terminal.text().split('allow? ').length - 1).toBe(3);
  });

  it('ignores what was typed for a decision before it was asked, and takes it once erased and typed again', async () => {
    const terminal = fakeTerminal();
    await terminal.read('a');
    const question = terminal.ask('allow? ', { decides: true });
    terminal.advance(1000);
    await terminal.read('\r');
    expect(terminal.ignored).toStrictEqual(['typed-ahead']);

    terminal.advance(100);
    await terminal.read('d');
    await terminal.read('\x7f');
    terminal.advance(1000);
    await terminal.read('a');
    await terminal.read('\r');
    await question.answered;
    expect(question.state.answer).toBe('a');
  });

  it('takes a line typed at once when it decides nothing, and a decision with no guard time as soon as it is shown', async () => {
    const terminal = fakeTerminal();
    const message = terminal.ask('you› ');
    await terminal.read('hello\r');
    await message.answered;
    expect(message.state.answer).toBe('hello');

    const unguarded = fakeTerminal({ guardMs: 0 });
    const decision = unguarded.ask('allow? ', { decides: true });
    await unguarded.read('a\r');
    await decision.answered;
    expect(decision.state.answer).toBe('a');
    expect(unguarded.ignored).toStrictEqual([]);
  });

  it('drops a line entered while nothing is asked, says so, and never gives it to the next question', async () => {
    const terminal = fakeTerminal();
    await terminal.read('a\r');
    await terminal.read('\r');
    expect(terminal.ignored).toStrictEqual(['not-asked']);
    const question = terminal.ask('allow? ', { decides: true });
    terminal.advance(1000);
    await terminal.read('d\r');
    await question.answered;
    expect(question.state.answer).toBe('d');
  });

  it('turns bracketed paste on in a terminal, and off when input ends', async () => {
    const terminal = fakeTerminal();
    expect(terminal.written()).toContain('\x1b[?2004h');
    expect(terminal.written()).not.toContain('\x1b[?2004l');
    const question = terminal.ask('you› ');
    await terminal.read('\x04');
    await question.answered;
    expect(question.state.answer).toBeNull();
    expect(terminal.written().endsWith('\x1b[?2004l')).toBe(true);
  });

  it('takes a paste of several lines as one entry, sent whole on Enter', async () => {
    const terminal = fakeTerminal();
    const bracketed = terminal.ask('you› ');
    await terminal.read(`${PASTE_START}Please review this:\rfunction f() {\r  return 1;\r}\r${PASTE_END}`);
    expect(bracketed.state.answer).toBeUndefined();
    // The paste waits for Enter behind a continuation prompt.
    expect(terminal.text()).toMatch(/… $/);
    await terminal.read('\r');
    await bracketed.answered;
    expect(bracketed.state.answer).toBe('Please review this:\nfunction f() {\n  return 1;\n}');

    // A terminal that does not mark a paste hands it over in one read; what follows its last line end is typed on.
    const unmarked = terminal.ask('you› ');
    await terminal.read('one\rtwo\rthr');
    expect(unmarked.state.answer).toBeUndefined();
    await terminal.read('ee\r');
    await unmarked.answered;
    expect(unmarked.state.answer).toBe('one\ntwo\nthree');
    expect(terminal.ignored).toStrictEqual([]);
  });

  it('never decides with a paste: a pasted answer is ignored, a reason pasted after a typed d is kept whole', async () => {
    const terminal = fakeTerminal();
    const question = terminal.ask('allow? ', { decides: true });
    terminal.advance(1000);
    await terminal.read(`${PASTE_START}a\r${PASTE_END}`);
    await terminal.read('\r');
    expect(terminal.ignored).toStrictEqual(['pasted']);
    terminal.advance(1000);
    await terminal.read(`${PASTE_START}a${PASTE_END}`);
    await terminal.read('\r');
    // A doubled a⏎ that arrives in one read is a paste too.
    terminal.advance(1000);
    await terminal.read('a\ra\r');
    await terminal.read('\r');
    expect(terminal.ignored).toStrictEqual(['pasted', 'pasted', 'pasted']);
    expect(question.state.answer).toBeUndefined();

    terminal.advance(1000);
    await terminal.read('d ');
    await terminal.read(`${PASTE_START}not that file:\rit holds the keys${PASTE_END}`);
    await terminal.read('\r');
    await question.answered;
    expect(question.state.answer).toBe('d not that file:\nit holds the keys');

    // Keys typed before and after a marked paste in the same read are typed, not pasted.
    const again = terminal.ask('allow? ', { decides: true });
    terminal.advance(1000);
    await terminal.read(`d ${PASTE_START}one\rtwo${PASTE_END}\r`);
    await again.answered;
    expect(again.state.answer).toBe('d one\ntwo');
  });

  it('drops a paste still waiting for Enter when the question is withdrawn or interrupted', async () => {
    const terminal = fakeTerminal({ guardMs: 0 });
    const withdrawn = terminal.ask('allow? ', { decides: true });
    await terminal.read('d ');
    await terminal.read(`${PASTE_START}one\rtwo${PASTE_END}`);
    terminal.reader.withdraw();
    await withdrawn.answered;
    expect(withdrawn.state.answer).toBe(INTERRUPTED);

    const interrupted = terminal.ask('you› ');
    await terminal.read(`${PASTE_START}three\rfour${PASTE_END}`);
    terminal.reader.interrupt();
    await interrupted.answered;
    expect(interrupted.state.answer).toBe(INTERRUPTED);

    const next = terminal.ask('you› ');
    await terminal.read('five\r');
    await next.answered;
    expect(next.state.answer).toBe('five');
  });

  it('writes a notice above the question being asked, and draws the question again below it with what was typed', async () => {
    const terminal = fakeTerminal();
    expect(terminal.reader.say('nothing is asked\n')).toBe(false);
    const question = terminal.ask('allow? ', { decides: true });
    terminal.advance(1000);
    await terminal.read('d not th');
    await terminal.read('\x1b[D');
    expect(terminal.reader.say('Connection lost.\n')).toBe(true);
    expect(terminal.text().endsWith('Connection lost.\nallow? d not th')).toBe(true);
    terminal.advance(600);
    await terminal.read('at\r');
    await question.answered;
    expect(question.state.answer).toBe('d not that');
  });

  it('draws the card again under a notice, with the question and what was typed, and takes no answer typed as it is drawn', async () => {
    const terminal = fakeTerminal();
    const card = '⏺ echo\n  text: DANGEROUS\n';
    let question = terminal.ask('allow? ', { decides: true, card: () => card });
    terminal.advance(1000);
    await terminal.read('d not th');
    expect(terminal.reader.say('Connection lost.\n')).toBe(true);
    expect(terminal.reader.say('Reconnected.\n')).toBe(true);
    // Each note is followed by the whole card and its question, however many come: the last one ends the screen.
    expect(terminal.text().endsWith(`Reconnected.\n${card}allow? d not th`)).toBe(true);
    expect(terminal.text().split(card)).toHaveLength(3);
    // What was typed before the note still counts, once the card has been back for the guard time.
    terminal.advance(600);
    await terminal.read('at\r');
    await question.answered;
    expect(question.state.answer).toBe('d not that');

    // A keystroke that comes while the card is being drawn again spoils the answer, like one typed before it was shown.
    question = terminal.ask('allow? ', { decides: true, card: () => card });
    terminal.advance(1000);
    await terminal.read('d');
    terminal.reader.say('Connection lost.\n');
    terminal.advance(599);
    await terminal.read('\r');
    expect(terminal.ignored).toStrictEqual(['redrawn']);
    terminal.advance(1000);
    terminal.reader.say('Reconnected.\n');
    await terminal.read('a\r');
    expect(terminal.ignored).toStrictEqual(['redrawn', 'redrawn']);
    expect(question.state.answer).toBeUndefined();
    terminal.advance(600);
    await terminal.read('a\r');
    await question.answered;
    expect(question.state.answer).toBe('a');
  });

  it('draws the card again above a decision asked again after an ignored line, under the note said of it', async () => {
    const terminal = fakeTerminal();
    const card = '⏺ echo\n  text: DANGEROUS\n';
    const question = terminal.ask('allow? ', { decides: true, card: () => card });
    terminal.advance(1000);
    await terminal.read(`${PASTE_START}a\r${PASTE_END}`);
    await terminal.read('\r');
    expect(terminal.ignored).toStrictEqual(['pasted']);
    expect(terminal.text().endsWith(`${card}allow? `)).toBe(true);
    terminal.advance(100);
    await terminal.read('a\r');
    expect(terminal.ignored).toStrictEqual(['pasted', 'typed-ahead']);
    expect(terminal.text().split(card)).toHaveLength(3);
    terminal.advance(600);
    await terminal.read('d\r');
    await question.answered;
    expect(question.state.answer).toBe('d');
  });
});

