import { Fragment, useLayoutEffect, useMemo, useRef, useState, type RefObject } from 'react';
import { BLANK_NOTATIONS, blankPieces, blankRunsNote, blankRunsOfArguments, hasBlankRuns, textSegments, UNCHECKED_ARGUMENT_NOTE, UNCHECKED_INNER_NOTE, uncheckedArgumentsNote, UNDECLARED_ARGUMENT_NOTE, UNDECLARED_INNER_NOTE, undeclaredArgumentsNote, visibleArguments, type BlankPiece, type BlankRuns, type DeclaredArguments, type EscapeClass, type TextPlace, type VisibleArgument, type VisibleSegment, type VisibleText } from '@airlock/core';
import type { ToolArguments as Args } from '../lib/api-types';

/** Lines a long value shows before the rest is one click away. */
export const COLLAPSED_LINES = 12;

/**
 * Characters of a value drawn at first, and drawn more at each ask (an escape counts its `\u{…}`): a line of 99,000
 * marked escapes laid out at once held the page for minutes, in every tab that opened it.
 */
export const DRAWN_CHARACTERS = 20_000;

/**
 * The arguments exactly as they will run: rendered from the call's own arguments through the one set of
 * display rules, every value whole (or one click from whole, saying how much more), hidden characters marked.
 * A long run of spaces or tabs is one marker (`␠×300`), and a space or tab at the end of a line (or around a one-line
 * value) one `␠` or `⇥` each, counted in the warning like a hidden character; each line of a
 * value is one row, never wrapped, so a row on screen is always a line of what runs (a long one scrolls sideways).
 * A value that is not a string is labelled with its JSON type, a string that reads as JSON with `text`; a name the
 * tool does not declare is marked as not a parameter of the tool, inside an object argument too (listed by its
 * path), and one that could not be checked as such: against `declared`, what the call's tool declared when it was
 * put up, or when not known (a call stored before tool-starts said), the tool's schema as listed (`inputSchema`).
 */
export function ToolArguments({ toolName, args, declared, inputSchema }: { toolName: string; args: Args; declared?: DeclaredArguments | undefined; inputSchema?: Readonly<Record<string, unknown>> | undefined }) {
  const shown = useMemo(() => visibleArguments(toolName, args, { declared, schema: inputSchema }), [toolName, args, declared, inputSchema]);
  const inner = (unchecked: boolean) => shown.inner.filter((name) => name.unchecked === unchecked).map((name) => name.path);
  const blankRuns = useMemo(() => blankRunsOfArguments(shown), [shown]);
  if (shown.code === null && shown.others.length === 0) return <p className="tool-arguments muted">No arguments</p>;
  return (
    <div className="tool-arguments">
      {(shown.hiddenCount > 0 || hasBlankRuns(blankRuns)) && <HiddenCharactersWarning count={shown.hiddenCount - shown.nonAsciiCount} nonAscii={shown.nonAsciiCount} blankRuns={blankRuns} />}
      {shown.undeclaredCount > 0 && (
        <p className="undeclared-warning" role="note">
          {undeclaredArgumentsNote(shown.undeclaredCount, inner(false))}
        </p>
      )}
      {shown.uncheckedCount > 0 && (
        <p className="undeclared-warning" role="note">
          {uncheckedArgumentsNote(shown.uncheckedCount, inner(true))}
        </p>
      )}
      {shown.code !== null && <ArgumentValue label={shown.code.label} argument={shown.code.argument} language={shown.code.language} />}
      {shown.others.length > 0 && (
        <>
          {shown.code !== null && <div className="field-label">Other arguments</div>}
          <dl className="argument-list">
            {shown.others.map((argument, index) => (
              <div key={index} className="argument" data-undeclared={argument.undeclared || argument.unchecked || undefined}>
                <dt className="argument-name">
                  <VisibleTextView text={argument.name} blanks />
                  {argument.undeclared && <span className="badge undeclared-argument">{UNDECLARED_ARGUMENT_NOTE}</span>}
                  {argument.unchecked && <span className="badge undeclared-argument">{UNCHECKED_ARGUMENT_NOTE}</span>}
                  {argument.inner.some((name) => !name.unchecked) && <span className="badge undeclared-argument">{UNDECLARED_INNER_NOTE}</span>}
                  {argument.inner.some((name) => name.unchecked) && <span className="badge undeclared-argument">{UNCHECKED_INNER_NOTE}</span>}
                </dt>
                <dd>
                  <ArgumentValue argument={argument} language={argument.format === 'json' ? 'json' : undefined} />
                </dd>
              </div>
            ))}
          </dl>
        </>
      )}
    </div>
  );
}

