import { chatMessageSchema } from '@airlock/core';
import { z } from 'zod';

/** A chat as the former JSON files kept it (one file each); read once, when they are imported into the store. */
export const storedSessionSchema = z.object({
  sessionId: z.string().min(1).max(128),
  title: z.string().max(200),
  createdAt: z.number(),
  updatedAt: z.number(),
  messages: z.array(chatMessageSchema),
});
export type StoredSession = z.infer<typeof storedSessionSchema>;
