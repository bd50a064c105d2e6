import type { ModelInfo } from '../lib/api-types';

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
    <span className="model-badge" title={info.baseURL ?? info.provider}>
      {info.model} <span className="muted">· {info.provider}</span>
    </span>
  );
}
