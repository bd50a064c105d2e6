import { describe, expect, it } from 'vitest';
import { parseDecisionAnswer } from './decision-answer';

describe('parseDecisionAnswer', () => {
  it('reads allow, always and deny, with the rest of a deny line as the reason', () => {
    expect(parseDecisionAnswer('a')).toStrictEqual({ decision: 'allow' });
    expect(parseDecisionAnswer(' allow ')).toStrictEqual({ decision: 'allow' });
    expect(parseDecisionAnswer('A')).toStrictEqual({ decision: 'always' });
    expect(parseDecisionAnswer('d')).toStrictEqual({ decision: 'deny', reason: '' });
    expect(parseDecisionAnswer('d   use notes.txt, not   secrets ')).toStrictEqual({ decision: 'deny', reason: 'use notes.txt, not   secrets' });
    expect(parseDecisionAnswer('deny no')).toStrictEqual({ decision: 'deny', reason: 'no' });
  });

  it('asks again for anything else, including an allow with words after it', () => {
    for (const line of ['', '   ', 'y', 'yes', 'allowed', 'a please', 'Always', 'x d']) expect(parseDecisionAnswer(line)).toBeNull();
  });
});
