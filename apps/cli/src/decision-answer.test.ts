import { describe, expect, it } from 'vitest';
import { CONFIRM_ALWAYS, confirmsAlways, parseDecisionAnswer } from './decision-answer';

describe('parseDecisionAnswer', () => {
  it('reads allow, always and deny, with the rest of a deny line as the reason', () => {
    expect(parseDecisionAnswer('a')).toStrictEqual({ decision: 'allow' });
    expect(parseDecisionAnswer(' allow ')).toStrictEqual({ decision: 'allow' });
    for (const line of ['always', 'Always', 'ALWAYS', ' aLwAyS ']) expect(parseDecisionAnswer(line)).toStrictEqual({ decision: 'always' });
    expect(parseDecisionAnswer('d')).toStrictEqual({ decision: 'deny', reason: '' });
    expect(parseDecisionAnswer('d   use notes.txt, not   secrets ')).toStrictEqual({ decision: 'deny', reason: 'use notes.txt, not   secrets' });
    expect(parseDecisionAnswer('deny no')).toStrictEqual({ decision: 'deny', reason: 'no' });
  });

  it('asks once more before a lone A grants "Always allow": Caps Lock turns a into A', () => {
    expect(parseDecisionAnswer('A')).toBe(CONFIRM_ALWAYS);
    expect(parseDecisionAnswer(' A ')).toBe(CONFIRM_ALWAYS);
  });

  it('asks again for anything else, including an allow with words after it', () => {
    for (const line of ['', '   ', 'y', 'yes', 'allowed', 'a please', 'A please', 'always please', 'x d']) expect(parseDecisionAnswer(line)).toBeNull();
  });
});

describe('confirmsAlways', () => {
  it('grants on y alone, in either case; anything else, Enter alone too, goes back', () => {
    for (const line of ['y', 'Y', ' y ']) expect(confirmsAlways(line)).toBe(true);
    for (const line of ['', 'n', 'yes', 'a', 'A', 'y y']) expect(confirmsAlways(line)).toBe(false);
  });
});
