import { toVisibleText } from '@airlock/core';
import { cardRows, DEFAULT_COLUMNS } from './card-rows';
import type { CardLayout } from './render-tool-call';
import type { TerminalStyle } from './terminal-style';

/** The columns of the gutter before each row of a quoted line after its first: `    ↪ `. */
const GUTTER_COLUMNS = 6;

/**
 * A line of the client's that holds a server's or the network's words (an error, a refused token's message, a model's
 * name), which may say anything: escaped as one line and wrapped here, each row after the first behind the card's `↪`
 * gutter, long runs of spaces folded. Left to the terminal's wrapping, words padded with spaces to its width drew
 * `⏺ terminal` / `  command: ls -la` / `  ✓ allowed` at the left edge, as the client's own lines. Each row starts with
 * `indent`.
 */
export function quotedLines(text: string, style: TerminalStyle, layout: CardLayout = {}, indent = ''): string[] {
  const width = Math.max((layout.columns ?? DEFAULT_COLUMNS) - GUTTER_COLUMNS - indent.length, 16);
  const [first, ...rest] = cardRows(toVisibleText(text, { singleLine: true }), width, style);
  return [`${indent}${first!.text}`, ...rest.map((row) => `${indent}    ${style.dim('↪')} ${row.text}`)];
}