/**
 * `count` hidden characters; `nonAscii`, characters outside ASCII in the call's code, plain letters among them, which
 * are not called hidden; `blankRuns`, the runs of spaces or tabs shown as markers that a person is told of.
 */
export function HiddenCharactersWarning({ count, nonAscii = 0, blankRuns }: { count: number; nonAscii?: number; blankRuns?: BlankRuns | undefined }) {
  const blanks = blankRuns === undefined ? '' : blankRunsNote(blankRuns);
  const outside = `${nonAscii.toLocaleString('en')} ${nonAscii === 1 ? 'character' : 'characters'} outside ASCII`;
  return (
    <p className="hidden-chars-warning" role="note">
      {count > 0 && nonAscii === 0 && (
        <>
          This call contains hidden characters ({count}). Each is shown as a marked <code>{'\\u{…}'}</code> code: read them before you decide.
        </>
      )}
      {count === 0 && nonAscii > 0 && (
        <>
          {outside} in this call's code {nonAscii === 1 ? 'is' : 'are'} shown as marked <code>{'\\u{…}'}</code> codes: what runs holds the character, and a letter outside ASCII may be drawn like a quote or other syntax it is not. Read them before you decide.
        </>
      )}
      {count > 0 && nonAscii > 0 && (
        <>
          This call contains hidden characters ({count}), and {outside} in its code. Each is shown as a marked <code>{'\\u{…}'}</code> code: read them before you decide.
        </>
      )}
      {(count > 0 || nonAscii > 0) && blanks !== '' && ' '}
      {blanks !== '' && <BlankRunsNote note={blanks} />}
    </p>
  );
}

/** Core's note of runs shown as markers, its notations of the markers set in code as on the card. */
function BlankRunsNote({ note }: { note: string }) {
  const notations: readonly string[] = BLANK_NOTATIONS;
  const parts = note.split(new RegExp(`(${BLANK_NOTATIONS.join('|')})`));
  return <>{parts.map((part, index) => (notations.includes(part) ? <code key={index}>{part}</code> : <Fragment key={index}>{part}</Fragment>))}</>;
}

function ArgumentValue({ argument, label, language }: { argument: VisibleArgument; label?: string; language: string | undefined }) {
  const { value } = argument;
  const [expanded, setExpanded] = useState(false);
  const [budget, setBudget] = useState(DRAWN_CHARACTERS);
  const block = useRef<HTMLPreElement>(null);
  const wide = useWiderThan(block, [value, expanded, budget]);
  const collapsible = value.lineCount > COLLAPSED_LINES;
  const drawn = useMemo(() => firstCharacters(collapsible && !expanded ? firstLines(value.segments, COLLAPSED_LINES) : value.segments, budget), [value, collapsible, expanded, budget]);
  const lines = value.lineCount > 1 ? `${value.lineCount} lines` : null;
  const typeLabel = argument.typeLabel;
  return (
    <div className="argument-value">
      {(label !== undefined || lines !== null || typeLabel !== null) && (
        <div className="field-label">
          {label}
          {label !== undefined && (lines !== null || typeLabel !== null) && ' · '}
          {typeLabel !== null && (
            <span className="value-type" data-type={typeLabel} title={typeLabel === 'text' ? 'a string, though it reads like a JSON value' : `a JSON ${typeLabel}, not a string`}>
              {typeLabel}
            </span>
          )}
          {typeLabel !== null && lines !== null && ' · '}
          {lines !== null && <span className="line-count">{lines}</span>}
        </div>
      )}
      <pre ref={block} className="code-block visible-value" data-language={language}>
        <code>
          <SegmentsView segments={drawn.segments} blanks />
        </code>
        {drawn.left > 0 && (
          <span className="value-cut" title="Not drawn past here: see the note under the value">
            ✂
          </span>
        )}
      </pre>
      {drawn.left > 0 && <CutNote drawn={drawn} onMore={() => setBudget(budget + DRAWN_CHARACTERS)} />}
      {wide && <p className="wide-lines-note">A line is wider than the card: scroll it sideways to read all of it.</p>}
      {collapsible && (
        <button type="button" className="btn btn-small more-lines" aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
          {expanded ? `Show the first ${COLLAPSED_LINES} lines only` : `Show all ${value.lineCount} lines (${value.lineCount - COLLAPSED_LINES} more lines)`}
        </button>
      )}
    </div>
  );
}

