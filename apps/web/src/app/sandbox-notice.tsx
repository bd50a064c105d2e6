import type { ModelInfo } from '../lib/api-types';

/** A permanent notice while terminal and python run without a sandbox: what they run can reach everything this server can. */
export function SandboxNotice({ sandbox }: { sandbox: ModelInfo['sandbox'] }) {
  if (sandbox?.kind !== 'none') return null;
  return (
    <span className="model-badge sandbox-notice" role="status" title={sandbox.reason}>
      Tools run without a sandbox
    </span>
  );
}
