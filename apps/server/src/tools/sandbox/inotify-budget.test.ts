import { describe, expect, test } from 'vitest';
import { InotifyBudget } from './inotify-budget';

const USER = { instances: 128, watches: 192_543 };

describe('the inotify instances and watches calls at once may hold', () => {
  test('half the user’s in all: each call its eighth, or half what the others leave of that half, so eight calls each get some', () => {
    const budget = new InotifyBudget();
    const parts = Array.from({ length: 10 }, () => budget.take(USER)!);
    expect(parts.map((part) => part.instances)).toStrictEqual([16, 16, 16, 8, 4, 2, 1, 1, 0, 0]);
    expect(parts.map((part) => part.watches)).toStrictEqual([24_067, 24_067, 24_067, 12_035, 6_018, 3_009, 1_504, 752, 376, 188]);
    expect(parts.reduce((sum, part) => sum + part.instances, 0)).toBe(64);
    expect(parts.reduce((sum, part) => sum + part.watches, 0)).toBeLessThanOrEqual(USER.watches / 2);
  });

  test('what a call held is given back once it ends, once', () => {
    const budget = new InotifyBudget();
    const [first, second] = [budget.take(USER)!, budget.take(USER)!];
    budget.release(first);
    budget.release(first);
    expect(budget.take(USER)).toStrictEqual({ instances: 16, watches: 24_067 });
    budget.release(second);
    expect(budget.take(USER)?.instances).toBe(16);
  });

  test('a call alone on a kernel of 8192 watches gets a quarter of them, a second an eighth', () => {
    const budget = new InotifyBudget();
    expect([budget.take({ instances: 128, watches: 8192 }), budget.take({ instances: 128, watches: 8192 })]).toStrictEqual([
      { instances: 16, watches: 2048 },
      { instances: 16, watches: 1024 },
    ]);
  });

  test('none when the user’s limits cannot be read', () => {
    expect(new InotifyBudget().take(undefined)).toBeUndefined();
  });
});
