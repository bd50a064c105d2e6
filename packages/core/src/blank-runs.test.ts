import { fc, test as property } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { blankPieces, FOLDED_BLANKS, FOLDED_INDENT, foldedBlankCount, foldedBlankCountOfArguments } from './blank-runs';
import { toVisibleText } from './visible-text';
import { visibleArguments } from './visible-text-arguments';

describe('blankPieces', () => {
  it('folds a run of spaces that would push the rest of a line out of view into one counted marker', () => {
    expect(blankPieces(`tee notes.md <<'EOF'${' '.repeat(300)}$(touch PWNED)`)).toStrictEqual([
      { kind: 'text', text: "tee notes.md <<'EOF'" },
      { kind: 'blank', char: ' ', count: 300, text: '␠×300', folded: true },
      { kind: 'text', text: '$(touch PWNED)' },
    ]);
  });

  it('folds a long run of tabs and shows each tab of a shorter run as ⇥, as the terminal does', () => {
    expect(blankPieces(`echo hi${'\t'.repeat(40)}; touch X\tok`)).toStrictEqual([
      { kind: 'text', text: 'echo hi' },
      { kind: 'blank', char: '\t', count: 40, text: '⇥×40', folded: true },
      { kind: 'text', text: '; touch X' },
      { kind: 'blank', char: '\t', count: 1, text: '⇥', folded: false },
      { kind: 'text', text: 'ok' },
    ]);
  });

  it('leaves a few spaces as they are', () => {
    expect(blankPieces(`ls  -la${' '.repeat(FOLDED_BLANKS - 1)}x`)).toStrictEqual([{ kind: 'text', text: `ls  -la${' '.repeat(FOLDED_BLANKS - 1)}x` }]);
    expect(blankPieces('')).toStrictEqual([]);
  });

  property.prop([fc.stringMatching(/^[ \ta-c\n]*$/)])('gives back the text, every blank counted, runs of spaces and tabs apart', (text) => {
    const pieces = blankPieces(text);
    expect(pieces.map((piece) => (piece.kind === 'text' ? piece.text : piece.char.repeat(piece.count))).join('')).toBe(text);
    let at = 0;
    for (const piece of pieces) {
      const startsLine = at === 0 || text[at - 1] === '\n';
      if (piece.kind === 'text') {
        // Spaces within a line fold from FOLDED_BLANKS; at a line's start (indentation) from FOLDED_INDENT.
        expect(piece.text).not.toMatch(new RegExp(`\\t|[^\\n ] {${FOLDED_BLANKS}}| {${FOLDED_INDENT}}`));
        if (!startsLine) expect(piece.text).not.toMatch(new RegExp(`^ {${FOLDED_BLANKS}}`));
      } else {
        expect(piece.folded).toBe(piece.count >= (piece.char === ' ' && startsLine ? FOLDED_INDENT : FOLDED_BLANKS));
      }
      at += piece.kind === 'text' ? piece.text.length : piece.count;
    }
  });
});

describe('blankPieces at the start of a line', () => {
  it('keeps code\'s own indentation as written, and folds a line pushed far to the right', () => {
    const code = `def f(x):\n    if x:\n        return x\n${' '.repeat(FOLDED_INDENT - 1)}y = 1`;
    expect(blankPieces(code)).toStrictEqual([{ kind: 'text', text: code }]);
    expect(blankPieces(`echo hi\n${' '.repeat(FOLDED_INDENT)}rm -rf ~`)).toStrictEqual([
      { kind: 'text', text: 'echo hi\n' },
      { kind: 'blank', char: ' ', count: FOLDED_INDENT, text: `␠×${FOLDED_INDENT}`, folded: true },
      { kind: 'text', text: 'rm -rf ~' },
    ]);
  });

  it('counts as indentation only spaces that start a line: within a line, or after an escape, they fold from FOLDED_BLANKS', () => {
    expect(blankPieces(`x =${' '.repeat(FOLDED_BLANKS)}1`)).toMatchObject([{ text: 'x =' }, { count: FOLDED_BLANKS, folded: true }, { text: '1' }]);
    expect(blankPieces(`${' '.repeat(FOLDED_BLANKS)}1`, false)).toMatchObject([{ count: FOLDED_BLANKS, folded: true }, { text: '1' }]);
    expect(blankPieces(`${' '.repeat(FOLDED_BLANKS)}1`, true)).toStrictEqual([{ kind: 'text', text: `${' '.repeat(FOLDED_BLANKS)}1` }]);
  });

  it('raises no warning for indented code, and one for a line pushed out', () => {
    expect(foldedBlankCount(toVisibleText('for i in x:\n        print(i)\n'))).toBe(0);
    expect(foldedBlankCount(toVisibleText(`ok\n${' '.repeat(300)}$(touch X)`))).toBe(1);
    // After an escape the line has begun: a run there is not indentation.
    expect(foldedBlankCount(toVisibleText(`\u202E${' '.repeat(FOLDED_BLANKS)}x`))).toBe(1);
  });
});

describe('foldedBlankCount', () => {
  it('counts the folded runs of a value, and of every name and value of a call', () => {
    expect(foldedBlankCount(toVisibleText(`a${' '.repeat(8)}b${'\t'.repeat(9)}c\t\td  e`))).toBe(2);
    expect(foldedBlankCount(toVisibleText('ls -la'))).toBe(0);
    const shown = visibleArguments('write_file', { [`path${' '.repeat(20)}`]: 'x', content: { text: `a${' '.repeat(100)}b` } });
    expect(foldedBlankCountOfArguments(shown)).toBe(2);
    expect(foldedBlankCountOfArguments(visibleArguments('terminal', { command: `echo${' '.repeat(8)}x`, timeout: 5 }))).toBe(1);
  });
});
