import { leftOutNotice } from '@airlock/client';
import { useCallback, useMemo, useRef } from 'react';
import type { RunOptions, ToolInfo } from '../lib/api-types';
import { GrantsPanel } from '../grants/grants-panel';
import { markAskedLater, type AskedLater } from './asked-later';
import { undecidedCalls } from './chat-reducer';
import { ChatTranscript } from './chat-transcript';
import { Composer, focusAndType } from './composer';
import { CurrentSessionContext, FocusComposerContext } from './current-session';
import { PendingBar } from './pending-bar';
import { proseText } from './prose-text';
import { useChatSession } from './use-chat-session';

const NONE_ASKED_LATER: AskedLater = new Map();

export interface ChatViewProps {
  sessionId: string;
  isNew: boolean;
  tools: ReadonlyMap<string, ToolInfo>;
  /** The options for a new run, read when the person sends. */
  runOptions: () => RunOptions;
  connected: boolean;
  onActivity: () => void;
  /** The chat's own setting: off, calls run without asking. */
  confirmToolCalls: boolean;
  /** Its waiting calls a deny rule added after they were put up asked about (from the waiting list). Default none. */
  askedLater?: AskedLater;
  onConfirmToolCalls: (value: boolean) => void;
}

export function ChatView({ sessionId, isNew, tools, runOptions, connected, onActivity, confirmToolCalls, onConfirmToolCalls, askedLater = NONE_ASKED_LATER }: ChatViewProps) {
  const chat = useChatSession({ sessionId, isNew, onActivity });
  const following = chat.state.run?.phase === 'following';
  const items = useMemo(() => markAskedLater(chat.state.items, askedLater), [chat.state.items, askedLater]);
  const undecided = undecidedCalls({ items });
  const messageBox = useRef<HTMLTextAreaElement>(null);
  const focusComposer = useCallback((typed: string) => {
    if (messageBox.current !== null) focusAndType(messageBox.current, typed);
  }, []);
  return (
    <div className="chat">
      {!confirmToolCalls && (
        <p className="banner banner-warn confirmation-off" role="status">
          Confirmation is off for this chat: tool calls run without asking.
          <button type="button" className="btn btn-small" onClick={() => onConfirmToolCalls(true)}>
            Ask again
          </button>
        </p>
      )}
      <GrantsPanel sessionId={sessionId} enabled={chat.exists} />
      {chat.leftOut.length > 0 && (
        <p className="banner banner-warn left-out" role="status">
          {proseText(leftOutNotice(chat.leftOut))}
        </p>
      )}
      {chat.earlierMessages > 0 && (
        <p className="banner earlier-messages" role="status">
          {chat.earlierMessages === 1 ? '1 earlier message of this chat is' : `${chat.earlierMessages.toLocaleString('en')} earlier messages of this chat are`} not
          shown.
          <button type="button" className="btn btn-small" onClick={chat.showEarlier}>
            Show earlier
          </button>
        </p>
      )}
      <CurrentSessionContext value={sessionId}>
        <FocusComposerContext value={focusComposer}>
          <ChatTranscript items={chat.earlierItems.length === 0 ? items : [...chat.earlierItems, ...items]} run={chat.state.run} tools={tools} onDecide={chat.decide} />
        </FocusComposerContext>
      </CurrentSessionContext>
      {chat.load.error !== null && (
        <p className="banner banner-error" role="alert">
          {chat.load.kept ? `Could not load this chat again: ${proseText(chat.load.error).replace(/\.$/, '')}. What is shown is as it was last read.` : `Could not load this chat: ${proseText(chat.load.error)}`}
          <button type="button" className="btn btn-small" disabled={chat.load.retrying} onClick={chat.load.retry}>
            Retry
          </button>
        </p>
      )}
      {chat.state.streamError !== null && (
        <p className="banner banner-error" role="alert">
          {proseText(chat.state.streamError)}
        </p>
      )}
      {chat.paused !== null && (
        <p className="banner banner-warn" role="status">
          This run is paused: Airlock cannot store its data for now ({proseText(chat.paused)}). Its calls still wait; deciding them is refused until it
          can store again, and the run goes on by itself then. A stop is kept, and applied when the run is taken up, before anything more of it runs.
        </p>
      )}
      {chat.stopStatus?.state === 'sending' && !connected && (
        <p className="banner banner-warn" role="status">
          Not connected: the stop is sent once the connection is back. Until the server takes it, the run goes on and its calls still wait for a decision.
        </p>
      )}
      {chat.stopStatus?.state === 'held' && (
        <p className="banner banner-warn" role="status">
          The server took the stop: {proseText(chat.stopStatus.message)}
        </p>
      )}
      {chat.stopStatus?.state === 'failed' && (
        <p className="banner banner-error" role="alert">
          The stop was not sent ({proseText(chat.stopStatus.message)}): the run goes on, and its calls still wait for a decision.
        </p>
      )}
      <PendingBar calls={undecided} tools={tools} onDecideAll={chat.decideAll} />
      <Composer
        inputRef={messageBox}
        running={following}
        disabled={!chat.ready || !connected}
        onSend={(message) => chat.send(message, runOptions())}
        onStop={chat.stop}
        stopping={chat.stopStatus?.state === 'sending' || chat.stopStatus?.state === 'taken' || chat.stopStatus?.state === 'held'}
      />
    </div>
  );
}
