import { chatMessageSchema } from '@airlock/core';
import { z } from 'zod';

/** A session as it is kept between server runs: its conversation, never its grants or pending calls. */
export const storedSessionSchema = z.object({
  sessionId: z.string().min(1).max(128),
  title: z.string().max(200),
  createdAt: z.number(),
  updatedAt: z.number(),
  messages: z.array(chatMessageSchema),
});
export type StoredSession = z.infer<typeof storedSessionSchema>;

/** Where sessions outlive the process. Writes are fire-and-forget: a failed write is reported, never thrown at a run. */
export interface SessionStore {
  save(session: StoredSession): void;
  remove(sessionId: string): void;
}
