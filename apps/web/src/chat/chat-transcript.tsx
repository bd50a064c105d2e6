import { useEffect, useLayoutEffect, useRef } from 'react';
import type { ToolInfo } from '../lib/api-types';
import { scrollByPage } from '../lib/spot-watch';
import type { ChatItem, RunView } from './chat-reducer';
import { MessageMarkdown } from './message-markdown';
import { proseText } from './prose-text';
import { ReasoningBlock } from './reasoning-block';
import type { DecisionRequest } from './send-decision';
import { ToolCallCard } from './tool-call-card';
import type { ToolCallView } from './tool-call-state';

export interface ChatTranscriptProps {
  items: readonly ChatItem[];
  run: RunView | null;
  tools: ReadonlyMap<string, ToolInfo>;
  onDecide: (call: ToolCallView, request: DecisionRequest) => void;
}

const runEndText = {
  cancelled: 'Stopped.',
  error: 'The run failed',
  'tool-budget': 'Stopped: the limit of tool calls for this message was reached.',
} as const;

export function ChatTranscript({ items, run, tools, onDecide }: ChatTranscriptProps) {
  const scroller = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  const following = run?.phase === 'following';
  const last = items.at(-1);
  const waiting = items.filter((item) => item.kind === 'tool' && item.call.state.status === 'awaiting-decision').length;

  const frame = useRef(0);
  // Once a frame rather than on each change: reading the height lays the transcript out, and a reply streaming in
  // changes it many times a frame.
  useLayoutEffect(() => {
    if (frame.current !== 0) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      const element = scroller.current;
      // The page's own scroll, not the person's: a decision button it slides under a finger re-arms. (When what it
      // scrolls shrinks and the browser pulls it back, spot-watch tells that from the person's scroll itself.)
      if (element && pinned.current) scrollByPage(element, element.scrollHeight);
    });
  });
  useEffect(() => () => cancelAnimationFrame(frame.current), []);

  return (
    <div
      className="transcript"
      ref={scroller}
      onScroll={(event) => {
        const element = event.currentTarget;
        pinned.current = element.scrollHeight - element.scrollTop - element.clientHeight < 80;
      }}
    >
      {items.length === 0 && !following && (
        <div className="empty">
          <h2>What shall we do?</h2>
          <p>Ask anything. When the model wants to use a tool, you decide first.</p>
        </div>
      )}
      <ol className="messages" aria-label="Messages">
        {items.map((item) => (
          <li key={item.key} className={`item item-${item.kind}`}>
            {item.kind === 'user' && (
              <div className="bubble user" aria-label="You">
                {item.text}
              </div>
            )}
            {item.kind === 'assistant' && (
              <div className="bubble assistant" aria-label="Assistant">
                {item.reasoning !== '' && <ReasoningBlock text={item.reasoning} streaming={following && item === last && item.text === ''} />}
                {item.text !== '' && <MessageMarkdown text={item.text} />}
              </div>
            )}
            {item.kind === 'tool' && (
              <ToolCallCard
                call={item.call}
                annotations={tools.get(item.call.toolName)?.annotations}
                source={tools.get(item.call.toolName)?.source}
                inputSchema={tools.get(item.call.toolName)?.inputSchema}
                onDecide={onDecide}
              />
            )}
            {item.kind === 'run-end' && (
              <p className={`run-end run-end-${item.reason}`} role="note">
                {runEndText[item.reason]}
                {/* The model server's words: what could hide or reorder them is shown as codes. */}
                {item.reason === 'error' && `: ${proseText(item.error ?? 'unknown error')}`}
              </p>
            )}
          </li>
        ))}
      </ol>
      {following &&
        (waiting > 0 ? (
          // The run's last status ("Calling: terminal") beside a spinner would read as the call running already.
          <p className="run-status" aria-live="polite">
            {waiting === 1 ? 'Waiting for your decision on the call above' : `Waiting for your decision on the ${waiting} calls above`}
          </p>
        ) : (
          <p className="run-status" aria-live="polite">
            <span className="spinner" aria-hidden="true" />
            {/* It may quote a tool's name or a rule's words: what could hide or reorder them is shown as codes. */}
            {run.status !== null ? proseText(run.status) : last?.kind === 'assistant' && last.text !== '' ? 'Writing…' : 'Thinking…'}
          </p>
        ))}
    </div>
  );
}
