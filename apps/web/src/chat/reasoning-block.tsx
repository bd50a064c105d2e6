import { proseText } from './prose-text';

export function ReasoningBlock({ text, streaming }: { text: string; streaming: boolean }) {
  return (
    <details className="reasoning">
      <summary>{streaming ? 'Thinking…' : 'Reasoning'}</summary>
      <div className="reasoning-text">{proseText(text)}</div>
    </details>
  );
}
