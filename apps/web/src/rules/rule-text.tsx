import { Fragment } from 'react';

/** A rule's sentence as the server writes it, with its `quoted` parts shown as code. */
export function RuleText({ text }: { text: string }) {
  const parts = text.split('`');
  return (
    <span className="rule-text">
      {parts.map((part, index) => (index % 2 === 1 && index < parts.length - 1 ? <code key={index}>{part}</code> : <Fragment key={index}>{part}</Fragment>))}
    </span>
  );
}
