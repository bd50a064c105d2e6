import { toVisibleText } from '@airlock/core';
import type { ModelInfo } from '../lib/api-types';

/** A permanent notice while the workspace holds the home folder: an allowed call can change what the person's shell and SSH run. */
export function WorkspaceWarning({ warning }: { warning: ModelInfo['workspaceWarning'] }) {
  if (warning === undefined) return null;
  const title = toVisibleText(warning)
    .segments.map((segment) => segment.text)
    .join('');
  return (
    <span className="model-badge workspace-warning" role="status" title={title}>
      The workspace holds your home folder
    </span>
  );
}