/** What is left undrawn of a value, and the button that draws more: a paragraph under a block, or inline in a line. */
function CutNote({ drawn, onMore, inline = false }: { drawn: { left: number; leftEscaped: number }; onMore: () => void; inline?: boolean }) {
  const Note = inline ? 'span' : 'p';
  return (
    <Note className="value-cut-note" role="note" aria-label="Not all drawn">
      {cutNote(drawn)}{' '}
      <button type="button" className="btn btn-small" onClick={onMore}>
        Draw more of this value
      </button>
    </Note>
  );
}

function cutNote({ left, leftEscaped }: { left: number; leftEscaped: number }): string {
  return `Not all of this value is drawn: ${left.toLocaleString('en')} more ${left === 1 ? 'character' : 'characters'}${leftEscaped > 0 ? ` (${leftEscaped.toLocaleString('en')} of them shown as \\u{…} codes)` : ''} after the ✂ mark.`;
}

const escapeTitles: Record<EscapeClass, string> = {
  control: 'control character',
  bidi: 'text-direction control: can reorder what you read',
  invisible: 'invisible character',
  'line-separator': 'line or paragraph separator',
  'variation-selector': 'variation selector',
  tag: 'tag character',
  'unusual-space': 'space that is not a plain space',
  'lone-surrogate': 'broken character (lone surrogate)',
  'private-use': 'private-use character',
  unassigned: 'unassigned character',
  'look-alike': 'a letter or digit drawn like an ASCII one that is not it (another script in a word of Latin letters, or a lookalike form such as ɡ, ı, ｇ, 𝗀)',
  'look-alike-symbol': 'a character drawn like a quote, a backslash or # that the code reads as syntax, which it is not',
  'non-ascii-in-code': 'a character outside ASCII in code: shown as its code, since a letter of another script may be drawn like a quote or other syntax',
  'combining-mark': 'a combining mark with no letter to sit on, or one past those a letter carries: it would be drawn over the characters or lines around it',
  'not-nfc': 'a character outside ASCII in a name not in composed form (NFC): drawn like the composed name, it names another file',
  'look-alike-punctuation': 'a character drawn like . / \\ : - or _ in a path or a name that is not it: the name is another one than it looks',
  'name-space': "a space in an argument's name: the tool knows its arguments by exact name",
  backslash: 'a literal backslash, escaped so it cannot pass for a hidden character',
};

