/**
 * Where Python would read the code's lines otherwise than the card draws them. The card breaks lines at a line
 * feed only and shows a carriage return and a form feed as codes within a line; Python's tokenizer also ends a line
 * at a carriage return on its own, and a form feed in a line's indentation sets the column back to 0, so
 * `    \fos.system(…)` drawn under an `if` runs at the top level. One pass over the code.
 */
export type PythonLineBreakIssue = { kind: 'carriage-return' | 'form-feed'; line: number };

export function pythonLineBreakIssue(code: string): PythonLineBreakIssue | undefined {
  let line = 1;
  let inIndentation = true;
  let formFeedInIndentation = false;
  for (let at = 0; at < code.length; at++) {
    const char = code[at];
    if (char === '\n') {
      line++;
      inIndentation = true;
      formFeedInIndentation = false;
    } else if (char === '\r') {
      if (code[at + 1] !== '\n') return { kind: 'carriage-return', line };
    } else if (inIndentation && (char === ' ' || char === '\t')) {
      // Still indentation.
    } else if (inIndentation && char === '\f') {
      formFeedInIndentation = true;
    } else if (inIndentation) {
      // A line made only of white space and form feeds (a page break) indents nothing.
      if (formFeedInIndentation) return { kind: 'form-feed', line };
      inIndentation = false;
    }
  }
  return undefined;
}

/** The refusal the model reads, before anyone is asked. */
export function pythonLineBreakMessage(issue: PythonLineBreakIssue): string {
  return issue.kind === 'carriage-return'
    ? `line ${issue.line} of the code holds a carriage return not followed by a line feed; Python ends a line there, ` +
        'and the person is shown one line. Use \\n for line breaks (or write "\\r" as an escape inside a string).'
    : `line ${issue.line} of the code has a form feed in its indentation; Python sets the indentation back to column 0 ` +
        'there, and the person is shown the line indented. Remove the form feed.';
}
