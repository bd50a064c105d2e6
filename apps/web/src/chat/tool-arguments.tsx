import { Fragment, useMemo, useState } from 'react';
import { visibleArguments, type EscapeClass, type VisibleArgument, type VisibleSegment, type VisibleText } from '@airlock/core';
import type { ToolArguments as Args } from '../lib/api-types';

/** Lines a long value shows before the rest is one click away. */
export const COLLAPSED_LINES = 12;

/**
 * The arguments exactly as they will run: rendered from the call's own arguments through the one set of
 * display rules, every value whole (or one click from whole, saying how much more), hidden characters marked.
 */
export function ToolArguments({ toolName, args }: { toolName: string; args: Args }) {
  const shown = useMemo(() => visibleArguments(toolName, args), [toolName, args]);
  if (shown.code === null && shown.others.length === 0) return <p className="tool-arguments muted">No arguments</p>;
  return (
    <div className="tool-arguments">
      {shown.hiddenCount > 0 && <HiddenCharactersWarning count={shown.hiddenCount} />}
      {shown.code !== null && <ArgumentValue label={shown.code.label} argument={shown.code.argument} language={shown.code.language} />}
      {shown.others.length > 0 && (
        <>
          {shown.code !== null && <div className="field-label">Other arguments</div>}
          <dl className="argument-list">
            {shown.others.map((argument, index) => (
              <div key={index} className="argument">
                <dt className="argument-name">
                  <VisibleTextView text={argument.name} />
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

export function HiddenCharactersWarning({ count }: { count: number }) {
  return (
    <p className="hidden-chars-warning" role="note">
      This call contains hidden characters ({count}). Each is shown as a marked <code>{'\\u{…}'}</code> code: read them before you decide.
    </p>
  );
}

function ArgumentValue({ argument, label, language }: { argument: VisibleArgument; label?: string; language: string | undefined }) {
  const { value } = argument;
  const [expanded, setExpanded] = useState(false);
  const collapsible = value.lineCount > COLLAPSED_LINES;
  const lines = value.lineCount > 1 ? `${value.lineCount} lines` : null;
  return (
    <div className="argument-value">
      {(label !== undefined || lines !== null) && (
        <div className="field-label">
          {label}
          {label !== undefined && lines !== null && ' · '}
          {lines !== null && <span className="line-count">{lines}</span>}
        </div>
      )}
      <pre className="code-block visible-value" data-language={language}>
        <code>
          <VisibleTextView text={value} maxLines={collapsible && !expanded ? COLLAPSED_LINES : undefined} />
        </code>
      </pre>
      {collapsible && (
        <button type="button" className="btn btn-small more-lines" aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
          {expanded ? `Show the first ${COLLAPSED_LINES} lines only` : `Show all ${value.lineCount} lines (${value.lineCount - COLLAPSED_LINES} more lines)`}
        </button>
      )}
    </div>
  );
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
  'look-alike-symbol': 'a character drawn like a quote, a backslash or other punctuation the code reads as syntax, which it is not',
  backslash: 'a literal backslash, escaped so it cannot pass for a hidden character',
};

function codePointName(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Plain runs as text, escapes marked; with maxLines, only that many lines (the caller says how many more). */
export function VisibleTextView({ text, maxLines }: { text: VisibleText; maxLines?: number | undefined }) {
  const segments = maxLines === undefined ? text.segments : firstLines(text.segments, maxLines);
  return (
    <>
      {segments.map((segment, index) =>
        segment.kind === 'text' ? (
          <Fragment key={index}>{segment.text}</Fragment>
        ) : (
          <span key={index} className="escaped-char" data-class={segment.class} title={`${codePointName(segment.codePoint)}: ${escapeTitles[segment.class]}`}>
            {segment.text}
          </span>
        ),
      )}
    </>
  );
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
