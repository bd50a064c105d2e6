import { useState } from 'react';

/** Longer results show their start until the person asks for all of it. */
export const RESULT_PREVIEW_CHARS = 4000;
const OPEN_BY_DEFAULT_CHARS = 1200;
const CUT_MARKER = /\[… (\d+) (characters cut|bytes omitted) …\]/;

export function ToolResult({ result, label = 'Result' }: { result: string; label?: string }) {
  const [showAll, setShowAll] = useState(false);
  const long = result.length > RESULT_PREVIEW_CHARS;
  const shown = long && !showAll ? result.slice(0, RESULT_PREVIEW_CHARS) : result;
  const cut = CUT_MARKER.exec(result);
  return (
    <details className="tool-result" open={result.length <= OPEN_BY_DEFAULT_CHARS}>
      <summary>
        {label} <span className="muted">({result.length.toLocaleString('en')} characters)</span>
      </summary>
      {cut && (
        <p className="note">
          Shortened before the model saw it: {Number(cut[1]).toLocaleString('en')} {cut[2] === 'bytes omitted' ? 'bytes' : 'characters'} in the
          middle were left out.
        </p>
      )}
      <pre className="code-block result-text">
        <code>{result === '' ? '(empty)' : shown}</code>
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
