import { fromVisibleNotation, toVisibleText } from '@airlock/core';
import { Fragment } from 'react';
import { VisibleTextView } from '../chat/tool-arguments';

/**
 * A rule's sentence as the server writes it, with its `quoted` parts shown as code; all of it through the card's
 * display rules (hidden, bidi and control characters as marked `\u{…}` codes, drawn left to right), so a rules file
 * cannot make its reason or a command read as something else. A quoted part is code on one line: the server quotes a
 * model's word with its escapes already made (a backtick as `\u{60}`), shown marked here rather than escaped twice.
 */
export function RuleText({ text }: { text: string }) {
  const parts = text.split('`');
  return (
    <span className="rule-text">
      {parts.map((part, index) =>
        index % 2 === 1 && index < parts.length - 1 ? (
          <code key={index}>
            <VisibleTextView text={toVisibleText(fromVisibleNotation(part), { singleLine: true, code: true })} />
          </code>
        ) : (
          <Fragment key={index}>
            <VisibleTextView text={toVisibleText(part)} />
          </Fragment>
        ),
      )}
    </span>
  );
}
