/**
 * The chat list is read a page at a time, most recently active first and, among chats active in the same
 * millisecond, the greater id first (compared byte by byte, as the other stores do): this index holds that order, so
 * a page is read from where the last one ended without reading (and sorting) every chat.
 */
export const sql = `
CREATE INDEX sessions_by_activity ON sessions (updated_at, session_id COLLATE "C");
`;
