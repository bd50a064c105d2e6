import { toVisibleText } from '@airlock/core';
import { useMemo, useState } from 'react';
import { VisibleTextView } from './tool-arguments';
import type { ResultCut } from './tool-call-state';

/** Longer results show their start until the person asks for all of it. */
export const RESULT_PREVIEW_CHARS = 4000;
const OPEN_BY_DEFAULT_CHARS = 1200;

export interface ToolResultProps {
  result: string;
  /**
   * What the server left out before the model saw the result, as it counted it. The note says so only from this:
   * a marker in the text proves nothing, since a tool's output (a page, a file) can contain one.
   */
  cut?: ResultCut | undefined;
  /** Default "Result". */
  label?: string;
}

export function ToolResult({ result, cut, label = 'Result' }: ToolResultProps) {
  const [showAll, setShowAll] = useState(false);
  const long = result.length > RESULT_PREVIEW_CHARS;
  const shown = long && !showAll ? result.slice(0, RESULT_PREVIEW_CHARS) : result;
  const leftOut = cut === undefined ? '' : cutText(cut);
  // What the model is told, shown as the arguments are: a hidden or reordering character is an escape, and counted.
  const visible = useMemo(() => toVisibleText(shown), [shown]);
  return (
    <details className="tool-result" open={result.length <= OPEN_BY_DEFAULT_CHARS}>
      <summary>
        {label} <span className="muted">({result.length.toLocaleString('en')} characters)</span>
      </summary>
      {leftOut !== '' && <p className="note">{`Shortened before the model saw it: ${leftOut} in the middle were left out.`}</p>}
      {visible.hiddenCount > 0 && (
        <p className="note" data-testid="result-hidden-characters">{`${visible.hiddenCount.toLocaleString('en')} hidden ${visible.hiddenCount === 1 ? 'character' : 'characters'} shown as \\u{…}: the model reads ${visible.hiddenCount === 1 ? 'it' : 'them'}.`}</p>
      )}
      <pre className="code-block result-text">
        <code>{result === '' ? '(empty)' : <VisibleTextView text={visible} />}</code>
      </pre>
      {long && (
        <div className="truncation">
          <span className="muted">
            {showAll
              ? `Showing all ${result.length.toLocaleString('en')} characters.`
              : `Showing the first ${RESULT_PREVIEW_CHARS.toLocaleString('en')} of ${result.length.toLocaleString('en')} characters.`}
          </span>
          <button type="button" className="btn btn-small" onClick={() => setShowAll(!showAll)}>
            {showAll ? 'Show less' : 'Show all'}
          </button>
        </div>
      )}
    </details>
  );
}

/** "48,213 characters", "1,234 bytes and 500 characters"; "" when nothing was left out. */
function cutText({ bytes, characters }: ResultCut): string {
  const parts = [
    ...(bytes !== undefined && bytes > 0 ? [`${bytes.toLocaleString('en')} bytes`] : []),
    ...(characters !== undefined && characters > 0 ? [`${characters.toLocaleString('en')} characters`] : []),
  ];
  return parts.join(' and ');
}
