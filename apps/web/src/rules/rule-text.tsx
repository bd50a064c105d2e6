import { quotedLine, reasonParts, toVisibleText, visibleTextString, type ShownReason } from '@airlock/core';
import { Fragment } from 'react';
import { VisibleTextView } from '../chat/tool-arguments';

/**
 * A reason the server gives (a rule's sentence, why a call is asked), drawn part by part as the server typed it and
 * never parsed: its words as text, a word of a call or rule as code, free text someone else wrote (a rule's reason)
 * quoted as theirs. Each part is on one line, through the card's display rules (hidden, bidi and control characters,
 * a line break among them, as marked `\u{…}` codes, drawn left to right), so nothing a rules file or a model wrote can
 * read as the server's words or start a line. A sentence stored before reasons were typed is plain text.
 */
export function RuleText({ reason }: { reason: ShownReason }) {
  return (
    <span className="rule-text">
      {reasonParts(reason).map((part, index) =>
        'code' in part ? (
          <code key={index}>
            <VisibleTextView text={toVisibleText(part.code, { singleLine: true, code: true })} />
          </code>
        ) : 'quote' in part ? (
          <q key={index} className="rule-quote">
            <VisibleTextView text={toVisibleText(part.quote, { singleLine: true })} />
          </q>
        ) : (
          <Fragment key={index}>
            <VisibleTextView text={toVisibleText(part.text, { singleLine: true })} />
          </Fragment>
        ),
      )}
    </span>
  );
}

/** A reason as one line of plain text, for a label or a dialog: a quote in `“…”`, hidden characters as escapes. */
export function ruleLabel(reason: ShownReason): string {
  const shown = (text: string, code = false) => visibleTextString(toVisibleText(text, { singleLine: true, code }));
  return reasonParts(reason)
    .map((part) => ('code' in part ? shown(part.code, true) : 'quote' in part ? quotedLine(part.quote) : shown(part.text)))
    .join('');
}
