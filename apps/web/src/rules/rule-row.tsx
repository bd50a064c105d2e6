import type { SessionSummary } from '../lib/api-types';
import { trpc } from '../lib/trpc';
import { relativeTime } from '../sessions/relative-time';
import { RuleText, ruleLabel } from './rule-text';
import type { RuleView } from './rule-types';
import { useChatTitle } from './use-chat-title';

export interface RuleRowProps {
  view: RuleView;
  /** The chats loaded so far; undefined until the first page came. */
  sessions: readonly SessionSummary[] | undefined;
  now: number;
  onEdit: () => void;
}

/** One rule: how it reads, where it holds, where it comes from, how often it decided; edit and remove when it is yours. */
export function RuleRow({ view, sessions, now, onEdit }: RuleRowProps) {
  const utils = trpc.useUtils();
  const remove = trpc.rules.remove.useMutation({ onSettled: () => utils.rules.list.invalidate() });
  const { rule } = view;
  // A chat rule names its chat by title, read on its own when the chat is older than those loaded.
  const chatTitle = useChatTitle(rule.scope.kind === 'chat' ? rule.scope.sessionId : undefined, sessions);
  return (
    <li className="rule-row" data-effect={rule.effect} aria-label={`Rule: ${ruleLabel(view.description)}`}>
      <p className="rule-description">
        <span className={`badge rule-badge-${rule.effect}`}>{rule.effect === 'allow' ? 'Allow' : 'Deny'}</span> <RuleText reason={view.description} />
      </p>
      <p className="rule-meta muted">
        <span>{scopeText(rule.scope, chatTitle)}</span>
        {' · '}
        <span>{view.editable ? 'yours' : 'from the workspace file (edit it there)'}</span>
        {' · '}
        <span data-testid="rule-hits">{view.hits === 1 ? '1 hit' : `${view.hits} hits`}</span>
        {' · '}
        <span>{view.lastUsedAt === null ? 'never used' : `last used ${relativeTime(view.lastUsedAt, now)}`}</span>
      </p>
      {view.editable && (
        <div className="rule-actions">
          <button type="button" className="btn btn-small" onClick={onEdit}>
            Edit
          </button>
          <button
            type="button"
            className="btn btn-small btn-deny"
            disabled={remove.isPending}
            onClick={() => {
              if (window.confirm(`Remove the rule “${ruleLabel(view.description)}”?`)) remove.mutate({ ruleId: rule.id });
            }}
          >
            Remove
          </button>
        </div>
      )}
      {remove.error && (
        <p className="problem" role="alert">
          Could not remove it: {remove.error.message}
        </p>
      )}
    </li>
  );
}

function scopeText(scope: RuleView['rule']['scope'], chatTitle: string | undefined): string {
  switch (scope.kind) {
    case 'chat':
      return chatTitle === undefined ? 'one chat' : `chat “${chatTitle}”`;
    case 'workspace':
      return 'this workspace';
    case 'global':
      return 'everywhere';
  }
}
