import type { ChatMessage } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { leftOutText, withoutStrayResults } from './left-out-messages';

const result = (toolCallId: string): ChatMessage => ({ role: 'tool', toolCallId, toolName: 'terminal', content: `ran ${toolCallId}` });
const turn = (...ids: string[]): ChatMessage => ({ role: 'assistant', content: '', toolCalls: ids.map((id) => ({ id, name: 'terminal', arguments: {} })) });

describe('withoutStrayResults', () => {
  it('keeps each result of a call of the turn before it, and leaves out those of a turn left out, a repeat, or after the person spoke', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      // The turn that made c1 was left out: its result answers no call.
      result('c1'),
      { role: 'assistant', content: 'first done' },
      turn('c2', 'c3'),
      result('c3'),
      result('c2'),
      result('c2'),
      { role: 'user', content: 'again' },
      result('c3'),
    ];
    expect(withoutStrayResults(messages)).toStrictEqual([messages[0], messages[2], messages[3], messages[4], messages[5], messages[7]]);
  });

  it('leaves a conversation with no stray result as it was', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'go' }, turn('c1'), result('c1'), { role: 'assistant', content: 'done' }];
    expect(withoutStrayResults(messages)).toStrictEqual(messages);
  });
});

describe('leftOutText', () => {
  it('names each record left out', () => {
    expect(leftOutText(['a message of chat s1: role: bad'])).toBe('A stored message of this chat is damaged (a message of chat s1: role: bad): left out of what the model reads, and left as stored.');
    expect(leftOutText(['a', 'b'])).toBe('2 stored messages of this chat are damaged (a; b): left out of what the model reads, and left as stored.');
  });
});
