import { columnsOf, DEFAULT_COLUMNS } from './card-rows';
import type { CardLayout } from './render-tool-call';

/**
 * A note of the client's own (not a model's text) wrapped at spaces into lines of at most the terminal's width, each
 * starting with `indent`, so the terminal never wraps one to its left edge, inside the card. A character outside
 * ASCII counts as two columns, as on a card; a word too long for a line is split.
 */
export function noteLines(text: string, layout: CardLayout, indent = '  '): string[] {
  const width = Math.max((layout.columns ?? DEFAULT_COLUMNS) - indent.length, 16);
  const lines: string[] = [];
  let line = '';
  let used = 0;
  const endLine = () => {
    lines.push(`${indent}${line}`);
    line = '';
    used = 0;
  };
  for (const word of text.split(' ')) {
    if (word === '') continue;
    const size = widthOf(word);
    if (used > 0 && used + 1 + size > width) endLine();
    if (used > 0) {
      line += ' ';
      used++;
    }
    for (const char of word) {
      const charSize = columnsOf(char.codePointAt(0)!);
      if (used + charSize > width) endLine();
      line += char;
      used += charSize;
    }
  }
  if (used > 0 || lines.length === 0) endLine();
  return lines;
}

function widthOf(text: string): number {
  let columns = 0;
  for (const char of text) columns += columnsOf(char.codePointAt(0)!);
  return columns;
}
