import type { RouterInputs, RouterOutputs } from '../lib/api-types';

/** A rule as the person writes it: what `rules.add`, `rules.update` and `rules.preview` take. */
export type RuleDraftInput = RouterInputs['rules']['add'];
export type RuleMatchInput = RuleDraftInput['match'];
export type RuleMatchKind = RuleMatchInput['kind'];
export type RuleScopeKind = RuleDraftInput['scope']['kind'];
export type RuleEffect = RuleDraftInput['effect'];
export type RulesList = RouterOutputs['rules']['list'];
export type RuleView = RulesList['rules'][number];
export type WorkspaceRulesStatus = RulesList['workspace'];
export type WorkspaceTrustInput = RouterInputs['rules']['trustWorkspace'];
