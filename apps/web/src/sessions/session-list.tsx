import type { SessionSummary } from '../lib/api-types';

/** Not "New chat": that is the name of the action, and an entry named like it is a second button a person (or a test) can mistake for it. */
const UNTITLED = 'Untitled chat';

export interface SessionListProps {
  sessions: readonly SessionSummary[];
  currentId: string;
  /** The current chat is new and not on the server yet. */
  draft: boolean;
  onSelect: (sessionId: string) => void;
  onDelete: (session: SessionSummary) => void;
}

export function SessionList({ sessions, currentId, draft, onSelect, onDelete }: SessionListProps) {
  const showDraft = draft && !sessions.some((session) => session.sessionId === currentId);
  return (
    <nav className="session-list" aria-label="Chats">
      <ul>
        {showDraft && (
          <li className="session current">
            <button type="button" className="session-button" aria-current="page">
              <span className="session-title">{UNTITLED}</span>
            </button>
          </li>
        )}
        {sessions.map((session) => {
          const current = session.sessionId === currentId;
          return (
            <li key={session.sessionId} className={current ? 'session current' : 'session'}>
              <button type="button" className="session-button" aria-current={current ? 'page' : undefined} onClick={() => onSelect(session.sessionId)}>
                <span className="session-title">{session.title}</span>
                {session.activeRunId !== null && (
                  <span className="running-dot" role="img" aria-label="running" title="Running" />
                )}
              </button>
              <button type="button" className="btn-icon" aria-label={`Delete chat ${session.title}`} onClick={() => onDelete(session)}>
                ×
              </button>
            </li>
          );
        })}
      </ul>
      {sessions.length === 0 && !showDraft && <p className="muted">No chats yet.</p>}
    </nav>
  );
}
