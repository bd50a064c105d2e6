import { toVisibleText } from '@airlock/core';
import { VisibleTextView } from '../chat/tool-arguments';
import { SteadyButton } from '../lib/steady-button';
import { RuleText } from './rule-text';
import type { WorkspaceRulesStatus, WorkspaceTrustInput } from './rule-types';

export interface WorkspaceRulesViewProps {
  status: WorkspaceRulesStatus;
  /** A change of trust is on its way: the buttons wait for it. */
  busy: boolean;
  /** Why the last change of trust failed, if it did. */
  error: string | undefined;
  onTrust: (choice: WorkspaceTrustInput) => void;
}

/**
 * The workspace's own `.airlock/rules.json`: whether it is there and sound, whether the person trusts the content
 * it holds now, and the rules that trusting would let decide.
 */
export function WorkspaceRulesView({ status, busy, error, onTrust }: WorkspaceRulesViewProps) {
  const offer = status.state === 'loaded' && status.trust !== 'trusted' ? status.sha256 : undefined;
  return (
    <section className="workspace-rules" aria-label="Workspace rules file" data-state={status.state} data-trust={status.trust}>
      <p>
        {stateText(status)}{' '}
        <code>
          <VisibleTextView text={toVisibleText(status.file, { singleLine: true })} />
        </code>
      </p>
      {status.error !== undefined && (
        <pre className="problem workspace-rules-error" role="alert">
          <VisibleTextView text={toVisibleText(status.error)} />
        </pre>
      )}
      {trustText(status) !== undefined && <p data-testid="workspace-trust">{trustText(status)}</p>}
      {(offer !== undefined || status.state === 'invalid') && status.rules.length > 0 && (
        <ul className="workspace-rules-list" aria-label={offer !== undefined ? 'Rules in the file' : 'Deny rules kept from its last valid version'}>
          {status.rules.map((view) => (
            <li key={view.rule.id}>
              <span className={`badge rule-badge-${view.rule.effect}`}>{view.rule.effect === 'allow' ? 'Allow' : 'Deny'}</span> <RuleText reason={view.description} />
            </li>
          ))}
        </ul>
      )}
      <div className="rule-actions">
        {offer !== undefined && (
          // Keyed by the content: other rules shown under the pointer re-arm the button, so a click meant for the
          // old ones does not trust the new.
          <SteadyButton key={offer} className="btn btn-small" disabled={busy} onClick={() => onTrust({ trusted: true, sha256: offer })}>
            {status.trust === 'changed' ? 'Trust the new content' : 'Trust these rules'}
          </SteadyButton>
        )}
        {status.trust !== 'untrusted' && (
          <button type="button" className="btn btn-small" disabled={busy} onClick={() => onTrust({ trusted: false })}>
            Stop trusting
          </button>
        )}
      </div>
      <p className="muted">
        Its deny rules always apply. Its allow rules let calls run without asking only while the file holds the content you trusted: anyone who can
        change the workspace can change that file, so a changed file needs your trust again.
      </p>
      {error !== undefined && (
        <p className="problem" role="alert">
          Could not change the trust: {error}
        </p>
      )}
    </section>
  );
}

function stateText(status: WorkspaceRulesStatus): string {
  switch (status.state) {
    case 'absent':
      return 'This workspace has no rules file.';
    case 'loaded':
      return "This workspace's rules file is loaded.";
    case 'invalid':
      return status.rules.length === 0
        ? "This workspace's rules file is invalid: none of its rules apply."
        : "This workspace's rules file is invalid: none of its allow rules apply; the deny rules of its last valid version still do.";
  }
}

function trustText(status: WorkspaceRulesStatus): string | undefined {
  switch (status.trust) {
    case 'trusted':
      return status.state === 'loaded' ? 'You trust this content of the file: its allow rules apply.' : undefined;
    case 'changed':
      return status.state === 'loaded'
        ? 'The file changed since you trusted it: its allow rules do not apply until you trust the new content.'
        : 'The file changed since you trusted it: its allow rules do not apply.';
    case 'untrusted':
      return status.state === 'loaded' ? 'Its allow rules do not apply until you trust them.' : undefined;
  }
}
