import { blankPieces, textSegments, toVisibleText, visibleArgumentName, visibleArguments, type DeclaredArguments, type UnshownDefaultsReason, type VisibleArgument, type VisibleText } from '@airlock/core';
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

/** Characters of a call's preview a button's accessible name holds (see `namePreview`). */
export const NAME_PREVIEW_CHARS = 40;

/** Arguments a preview names; past these it says how many more there are. */
const PREVIEW_ARGUMENTS = 8;

export interface CallPreview {
  /** One line: the code argument first, then every other one as `name: value`; a value cut short says its size. */
  text: string;
  /**
   * Every character of every argument is in `text`, on one line, in printable ASCII, and every argument's name, and
   * every name inside an object argument whose schema declares names, is one the tool declares (none could not be
   * checked), and the tool may run with no default they do not show: the person can decide from the preview alone.
   * Otherwise only the card shows what would run.
   */
  whole: boolean;
}

export interface CallPreviewOptions {
  /** Characters the preview shows, all its arguments together. Default `PREVIEW_CHARS`. */
  maxChars?: number;
  /**
   * The names the call's tool declared when it was put up (its `tool.declared`): a call holding a name not among them,
   * or one at a level they do not know, is never whole. Default undefined: read from `schema`.
   */
  declared?: DeclaredArguments | undefined;
  /**
   * The tool's JSON Schema as listed, for a call stored before it said what its tool declared: a call holding a name
   * it does not declare is never whole. Default undefined, the tool not known: every name counts as undeclared.
   */
  schema?: Readonly<Record<string, unknown>> | undefined;
  /**
   * Why the call's tool may run with defaults its arguments do not show (its `tool.unshownDefaults`): such a call is
   * never whole, only its card says so. Default undefined: none.
   */
  unshownDefaults?: readonly UnshownDefaultsReason[] | undefined;
}

/**
 * Characters of each text argument a preview reads: it shows far fewer, and a waiting call's value may hold a
 * megabyte, previewed again in every open tab. Past them a value is only measured.
 */
export const PREVIEW_READ_CHARS = 1024;

/** The size of a text argument only the start of which was read, as the tool gets it (no escape is counted). */
interface ValueSize {
  chars: number;
  lines: number;
}

/**
 * A call as one line of plain text, through the card's display rules (hidden characters as their `\u{…}` codes; a
 * string that reads as JSON quoted, so `dry_run: "true"` and `dry_run: true` differ). Reads only the start of a long
 * text argument (`PREVIEW_READ_CHARS`) and measures the rest.
 */
export function callPreview(toolName: string, args: ToolArguments, { maxChars = PREVIEW_CHARS, declared, schema = {}, unshownDefaults }: CallPreviewOptions = {}): CallPreview {
  const sizes = new Map<string, ValueSize>();
  const read = Object.fromEntries(
    Object.entries(args).map(([name, value]) => {
      if (typeof value !== 'string') return [name, value];
      const start = readStart(value, maxChars);
      if (start.length < value.length) sizes.set(name, { chars: value.length, lines: lineCount(value) });
      return [name, start];
    }),
  );
  // The names as shown, back to the arguments they name (the escaping of a name is one to one), each space as
  // `\u{20}` as the card shows it: else a long value under a name with a space was sized by the start read.
  const named = new Map(Object.keys(args).map((name) => [plainText(visibleArgumentName(name)), name]));
  const sizeOf = (argument: VisibleArgument) => {
    const name = named.get(plainText(argument.name));
    return name === undefined ? undefined : sizes.get(name);
  };
  const shown = visibleArguments(toolName, read, { declared, schema, quoteJsonLikeText: true });
  const parts = [
    ...(shown.code === null ? [] : [{ name: null, value: shown.code.argument.value, size: sizeOf(shown.code.argument) }]),
    ...shown.others.map((argument) => ({ name: shownText(argument.name), value: argument.value, size: sizeOf(argument) })),
  ];
  const seenAll = unshownDefaults === undefined;
  if (parts.length === 0) return { text: 'no arguments', whole: seenAll };
  const label = (name: string | null) => (name === null ? '' : `${name}: `);
  const full = parts.map(({ name, value }) => `${label(name)}${shownText(value)}`).join(' · ');
  const plain = parts.every(({ name, value }) => PRINTABLE_ASCII.test(shownText(value)) && (name === null || PRINTABLE_ASCII.test(name)));
  const cut = parts.some(({ size }) => size !== undefined);
  if (shown.hiddenCount === 0 && shown.undeclaredCount === 0 && shown.uncheckedCount === 0 && plain && !cut && full.length <= maxChars) return { text: full, whole: seenAll };

  const each = Math.max(16, Math.floor(maxChars / Math.min(parts.length, PREVIEW_ARGUMENTS)));
  const listed = parts.slice(0, PREVIEW_ARGUMENTS).map(({ name, value, size }) => `${label(name)}${cutValue(value, each, size)}`);
  const more = parts.length - listed.length;
  return { text: `${listed.join(' · ')}${more > 0 ? ` · and ${more} more argument${more === 1 ? '' : 's'}` : ''}`, whole: false };
}

