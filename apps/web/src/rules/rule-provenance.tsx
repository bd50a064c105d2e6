import type { RuleRef } from '../chat/tool-call-state';
import { trpc } from '../lib/trpc';
import { RuleText } from './rule-text';

export interface RuleProvenanceProps {
  rule: RuleRef;
  effect: 'allow' | 'deny';
  /** Appended after the rule, e.g. "It runs once the calls before it are done." */
  suffix?: string;
}

/**
 * "Allowed by rule …" / "Denied by rule …" on a card. Live events carry the rule's text; after a reload only its
 * id is known, so it is looked up in the rule list, and a rule since removed reads "a rule".
 */
export function RuleProvenance({ rule, effect, suffix }: RuleProvenanceProps) {
  const rules = trpc.rules.list.useQuery(undefined, { enabled: rule.text === null && rule.ruleId !== null, retry: false, staleTime: 30_000 });
  // Rows recorded before the ledger kept the rule's words name only its id: the rule of that id now is shown only
  // while it still has the effect that decided (an edit may have turned an allow rule into a deny rule).
  const text = rule.text ?? rules.data?.rules.find((view) => view.rule.id === rule.ruleId && view.rule.effect === effect)?.description ?? null;
  const verb = effect === 'allow' ? 'Allowed' : 'Denied';
  return (
    <p className="detail rule-provenance" data-testid="rule-provenance">
      {text === null ? (
        `${verb} by a rule.`
      ) : (
        <>
          {verb} by rule: <RuleText reason={text} />.
        </>
      )}
      {suffix === undefined ? null : ` ${suffix}`}
    </p>
  );
}
