import { z } from 'zod';
import { MAX_SESSION_SEARCH } from './session-search';
import type { SessionPosition } from './store';

/** Chats one `sessions.list` answers when its input names no limit. */
export const DEFAULT_SESSION_PAGE = 100;
/** Chats one `sessions.list` answers at most: 10,878 chats in one answer made 2.6 MB, and held the server while it wrote them. */
export const MAX_SESSION_PAGE = 500;

const ID = /^[A-Za-z0-9_:.-]{1,128}$/;

/** The cursor that starts the next page right after the chat at `position`: opaque to clients, and only ours is taken. */
export function encodeSessionCursor(position: SessionPosition): string {
  return btoa(`${position.updatedAt}:${position.sessionId}`).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The position a cursor of encodeSessionCursor names, or undefined for any other string. */
export function decodeSessionCursor(cursor: string): SessionPosition | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  let text: string;
  try {
    text = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return undefined;
  }
  const colon = text.indexOf(':');
  const updatedAt = Number(text.slice(0, colon));
  const sessionId = text.slice(colon + 1);
  if (colon < 1 || !/^\d+$/.test(text.slice(0, colon)) || !Number.isSafeInteger(updatedAt) || !ID.test(sessionId)) return undefined;
  return { updatedAt, sessionId };
}

/** `sessions.list`'s input: absent, or a page size, where the page starts, and which chats it lists. */
export const sessionListInputSchema = z
  .strictObject({
    limit: z.number().int().min(1).max(MAX_SESSION_PAGE).optional(),
    cursor: z
      .string()
      .max(400)
      .transform((cursor, context) => {
        const position = decodeSessionCursor(cursor);
        if (position === undefined) context.addIssue({ code: 'custom', message: 'not a cursor this server gave: pass the nextCursor of the previous page, or none for the first' });
        return position ?? z.NEVER;
      })
      .optional(),
    /** Only the chats with a run going (a "waiting for you" list reads their calls), in the same order. */
    running: z.literal(true).optional(),
    /** Only the chats whose title contains this text, whatever the case, in the same order: a search of every chat. */
    query: z.string().trim().min(1).max(MAX_SESSION_SEARCH).optional(),
    /** What a tRPC infinite query sends beside the cursor: pages are read forward only. */
    direction: z.literal('forward').optional(),
  })
  .optional();
