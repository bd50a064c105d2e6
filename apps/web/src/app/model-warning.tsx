import { proseText } from '../chat/prose-text';
import type { ModelInfo } from '../lib/api-types';

/**
 * A notice while the model server's list does not confirm the model the server sends requests to (it lists other
 * names, none, or could not be read): the chat may fail, or another model may answer. The whole warning, which names
 * what the server lists, is its title; its text comes from the model server, shown with hidden characters as codes.
 */
export function ModelWarning({ warning }: { warning: ModelInfo['modelWarning'] }) {
  if (warning === undefined) return null;
  return (
    <span className="model-badge workspace-warning" role="status" title={proseText(warning)} aria-description={proseText(warning)}>
      Model not confirmed by its server
    </span>
  );
}