function codePointName(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Whether the block's content is wider than the block (a line runs past its right edge), checked again when `deps`
 * change and when the block is resized.
 */
function useWiderThan(block: RefObject<HTMLElement | null>, deps: readonly unknown[]): boolean {
  const [wide, setWide] = useState(false);
  useLayoutEffect(() => {
    const element = block.current;
    if (element === null) return;
    const check = () => setWide(element.scrollWidth > element.clientWidth + 1);
    check();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(check);
    observer.observe(element);
    return () => observer.disconnect();
  }, deps);
  return wide;
}

/**
 * Plain text with its tabs, long runs of spaces or tabs, and blanks at a line's end as markers (`⇥`, `␠×300`, `⇥×40`,
 * `␠`), as every client shows them.
 */
function BlankRunsView({ text, place }: { text: string; place: TextPlace | undefined }) {
  return (
    <>
      {blankPieces(text, place).map((piece, index) =>
        piece.kind === 'text' ? (
          <Fragment key={index}>{piece.text}</Fragment>
        ) : (
          <span key={index} className="blank-run" data-folded={piece.folded} data-edge={piece.edge} title={blankTitle(piece)}>
            {piece.text}
          </span>
        ),
      )}
    </>
  );
}

function blankTitle(piece: Extract<BlankPiece, { kind: 'blank' }>): string {
  const what = `${piece.count} ${piece.char === ' ' ? (piece.count === 1 ? 'space' : 'spaces') : piece.count === 1 ? 'tab' : 'tabs'}`;
  if (piece.afterBackslash) return `${what} after a backslash: it does not continue the line`;
  return piece.edge ? `${what} at the edge of a line` : what;
}

/**
 * Plain runs as text, escapes marked; with maxLines, only that many lines (the caller says how many more). With
 * `blanks` (a value a person decides on), tabs and long runs of spaces or tabs are shown as markers too. Drawn up to
 * `DRAWN_CHARACTERS` (an escape counts its `\u{…}`), then the card's ✂ mark and a note of how much is left, with a
 * button that draws as much again: whatever a model, a tool or a page wrote, no text laid out at once holds the page.
 */
export function VisibleTextView({ text, maxLines, blanks = false }: { text: VisibleText; maxLines?: number | undefined; blanks?: boolean }) {
  const [budget, setBudget] = useState(DRAWN_CHARACTERS);
  const drawn = useMemo(() => firstCharacters(maxLines === undefined ? text.segments : firstLines(text.segments, maxLines), budget), [text, maxLines, budget]);
  return (
    <>
      <SegmentsView segments={drawn.segments} blanks={blanks} />
      {drawn.left > 0 && (
        <>
          <span className="value-cut" title="Not drawn past here: see the note after the mark">
            ✂
          </span>{' '}
          <CutNote drawn={drawn} onMore={() => setBudget(budget + DRAWN_CHARACTERS)} inline />
        </>
      )}
    </>
  );
}

/** Segments as they are, every one drawn: only for segments already bounded (see VisibleTextView). */
function SegmentsView({ segments, blanks }: { segments: readonly VisibleSegment[]; blanks: boolean }) {
  const places = blanks ? new Map(textSegments({ segments }).map((found) => [found.at, found.place])) : undefined;
  return (
    <>
      {segments.map((segment, index) =>
        segment.kind === 'text' ? (
          blanks ? (
            <BlankRunsView key={index} text={segment.text} place={places!.get(index)} />
          ) : (
            <Fragment key={index}>{segment.text}</Fragment>
          )
        ) : (
          <span key={index} className="escaped-char" data-class={segment.class} title={`${codePointName(segment.codePoint)}: ${escapeTitles[segment.class]}`}>
            {segment.text}
          </span>
        ),
      )}
    </>
  );
}

/**
 * The segments that fit in `budget` drawn characters, a text segment cut at a character if need be, and what is left
 * undrawn: `left` characters of the value, `leftEscaped` of them escapes. Linear in the segments.
 */
function firstCharacters(segments: readonly VisibleSegment[], budget: number): { segments: VisibleSegment[]; left: number; leftEscaped: number } {
  let used = 0;
  let at = 0;
  const out: VisibleSegment[] = [];
  for (; at < segments.length; at++) {
    const segment = segments[at]!;
    if (used + segment.text.length <= budget) {
      out.push(segment);
      used += segment.text.length;
      continue;
    }
    if (segment.kind === 'text' && budget - used > 0) {
      let cut = budget - used;
      // Never half of a surrogate pair.
      if (/[\uD800-\uDBFF]/.test(segment.text.charAt(cut - 1))) cut -= 1;
      if (cut > 0) out.push({ kind: 'text', text: segment.text.slice(0, cut) });
      return { segments: out, ...undrawn([{ kind: 'text', text: segment.text.slice(cut) }, ...segments.slice(at + 1)]) };
    }
    break;
  }
  return { segments: out, ...undrawn(segments.slice(at)) };
}

function undrawn(segments: readonly VisibleSegment[]): { left: number; leftEscaped: number } {
  let left = 0;
  let leftEscaped = 0;
  for (const segment of segments) {
    if (segment.kind === 'escape') {
      left += 1;
      leftEscaped += 1;
    } else {
      left += segment.text.length - (segment.text.match(/[\uDC00-\uDFFF]/g)?.length ?? 0);
    }
  }
  return { left, leftEscaped };
}

function firstLines(segments: readonly VisibleSegment[], maxLines: number): VisibleSegment[] {
  const out: VisibleSegment[] = [];
  let newlines = 0;
  for (const segment of segments) {
    if (segment.kind === 'escape') {
      out.push(segment);
      continue;
    }
    let cut = -1;
    for (let index = segment.text.indexOf('\n'); index !== -1; index = segment.text.indexOf('\n', index + 1)) {
      newlines += 1;
      if (newlines === maxLines) {
        cut = index;
        break;
      }
    }
    if (cut === -1) {
      out.push(segment);
      continue;
    }
    if (cut > 0) out.push({ kind: 'text', text: segment.text.slice(0, cut) });
    break;
  }
  return out;
}
