import type { SessionSummary } from '../lib/api-types';
import { proseText } from '../chat/prose-text';
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
  /**
   * The text in the search box. When it is not blank, `sessions` are the chats the server found with it, among every
   * chat (see useSessionPages), not the pages read. Default ''.
   */
  query?: string;
  onQueryChange?: (query: string) => void;
  /** The chats of the text in the search box are being read: `sessions` are an earlier search's, or none. Default false. */
  searching?: boolean;
  /** There are chats to search: the search box shows. Default: some are listed. */
  searchable?: boolean;
}

/** The longest search the server takes (`sessions.list`'s query): a title is at most 200 characters. */
const MAX_SEARCH = 200;

export function SessionList({ sessions, currentId, draft, onSelect, onDelete, waiting = new Map(), hasMore = false, loadingMore = false, onShowMore, query = '', onQueryChange, searching = false, searchable = sessions.length > 0 }: SessionListProps) {
  const needle = query.trim();
  const showDraft = draft && needle === '' && !sessions.some((session) => session.sessionId === currentId);
  const now = useNow(30_000);
  return (
    <nav className="session-list" aria-label="Chats">
      {searchable && (
        <input
          type="search"
          className="session-search"
          aria-label="Search chats"
          placeholder="Search chats"
          maxLength={MAX_SEARCH}
          value={query}
          onChange={(event) => onQueryChange?.(event.target.value)}
        />
      )}
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
                <span className="session-text">
                  <span className="session-title">{proseText(session.title)}</span>
                  <time className="session-time" dateTime={new Date(session.updatedAt).toISOString()} title={new Date(session.updatedAt).toLocaleString()}>
                    {relativeTime(session.updatedAt, now)}
                  </time>
                </span>
                <RunBadge running={session.activeRunId !== null} waiting={waiting.get(session.sessionId) ?? 0} />
              </button>
              <button type="button" className="btn-icon" aria-label={`Delete chat ${proseText(session.title)}`} onClick={() => onDelete(session)}>
                ×
              </button>
            </li>
          );
        })}
      </ul>
      {needle === '' && sessions.length === 0 && !showDraft && <p className="muted">No chats yet.</p>}
      {needle !== '' && searching && (
        <p className="muted" role="status">
          Looking for “{needle}” in every chat…
        </p>
      )}
      {needle !== '' && !searching && sessions.length === 0 && <p className="muted">No chat title contains “{needle}”.</p>}
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
