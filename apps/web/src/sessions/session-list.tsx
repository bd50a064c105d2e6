import { useState } from 'react';
import type { SessionSummary } from '../lib/api-types';
import { useNow } from '../lib/use-now';
import { relativeTime } from './relative-time';

/** Not "New chat": that is the name of the action, and an entry named like it is a second button a person (or a test) can mistake for it. */
const UNTITLED = 'Untitled chat';

export interface SessionListProps {
  sessions: readonly SessionSummary[];
  currentId: string;
  /** The current chat is new and not on the server yet. */
  draft: boolean;
  onSelect: (sessionId: string) => void;
  onDelete: (session: SessionSummary) => void;
  /** How many calls wait for a decision, per chat. */
  waiting?: ReadonlyMap<string, number>;
  /** Older chats than those listed remain to be read: a "Show more chats" button asks for them. Default false. */
  hasMore?: boolean;
  /** The next chats are being read. Default false. */
  loadingMore?: boolean;
  onShowMore?: () => void;
}

export function SessionList({ sessions, currentId, draft, onSelect, onDelete, waiting = new Map(), hasMore = false, loadingMore = false, onShowMore }: SessionListProps) {
  const showDraft = draft && !sessions.some((session) => session.sessionId === currentId);
  const [query, setQuery] = useState('');
  const now = useNow(30_000);
  const needle = query.trim().toLocaleLowerCase();
  const shown = needle === '' ? sessions : sessions.filter((session) => session.title.toLocaleLowerCase().includes(needle));
  return (
    <nav className="session-list" aria-label="Chats">
      {sessions.length > 0 && (
        <input type="search" className="session-search" aria-label="Search chats" placeholder="Search chats" value={query} onChange={(event) => setQuery(event.target.value)} />
      )}
      <ul>
        {showDraft && (
          <li className="session current">
            <button type="button" className="session-button" aria-current="page">
              <span className="session-title">{UNTITLED}</span>
            </button>
          </li>
        )}
        {shown.map((session) => {
          const current = session.sessionId === currentId;
          return (
            <li key={session.sessionId} className={current ? 'session current' : 'session'}>
              <button type="button" className="session-button" aria-current={current ? 'page' : undefined} onClick={() => onSelect(session.sessionId)}>
                <span className="session-text">
                  <span className="session-title">{session.title}</span>
                  <time className="session-time" dateTime={new Date(session.updatedAt).toISOString()} title={new Date(session.updatedAt).toLocaleString()}>
                    {relativeTime(session.updatedAt, now)}
                  </time>
                </span>
                <RunBadge running={session.activeRunId !== null} waiting={waiting.get(session.sessionId) ?? 0} />
              </button>
              <button type="button" className="btn-icon" aria-label={`Delete chat ${session.title}`} onClick={() => onDelete(session)}>
                ×
              </button>
            </li>
          );
        })}
      </ul>
      {sessions.length === 0 && !showDraft && <p className="muted">No chats yet.</p>}
      {sessions.length > 0 && shown.length === 0 && (
        <p className="muted">
          No chat title {hasMore ? 'listed so far ' : ''}contains “{query.trim()}”.
        </p>
      )}
      {hasMore && (
        <button type="button" className="btn show-more" disabled={loadingMore} onClick={onShowMore}>
          {loadingMore ? 'Loading older chats…' : 'Show more chats'}
        </button>
      )}
    </nav>
  );
}

function RunBadge({ running, waiting }: { running: boolean; waiting: number }) {
  if (waiting > 0) {
    const label = waiting === 1 ? '1 call waiting for you' : `${waiting} calls waiting for you`;
    return (
      <span className="waiting-badge" role="img" aria-label={label} title={label}>
        {waiting}
      </span>
    );
  }
  return running ? <span className="running-dot" role="img" aria-label="running" title="Running" /> : null;
}
