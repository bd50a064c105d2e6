import { describe, expect, it } from 'vitest';
import { toOpenAIMessages } from './openai-messages';

describe('toOpenAIMessages', () => {
  it('sends messages of the person that follow one another (the first one never answered) as one, so roles alternate', () => {
    expect(
      toOpenAIMessages([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first question' },
        { role: 'user', content: 'second question' },
        { role: 'assistant', content: 'an answer' },
        { role: 'user', content: 'third' },
      ]),
    ).toStrictEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'first question\n\nsecond question' },
      { role: 'assistant', content: 'an answer' },
      { role: 'user', content: 'third' },
    ]);
  });

  it('leaves the conversation it was given as it was', () => {
    const messages = [
      { role: 'user' as const, content: 'a' },
      { role: 'user' as const, content: 'b' },
    ];
    toOpenAIMessages(messages);
    expect(messages).toStrictEqual([
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ]);
  });
});
