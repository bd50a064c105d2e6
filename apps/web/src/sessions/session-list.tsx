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
  /** How many calls wait for a decision, per chat. */
  waiting?: ReadonlyMap<string, number>;
}

export function SessionList({ sessions, currentId, draft, onSelect, onDelete, waiting = new Map() }: SessionListProps) {
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
