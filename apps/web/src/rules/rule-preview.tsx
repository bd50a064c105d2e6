import { toVisibleText } from '@airlock/core';
import { keepPreviousData } from '@tanstack/react-query';
import { VisibleTextView } from '../chat/tool-arguments';
import type { ToolCallRecord } from '../lib/api-types';
import { trpc } from '../lib/trpc';
import { serverErrorsOf, type ServerErrors } from './server-errors';
import type { RuleDraftInput } from './rule-types';
import { useEffect } from 'react';

const SHOWN = 8;

export interface RulePreviewProps {
  draft: RuleDraftInput | null;
  /** What the server said about the draft: field errors show beside the fields. */
  onErrors: (errors: ServerErrors | null) => void;
}

/** The past calls from the ledger the draft would have decided, asked again as the draft changes. */
export function RulePreview({ draft, onErrors }: RulePreviewProps) {
  const preview = trpc.rules.preview.useQuery(draft ?? EMPTY_DRAFT, { enabled: draft !== null, retry: false, placeholderData: keepPreviousData });
  const errors = draft === null ? null : serverErrorsOf(preview.error);
  const errorKey = errors?.message ?? null;
  // onErrors is a new function on every render: only a change of the server's answer is news.
  useEffect(() => onErrors(errors), [errorKey]);
  if (draft === null) return null;
  if (errors !== null) return <p className="rule-preview muted">No preview until the rule is valid.</p>;
  if (!preview.data) return <p className="rule-preview muted">Looking through past calls…</p>;
  const matches = preview.data.matches;
  return (
    <div className="rule-preview" aria-label="Preview of past calls" role="region" data-testid="rule-preview">
      <p>
        {matches.length === 0
          ? 'It would have decided none of the recent calls in the ledger.'
          : `It would have ${draft.effect === 'allow' ? 'allowed' : 'denied'} ${matches.length === 1 ? '1 recent call' : `${matches.length} recent calls`}:`}
      </p>
      {matches.length > 0 && (
        <ul className="rule-preview-calls">
          {matches.slice(0, SHOWN).map((call) => (
            <PreviewedCall key={`${call.runId}:${call.toolCallId}`} call={call} />
          ))}
          {matches.length > SHOWN && <li className="muted">and {matches.length - SHOWN} more</li>}
        </ul>
      )}
    </div>
  );
}

const EMPTY_DRAFT: RuleDraftInput = { effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['-'], exact: true }, scope: { kind: 'global' }, source: 'user' };

/** One past call, its tool and what it ran, under the card's display rules: a ledger row holds what the model wrote. */
export function PreviewedCall({ call }: { call: ToolCallRecord }) {
  return (
    <li>
      <code className="tool-name">
        <VisibleTextView text={toVisibleText(call.toolName, { singleLine: true })} />
      </code>{' '}
      <code>
        <VisibleTextView text={toVisibleText(summary(call), { code: true })} />
      </code>
    </li>
  );
}

function summary(call: ToolCallRecord): string {
  for (const key of ['command', 'path', 'url']) {
    const value = Object.hasOwn(call.arguments, key) ? call.arguments[key] : undefined;
    if (typeof value === 'string') return value;
  }
  const json = JSON.stringify(call.arguments);
  return json.length > 120 ? `${json.slice(0, 120)}…` : json;
}
