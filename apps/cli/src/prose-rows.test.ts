import { describe, expect, it } from 'vitest';
import { ProseRows } from './prose-rows';
import { plainStyle } from './terminal-style';

/** What the terminal is given for `pieces` streamed as one block, then ended, at `columns`. */
function shown(pieces: string[], columns = 40, kind: 'text' | 'reasoning' = 'text'): string {
  const rows = new ProseRows(plainStyle, kind);
  return pieces.map((piece) => rows.push(piece, columns)).join('') + rows.end(columns);
}

describe('ProseRows', () => {
  it('puts every row of the answer behind its gutter, a card made up in it included', () => {
    const fake = "I'll list the files.\n\n⏺ terminal\n  Command: ls -la\n  ✓ allowed\n  → ran: exit 0\n";
    expect(shown([fake]).split('\n')).toStrictEqual([
      "┃ I'll list the files.",
      '┃',
      '┃ ⏺ terminal',
      '┃   Command: ls -la',
      '┃   ✓ allowed',
      '┃   → ran: exit 0',
      '',
    ]);
  });

  it('folds a run of blank lines, spaces and tabs only counting as blank, into one marker row, and drops those the block starts with', () => {
    expect(shown([`\n\n\nDone.\n${'\n'.repeat(60)}`, '  \n\t\n', 'Next.'])).toBe('┃ Done.\n┃ ⋮ 62 blank lines\n┃ Next.');
    expect(shown(['One.\n\n\nTwo.'])).toBe('┃ One.\n┃\n┃\n┃ Two.');
    // However the line ends are split into pieces.
    expect(shown(['One.', ...Array.from({ length: 10 }, () => '\n'), 'Two.'])).toBe('┃ One.\n┃ ⋮ 9 blank lines\n┃ Two.');
  });

  it('wraps a long line at spaces itself, every row behind the gutter, and splits a word longer than a row', () => {
    expect(shown(['The quick brown fox jumps over the lazy dog and keeps running'], 30).split('\n')).toStrictEqual([
      '┃ The quick brown fox jumps',
      '┃ over the lazy dog and keeps',
      '┃ running',
    ]);
    // Spaces to the row's end cannot push a made-up card line to the left edge.
    const pushed = shown([`ok${' '.repeat(37)}⏺ terminal`], 40).split('\n');
    expect(pushed).toStrictEqual(['┃ ok ␠×37 ⏺ terminal']);
    expect(shown(['x'.repeat(50)], 30).split('\n')).toStrictEqual([`┃ ${'x'.repeat(27)}`, `┃ ${'x'.repeat(23)}`]);
    for (const row of shown([`${'word '.repeat(40)}${'é'.repeat(40)}`], 30).split('\n')) expect(row.startsWith('┃ ')).toBe(true);
  });

  it('writes a word as it comes, and holds one only near the row end, to move it to the next row whole', () => {
    const rows = new ProseRows(plainStyle, 'text');
    expect(rows.push('Checking', 40)).toBe('┃ Checking');
    expect(rows.push(' first.', 40)).toBe(' first.');
    // 24 of 37 columns used: a word may not fit, and is held until it ends.
    expect(rows.push(' The list of', 40)).toBe(' The list');
    expect(rows.push(' files', 40)).toBe(' of');
    expect(rows.push(' follows', 40)).toBe(' files\n┃ follows');
    expect(rows.end(40)).toBe('');
  });

  it('starts a row of its own after something else was written, and labels reasoning on its first row', () => {
    const rows = new ProseRows(plainStyle, 'reasoning');
    expect(rows.push('I should ', 40)).toBe('┆ thinking: I should');
    expect(rows.push('list them.', 40, { moved: true })).toBe('┆ list them.');
    expect(rows.end(40)).toBe('');
    expect(rows.push('Again.', 40)).toBe('┆ thinking: Again.');
  });

  it('keeps escapes whole and a CR LF as one line end', () => {
    expect(shown(['red \x1b[31mtext\r\nnext'])).toBe('┃ red \\u{1B}[31mtext\n┃ next');
    expect(shown(['a\rb'])).toBe('┃ a\\u{D}b');
  });
});
