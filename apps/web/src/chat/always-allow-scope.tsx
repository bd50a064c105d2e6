import { useContext, useEffect, useLayoutEffect } from 'react';
import type { ConfirmInput, ToolAnnotations } from '../lib/api-types';
import type { DecisionProblem } from './tool-call-state';
import { trpc } from '../lib/trpc';
import { RuleText } from '../rules/rule-text';
import { CurrentSessionContext } from './current-session';
import { grantScope } from './grant-scope';

/** Where "Always allow" holds: a grant in this chat, or a lasting rule for this workspace or everywhere. */
export type AlwaysScope = NonNullable<ConfirmInput['scope']>;

/** The rule a workspace or global "Always allow" would save, as the server drafted it and the card shows it. */
export type ShownRule = NonNullable<ConfirmInput['rule']>;

/** The scope picked, and whether the person has seen what it saves (a rule's wording comes from the server). */
export interface AlwaysChoice {
  scope: AlwaysScope;
  ready: boolean;
  /** The rule shown for a workspace or global scope: sent with the decision, so that no other rule is saved. */
  rule?: ShownRule;
}

export const CHAT_SCOPE: AlwaysChoice = { scope: 'chat', ready: true };

const SCOPE_LABELS: Record<AlwaysScope, string> = {
  chat: 'this chat',
  workspace: 'this workspace',
  global: 'everywhere',
};

const SCOPES: readonly AlwaysScope[] = ['chat', 'workspace', 'global'];

export interface AlwaysAllowScopeProps {
  /** The id the Always allow button points at with aria-describedby. */
  id: string;
  toolName: string;
  annotations: ToolAnnotations | undefined;
  approvalId: string;
  choice: AlwaysChoice;
  onChoice: (choice: AlwaysChoice) => void;
  disabled: boolean;
  /** Why the last decision on this call did not take, if it did not: a conflict may mean the rule is another now. */
  problem?: DecisionProblem | null;
}

/**
 * Where "Always allow" holds, and exactly what it will allow there, shown before the person clicks it: for this
 * chat what the grant covers, for a wider scope the rule the server would save, in its own words.
 */
export function AlwaysAllowScope({ id, toolName, annotations, approvalId, choice, onChoice, disabled, problem = null }: AlwaysAllowScopeProps) {
  const sessionId = useContext(CurrentSessionContext);
  if (sessionId === null) {
    return (
      <p id={id} className="grant-scope">
        {grantScope(toolName, annotations)}
      </p>
    );
  }
  return (
    <div className="always-scope">
      <fieldset className="always-scope-choice" disabled={disabled}>
        <legend>Always allow in</legend>
        {SCOPES.map((scope) => (
          <label key={scope}>
            <input
              type="radio"
              name={`always-scope-${approvalId}`}
              value={scope}
              checked={choice.scope === scope}
              onChange={() => onChoice(scope === 'chat' ? CHAT_SCOPE : { scope, ready: false })}
            />
            {SCOPE_LABELS[scope]}
          </label>
        ))}
      </fieldset>
      {choice.scope === 'chat' ? (
        <p id={id} className="grant-scope">
          {grantScope(toolName, annotations)}
        </p>
      ) : (
        <ProposedRule
          id={id}
          sessionId={sessionId}
          approvalId={approvalId}
          scope={choice.scope}
          problem={problem}
          onReady={(ready, rule) => onChoice({ scope: choice.scope, ready, ...(rule === undefined ? {} : { rule }) })}
        />
      )}
    </div>
  );
}

interface ProposedRuleProps {
  id: string;
  sessionId: string;
  approvalId: string;
  scope: Exclude<AlwaysScope, 'chat'>;
  problem: DecisionProblem | null;
  onReady: (ready: boolean, rule: ShownRule | undefined) => void;
}

function ProposedRule({ id, sessionId, approvalId, scope, problem, onReady }: ProposedRuleProps) {
  const proposal = trpc.rules.propose.useQuery({ sessionId, approvalId, scope }, { retry: false, staleTime: Infinity });
  const ready = proposal.isSuccess;
  const rule = proposal.data?.draft;
  // onReady is a new function on every render: a rule read (or read anew) is news, and so is a scope picked again,
  // whose rule, read before, comes from the cache as ready as the last scope's was (the button had stayed off beside it).
  // Before the page is painted, and before any click: the button re-arms (see DecisionControls) in the same task that
  // draws the rule read again.
  useLayoutEffect(() => onReady(ready, rule), [ready, rule, scope]);
  // The server refuses a decision whose rule is no longer the one it would save (a file of the workspace changed what
  // the call's rule needs): the rule is read again, and shown, for the person to decide on.
  useEffect(() => {
    if (problem?.kind === 'refused' && problem.why === 'conflict') void proposal.refetch();
  }, [problem]);
  if (proposal.error) {
    return (
      <p id={id} className="grant-scope problem" role="alert">
        Cannot save a rule here: {proposal.error.message}
      </p>
    );
  }
  if (!proposal.data) {
    return (
      <p id={id} className="grant-scope muted">
        Working out what the rule would allow…
      </p>
    );
  }
  return (
    <p id={id} className="grant-scope proposed-rule" data-testid="proposed-rule">
      Always allow saves this rule: <RuleText reason={proposal.data.description} />. Such calls then run without asking; see or remove it under Rules.
    </p>
  );
}
