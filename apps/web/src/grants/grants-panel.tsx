import { useMemo } from 'react';
import { visibleArguments } from '@airlock/core';
import { VisibleTextView } from '../chat/tool-arguments';
import type { Grant } from '../lib/api-types';
import { trpc } from '../lib/trpc';

/** What "Always allow" has granted in this chat, each with Revoke. */
export function GrantsPanel({ sessionId, enabled }: { sessionId: string; enabled: boolean }) {
  const utils = trpc.useUtils();
  const grants = trpc.grants.list.useQuery({ sessionId }, { enabled, retry: false });
  const revoke = trpc.grants.revoke.useMutation({ onSettled: () => utils.grants.list.invalidate({ sessionId }) });
  const list = grants.data ?? [];
  if (list.length === 0) return null;
  return (
    <details className="grants">
      <summary>Always allowed in this chat ({list.length})</summary>
      <ul>
        {list.map((grant) => (
          <li key={grant.grantId}>
            <code className="tool-name">{grant.toolName}</code> <GrantScope grant={grant} />
            <button
              type="button"
              className="btn btn-small"
              disabled={revoke.isPending && revoke.variables.grantId === grant.grantId}
              aria-label={`Revoke always-allow for ${grant.toolName}`}
              onClick={() => revoke.mutate({ sessionId, grantId: grant.grantId })}
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
    </details>
  );
}

/**
 * An exact grant's values, each drawn up to the card's bound (a value of 99,000 marked escapes laid out whole froze the
 * tab), each argument on a row of its own and labelled with its type where the card labels it: drawn `name: value,
 * name: value`, a string holding `, dry_run: true` read as a second argument, and the string "false" as the boolean.
 */
function GrantScope({ grant }: { grant: Grant }) {
  const shown = useMemo(() => (grant.arguments === null ? null : visibleArguments(grant.toolName, grant.arguments)), [grant.toolName, grant.arguments]);
  if (shown === null) return <span className="muted">any call</span>;
  const parts = shown.code === null ? shown.others : [shown.code.argument, ...shown.others];
  return (
    <span className="muted grant-exact">
      only exactly{' '}
      <code className="grant-args visible-value">
        {parts.map((argument, index) => (
          <span key={index} className="grant-arg">
            {(shown.code === null || index > 0) && (
              <>
                <VisibleTextView text={argument.name} blanks />
                {argument.typeLabel !== null && (
                  <>
                    {' ('}
                    <span className="value-type" data-type={argument.typeLabel}>
                      {argument.typeLabel}
                    </span>
                    {')'}
                  </>
                )}
                :{' '}
              </>
            )}
            <VisibleTextView text={argument.value} blanks />
          </span>
        ))}
      </code>
    </span>
  );
}
