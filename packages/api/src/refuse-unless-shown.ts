import { canonicalJson, ConflictError } from '@airlock/core';
import type { RuleDraft } from './rules/rule';

/**
 * "Always allow" saves the rule its card showed, or none. What the rules draft for a call can change between the card
 * and the click (a config file of the workspace written or removed meanwhile makes a command's rule exact or a
 * prefix), so a rule drafted otherwise now is refused, nothing decided, rather than saved wider than shown.
 */
export function refuseUnlessShown(drafted: RuleDraft, shown: RuleDraft | undefined): void {
  if (shown === undefined || canonicalJson(drafted) === canonicalJson(shown)) return;
  throw new ConflictError('rule-changed', 'the rule "Always allow" would save for this call is no longer the one shown: read it again before saving it, or allow the call alone');
}
