import { describe, expect, it } from 'vitest';
import { leftOutOfChat, type ChatPart } from './left-out-of-chat';

describe('leftOutOfChat', () => {
  it('gathers what each part left out, oldest first, reading back to the first message', async () => {
    const parts = new Map<number, ChatPart>([
      [10, { leftOut: ['b'], messagesBefore: 4 }],
      [4, { messagesBefore: 0 }],
    ]);
    const asked: number[] = [];
    const read = (before: number) => {
      asked.push(before);
      return Promise.resolve(parts.get(before)!);
    };
    expect(await leftOutOfChat({ leftOut: ['c'], messagesBefore: 10 }, read)).toStrictEqual(['b', 'c']);
    expect(asked).toStrictEqual([10, 4]);
  });

  it('reads nothing more for a chat held by its newest part, and stops at a part that does not move back', async () => {
    const asked: number[] = [];
    const stuck = (before: number) => {
      asked.push(before);
      return Promise.resolve({ leftOut: ['a'], messagesBefore: before });
    };
    expect(await leftOutOfChat({ messagesBefore: 0 }, stuck)).toStrictEqual([]);
    expect(await leftOutOfChat({ leftOut: ['c'], messagesBefore: 3 }, stuck)).toStrictEqual(['a', 'c']);
    expect(asked).toStrictEqual([3]);
  });
});
