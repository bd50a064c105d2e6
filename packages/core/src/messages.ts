import { z } from 'zod';
import { toolArgumentsSchema } from './events';

/**
 * The most characters a person's message may hold, counted as JavaScript counts a string's length (UTF-16 code units):
 * the server refuses a longer one, and clients say so before sending it.
 */
export const MAX_MESSAGE_LENGTH = 100_000;

export const toolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  arguments: toolArgumentsSchema,
  /**
   * Why the call cannot run whatever the person decides (its arguments or its name could not be read; `arguments` is
   * then empty): kept with the model's turn, so a run resumed after a restart refuses it as it was. Default none.
   */
  unreadable: z.string().optional(),
});
export type ToolCall = z.infer<typeof toolCallSchema>;

export const chatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    reasoning: z.string().optional(),
    toolCalls: z.array(toolCallSchema).optional(),
  }),
  z.object({
    role: z.literal('tool'),
    toolCallId: z.string(),
    toolName: z.string(),
    content: z.string(),
  }),
]);

/** One turn of a conversation, in the provider-neutral shape the loop and the session store keep. */
export type ChatMessage = z.infer<typeof chatMessageSchema>;
export type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;
export type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;
