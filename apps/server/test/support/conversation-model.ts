import type { ChatModel, ChatRequest, ModelPart } from '@airlock/core';

/**
 * Answers from the conversation alone, so any instance of a cluster gives the same answer at any point of a run: a
 * user message asks for one call of `tool` with the message's text as its argument `argument`; a tool result gets a
 * short final answer.
 */
export class ConversationModel implements ChatModel {
  readonly name = 'conversation';

  constructor(
    private readonly tool: string,
    private readonly argument: string,
  ) {}

  async *stream(request: ChatRequest): AsyncIterable<ModelPart> {
    const last = request.messages.at(-1);
    if (last?.role === 'user') {
      yield { type: 'tool-call', id: 'call_1', name: this.tool, arguments: { [this.argument]: last.content } };
      yield { type: 'finish', reason: 'tool-calls' };
      return;
    }
    yield { type: 'text-delta', text: 'done' };
    yield { type: 'finish', reason: 'stop' };
  }
}
