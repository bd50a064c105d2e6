import type { VisibleSegment, VisibleText } from './visible-text';
import type { VisibleArguments } from './visible-text-arguments';

/**
 * Spaces (or tabs) in a row from which every client shows them as one marker, `␠×N` (`⇥×N`): a wide gap cannot push
 * the text after it out of view, nor (where text wraps) to the start of a row of its own, where it would read as the
 * next line.
 */
export const FOLDED_BLANKS = 8;
/**
 * Spaces at the start of a line from which they are folded: code's own indentation (8, 12, 16… spaces) stays as it
 * is written and raises no warning, while a line pushed far to the right (where it could pass for an empty one) is
 * still folded.
 */
export const FOLDED_INDENT = 32;
/** How a tab is shown: marked like the other characters written for what cannot be seen, never raw. */
export const TAB_MARKER = '⇥';
/** How a folded run of spaces is shown, before its count. */
export const SPACE_MARKER = '␠';

/** A piece of shown text: plain text, or spaces or tabs shown as markers. */
export type BlankPiece =
  | { kind: 'text'; text: string }
  | {
      kind: 'blank';
      char: ' ' | '\t';
      count: number;
      /** As shown: `␠×N` / `⇥×N` for a folded run, one `⇥` a tab for a shorter run of tabs. */
      text: string;
      /** At least `FOLDED_BLANKS` long, so shown as one marker with its count. */
      folded: boolean;
    };

/** How a note writes the two markers of folded runs, N standing for the count: clients set them apart as markers. */
export const FOLDED_BLANK_NOTATIONS = [`${SPACE_MARKER}×N`, `${TAB_MARKER}×N`] as const;

/** What every client's card says of a call whose arguments hold `count` folded runs, in the same words. */
export function foldedBlankNote(count: number): string {
  const [spaces, tabs] = FOLDED_BLANK_NOTATIONS;
  return `This call contains long runs of spaces or tabs (${count}). Each is shown as one marked ${spaces} or ${tabs}, N the spaces or tabs it stands for: what runs holds them all, and the text after one is on the same line.`;
}

/** The marker a run of `count` spaces or tabs is shown as, at least `FOLDED_BLANKS` long. */
export function foldedBlankMarker(char: ' ' | '\t', count: number): string {
  return `${char === ' ' ? SPACE_MARKER : TAB_MARKER}×${count}`;
}

/**
 * Splits plain text (a text segment of a `VisibleText`) into text as it is, runs of `FOLDED_BLANKS` or more spaces or
 * tabs as one marker each (`FOLDED_INDENT` for spaces that start a line), and shorter runs of tabs as one `⇥` a tab
 * (spaces shorter than that stay in the text). `startsLine`: whether `text` begins a line (the value's first segment,
 * or one after a line break). Pieces of kind `text` are never adjacent. Linear in the length.
 */
export function blankPieces(text: string, startsLine = true): BlankPiece[] {
  const pieces: BlankPiece[] = [];
  let start = 0;
  let index = 0;
  while (index < text.length) {
    const char = text[index];
    if (char !== ' ' && char !== '\t') {
      index++;
      continue;
    }
    let end = index;
    while (end < text.length && text[end] === char) end++;
    const count = end - index;
    const indent = char === ' ' && (index === 0 ? startsLine : text[index - 1] === '\n');
    const folded = count >= (indent ? FOLDED_INDENT : FOLDED_BLANKS);
    if (char === '\t' || folded) {
      if (start < index) pieces.push({ kind: 'text', text: text.slice(start, index) });
      pieces.push({ kind: 'blank', char, count, text: folded ? foldedBlankMarker(char, count) : TAB_MARKER.repeat(count), folded });
      start = end;
    }
    index = end;
  }
  if (start < text.length) pieces.push({ kind: 'text', text: text.slice(start) });
  return pieces;
}

/** How many runs of spaces or tabs in a shown value are folded into one marker (a person should be told of them). */
export function foldedBlankCount(visible: VisibleText): number {
  let count = 0;
  for (const { text, startsLine } of textSegments(visible)) {
    for (const piece of blankPieces(text, startsLine)) if (piece.kind === 'blank' && piece.folded) count++;
  }
  return count;
}

/** The text segments of a shown value, each with whether it begins a line (for `blankPieces`). */
export function textSegments(visible: { readonly segments: readonly VisibleSegment[] }): { text: string; startsLine: boolean; at: number }[] {
  const found: { text: string; startsLine: boolean; at: number }[] = [];
  let startsLine = true;
  visible.segments.forEach((segment, at) => {
    if (segment.kind !== 'text') {
      startsLine = false;
      return;
    }
    found.push({ text: segment.text, startsLine, at });
    if (segment.text !== '') startsLine = segment.text.endsWith('\n');
  });
  return found;
}

/** Folded runs over every name and value of a call's shown arguments. */
export function foldedBlankCountOfArguments(shown: VisibleArguments): number {
  const all = shown.code === null ? shown.others : [shown.code.argument, ...shown.others];
  return all.reduce((sum, argument) => sum + foldedBlankCount(argument.name) + foldedBlankCount(argument.value), 0);
}
