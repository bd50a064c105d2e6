import { useState } from 'react';
import { trpc } from '../lib/trpc';
import type { WorkspaceRulesStatus } from './rule-types';

const STATE_TEXT: Record<WorkspaceRulesStatus['state'], string> = {
  absent: 'This workspace has no rules file.',
  loaded: "This workspace's rules file is loaded.",
  invalid: "This workspace's rules file is invalid: none of its rules apply.",
};

/** The workspace's own `.airlock/rules.json`: whether it is there and sound, and whether its allow rules count. */
export function WorkspaceRulesPanel({ status }: { status: WorkspaceRulesStatus }) {
  const utils = trpc.useUtils();
  // The person's choice, shown from the click itself (the mutation's own state arrives a render later, and the box
  // would show the old value in between) until the server's answer replaces it or an error puts the old one back.
  const [chosen, setChosen] = useState<boolean | undefined>(undefined);
  // The answer is the new status: set it rather than read the list again, so the box never flips back meanwhile.
  const trust = trpc.rules.trustWorkspace.useMutation({
    onSuccess: (workspace) => utils.rules.list.setData(undefined, (list) => (list === undefined ? list : { ...list, workspace })),
    onSettled: () => setChosen(undefined),
  });
  return (
    <section className="workspace-rules" aria-label="Workspace rules file" data-state={status.state}>
      <p>
        {STATE_TEXT[status.state]} <code>{status.file}</code>
      </p>
      {status.error !== undefined && (
        <pre className="problem workspace-rules-error" role="alert">
          {status.error}
        </pre>
      )}
      <label className="checkbox">
        <input
          type="checkbox"
          checked={chosen ?? status.trusted}
          disabled={chosen !== undefined || trust.isPending}
          onChange={(event) => {
            setChosen(event.target.checked);
            trust.mutate({ trusted: event.target.checked });
          }}
        />
        Trust this workspace&apos;s rules
      </label>
      <p className="muted">
        Its deny rules always apply. Its allow rules let calls run without asking only while you trust it: anyone who can change the workspace can
        change that file.
      </p>
      {trust.error && (
        <p className="problem" role="alert">
          Could not change the trust: {trust.error.message}
        </p>
      )}
    </section>
  );
}
