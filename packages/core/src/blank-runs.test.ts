import { fc, test as property } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { blankPieces, FOLDED_BLANKS, foldedBlankCount, foldedBlankCountOfArguments } from './blank-runs';
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
    for (const piece of pieces) {
      if (piece.kind === 'text') expect(piece.text).not.toMatch(new RegExp(`\\t| {${FOLDED_BLANKS}}`));
      else expect(piece.folded).toBe(piece.count >= FOLDED_BLANKS);
    }
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
