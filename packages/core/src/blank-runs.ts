import type { VisibleSegment, VisibleText } from './visible-text';
import type { VisibleArguments } from './visible-text-arguments';

/**
 * Spaces (or tabs) in a row from which every client shows them as one marker, `␠×N` (`⇥×N`): a wide gap cannot push
 * the text after it out of view, nor (where text wraps) to the start of a row of its own, where it would read as the
 * next line.
 */
export const FOLDED_BLANKS = 8;
/**
 * Spaces at the start of a line shown as they are, at most: code's own indentation (8, 12, 16… spaces) stays as it is
 * written and raises no warning, while the spaces past these, on a line pushed far to the right (where it could pass
 * for an empty one), are folded into one marker after them. After them, not in their place: `␠×40` alone would start
 * the line's code left of a line indented 16 spaces, and Python nested deeper would read as nested less.
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
      /**
       * As shown: `␠×N` / `⇥×N` for a folded run, one `⇥` a tab for a shorter run of tabs, one `␠` a space for a
       * shorter run of spaces at an edge.
       */
      text: string;
      /**
       * At least `FOLDED_BLANKS` long, or the spaces of an indentation past its first `FOLDED_INDENT`, so shown as one
       * marker with its count.
       */
      folded: boolean;
      /**
       * At the end of a line, or at the start of a one-line value (a path, a name): drawn plain, it could not be seen,
       * and `notes.txt ` would read as `notes.txt`. Each space is marked, and the person told.
       */
      edge: boolean;
      /**
       * At the end of a line that ends in a backslash, before a line break: the backslash reads as continuing the line
       * on the next, and does not (a shell takes it as escaping the blank after it, and runs the next line on its own).
       */
      afterBackslash: boolean;
    };

/** Where a piece of text stands in its shown value, for `blankPieces`. */
export interface TextPlace {
  /** It begins a line: the value's first text, or text after a line break. Default true. */
  startsLine?: boolean;
  /** It ends the value (no escape comes after it), so its last line ends there. Default true. */
  endsValue?: boolean;
  /** Its value is one line (a path, a name): blanks at its start are marked like blanks at its end. Default false. */
  oneLine?: boolean;
}

/** How a note writes the two markers of folded runs, N standing for the count: clients set them apart as markers. */
export const FOLDED_BLANK_NOTATIONS = [`${SPACE_MARKER}×N`, `${TAB_MARKER}×N`] as const;

/** How a note writes the markers of runs at an edge: clients set them apart as markers. */
export const EDGE_BLANK_NOTATIONS = [SPACE_MARKER, TAB_MARKER] as const;
/** Every notation the notes of `blankRunsNote` hold, the longer first (to split a note on them with one pattern). */
export const BLANK_NOTATIONS = [...FOLDED_BLANK_NOTATIONS, ...EDGE_BLANK_NOTATIONS] as const;

/** What every client's card says of a call whose arguments hold `count` folded runs, in the same words. */
export function foldedBlankNote(count: number): string {
  const [spaces, tabs] = FOLDED_BLANK_NOTATIONS;
  return `This call contains long runs of spaces or tabs (${count}). Each is shown as one marked ${spaces} or ${tabs}, N the spaces or tabs it stands for: what runs holds them all, and the text after one is on the same line.`;
}

/** What every client's card says of a call whose arguments hold `count` runs at an edge, not folded. */
export function edgeBlankNote(count: number): string {
  const [space, tab] = EDGE_BLANK_NOTATIONS;
  return `This call contains spaces or tabs at the end of a line or around a one-line value (${count}). Each is shown as a marked ${space} or ${tab}: what runs holds them, and a path or name with one is not the same as without.`;
}

/** What every client's card says of a call holding `count` lines that end in a backslash and then spaces or tabs. */
export function backslashBlankNote(count: number): string {
  const lines = count === 1 ? 'A line ends' : `${count} lines end`;
  return `${lines} in a backslash followed by spaces or tabs: that backslash does not continue the line (a shell reads it as escaping the space), so the next line runs as a command of its own.`;
}

/** Runs of spaces or tabs a person is told of, in a value or a call. */
export interface BlankRuns {
  /** Runs folded into one marker each (`␠×N`, `⇥×N`). */
  folded: number;
  /** Runs at an edge (see `BlankPiece`) short enough to be shown a marker a space or tab. */
  edges: number;
  /** Runs, folded or not, after a backslash that ends a line before a line break. */
  afterBackslash: number;
}

/** Every client's note of `runs`, in the same words: each kind a sentence of its own; empty when there are none. */
export function blankRunsNote(runs: BlankRuns): string {
  return [
    runs.folded > 0 ? foldedBlankNote(runs.folded) : '',
    runs.edges > 0 ? edgeBlankNote(runs.edges) : '',
    runs.afterBackslash > 0 ? backslashBlankNote(runs.afterBackslash) : '',
  ]
    .filter((note) => note !== '')
    .join(' ');
}

