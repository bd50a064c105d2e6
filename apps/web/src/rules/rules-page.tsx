import { useState } from 'react';
import './rules.css';
import { trpc } from '../lib/trpc';
import { useSessionPages } from '../sessions/use-session-pages';
import { useNow } from '../lib/use-now';
import { RuleEditor } from './rule-editor';
import { EMPTY_RULE_FORM, formOfDraft } from './rule-form';
import { RuleRow } from './rule-row';
import type { RuleScopeKind } from './rule-types';
import { WorkspaceRulesPanel } from './workspace-rules-panel';

type ScopeFilter = RuleScopeKind | 'all';

const FILTER_LABELS: Record<ScopeFilter, string> = {
  all: 'All scopes',
  chat: 'One chat',
  workspace: 'This workspace',
  global: 'Everywhere',
};

/** Editing state: nothing open, the new-rule form, or one rule's form. */
type Editing = { kind: 'none' } | { kind: 'new' } | { kind: 'rule'; ruleId: string };

/** Every lasting rule, the workspace file's status and trust, and a form to add or change the person's own. */
export function RulesPage({ onClose }: { onClose: () => void }) {
  // Hits change whenever a rule decides a call: read them afresh each time the page opens.
  const rules = trpc.rules.list.useQuery(undefined, { retry: false, refetchOnMount: 'always' });
  const sessions = useSessionPages(0);
  const model = trpc.model.info.useQuery(undefined, { staleTime: 60_000 });
  const [filter, setFilter] = useState<ScopeFilter>('all');
  const [editing, setEditing] = useState<Editing>({ kind: 'none' });
  const now = useNow(60_000);
  const workspace = model.data?.workspace;
  const shown = (rules.data?.rules ?? []).filter((view) => filter === 'all' || view.rule.scope.kind === filter);
  const close = () => setEditing({ kind: 'none' });

  return (
    <section className="rules-page" aria-labelledby="rules-title">
      <header className="rules-header">
        <h2 id="rules-title">Rules</h2>
        <button type="button" className="btn" onClick={onClose}>
          Back to the chat
        </button>
      </header>
      <p className="muted">
        Rules decide tool calls before you are asked: an allow rule lets a call run unasked, a deny rule refuses it and tells the model why. A
        deny rule wins over every allow rule and “Always allow”.
      </p>
      {rules.error && (
        <p className="problem" role="alert">
          Could not load the rules: {rules.error.message}
        </p>
      )}
      {rules.data && <WorkspaceRulesPanel status={rules.data.workspace} />}
      <div className="rules-toolbar">
        <label>
          <span>Show</span>
          <select value={filter} onChange={(event) => setFilter(event.target.value as ScopeFilter)}>
            {Object.entries(FILTER_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="btn btn-primary" disabled={editing.kind === 'new'} onClick={() => setEditing({ kind: 'new' })}>
          Add a rule
        </button>
      </div>
      {editing.kind === 'new' && <RuleEditor initial={EMPTY_RULE_FORM} workspace={workspace} onDone={close} />}
      {rules.data && shown.length === 0 && <p className="muted">{filter === 'all' ? 'No rules yet. “Always allow” on a call can save one, or add one here.' : 'No rules with this scope.'}</p>}
      <ul className="rule-list" aria-label="Rules">
        {shown.map((view) =>
          editing.kind === 'rule' && editing.ruleId === view.rule.id ? (
            <li key={view.rule.id} className="rule-row">
              <RuleEditor initial={formOfDraft(view.rule)} ruleId={view.rule.id} workspace={workspace} onDone={close} />
            </li>
          ) : (
            <RuleRow key={view.rule.id} view={view} sessions={sessions.sessions} now={now} onEdit={() => setEditing({ kind: 'rule', ruleId: view.rule.id })} />
          ),
        )}
      </ul>
    </section>
  );
}
