import type { ChatMessage, ToolSpec } from '@airlock/core';
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/**
 * Converts the provider-neutral conversation into OpenAI chat-completions messages. Messages of the person's that
 * follow one another (a message whose run failed or was stopped before any answer, then the next) go as one, their
 * texts a blank line apart: many chat templates refuse a conversation whose roles do not alternate, and would then
 * refuse every later turn of the chat.
 */
export function toOpenAIMessages(messages: readonly ChatMessage[]): ChatCompletionMessageParam[] {
  const converted: ChatCompletionMessageParam[] = [];
  for (const message of messages) {
    const previous = converted.at(-1);
    if (message.role === 'user' && previous?.role === 'user' && typeof previous.content === 'string') previous.content = `${previous.content}\n\n${message.content}`;
    else converted.push(toOpenAIMessage(message));
  }
  return converted;
}

function toOpenAIMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant': {
      // Reasoning is not sent back: several servers reject a request whose history carries it.
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        })),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

/** Converts tool specs into OpenAI function tools. */
export function toOpenAITools(tools: readonly ToolSpec[]): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}
