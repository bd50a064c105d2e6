import { toVisibleText } from '@airlock/core';
import { Fragment } from 'react';
import { VisibleTextView } from '../chat/tool-arguments';

/**
 * A rule's sentence as the server writes it, with its `quoted` parts shown as code; all of it through the card's
 * display rules (hidden, bidi and control characters as marked `\u{…}` codes, drawn left to right), so a rules file
 * cannot make its reason or a command read as something else.
 */
export function RuleText({ text }: { text: string }) {
  const parts = text.split('`');
  return (
    <span className="rule-text">
      {parts.map((part, index) => {
        const shown = <VisibleTextView text={toVisibleText(part)} />;
        return index % 2 === 1 && index < parts.length - 1 ? <code key={index}>{shown}</code> : <Fragment key={index}>{shown}</Fragment>;
      })}
    </span>
  );
}
