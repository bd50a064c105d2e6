import { proseText } from '../chat/prose-text';
import type { ModelInfo } from '../lib/api-types';

// The model's name comes from the model server, which may put in it what hides or reorders text: shown as codes.

export function ModelBadge({ info }: { info: ModelInfo | undefined }) {
  if (info === undefined) return <span className="model-badge muted">Model…</span>;
  if (info.demo) {
    return (
      <span className="model-badge" title="A built-in scripted model that needs no server. Configure a model to chat for real.">
        Demo model (offline)
      </span>
    );
  }
  return (
    <span className="model-badge" title={proseText(info.baseURL ?? info.provider)}>
      {proseText(info.model)} <span className="muted">· {proseText(info.provider)}</span>
    </span>
  );
}