/** Characters that never belong to a word (ASCII space and punctuation). */
const WORD_BREAK = /[\t\n\x20-\x2F\x3A-\x40\x5B-\x60\x7B-\x7E]/;
/** Anything but printable ASCII, tab and line break: what display rules may escape. */
const NOT_PLAIN = /[^\t\n\x20-\x7E]/;

/**
 * The start of a long value, enough for a preview of `maxChars`; a value of up to PREVIEW_READ_CHARS as it is. A
 * letter that passes for Latin is escaped or not by the other letters of its word, so a start holding anything but
 * plain ASCII ends between two words, after what a preview shows; a value with no such place is read whole.
 */
function readStart(value: string, maxChars: number): string {
  const limit = Math.max(PREVIEW_READ_CHARS, maxChars);
  if (value.length <= limit) return value;
  const start = value.slice(0, limit);
  if (!NOT_PLAIN.test(start)) return start;
  for (let at = limit - 1; at >= maxChars; at--) if (WORD_BREAK.test(value.charAt(at))) return value.slice(0, at);
  return value;
}

function lineCount(value: string): number {
  let lines = 1;
  for (let at = value.indexOf('\n'); at !== -1; at = value.indexOf('\n', at + 1)) lines += 1;
  return lines;
}

/**
 * The start of a value's first line; when that is not all of it, its size in lines and characters (as shown, codes
 * and all; `read`: the size of a value read only in part).
 */
function cutValue(value: VisibleText, maxChars: number, read: ValueSize | undefined): string {
  const text = shownText(value);
  const firstLine = text.split('\n', 1)[0] ?? '';
  const start = firstLine.length > maxChars ? firstLine.slice(0, maxChars) : firstLine;
  if (start.length === text.length && read === undefined) return text;
  const lines = read?.lines ?? value.lineCount;
  const chars = read?.chars ?? text.length;
  return `${start}… (${lines > 1 ? `${lines.toLocaleString('en')} lines, ` : ''}${chars.toLocaleString('en')} characters)`;
}

function plainText(text: VisibleText): string {
  return text.segments.map((segment) => segment.text).join('');
}

/**
 * A name or value as the card shows it: tabs, long runs of spaces or tabs, and blanks at the edge of a line or of a
 * one-line value as their markers (`⇥`, `␠×300`, `␠`), which are not plain ASCII, so a preview holding one is never
 * whole (a notification could wrap the run into a line break; `notes.txt ` would read as `notes.txt`).
 */
function shownText(text: VisibleText): string {
  const places = new Map(textSegments(text).map((found) => [found.at, found.place]));
  return text.segments.map((segment, at) => (segment.kind === 'text' ? blankPieces(segment.text, places.get(at)).map((piece) => piece.text).join('') : segment.text)).join('');
}

/**
 * A preview's text short enough for a button's accessible name, which a screen reader reads in full each time the
 * button is reached: its first `maxChars` characters (whole code points), then `…` when there is more.
 */
export function namePreview(text: string, maxChars = NAME_PREVIEW_CHARS): string {
  const chars = Array.from(text);
  return chars.length <= maxChars ? text : `${chars.slice(0, maxChars).join('')}…`;
}

/** Any text (a tool name, a chat title) as one plain string with its hidden characters as their codes. */
export function visiblePlainText(value: string): string {
  return plainText(toVisibleText(value));
}
