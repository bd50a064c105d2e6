import type { AskedBecause } from '../chat/tool-call-state';
import { RuleText } from './rule-text';

/**
 * Why a waiting call is put up though a rule concerns it: an allow rule that does not cover what the call would do
 * (a write that makes a folder a Git repository), or a deny rule that could not tell whether it catches it. Said on
 * the card whether confirmation is on or off: with it on the person would otherwise take the rule to have failed.
 */
export function RuleAsked({ asked }: { asked: AskedBecause }) {
  return (
    <p className="detail rule-asked" data-testid="rule-asked">
      Why you are asked: <RuleText reason={asked.reason} />.
    </p>
  );
}
