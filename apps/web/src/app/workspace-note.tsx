import { toVisibleText } from '@airlock/core';
import { VisibleTextView } from '../chat/tool-arguments';

/** Where the tools act: the workspace folder, as the server has it (hidden characters marked, like arguments). */
export function WorkspaceNote({ workspace }: { workspace: string | undefined }) {
  if (workspace === undefined) return null;
  const visible = toVisibleText(workspace);
  return (
    <p className="workspace-note" title={visible.segments.map((segment) => segment.text).join('')}>
      <span className="muted">Tools act in</span>{' '}
      <code className="workspace-path" aria-label="Workspace folder">
        <VisibleTextView text={visible} />
      </code>
    </p>
  );
}
