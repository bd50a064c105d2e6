import { trpc } from '../lib/trpc';
import type { WorkspaceRulesStatus } from './rule-types';
import { WorkspaceRulesView } from './workspace-rules-view';

/** The workspace rules file's state, with trusting its content (or no longer) wired to the server. */
export function WorkspaceRulesPanel({ status }: { status: WorkspaceRulesStatus }) {
  const utils = trpc.useUtils();
  const trust = trpc.rules.trustWorkspace.useMutation({
    // The answer is the new status; the list is read again too, since the file's rules may have changed with it.
    onSuccess: (workspace) => utils.rules.list.setData(undefined, (list) => (list === undefined ? list : { ...list, workspace })),
    // Refused because the file changed since it was shown: show what it holds now.
    onSettled: () => utils.rules.list.invalidate(),
  });
  return <WorkspaceRulesView status={status} busy={trust.isPending} error={trust.error?.message} onTrust={(choice) => trust.mutate(choice)} />;
}
