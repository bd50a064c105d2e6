import { toVisibleText, visibleArguments, type VisibleText } from '@airlock/core';
import type { ToolArguments } from '../lib/api-types';

/** Characters of the first argument a short preview shows. */
export const PREVIEW_CHARS = 80;

/**
 * The start of a call's first argument as one line of plain text, through the card's display rules (hidden
 * characters as their `\u{…}` codes): cut with "…" and the line count when there is more.
 */
export function argumentPreview(toolName: string, args: ToolArguments, maxChars = PREVIEW_CHARS): string {
  const shown = visibleArguments(toolName, args);
  const first = shown.code?.argument ?? shown.others[0];
  if (first === undefined) return 'no arguments';
  const text = plainText(first.value);
  const firstLine = text.split('\n', 1)[0] ?? '';
  const cut = firstLine.length > maxChars ? firstLine.slice(0, maxChars) : firstLine;
  const more = cut.length < text.length;
  const lines = first.value.lineCount > 1 ? ` (${first.value.lineCount} lines)` : '';
  const label = shown.code === null ? `${plainText(first.name)}: ` : '';
  return `${label}${cut}${more ? '…' : ''}${lines}`;
}

function plainText(text: VisibleText): string {
  return text.segments.map((segment) => segment.text).join('');
}

/** Any text (a tool name, a chat title) as one plain string with its hidden characters as their codes. */
export function visiblePlainText(value: string): string {
  return plainText(toVisibleText(value));
}
