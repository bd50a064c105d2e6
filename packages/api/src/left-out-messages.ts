import type { ChatMessage } from '@airlock/core';

/** What a run says when its chat's conversation was read without messages whose records are damaged (`records`). */
export function leftOutText(records: readonly string[]): string {
  const which = records.length === 1 ? 'A stored message of this chat is damaged' : `${records.length} stored messages of this chat are damaged`;
  return `${which} (${records.join('; ')}): left out of what the model reads, and left as stored.`;
}

/**
 * The conversation without the tool results that answer no call of the model's turn before them: a turn left out
 * (its record damaged) leaves its calls' results, and a model server refuses a result of a call it never made.
 */
export function withoutStrayResults(messages: readonly ChatMessage[]): ChatMessage[] {
  let open = new Set<string>();
  return messages.filter((message) => {
    if (message.role === 'assistant') open = new Set((message.toolCalls ?? []).map((call) => call.id));
    else if (message.role !== 'tool') open = new Set();
    else if (!open.delete(message.toolCallId)) return false;
    return true;
  });
}
