import { toVisibleText, visibleArguments, type VisibleText } from '@airlock/core';
import type { ToolArguments } from '../lib/api-types';

/** Characters a short preview of a call shows, all its arguments together. */
export const PREVIEW_CHARS = 80;
/**
 * What a preview must hold alone to count as whole: printable ASCII on one line. Any other letter may look like
 * one of these (a Cyrillic а in a host), reorder what is around it when drawn (Hebrew, Arabic: the system draws a
 * notification as it likes), or be drawn wide or on top of another; and ` · `, which separates arguments here, cannot
 * be faked inside a value.
 */
const PRINTABLE_ASCII = /^[\x20-\x7E]*$/;
/** A notification offers Allow only for a call this short: systems cut a notification's text after a line or two. */
export const NOTIFICATION_WHOLE_CHARS = 40;

/** Arguments a preview names; past these it says how many more there are. */
const PREVIEW_ARGUMENTS = 8;

export interface CallPreview {
  /** One line: the code argument first, then every other one as `name: value`; a value cut short says its size. */
  text: string;
  /**
   * Every character of every argument is in `text`, on one line, in printable ASCII: the person can decide from the
   * preview alone. Otherwise only the card shows what would run.
   */
  whole: boolean;
}

/** A call as one line of plain text, through the card's display rules (hidden characters as their `\u{…}` codes). */
export function callPreview(toolName: string, args: ToolArguments, maxChars = PREVIEW_CHARS): CallPreview {
  const shown = visibleArguments(toolName, args);
  const parts = [...(shown.code === null ? [] : [{ name: null, value: shown.code.argument.value }]), ...shown.others.map(({ name, value }) => ({ name: plainText(name), value }))];
  if (parts.length === 0) return { text: 'no arguments', whole: true };
  const label = (name: string | null) => (name === null ? '' : `${name}: `);
  const full = parts.map(({ name, value }) => `${label(name)}${plainText(value)}`).join(' · ');
  const plain = parts.every(({ name, value }) => PRINTABLE_ASCII.test(plainText(value)) && (name === null || PRINTABLE_ASCII.test(name)));
  if (shown.hiddenCount === 0 && plain && full.length <= maxChars) return { text: full, whole: true };

  const each = Math.max(16, Math.floor(maxChars / Math.min(parts.length, PREVIEW_ARGUMENTS)));
  const named = parts.slice(0, PREVIEW_ARGUMENTS).map(({ name, value }) => `${label(name)}${cutValue(value, each)}`);
  const more = parts.length - named.length;
  return { text: `${named.join(' · ')}${more > 0 ? ` · and ${more} more argument${more === 1 ? '' : 's'}` : ''}`, whole: false };
}

/** The start of a value's first line; when that is not all of it, its size in lines and characters. */
function cutValue(value: VisibleText, maxChars: number): string {
  const text = plainText(value);
  const firstLine = text.split('\n', 1)[0] ?? '';
  const start = firstLine.length > maxChars ? firstLine.slice(0, maxChars) : firstLine;
  if (start.length === text.length) return text;
  const lines = value.lineCount > 1 ? `${value.lineCount.toLocaleString('en')} lines, ` : '';
  return `${start}… (${lines}${text.length.toLocaleString('en')} characters)`;
}

function plainText(text: VisibleText): string {
  return text.segments.map((segment) => segment.text).join('');
}

/** Any text (a tool name, a chat title) as one plain string with its hidden characters as their codes. */
export function visiblePlainText(value: string): string {
  return plainText(toVisibleText(value));
}
