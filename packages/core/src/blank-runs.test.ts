import { fc, test as property } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { blankPieces, blankRuns, blankRunsNote, blankRunsOfArguments, FOLDED_BLANKS, FOLDED_INDENT, textSegments } from './blank-runs';
import { toVisibleText } from './visible-text';
import { visibleArguments } from './visible-text-arguments';

describe('blankPieces', () => {
  it('folds a run of spaces that would push the rest of a line out of view into one counted marker', () => {
    expect(blankPieces(`tee notes.md <<'EOF'${' '.repeat(300)}$(touch PWNED)`)).toStrictEqual([
      { kind: 'text', text: "tee notes.md <<'EOF'" },
      { kind: 'blank', char: ' ', count: 300, text: '␠×300', folded: true, edge: false, afterBackslash: false },
      { kind: 'text', text: '$(touch PWNED)' },
    ]);
  });

  it('folds a long run of tabs and shows each tab of a shorter run as ⇥, as the terminal does', () => {
    expect(blankPieces(`echo hi${'\t'.repeat(40)}; touch X\tok`)).toStrictEqual([
      { kind: 'text', text: 'echo hi' },
      { kind: 'blank', char: '\t', count: 40, text: '⇥×40', folded: true, edge: false, afterBackslash: false },
      { kind: 'text', text: '; touch X' },
      { kind: 'blank', char: '\t', count: 1, text: '⇥', folded: false, edge: false, afterBackslash: false },
      { kind: 'text', text: 'ok' },
    ]);
  });

  it('leaves a few spaces as they are', () => {
    expect(blankPieces(`ls  -la${' '.repeat(FOLDED_BLANKS - 1)}x`)).toStrictEqual([{ kind: 'text', text: `ls  -la${' '.repeat(FOLDED_BLANKS - 1)}x` }]);
    expect(blankPieces('')).toStrictEqual([]);
  });

  // Runs long enough to fold, within a line and as indentation, come up often.
  const blankText = fc.array(fc.constantFrom(' ', '\t', 'a', 'b', 'c', '\n', ' '.repeat(FOLDED_BLANKS), ' '.repeat(FOLDED_INDENT - 2))).map((parts) => parts.join(''));
  property.prop([blankText])('gives back the text, every blank counted, runs of spaces and tabs apart', (text) => {
    const pieces = blankPieces(text);
    /** Whether the FOLDED_INDENT characters before `at` are spaces that start a line. */
    const afterKeptIndent = (at: number) => at >= FOLDED_INDENT && /^ *$/.test(text.slice(at - FOLDED_INDENT, at)) && (at === FOLDED_INDENT || text[at - FOLDED_INDENT - 1] === '\n');
    expect(pieces.map((piece) => (piece.kind === 'text' ? piece.text : piece.char.repeat(piece.count))).join('')).toBe(text);
    let at = 0;
    for (const piece of pieces) {
      const startsLine = at === 0 || text[at - 1] === '\n';
      const length = piece.kind === 'text' ? piece.text.length : piece.count;
      const endsLine = at + length === text.length || text[at + length] === '\n';
      if (piece.kind === 'text') {
        // Spaces within a line fold from FOLDED_BLANKS; at a line's start (indentation) past the first FOLDED_INDENT.
        expect(piece.text).not.toMatch(new RegExp(`\\t|[^\\n ] {${FOLDED_BLANKS}}| {${FOLDED_INDENT + 1}}`));
        if (!startsLine) expect(piece.text).not.toMatch(new RegExp(`^ {${FOLDED_BLANKS}}`));
        // A space at the end of a line is never left plain.
        expect(piece.text).not.toMatch(/ \n/);
        if (endsLine) expect(piece.text).not.toMatch(/ $/);
      } else {
        expect(piece.edge).toBe(endsLine);
        // Indentation is never a marker from the line's start: its first FOLDED_INDENT spaces are text before it.
        if (piece.char === ' ' && !endsLine) expect(startsLine).toBe(false);
        expect(piece.folded).toBe(piece.count >= FOLDED_BLANKS || (piece.char === ' ' && !endsLine && afterKeptIndent(at)));
        if (!piece.folded) expect(piece.text).toBe((piece.char === ' ' ? '␠' : '⇥').repeat(piece.count));
      }
      at += piece.kind === 'text' ? piece.text.length : piece.count;
    }
  });
});