/** The marker a run of `count` spaces or tabs is shown as: at least `FOLDED_BLANKS` long, or indentation past `FOLDED_INDENT`. */
export function foldedBlankMarker(char: ' ' | '\t', count: number): string {
  return `${char === ' ' ? SPACE_MARKER : TAB_MARKER}×${count}`;
}

/**
 * Splits plain text (a text segment of a `VisibleText`) into text as it is, runs of `FOLDED_BLANKS` or more spaces or
 * tabs as one marker each, shorter runs of tabs as one `⇥` a tab, and shorter runs of spaces at an edge (the end of a
 * line; the start of a one-line value) as one `␠` a space; other spaces stay in the text. Spaces that start a line
 * (unless they are all the line) are indentation: its first `FOLDED_INDENT` stay in the text, and any past them are
 * one marker, so a line's code is never shown left of a less indented line's. `place`: where the text stands in its
 * value (`textSegments`). Pieces of kind `text` are never adjacent. Linear in the length.
 */
export function blankPieces(text: string, place: TextPlace = {}): BlankPiece[] {
  const { startsLine = true, endsValue = true, oneLine = false } = place;
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
    const beginsLine = index === 0 ? startsLine : text[index - 1] === '\n';
    const endsLine = end === text.length ? endsValue : text[end] === '\n';
    const edge = endsLine || (oneLine && beginsLine);
    const indent = char === ' ' && beginsLine && !edge;
    if (indent && count <= FOLDED_INDENT) {
      index = end;
      continue;
    }
    // Indentation past FOLDED_INDENT: its first spaces stay text, the marker stands for the rest.
    const from = indent ? index + FOLDED_INDENT : index;
    const length = end - from;
    const folded = indent || length >= FOLDED_BLANKS;
    if (char === '\t' || folded || edge) {
      if (start < from) pieces.push({ kind: 'text', text: text.slice(start, from) });
      const marker = char === ' ' ? SPACE_MARKER : TAB_MARKER;
      const afterBackslash = end < text.length && text[end] === '\n' && index > 0 && text[index - 1] === '\\';
      pieces.push({ kind: 'blank', char, count: length, text: folded ? foldedBlankMarker(char, length) : marker.repeat(length), folded, edge, afterBackslash });
      start = end;
    }
    index = end;
  }
  if (start < text.length) pieces.push({ kind: 'text', text: text.slice(start) });
  return pieces;
}

/** The runs a person is told of in a shown value: folded, at an edge, after a backslash that ends a line. */
export function blankRuns(visible: VisibleText): BlankRuns {
  const runs: BlankRuns = { folded: 0, edges: 0, afterBackslash: 0 };
  for (const { text, place } of textSegments(visible)) {
    for (const piece of blankPieces(text, place)) {
      if (piece.kind !== 'blank') continue;
      if (piece.folded) runs.folded++;
      else if (piece.edge) runs.edges++;
      if (piece.afterBackslash) runs.afterBackslash++;
    }
  }
  return runs;
}

/** The text segments of a shown value, each with where it stands in it (for `blankPieces`). */
export function textSegments(visible: { readonly segments: readonly VisibleSegment[] }): { text: string; at: number; place: Required<TextPlace> }[] {
  const found: { text: string; at: number; place: Required<TextPlace> }[] = [];
  const oneLine = !visible.segments.some((segment) => segment.kind === 'text' && segment.text.includes('\n'));
  let startsLine = true;
  visible.segments.forEach((segment, at) => {
    if (segment.kind !== 'text') {
      startsLine = false;
      return;
    }
    found.push({ text: segment.text, at, place: { startsLine, endsValue: at === visible.segments.length - 1, oneLine } });
    if (segment.text !== '') startsLine = segment.text.endsWith('\n');
  });
  return found;
}

/** The runs a person is told of over every name and value of a call's shown arguments. */
export function blankRunsOfArguments(shown: VisibleArguments): BlankRuns {
  const all = shown.code === null ? shown.others : [shown.code.argument, ...shown.others];
  const runs: BlankRuns = { folded: 0, edges: 0, afterBackslash: 0 };
  for (const argument of all) {
    for (const visible of [argument.name, argument.value]) {
      const found = blankRuns(visible);
      runs.folded += found.folded;
      runs.edges += found.edges;
      runs.afterBackslash += found.afterBackslash;
    }
  }
  return runs;
}

/** Whether a value or a call holds a run a person is told of. */
export function hasBlankRuns(runs: BlankRuns): boolean {
  return runs.folded > 0 || runs.edges > 0 || runs.afterBackslash > 0;
}