describe('blankPieces at the start of a line', () => {
  it('keeps code\'s own indentation as written, and folds the spaces past FOLDED_INDENT of a line pushed far to the right', () => {
    const code = `def f(x):\n    if x:\n        return x\n${' '.repeat(FOLDED_INDENT)}y = 1`;
    expect(blankPieces(code)).toStrictEqual([{ kind: 'text', text: code }]);
    expect(blankPieces(`echo hi\n${' '.repeat(300)}rm -rf ~`)).toStrictEqual([
      { kind: 'text', text: `echo hi\n${' '.repeat(FOLDED_INDENT)}` },
      { kind: 'blank', char: ' ', count: 300 - FOLDED_INDENT, text: `␠×${300 - FOLDED_INDENT}`, folded: true, edge: false, afterBackslash: false },
      { kind: 'text', text: 'rm -rf ~' },
    ]);
    // One space past them is one marker too: the line's code then starts right of every line's not folded.
    expect(blankPieces(`${' '.repeat(FOLDED_INDENT + 1)}x`)).toStrictEqual([
      { kind: 'text', text: ' '.repeat(FOLDED_INDENT) },
      { kind: 'blank', char: ' ', count: 1, text: '␠×1', folded: true, edge: false, afterBackslash: false },
      { kind: 'text', text: 'x' },
    ]);
  });

  it('never shows a deeper line less indented: Python nested 16 and then 40 spaces deep reads as nested', () => {
    const shownLines = (code: string) => blankPieces(code).map((piece) => piece.text).join('').split('\n');
    const [, outer, inner] = shownLines(`def start():\n${' '.repeat(16)}if ready:\n${' '.repeat(40)}launch()`);
    expect(inner!.indexOf('launch')).toBeGreaterThan(outer!.indexOf('if'));
    // At every depth: where a line's code starts, as shown, never comes before where a less indented line's does.
    const column = (depth: number) => shownLines(`x\n${' '.repeat(depth)}y`)[1]!.indexOf('y');
    for (let depth = 1; depth <= 300; depth++) expect({ depth, column: column(depth) >= column(depth - 1) }).toStrictEqual({ depth, column: true });
  });

  it('counts as indentation only spaces that start a line: within a line, or after an escape, they fold from FOLDED_BLANKS', () => {
    expect(blankPieces(`x =${' '.repeat(FOLDED_BLANKS)}1`)).toMatchObject([{ text: 'x =' }, { count: FOLDED_BLANKS, folded: true }, { text: '1' }]);
    expect(blankPieces(`${' '.repeat(FOLDED_BLANKS)}1`, { startsLine: false })).toMatchObject([{ count: FOLDED_BLANKS, folded: true }, { text: '1' }]);
    expect(blankPieces(`${' '.repeat(FOLDED_BLANKS)}1`, { startsLine: true })).toStrictEqual([{ kind: 'text', text: `${' '.repeat(FOLDED_BLANKS)}1` }]);
  });

  it('raises no warning for indented code, and one for a line pushed out', () => {
    expect(blankRuns(toVisibleText('for i in x:\n        print(i)\n')).folded).toBe(0);
    expect(blankRuns(toVisibleText(`ok\n${' '.repeat(300)}$(touch X)`)).folded).toBe(1);
    // After an escape the line has begun: a run there is not indentation.
    expect(blankRuns(toVisibleText(`\u202E${' '.repeat(FOLDED_BLANKS)}x`)).folded).toBe(1);
  });
});

describe('folded runs', () => {
  it('counts the folded runs of a value, and of every name and value of a call', () => {
    expect(blankRuns(toVisibleText(`a${' '.repeat(8)}b${'\t'.repeat(9)}c\t\td  e`)).folded).toBe(2);
    expect(blankRuns(toVisibleText('ls -la')).folded).toBe(0);
    const shown = visibleArguments('write_file', { [`path${' '.repeat(20)}`]: 'x', content: { text: `a${' '.repeat(100)}b` } });
    expect(blankRunsOfArguments(shown).folded).toBe(2);
    expect(blankRunsOfArguments(visibleArguments('terminal', { command: `echo${' '.repeat(8)}x`, timeout: 5 })).folded).toBe(1);
  });
});

/** The command that read as one `echo` continued over three lines: the space after its first backslash ends the line. */
const ESCAPED_SPACE_COMMAND = 'echo "Cleanup plan, printed only:" \\ \n  rm -rf /tmp/work/victim \\\n  && echo "(nothing was deleted)"';

describe('blankPieces at the edges of a line', () => {
  it('marks the space after a backslash that ends a line, and says the backslash does not continue it', () => {
    expect(blankPieces(ESCAPED_SPACE_COMMAND)).toStrictEqual([
      { kind: 'text', text: 'echo "Cleanup plan, printed only:" \\' },
      { kind: 'blank', char: ' ', count: 1, text: '␠', folded: false, edge: true, afterBackslash: true },
      { kind: 'text', text: '\n  rm -rf /tmp/work/victim \\\n  && echo "(nothing was deleted)"' },
    ]);
    expect(blankRuns(toVisibleText(ESCAPED_SPACE_COMMAND, { code: true }))).toStrictEqual({ folded: 0, edges: 1, afterBackslash: 1 });
  });

  it('marks each space or tab at the end of a line or of the value, a long run as one marker, and a line of blanks only', () => {
    expect(blankPieces('ls  \n\tcd x\t\t')).toMatchObject([
      { kind: 'text', text: 'ls' },
      { kind: 'blank', char: ' ', count: 2, text: '␠␠', edge: true },
      { kind: 'text', text: '\n' },
      { kind: 'blank', char: '\t', count: 1, text: '⇥', edge: false },
      { kind: 'text', text: 'cd x' },
      { kind: 'blank', char: '\t', count: 2, text: '⇥⇥', edge: true },
    ]);
    expect(blankPieces(`a${' '.repeat(FOLDED_BLANKS)}\n${' '.repeat(FOLDED_BLANKS + 1)}\nb`)).toMatchObject([
      { text: 'a' },
      { text: `␠×${FOLDED_BLANKS}`, folded: true, edge: true },
      { text: '\n' },
      { text: `␠×${FOLDED_BLANKS + 1}`, folded: true, edge: true },
      { text: '\nb' },
    ]);
    expect(blankRuns(toVisibleText('for i in x:\n    print(i) \n'))).toStrictEqual({ folded: 0, edges: 1, afterBackslash: 0 });
  });

  it('marks blanks at the start and end of a one-line value (a path), never the indentation of code', () => {
    expect(blankPieces('notes.txt ', { oneLine: true })).toMatchObject([{ text: 'notes.txt' }, { text: '␠', edge: true }]);
    expect(blankPieces(' notes.txt', { oneLine: true })).toMatchObject([{ text: '␠', edge: true }, { text: 'notes.txt' }]);
    expect(blankRuns(toVisibleText('  notes.txt '))).toStrictEqual({ folded: 0, edges: 2, afterBackslash: 0 });
    expect(blankRuns(toVisibleText('def f():\n    return 1'))).toStrictEqual({ folded: 0, edges: 0, afterBackslash: 0 });
    expect(blankRuns(toVisibleText('my notes.txt'))).toStrictEqual({ folded: 0, edges: 0, afterBackslash: 0 });
  });

  it('takes a blank before an escape as inside the line: the escape is shown after it', () => {
    const visible = toVisibleText('a \u202E b ');
    expect(textSegments(visible)).toStrictEqual([
      { text: 'a ', at: 0, place: { startsLine: true, endsValue: false, oneLine: true } },
      { text: ' b ', at: 2, place: { startsLine: false, endsValue: true, oneLine: true } },
    ]);
    expect(blankRuns(visible)).toStrictEqual({ folded: 0, edges: 1, afterBackslash: 0 });
  });

  it('is told of on every card in the same words, and counted over a call', () => {
    const shown = visibleArguments('write_file', { path: 'notes.txt ', content: 'from the model' });
    expect(blankRunsOfArguments(shown)).toStrictEqual({ folded: 0, edges: 1, afterBackslash: 0 });
    expect(blankRunsNote(blankRunsOfArguments(shown))).toMatch(/^This call contains spaces or tabs at the end of a line or around a one-line value \(1\)\. Each is shown as a marked ␠ or ⇥/);
    const command = blankRunsOfArguments(visibleArguments('terminal', { command: ESCAPED_SPACE_COMMAND }));
    expect(blankRunsNote(command)).toContain('A line ends in a backslash followed by spaces or tabs: that backslash does not continue the line');
    expect(blankRunsNote({ folded: 0, edges: 0, afterBackslash: 0 })).toBe('');
  });
});
